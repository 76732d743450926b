/** How a command reaches its store: the text history beside the catalog (the default). */
import { existsSync, statSync } from 'node:fs';
import type { Store } from '../store/store.js';
import { flagError } from './args.js';

/** `--state` still names a file, as it did (a directory there is a mistake worth stopping for). */
function statePath(value: string): string {
  if (!value.trim() || value.includes('\0')) throw flagError('--state', 'must name a file', value);
  if (existsSync(value) && statSync(value).isDirectory()) throw flagError('--state', 'must be a file, not a directory', value);
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

/**
 * The store of a catalog: what `refresh` records to and every other command reads (`retentionDays` bounds what it
 * returns). Loaded when a command opens it: `onetap probe` never loads a store or the schemas it validates with.
 */
export async function openStore(catalogPath: string, retentionDays?: number): Promise<Store> {
  const { TextStore } = await import('../store/text-store.js');
  return new TextStore(catalogPath, retentionDays === undefined ? {} : { days: retentionDays });
}
