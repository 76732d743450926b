import { InvalidArgumentError, type Command } from 'commander';
import { relative } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { initList, INIT_OUTPUTS, InitRefused } from '../curate/init.js';
import { parseOutputList } from '../catalog/outputs.js';
import { KOTLIN_PACKAGE, OUTPUT_NAMES, type OutputName } from '../catalog/schema.js';
import { DEFAULT_PROFILE_ID } from '../attest/profile.js';
import { flagError, profileId } from './args.js';
import { DEFAULT_CATALOG } from './catalog.js';

/** A path as one shell word (quoted only when it needs to be). */
const shellWord = (s: string) => (/^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

interface InitFlags {
  dir: string;
  profile: string;
  outputs?: OutputName[];
  kotlinPackage?: string;
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description(
      'start a list repository: an empty catalog (your client profile and outputs), tools.lock.json, the weekly workflow, .gitignore lines; never overwrites',
    )
    .option('--dir <dir>', "the list repository's root", '.')
    .option(
      '--profile <id>',
      'the deciding client profile (a built-in one; define your own later in policy.profiles)',
      profileId,
      DEFAULT_PROFILE_ID,
    )
    .option(
      '--outputs <list>',
      `the generated files a refresh writes, comma-separated: ${OUTPUT_NAMES.join(', ')} (default: ` +
        `${INIT_OUTPUTS.join(',')}; with --kotlin-package, kotlin too)`,
      (v: string) => {
        try {
          return parseOutputList(v);
        } catch (err) {
          throw new InvalidArgumentError(`${(err as Error).message}, got "${v}"`);
        }
      },
    )
    .option('--kotlin-package <name>', 'the package of the generated Kotlin file')
    .action(async (flags: InitFlags) => {
      if (flags.kotlinPackage !== undefined && !KOTLIN_PACKAGE.test(flags.kotlinPackage))
        throw flagError('--kotlin-package', 'not a Kotlin package name', flags.kotlinPackage);
      if (flags.kotlinPackage !== undefined && flags.outputs && !flags.outputs.includes('kotlin'))
        throw flagError('--kotlin-package', 'needs kotlin among --outputs', flags.kotlinPackage);
      if (existsSync(flags.dir) && !statSync(flags.dir).isDirectory())
        throw flagError('--dir', 'exists and is not a directory', flags.dir);
      const outputs =
        flags.outputs ?? (flags.kotlinPackage !== undefined ? [...INIT_OUTPUTS, 'kotlin' as const] : INIT_OUTPUTS);
      try {
        const { written, catalogPath } = await initList({
          dir: flags.dir,
          profile: flags.profile,
          outputs,
          kotlinPackage: flags.kotlinPackage,
        });
        const shown = (p: string) => (relative(process.cwd(), p).startsWith('..') ? p : relative(process.cwd(), p));
        const catalog = shown(catalogPath) === DEFAULT_CATALOG ? '' : ` --catalog ${shellWord(shown(catalogPath))}`;
        process.stdout.write(
          [
            'Wrote:',
            ...written.map((p) => `  ${shown(p)}`),
            '',
            'Next:',
            `  npx onetap add https://example.com/mcp${catalog} --name "Example" --description "what it does for a user" --decision "you: why it belongs"`,
            `  npx onetap refresh${catalog} --write`,
            `  npx onetap serve${catalog}    # the status page on http://127.0.0.1:8787/`,
            '',
          ].join('\n'),
        );
      } catch (err) {
        if (!(err instanceof InitRefused)) throw err;
        process.stderr.write(`onetap: ${err.message}\n`);
        process.exitCode = 1;
      }
    });
}
