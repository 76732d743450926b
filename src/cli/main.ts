/**
 * The CLI: wires arguments to library calls. Exit codes: 0 ok, 1 a finding or an error, 2 usage (3 is
 * refresh's outage guard). Every error reaches stderr as `onetap: …`, commander's own messages included.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { keepCountsIn } from '../attest/tokens.js';
import { defaultCacheDir } from '../attest/count-cache.js';
import { registerProbe } from './probe.js';
import { registerCatalogCommands } from './catalog.js';
import { registerRefresh } from './refresh.js';
import { registerDiscovery } from './discovery.js';
import { registerReport } from './report.js';
import { registerAccept } from './accept.js';
import { registerSite } from './site.js';
import { registerMcp } from './mcp.js';
import { registerRejudge } from './rejudge.js';
import { registerStore } from './store.js';
import { registerWorker } from './worker.js';
import { registerCensus } from './census.js';
import { runDemo } from './demo.js';
import { UsageError } from './args.js';
import { CatalogError } from '../catalog/model.js';
import { registerInit } from './init.js';
import { LockBusyError } from '../util/atomic.js';
import { errorLines } from './render.js';
import { ONETAP_VERSION } from '../util/version.js';

/**
 * Commander's message in onetap's words: `error: ` dropped, and a rejected flag value as
 * `--timeout: <why>` (commander says "option '--timeout <ms>' argument 'x' is invalid. <why>").
 */
export function commanderMessage(text: string): string {
  const bad = /^error: option '(-[^' ,]+(?:, --[^' ]+)?)[^']*' argument '[\s\S]*' is invalid\. ([\s\S]*)$/.exec(text);
  if (bad) return `${bad[1]!.split(', ').at(-1)}: ${bad[2]}`;
  return text.replace(/^error: /, '');
}

/** The whole command line, every command registered (the generated reference in docs/reference/ reads it too). */
export function buildProgram(): Command {
  const program = new Command('onetap')
    .description('keeps a curated list of one-tap remote MCP servers honest')
    .version(ONETAP_VERSION)
    .exitOverride()
    // Commander's own messages ("error: unknown option '--x'") read like every other error.
    .configureOutput({ outputError: (text, write) => write(errorLines(commanderMessage(text))) });
  registerProbe(program);
  registerInit(program);
  registerCatalogCommands(program);
  registerRefresh(program);
  registerRejudge(program);
  registerDiscovery(program);
  registerReport(program);
  registerAccept(program);
  registerSite(program);
  registerMcp(program);
  registerStore(program);
  registerWorker(program);
  registerCensus(program);
  program
    .command('demo')
    .description(
      'refresh the shipped catalog against a loopback fleet that plays it, in a temporary workspace (offline)',
    )
    .action(async () => {
      process.exitCode = await runDemo();
    });
  return program;
}

/**
 * Where the CLI keeps token counts (attest/count-cache.ts): `ONETAP_CACHE_DIR`, empty for none, by default the
 * user's cache folder. A path that is there and not a folder is a usage error, before any work.
 */
export function countCacheDir(env: NodeJS.ProcessEnv): string | null {
  const set = env.ONETAP_CACHE_DIR;
  if (set === '') return null;
  const dir = resolve(set ?? defaultCacheDir(env));
  let isFolder = true;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch {
    /* not there yet: made on the first count kept */
  }
  if (!isFolder) throw new UsageError(`ONETAP_CACHE_DIR: ${dir} is not a folder`);
  return dir;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length === 0) {
    process.stderr.write(
      program.helpInformation() + '\n' + errorLines('a command is needed (onetap --help lists them)'),
    );
    return 2;
  }
  try {
    keepCountsIn(countCacheDir(process.env));
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof InvalidArgumentError) {
      // Commander turns a parser's InvalidArgumentError into a printed CommanderError; this one came from an action.
      process.stderr.write(errorLines(err.message));
      return 2;
    }
    if (err instanceof CommanderError) {
      // Commander printed its message through outputError already; only the exit code is left.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      return err.code === 'commander.help' && err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(errorLines(err.message));
      return 2;
    }
    // CatalogError, LockBusyError and anything unexpected: an error, exit 1.
    process.stderr.write(
      errorLines(
        err instanceof CatalogError || err instanceof LockBusyError || err instanceof Error ? err.message : String(err),
      ),
    );
    return 1;
  }
}
