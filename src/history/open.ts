/**
 * The history as commands read it: the text history in git (`./text.ts`) is the record; the SQLite file
 * (`.onetap/history.db`, out of git) is its index, rebuilt whenever it is missing or differs from the text.
 * The same history always gives the same index, so a fresh clone has every streak and bar.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { SqliteHistoryStore } from './sqlite.js';
import { appendRuns, historyDir, MONTH_FILE, readHistory, readHistoryFiles, type HistoryRun, type PlanJson } from './text.js';

export interface OpenHistoryOptions {
  /**
   * Touch no file: index the text history in memory (or, with no text history, open an old store read-only).
   * For runs that are not recorded, which must leave no trace.
   */
  readonly?: boolean;
  /** Where warnings go (a legacy store carried into the text); default stderr. */
  warn?: (message: string) => void;
}

/** The SQLite index of a catalog's text history; `sync()` brings it up to date with the files. */
export class HistoryIndex extends SqliteHistoryStore {
  private seen = '';

  constructor(path: string, readonly historyDir: string) {
    super(path);
  }

  /**
   * Rebuilds the index if the month files differ from what it was built from. Cheap when nothing changed
   * since the last call in this process (file sizes and times only); otherwise hashes the files.
   */
  sync(): boolean {
    const stamp = statStamp(this.historyDir);
    if (stamp === this.seen) return false;
    const files = readHistoryFiles(this.historyDir);
    const indexed = this.sources();
    const same = indexed.length === files.length && files.every((f, i) => indexed[i]!.file === f.file && indexed[i]!.sha256 === f.sha256 && indexed[i]!.bytes === f.bytes);
    if (!same) this.replaceAll(readHistory(this.historyDir, files), files.map(({ file, bytes, sha256 }) => ({ file, bytes, sha256 })));
    this.seen = stamp;
    return !same;
  }
}

/** The directory's mtime (a month file appeared or went) and each month file's size and mtime. */
function statStamp(dir: string): string {
  if (!existsSync(dir)) return 'none';
  const parts = [String(statSync(dir).mtimeMs)];
  for (const f of readdirSync(dir).filter((n) => MONTH_FILE.test(n)).sort()) {
    const s = statSync(`${dir}/${f}`);
    parts.push(`${f}:${s.size}:${s.mtimeMs}`);
  }
  return parts.join('|');
}

/**
 * Opens the history of a catalog for reading and recording, syncing the index first. Returns null when there
 * is no history yet (no text history and no store): nothing is created until a run is recorded.
 * An old store that holds runs the text history does not have is carried into it once (and kept as
 * `<state>.pre-text-history` just in case), then it is only an index.
 */
export async function openHistory(catalogPath: string, statePath: string, opts: OpenHistoryOptions = {}): Promise<HistoryIndex | SqliteHistoryStore | null> {
  const dir = historyDir(catalogPath);
  const hasText = readHistoryFiles(dir).length > 0;
  if (opts.readonly) {
    if (hasText) {
      const memory = new HistoryIndex(':memory:', dir);
      memory.sync();
      return memory;
    }
    return existsSync(statePath) ? new SqliteHistoryStore(statePath, { readonly: true }) : null;
  }
  if (!hasText && !existsSync(statePath)) return null;
  const index = new HistoryIndex(statePath, dir);
  try {
    if (index.isLegacy()) await carryLegacy(index, catalogPath, statePath, opts.warn ?? ((m) => process.stderr.write(`onetap: ${m}\n`)));
    index.sync();
    return index;
  } catch (err) {
    index.close();
    throw err;
  }
}

/** Writes the legacy store's runs of this catalog into the text history (those not there already). */
async function carryLegacy(index: HistoryIndex, catalogPath: string, statePath: string, warn: (m: string) => void): Promise<void> {
  const backup = `${statePath}.pre-text-history`;
  if (!existsSync(backup)) index.copyTo(backup);
  const known = new Set(readHistory(index.historyDir).map((r) => r.run.startedAt));
  const all = index.allRuns();
  const mine = all.filter((r) => resolve(r.run.catalog) === resolve(catalogPath));
  const carried: HistoryRun[] = mine.filter((r) => !known.has(r.run.startedAt))
    .map(({ run: { id: _, ...run }, observations }) => ({ run: { ...run, plan: run.plan as PlanJson }, observations }));
  if (carried.length) await appendRuns(index.historyDir, carried);
  if (all.length > mine.length) warn(`${all.length - mine.length} run(s) in ${statePath} belong to another catalog and were not carried into ${index.historyDir}; a copy of the old store is in ${backup}`);
  if (carried.length) warn(`carried ${carried.length} run(s) from ${statePath} into the text history ${index.historyDir} (commit it; the store is now only its index)`);
}
