/**
 * The one place that picks a catalog's store: the text history beside the catalog (the default), or PostgreSQL
 * named by a `store` URL, else by `ONETAP_STORE_URL` in the environment (never a catalog field: the URL may hold a
 * password, so it is only ever shown redacted). The CLI, `refresh`, `serve` and `mcp` open their store here, so
 * none picks a default of its own. Loaded stores only: a driver or the schemas load when a store is opened.
 */
import type { Store } from './store.js';
import { redactStoreUrl, storeUrlProblem } from './url.js';

/** The environment variable that names a PostgreSQL store when no `store` URL is given. */
export const STORE_ENV = 'ONETAP_STORE_URL';

/** A store URL from the environment that is not one (the CLI exits 2 on it, naming the variable). */
export class StoreChoiceError extends Error {}

export interface OpenStoreOptions {
  /** A PostgreSQL URL (checked by the caller, as the CLI's `--store` flag is); over the environment's. */
  store?: string;
  /** Where `ONETAP_STORE_URL` is read (default: this process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Days of runs the store returns (default: all). */
  retentionDays?: number;
  /** The clock retention counts from (default: now). */
  now?: () => Date;
}

/** The PostgreSQL URL chosen (`store`, else `ONETAP_STORE_URL`), or undefined for the text history; checked. */
export function chosenStoreUrl(
  store: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  if (store !== undefined) return store;
  const url = env[STORE_ENV];
  if (!url) return undefined;
  const problem = storeUrlProblem(url);
  if (problem) throw new StoreChoiceError(`${STORE_ENV}: ${problem}, got "${redactStoreUrl(url)}"`);
  return url;
}

/**
 * The store of a catalog: what `refresh` records to and every other reader reads (`retentionDays` bounds what it
 * returns). A PostgreSQL store's schema is checked here, before any work (behind: an error naming
 * `onetap store migrate`).
 */
export async function openStore(catalogPath: string, opts: OpenStoreOptions = {}): Promise<Store> {
  const url = chosenStoreUrl(opts.store, opts.env);
  const retention = {
    ...(opts.retentionDays === undefined ? {} : { days: opts.retentionDays }),
    ...(opts.now === undefined ? {} : { now: opts.now }),
  };
  if (url !== undefined) return (await import('./pg-store.js')).openPgStore(url, retention);
  const { TextStore } = await import('./text-store.js');
  return new TextStore(catalogPath, retention);
}
