/**
 * `onetap init`: a list repository's starting files: an empty catalog with the chosen client profile and outputs,
 * an empty tools.lock.json, the weekly workflow and the .gitignore lines. Never overwrites a file.
 */
import { existsSync, lstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { serializeCatalog, type Catalog } from '../catalog/model.js';
import type { CatalogOutputs } from '../catalog/outputs.js';
import { DEFAULT_KOTLIN_PACKAGE, OUTPUT_NAMES, type OutputName } from '../catalog/schema.js';
import { lockPath, serializeLock } from '../store/lock.js';
import { writeAllAtomic, type FileWrite } from '../util/atomic.js';
import { packagePath } from '../util/package-file.js';

export interface InitOptions {
  /** The list repository's root. */
  dir: string;
  /** The deciding client profile (a built-in one). */
  profile: string;
  /** The generated files a refresh writes. */
  outputs: readonly OutputName[];
  /** The package of the generated Kotlin (with `kotlin` among the outputs). */
  kotlinPackage?: string;
}

/** What a new list writes by default: the runtime list as JSON, the snapshot and the log. */
export const INIT_OUTPUTS: readonly OutputName[] = ['json', 'snapshot', 'log'];

/** Lines the list repository ignores: onetap's local state, an installed onetap. */
export const IGNORED = ['.onetap/', 'node_modules/'];

/** A file `init` would write is already there, or would be written through a symbolic link (nothing was written). */
export class InitRefused extends Error {
  constructor(
    readonly path: string,
    why = 'exists: init never overwrites a file',
  ) {
    super(`${path} ${why} (nothing was written)`);
  }
}

/** The first symbolic link on the way from `dir` (the user's choice, not checked) down to `path`, or null. */
function linkOnTheWay(dir: string, path: string): string | null {
  let at = dir;
  for (const part of relative(dir, path).split(sep)) {
    at = join(at, part);
    if (lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink()) return at;
  }
  return null;
}

export interface Initialized {
  written: string[];
  catalogPath: string;
}

export async function initList(opts: InitOptions): Promise<Initialized> {
  const catalogPath = join(opts.dir, 'catalog', 'servers.json');
  const outputs: CatalogOutputs = Object.fromEntries(
    OUTPUT_NAMES.map((name) => [
      name,
      !opts.outputs.includes(name)
        ? false
        : name === 'kotlin'
          ? { package: opts.kotlinPackage ?? DEFAULT_KOTLIN_PACKAGE }
          : true,
    ]),
  );
  const catalog: Catalog = {
    about: "This list's one-tap remote MCP servers, curated. Add with onetap add; refresh with onetap refresh.",
    policy: { authOptionalHosts: [], sharedGatewayHosts: [], clientProfile: opts.profile, confirmDrops: 2 },
    outputs,
    servers: [],
    removed: [],
  };
  const fresh: FileWrite[] = [
    { path: catalogPath, content: serializeCatalog(catalog) },
    { path: lockPath(catalogPath), content: serializeLock({ version: 1, servers: {} }) },
    {
      path: join(opts.dir, '.github', 'workflows', 'onetap-weekly.yml'),
      content: await readFile(packagePath('examples/github/onetap-weekly.yml'), 'utf8'),
    },
  ];
  const gitignore = join(opts.dir, '.gitignore');
  // A link would make init copy or write over whatever it points to, outside the list's own files.
  for (const path of [...fresh.map((f) => f.path), gitignore]) {
    const link = linkOnTheWay(opts.dir, path);
    if (link) throw new InitRefused(link, 'is a symbolic link: init writes no file through one');
  }
  const taken = fresh.find((f) => existsSync(f.path));
  if (taken) throw new InitRefused(taken.path);
  const existing = await readFile(gitignore, 'utf8').catch(() => '');
  const have = new Set(existing.split('\n').map((l) => l.trim()));
  const missing = IGNORED.filter((l) => !have.has(l) && !have.has(l.replace(/\/$/, '')));
  const files = missing.length
    ? [
        ...fresh,
        {
          path: gitignore,
          content: `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${missing.join('\n')}\n`,
        },
      ]
    : fresh;
  await writeAllAtomic(files);
  return { written: files.map((f) => f.path), catalogPath };
}
