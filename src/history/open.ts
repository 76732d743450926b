/**
 * The history as commands read it: the text history in git (`./text.ts`) is the record; the SQLite file
 * (`.onetap/history.db`, out of git) is its index, rebuilt whenever it is missing or differs from the text.
 * The same history always gives the same index, so a fresh clone has every streak and bar.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { INDEX_FORMAT, SqliteHistoryStore } from './sqlite.js';
import type { HistoryStore } from './store.js';
import { appendRuns, historyDir, MONTH_FILE, NO_HISTORY_PROBLEMS, readHistory, readHistoryChecked, readHistoryFiles, type HistoryProblems, type HistoryRun, type PlanJson } from './text.js';

export interface OpenHistoryOptions {
  /**
   * Touch no file: index the text history in memory (or, with no text history, open an old store read-only).
   * For runs that are not recorded, which must leave no trace.
   */
  readonly?: boolean;
  /** Where warnings go (a legacy store carried into the text); default stderr. */
  warn?: (message: string) => void;
  /** What the index keeps; without it, every run (the commands that show history pass `DEFAULT_RETENTION_DAYS`). */
  retention?: Retention;
}

/**
 * How far back the index (and so the status pages and API) keeps runs: `days` UTC days up to today. Only the
 * index is bounded: the text history in git is never pruned (compact it deliberately), and accepted tool
 * snapshots (`history/snapshots/`) are files the index never holds.
 */
export interface Retention { days?: number; now?: () => Date }

/** The default of `--retention-days` (serve, report, site). */
export const DEFAULT_RETENTION_DAYS = 400;

/** The first UTC day kept (runs that started before it are left out of the index), or null to keep all. */
export function keptFromDay(retention: Retention = {}): string | null {
  if (retention.days === undefined) return null;
  return new Date((retention.now?.() ?? new Date()).getTime() - (retention.days - 1) * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The SQLite index of a catalog's text history; `sync()` brings it up to date with the files. It holds only
 * lines that fit the line format; `problems()` names the others (count and the first ten, `history/<file>:line`).
 */
export class HistoryIndex extends SqliteHistoryStore {
  private seen = '';

  constructor(path: string, readonly historyDir: string, readonly retention: Retention = {}) {
    super(path);
  }

  /**
   * Rebuilds the index if the month files differ from what it was built from, or if it must keep more days
   * than it holds; drops the runs that fell out of the retention window. Cheap when nothing changed since the
   * last call in this process (file sizes and times, and the day); otherwise hashes the files.
   */
  sync(): boolean {
    const keptFrom = keptFromDay(this.retention);
    const stamp = `${statStamp(this.historyDir)}|${keptFrom}`;
    if (stamp === this.seen) return false;
    const files = readHistoryFiles(this.historyDir);
    const indexed = this.sources();
    // An index built by another format is rebuilt too: it may hold lines this one would not let in.
    const same = this.indexFormat() === INDEX_FORMAT && indexed.length === files.length && files.every((f, i) => indexed[i]!.file === f.file && indexed[i]!.sha256 === f.sha256 && indexed[i]!.bytes === f.bytes);
    const held = this.keptFrom();
    // To keep more than it holds, the index is rebuilt; to keep less, it forgets the oldest runs.
    const rebuild = !same || (held !== null && (keptFrom === null || keptFrom < held));
    // All runs are read, so the first kept run's `previous` is still the run before it.
    // Only lines that fit the format reach the index; the others are counted and named (`problems()`).
    if (rebuild) {
      const { runs, problems } = readHistoryChecked(this.historyDir, files);
      this.replaceAll(runs.filter((r) => keptFrom === null || r.run.startedAt >= keptFrom), files.map(({ file, bytes, sha256 }) => ({ file, bytes, sha256 })), keptFrom, problems);
    } else if (keptFrom !== null && (held === null || keptFrom > held)) this.pruneBefore(keptFrom);
    this.seen = stamp;
    return rebuild;
  }
}

/**
 * The lines of the text history a store was built without (none for a store that is not an index of it, or no
 * store): what `report`, `serve` and `refresh` say were skipped.
 */
export function historyProblemsOf(store: HistoryStore | null | undefined): HistoryProblems {
  return store instanceof SqliteHistoryStore ? store.problems() : NO_HISTORY_PROBLEMS;
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
      const memory = new HistoryIndex(':memory:', dir, opts.retention);
      memory.sync();
      return memory;
    }
    return existsSync(statePath) ? new SqliteHistoryStore(statePath, { readonly: true }) : null;
  }
  if (!hasText && !existsSync(statePath)) return null;
  const index = new HistoryIndex(statePath, dir, opts.retention);
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
