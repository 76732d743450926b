/**
 * How a command reaches its store: the text history beside the catalog (the default), or PostgreSQL named by
 * `--store <url>` or `ONETAP_STORE_URL` (never a catalog field: the URL may hold a password, so it is only ever
 * shown redacted). `onetap store` migrates a PostgreSQL store and moves a history in and out of it.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { Store } from '../store/store.js';
import { vantageRoleOf, vantageRoleSql } from '../store/grants.js';
import { connection, redactStoreUrl, storeUrlProblem } from '../store/url.js';
import { chosenStoreUrl, openStore as openStoreOf, STORE_ENV, StoreChoiceError } from '../store/open.js';
import { flagError, UsageError, vantageName } from './args.js';
import { inert } from '../text/escape.js';

/** `--state` still names a file, as it did (a directory there is a mistake worth stopping for). */
function statePath(value: string): string {
  if (!value.trim() || value.includes('\0')) throw flagError('--state', 'must name a file', value);
  if (existsSync(value) && statSync(value).isDirectory())
    throw flagError('--state', 'must be a file, not a directory', value);
  return value;
}

/**
 * `--state <path>`, as every command that reads history declares it. Since 0.2.0 the history index is built in
 * memory from `<catalog dir>/history/` (no SQLite file): the flag is accepted so scripts that pass it still run.
 */
export const STATE_OPTION = [
  '--state <path>',
  'unused since 0.2.0 (the history index is built in memory from <catalog dir>/history/); accepted so existing scripts run',
  statePath,
  '.onetap/history.db',
] as const;

/** The environment variable that names a PostgreSQL store when `--store` does not. */
export { STORE_ENV };

/** A flag's PostgreSQL URL (`--store`, `--queue`), checked; a refusal shows it with its password replaced. */
export const pgUrlFlag =
  (flag: string) =>
  (value: string): string => {
    const problem = storeUrlProblem(value);
    if (problem) throw flagError(flag, problem, redactStoreUrl(value));
    return value;
  };
const storeFlag = pgUrlFlag('--store');

/** `--store <url>`, as every command that reads or records history declares it. */
export const STORE_OPTION = [
  '--store <url>',
  `PostgreSQL store (postgres://…; its ?schema= parameter, default onetap); default $${STORE_ENV}; neither: the text history beside the catalog`,
  storeFlag,
] as const;

/**
 * The PostgreSQL URL a command uses (`--store`, else `ONETAP_STORE_URL`), or undefined for the text history; checked
 * (exit 2).
 */
export function storeUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    return chosenStoreUrl(flag, env);
  } catch (err) {
    if (err instanceof StoreChoiceError) throw new UsageError(err.message);
    throw err;
  }
}

export interface StoreChoice {
  store?: string;
  retentionDays?: number;
}

/**
 * The store of a catalog, opened by the library's one factory (`store/open.ts`) once the flag and the environment
 * are checked here (exit 2). `onetap probe` never loads a store, a driver or the schemas.
 */
export async function openStore(catalogPath: string, choice: StoreChoice = {}): Promise<Store> {
  const url = storeUrl(choice.store);
  return openStoreOf(catalogPath, {
    ...(url === undefined ? {} : { store: url }),
    env: {},
    ...(choice.retentionDays === undefined ? {} : { retentionDays: choice.retentionDays }),
  });
}

/** The store the workers of a run across vantages record to (`flag` asked for them): needed, else exit 2. */
export function workersStore(flag: string, store: string | undefined): string {
  const url = storeUrl(store);
  if (url === undefined)
    throw new UsageError(`${flag}: needs a PostgreSQL store that the workers record to (--store or ${STORE_ENV})`);
  return url;
}

/** A URL is needed: `--store` or the environment. */
function neededUrl(flag: string | undefined): string {
  const url = storeUrl(flag);
  if (url === undefined) throw new UsageError(`--store: a PostgreSQL URL is needed (or set ${STORE_ENV})`);
  return url;
}

function directoryFlag(flag: string, value: string): void {
  if (!value.trim()) throw flagError(flag, 'must name a directory', value);
  if (existsSync(value) && !statSync(value).isDirectory())
    throw flagError(flag, 'must be a directory, not a file', value);
}

/** `--store <url>` of `onetap store …`, where a PostgreSQL store is the point. */
const NEEDED_STORE_OPTION = [
  '--store <url>',
  `PostgreSQL store (postgres://…; its ?schema= parameter, default onetap); default $${STORE_ENV}; one of them is needed`,
  storeFlag,
] as const;

export function registerStore(program: Command): void {
  const store = program
    .command('store')
    .description(
      'a PostgreSQL store: migrate its schema, import a text history into it, export it as one, grant a vantage its own role',
    );
  store
    .command('migrate')
    .description(
      'apply the schema migrations the store lacks (idempotent; exit 0 when up to date), naming what one found and ' +
        'did (6: runs recorded again under an id they already had, kept aside in runs_set_aside)',
    )
    .option(...NEEDED_STORE_OPTION)
    .action(async (opts: { store?: string }) => {
      const url = neededUrl(opts.store);
      const { migrateStore } = await import('../store/pg-store.js');
      const m = await migrateStore(url);
      process.stdout.write(
        m.applied.length
          ? `migrated ${redactStoreUrl(url)} from schema version ${m.from} to ${m.to}:\n${m.applied.map((a) => `  ${a}`).join('\n')}\n`
          : `${redactStoreUrl(url)} is up to date (schema version ${m.to})\n`,
      );
      // What a migration found (a run id of the store's own text): one escaped line each.
      for (const note of m.notes) process.stdout.write(`  - ${inert(note)}\n`);
    });
  store
    .command('import')
    .description(
      'load a text history (<dir>/YYYY-MM.jsonl, <dir>/snapshots/, tools.lock.json beside <dir>) into the store, in ' +
        'one transaction; runs it holds already are left out',
    )
    .requiredOption('--from <dir>', "the history directory (a catalog's history/)")
    .option(...NEEDED_STORE_OPTION)
    .action(async (opts: { from: string; store?: string }) => {
      directoryFlag('--from', opts.from);
      if (!existsSync(opts.from)) throw flagError('--from', 'no such directory', opts.from);
      const url = neededUrl(opts.store);
      const { importHistory } = await import('../store/transfer.js');
      await withPgStore(url, async (pg) => {
        const r = await importHistory(pg, opts.from);
        process.stdout.write(
          `imported ${r.runs} run${r.runs === 1 ? '' : 's'}, ${r.snapshots} snapshots, ${r.acceptances} acceptances into ${redactStoreUrl(url)}` +
            `${r.present ? ` (${r.present} runs were there already)` : ''}${
              r.problems ? `; ${r.problems} history lines could not be used (onetap report names them)` : ''
            }\n`,
        );
        for (const s of r.skipped) process.stderr.write(`onetap: warning: ${s}\n`);
      });
    });
  store
    .command('export')
    .description(
      'write the store as a text history: <dir>/YYYY-MM.jsonl, <dir>/snapshots/, and tools.lock.json beside <dir>',
    )
    .requiredOption('--to <dir>', "a new or empty history directory (a catalog's history/)")
    .option(...NEEDED_STORE_OPTION)
    .action(async (opts: { to: string; store?: string }) => {
      directoryFlag('--to', opts.to);
      if (existsSync(opts.to) && readdirSync(opts.to).length)
        throw flagError('--to', 'must be a new or empty directory (export writes a whole history)', opts.to);
      const url = neededUrl(opts.store);
      const { exportHistory, lockBeside } = await import('../store/transfer.js');
      if (existsSync(lockBeside(opts.to)))
        throw flagError('--to', `${lockBeside(opts.to)} exists already (export writes the acceptances there)`, opts.to);
      await withPgStore(url, async (pg) => {
        const r = await exportHistory(pg, opts.to);
        process.stdout.write(
          `exported ${r.months.length} month file${r.months.length === 1 ? '' : 's'}, ${r.snapshots} snapshots, ${r.acceptances} acceptances to ${opts.to}\n`,
        );
      });
    });
  store
    .command('grant-vantage')
    .description(
      "print the SQL for a PostgreSQL role of one vantage's workers: its own observations, canaries and queue, the " +
        "host leases, nothing else (run it as the store's owner, after migrate)",
    )
    .argument('<name>', "the vantage (as its workers' --vantage)", vantageName)
    .option('--role <name>', "the role's name (default <schema>_vantage_<name>)", roleFlag)
    .option(...NEEDED_STORE_OPTION)
    .action(async (vantage: string, opts: { role?: string; store?: string }) => {
      const { schema } = connection(neededUrl(opts.store));
      const role = opts.role ?? vantageRoleOf(schema, vantage);
      if (Buffer.byteLength(role) > 63)
        throw flagError('--role', `is needed: the default role name ${role} is longer than PostgreSQL's 63 bytes`);
      const { queueNameOf } = await import('../queue/queue.js');
      process.stdout.write(vantageRoleSql({ schema, vantage, queue: queueNameOf(vantage), role }));
    });
}

/** `--role`: a PostgreSQL role name as the printed SQL quotes it (lower case, digits, _ and -, up to 63). */
function roleFlag(value: string): string {
  if (!/^[a-z_][a-z0-9_-]{0,62}$/.test(value))
    throw new InvalidArgumentError(`a role name is a-z, digits, _ and - (up to 63), got "${value.slice(0, 80)}"`);
  return value;
}

/** Runs `work` on the PostgreSQL store at `url` (its schema checked), closing it after. */
async function withPgStore(
  url: string,
  work: (store: import('../store/pg-store.js').PgStore) => Promise<void>,
): Promise<void> {
  const store = await (await import('../store/pg-store.js')).openPgStore(url);
  try {
    await work(store);
  } finally {
    await store.close();
  }
}
