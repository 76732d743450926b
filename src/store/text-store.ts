/**
 * The default store: plain files beside the catalog, made to be committed, so a fresh clone (a CI runner) knows
 * every streak, bar and acceptance. The history (`history/YYYY-MM.jsonl`, `./lines.ts`), the tool snapshots
 * (`history/snapshots/`, `./snapshots.ts`) and the acceptances (`tools.lock.json`, `./lock.ts`); the index is
 * in memory (`./text-index.ts`). Nothing is written until a run is recorded or a list accepted.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, open, readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { LockEntry, ToolsLock } from '../model/acceptance.js';
import type { HistoryProblems, PlanRow, RecordedRun, VerdictPoint } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import { acquireLock, LockBusyError, writeAllAtomic, writeFileAtomic, type FileWrite } from '../util/atomic.js';
import { historyDir, monthFileName, parseHistory, runLines, withApplied } from './lines.js';
import { lockPath, readLock, serializeLock } from './lock.js';
import { readSnapshot, snapshotFiles, type SnapshotRead } from './snapshots.js';
import { TextIndex, type Retention } from './text-index.js';
import { RunRecordedError, type RunChanges, type RunSelection, type Store, type UrlHistory } from './store.js';

export class TextStore implements Store {
  readonly dir: string;
  private readonly index: TextIndex;

  /** The store of the catalog at `catalogPath`; `retention` bounds what queries return (the files are never pruned). */
  constructor(
    readonly catalogPath: string,
    retention: Retention = {},
  ) {
    this.dir = historyDir(catalogPath);
    this.index = new TextIndex(this.dir, retention);
  }

  /** The index, in step with the files (a pull, another run's append). */
  private fresh(): TextIndex {
    this.index.sync();
    return this.index;
  }

  async recent(url: string, limit: number): Promise<PlanRow[]> {
    return this.fresh().recent(url, limit);
  }
  async since(url: string, since: string): Promise<PlanRow[]> {
    return this.fresh().since(url, since);
  }
  async verdicts(url: string, since: string): Promise<VerdictPoint[]> {
    return this.fresh().verdicts(url, since);
  }
  async histories(urls: readonly string[], since: string): Promise<Map<string, UrlHistory>> {
    const index = this.fresh();
    return new Map(
      urls.map((url) => {
        const points = index.verdicts(url, since);
        return [url, { points, last: points.length ? (index.recent(url, 1)[0] ?? null) : null }];
      }),
    );
  }

  async latestRun(): Promise<RecordedRun | null> {
    return this.fresh().runs({ last: 1 })[0] ?? null;
  }
  async recordedRun(id: string): Promise<RecordedRun | null> {
    return this.fresh().run(id);
  }

  /**
   * A lock file per run id beside the month files (`history/.run-<digest>.lock`): a second decider of the run on this
   * machine waits for the first, however long it probes; a holder that died leaves a lock the next one takes over.
   */
  async holdRun(id: string, onBusy?: () => void): Promise<() => Promise<void>> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `.run-${createHash('sha256').update(id).digest('hex').slice(0, 16)}`);
    try {
      return await acquireLock(path, 0);
    } catch (err) {
      if (!(err instanceof LockBusyError)) throw err;
      onBusy?.();
      return acquireLock(path, Infinity);
    }
  }
  async stamp(): Promise<string> {
    return this.fresh().stamp;
  }
  async runs(select: RunSelection): Promise<RecordedRun[]> {
    return this.fresh().runs(select);
  }
  async problems(): Promise<HistoryProblems> {
    return this.fresh().problems();
  }
  async acceptances(): Promise<ToolsLock> {
    return readLock(this.catalogPath);
  }
  async snapshot(hash: string, sha256?: string | null): Promise<SnapshotRead> {
    return readSnapshot(this.catalogPath, hash, sha256);
  }

  async snapshotDigests(snapshots: readonly StoredSnapshot[], rewrite: boolean): Promise<Map<string, string>> {
    return (await snapshotFiles(this.catalogPath, snapshots, rewrite)).sha;
  }

  /**
   * The snapshot files, the lock and `changes.files` (the catalog last) are staged and renamed together; then the
   * run's lines are appended. When the files fail, the run is recorded as not applied.
   */
  async record(recorded: RecordedRun, changes: RunChanges): Promise<string[]> {
    // Recorders of one history take the catalog's write lock (`applyPlan`), so this check and the append are one step.
    if (this.fresh().run(recorded.run.id)?.run.aborted === null) throw new RunRecordedError(recorded.run.id);
    const snapshots = (await snapshotFiles(this.catalogPath, changes.snapshots, changes.rewriteSnapshots)).writes;
    const lock: FileWrite[] = changes.lock
      ? [{ path: lockPath(this.catalogPath), content: serializeLock(changes.lock) }]
      : [];
    // The acceptances go in before the catalog, which stays last; a file that already holds its content is left be.
    const files = await changedOnly([...snapshots, ...changes.files.slice(0, -1), ...lock, ...changes.files.slice(-1)]);
    try {
      await writeAllAtomic(files);
    } catch (err) {
      await appendRuns(this.dir, [{ ...recorded, run: { ...recorded.run, applied: false } }]);
      throw err;
    }
    // Listed as a reader looks for them: the catalog's files, then the tool lists, then the history.
    const kept = new Set(snapshots.map((f) => f.path));
    const paths = files.map((f) => f.path);
    return [
      ...paths.filter((p) => !kept.has(p)),
      ...paths.filter((p) => kept.has(p)),
      ...(await appendRuns(this.dir, [recorded])),
    ];
  }

  /** The files as `record` writes them, then the run's line in its month file rewritten with `"applied": true`. */
  async applyRecorded(id: string, changes: RunChanges): Promise<string[]> {
    const place = this.fresh().placeOf(id);
    if (!place) throw new Error(`run ${id} is not recorded in ${this.dir}`);
    const snapshots = (await snapshotFiles(this.catalogPath, changes.snapshots, changes.rewriteSnapshots)).writes;
    const lock: FileWrite[] = changes.lock
      ? [{ path: lockPath(this.catalogPath), content: serializeLock(changes.lock) }]
      : [];
    const files = await changedOnly([...snapshots, ...changes.files.slice(0, -1), ...lock, ...changes.files.slice(-1)]);
    await writeAllAtomic(files);
    const kept = new Set(snapshots.map((f) => f.path));
    const paths = files.map((f) => f.path);
    return [
      ...paths.filter((p) => !kept.has(p)),
      ...paths.filter((p) => kept.has(p)),
      await markApplied(this.dir, place, id),
    ];
  }

  async accept(url: string, entry: LockEntry): Promise<void> {
    const path = lockPath(this.catalogPath);
    const release = await acquireLock(path, 10_000);
    try {
      const lock = await readLock(this.catalogPath);
      await writeFileAtomic(path, serializeLock({ version: 1, servers: { ...lock.servers, [url]: entry } }));
    } finally {
      await release();
    }
  }

  async close(): Promise<void> {}
}

/** The writes whose file does not already hold exactly their content. */
export async function changedOnly(files: readonly FileWrite[]): Promise<FileWrite[]> {
  const same = await Promise.all(
    files.map(async (f) => (await readFile(f.path, 'utf8').catch(() => null)) === f.content),
  );
  return files.filter((_, i) => !same[i]);
}

/**
 * Appends runs to their month files: one locked write per file, then fsync. An incomplete tail left by a
 * crash is cut off first, so it can never run into the new lines.
 */
export async function appendRuns(dir: string, runs: readonly RecordedRun[]): Promise<string[]> {
  const byFile = new Map<string, RecordedRun[]>();
  for (const r of runs)
    byFile.set(monthFileName(r.run.startedAt), [...(byFile.get(monthFileName(r.run.startedAt)) ?? []), r]);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [file, fileRuns] of byFile) {
    const path = join(dir, file);
    // The lock is a dot-file: never a month file, so never history.
    const release = await acquireLock(join(dir, `.${file}`), 10_000);
    try {
      const fresh = !existsSync(path);
      let known = new Map<string, string[]>();
      if (!fresh) {
        let current = readFileSync(path);
        // A last line that is whole but lost its newline (a hand edit) is kept: it gets its newline, not cut.
        if (current.length && current[current.length - 1] !== 0x0a && endsWithWholeLine(current)) {
          await appendFile(path, '\n');
          current = readFileSync(path);
        }
        const parsed = parseHistory(current);
        if (parsed.wholeBytes < current.length) await truncate(path, parsed.wholeBytes);
        known = parsed.tools;
      }
      const text = fileRuns.map((r) => runLines(r, known)).join('');
      const handle = await open(path, 'a', 0o644);
      try {
        await handle.write(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (fresh) await syncDir(dir);
      written.push(path);
    } finally {
      await release();
    }
  }
  return written;
}

/**
 * Rewrites a recorded run's line with `"applied": true`, under its month file's lock (appends wait), the file
 * replaced whole and atomically. The line must still be the run's where the index found it.
 */
async function markApplied(dir: string, place: { file: string; bytes: [number, number] }, id: string): Promise<string> {
  const path = join(dir, place.file);
  const release = await acquireLock(join(dir, `.${place.file}`), 10_000);
  try {
    const bytes = readFileSync(path);
    const [start] = place.bytes;
    const end = bytes.indexOf(0x0a, start);
    const line = end < 0 ? '' : bytes.toString('utf8', start, end);
    let found: unknown;
    try {
      found = JSON.parse(line);
    } catch {
      found = null;
    }
    if (!found || typeof found !== 'object' || (found as { id?: unknown }).id !== id)
      throw new Error(`${path} changed while run ${id} was applied; run it again`);
    await writeFileAtomic(path, [
      bytes.toString('utf8', 0, start),
      withApplied(line, true),
      bytes.toString('utf8', end),
    ]);
    return path;
  } finally {
    await release();
  }
}

/** The file's last line (after its last newline) is a whole JSON value: it only lacks its newline. */
function endsWithWholeLine(bytes: Buffer): boolean {
  try {
    JSON.parse(bytes.subarray(bytes.lastIndexOf(0x0a) + 1).toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  try {
    await handle?.sync();
  } catch {
    /* not every platform syncs directories */
  } finally {
    await handle?.close();
  }
}
