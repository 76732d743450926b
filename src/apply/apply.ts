/**
 * `applyPlan`: a plan → the catalog's files and the store. The run is recorded as it happened: an outage-aborted
 * run as one aborted run and no observation (what it saw describes this machine's network); a plan-only run with
 * its observations and tool lists; a `write` run with every file, all or none, the catalog last, and `applied`
 * only once they were written. One writer at a time: the catalog's write lock is held throughout, and a catalog
 * that changed since the plan was made (another refresh, an editor) is not overwritten.
 *
 * A run id is recorded once: a run recorded already is never recorded again (`alreadyRecordedAction`): its plan is
 * shown as recorded, or, recorded but not applied and now asked to write, applied (`applyRecordedRun`).
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CatalogError, type Catalog } from '../catalog/model.js';
import type { ToolsLock } from '../model/acceptance.js';
import type { ResolvedOutputs } from '../catalog/outputs.js';
import type { Plan, RecordedRun, RunRecord } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import type { Store } from '../store/store.js';
import { acquireLock, type FileWrite } from '../util/atomic.js';
import { snapshotStaleAfter, snapshotWithDates } from '../outputs/snapshot.js';
import { nextCatalog, outputPaths, refreshFiles } from './files.js';

export const STALE_AFTER_DAYS = 14;

export interface ApplyOptions {
  store: Store;
  catalogPath: string;
  /** The catalog as the plan was made from it, and its text (a catalog whose text changed is not overwritten). */
  catalog: Catalog;
  catalogText: string;
  /** The run: its id and start time. */
  run: { id: string; startedAt: string };
  /** Write the catalog and the generated files (else the run is only recorded). */
  write: boolean;
  /** The tool lists the plan's rows name, by hash. */
  snapshots: ReadonlyMap<string, StoredSnapshot>;
  /** The acceptances the plan was made against. */
  lock: ToolsLock;
  /** Directory for generated files (default: the catalog's directory). */
  outDir?: string;
  /** The generated files to write (resolved from the catalog's `outputs` and the flags). */
  outputs: ResolvedOutputs;
  /**
   * Days until the next scheduled run: a run that changes nothing still refreshes the snapshot's dates when they
   * would pass before then (default 7, a weekly run).
   */
  nextRunDays?: number;
  now?: () => Date;
}

export interface Applied {
  /** Every file whose bytes this run changed: the catalog's, the generated ones, the lock, snapshots, the history. */
  written: string[];
  /**
   * A `write` run that changed nothing (the catalog, the lock, the runtime lists and every row's verdict and reason
   * as before): no generated file was written, unless `datesOnly`. False for any other run.
   */
  quiet: boolean;
  /** A quiet run that refreshed only the snapshot's dates, which would have gone stale before the next run. */
  datesOnly: boolean;
}

/**
 * What deciding a run whose id is recorded already does (pure): show its plan as recorded, apply it, or, when the
 * outage guard aborted it (it decided nothing: this machine's network was down), decide it afresh.
 */
export function alreadyRecordedAction(
  run: Pick<RunRecord, 'applied' | 'aborted'>,
  write: boolean,
): 'show' | 'apply' | 'decide' {
  if (run.aborted !== null) return 'decide';
  // Only a run that was not applied and is now asked to write is applied; never recorded again.
  return write && !run.applied ? 'apply' : 'show';
}

/** A recorded run's plan, as it was made. */
export function recordedPlan(r: RecordedRun): Plan {
  return {
    rows: r.rows,
    summary: r.run.summary,
    aborted: r.run.aborted,
    warnings: r.run.warnings,
    ...(r.run.quorum !== undefined ? { quorum: r.run.quorum } : {}),
  };
}

/**
 * Applies a run recorded but not applied (a `--record` run, or a `--write` whose files failed): its recorded plan to
 * the catalog as it is now, under the catalog's write lock, the run then marked applied and nothing else recorded.
 * A plan made for other rows than the catalog's (a server added or removed since) is not applied.
 */
export async function applyRecordedRun(
  recorded: RecordedRun,
  opts: Omit<ApplyOptions, 'run' | 'write'>,
): Promise<Applied> {
  const plan = recordedPlan(recorded);
  const urls = (xs: ReadonlyArray<{ url: string }>) => xs.map((x) => x.url).join('\n');
  if (urls(plan.rows) !== urls(opts.catalog.servers)) {
    throw new CatalogError(
      `run ${recorded.run.id} is recorded for other rows than ${opts.catalogPath} holds now: it cannot be applied ` +
        `(a run id is recorded once; decide a new run with another --run-id)`,
    );
  }
  const release = await acquireLock(opts.catalogPath, 10_000);
  try {
    if ((await readFile(opts.catalogPath, 'utf8')) !== opts.catalogText)
      throw new CatalogError(`${opts.catalogPath} changed during the refresh; nothing was written, run it again`);
    const w = await writes(plan, { ...opts, run: recorded.run, write: true });
    const written = await opts.store.applyRecorded(recorded.run.id, {
      snapshots: w.snapshots,
      lock: w.lock,
      files: w.files,
      rewriteSnapshots: false,
    });
    return { written, quiet: w.quiet, datesOnly: w.datesOnly };
  } finally {
    await release();
  }
}

export async function applyPlan(plan: Plan, opts: ApplyOptions): Promise<Applied> {
  const now = opts.now ?? (() => new Date());
  const release = await acquireLock(opts.catalogPath, 10_000);
  try {
    const unchanged = (await readFile(opts.catalogPath, 'utf8')) === opts.catalogText;
    const recorded = (applied: boolean): RecordedRun => ({
      run: {
        id: opts.run.id,
        startedAt: opts.run.startedAt,
        finishedAt: now().toISOString(),
        catalog: opts.catalogPath,
        applied,
        aborted: plan.aborted,
        summary: plan.summary,
        warnings: plan.warnings,
        ...(plan.quorum !== undefined ? { quorum: plan.quorum } : {}),
      },
      rows: plan.rows,
    });
    const snapshots = snapshotsOf(plan, opts.snapshots);
    if (plan.aborted) {
      const written = await opts.store.record(recorded(false), {
        snapshots: [],
        lock: null,
        files: [],
        rewriteSnapshots: false,
      });
      return { written, quiet: false, datesOnly: false };
    }
    if (!opts.write || !unchanged) {
      // The rows recorded the snapshot files' SHA-256 as a `write` run leaves them: written so, whatever happens next.
      const written = await opts.store.record(recorded(false), {
        snapshots,
        lock: null,
        files: [],
        rewriteSnapshots: opts.write,
      });
      if (!opts.write) return { written, quiet: false, datesOnly: false };
      throw new CatalogError(`${opts.catalogPath} changed during the refresh; nothing was written, run it again`);
    }
    const w = await writes(plan, opts);
    const written = await opts.store.record(recorded(true), {
      snapshots: w.snapshots,
      lock: w.lock,
      files: w.files,
      rewriteSnapshots: true,
    });
    return { written, quiet: w.quiet, datesOnly: w.datesOnly };
  } finally {
    await release();
  }
}

/** The tool lists a plan's rows name, of those given. */
function snapshotsOf(plan: Plan, snapshots: ReadonlyMap<string, StoredSnapshot>): StoredSnapshot[] {
  return [...new Set(plan.rows.map((r) => r.toolsHash).filter((h): h is string => h !== null))]
    .map((h) => snapshots.get(h))
    .filter((s): s is StoredSnapshot => !!s);
}

/**
 * What applying a plan writes: the files (none but perhaps the snapshot's dates when nothing changed), the acceptances
 * (null: unchanged), the snapshots.
 */
async function writes(
  plan: Plan,
  opts: ApplyOptions,
): Promise<{
  files: FileWrite[];
  lock: ToolsLock | null;
  snapshots: StoredSnapshot[];
  quiet: boolean;
  datesOnly: boolean;
}> {
  const startedAt = opts.run.startedAt;
  const paths = outputPaths(opts.outputs, opts.outDir ?? dirname(opts.catalogPath));
  const staleAfter = day(Date.parse(startedAt) + STALE_AFTER_DAYS * 86_400_000);
  const model = { catalog: nextCatalog(opts.catalog, plan, startedAt), plan, probedAt: startedAt, staleAfter };
  const existingLog = paths.log === undefined ? null : await readFile(paths.log, 'utf8').catch(() => null);
  const heldOut = new Set(plan.rows.filter((r) => r.heldOut).map((r) => r.url));
  const lock = withVerifiedDigests(acceptOnFirstUse(opts.lock, plan, startedAt, opts.snapshots), plan, opts.snapshots);
  let files = refreshFiles(model, opts.catalogPath, paths, existingLog, heldOut);
  const quiet = lock === opts.lock && !plan.rows.some((r) => r.changed) && !(await listsDiffer(files, paths));
  let datesOnly = false;
  if (quiet) {
    // Nothing changed: no generated file, no log entry; the snapshot's dates only when they would go stale first.
    const existing = paths.snapshot === undefined ? null : await readFile(paths.snapshot, 'utf8').catch(() => null);
    const staleAfterNow = existing === null ? null : snapshotStaleAfter(existing);
    const due =
      staleAfterNow !== null && staleAfterNow <= day(Date.parse(startedAt) + (opts.nextRunDays ?? 7) * 86_400_000);
    const dated = due ? snapshotWithDates(existing!, startedAt, staleAfter) : null;
    files = dated === null ? [] : [{ path: paths.snapshot!, content: dated }];
    datesOnly = dated !== null;
  }
  return {
    files,
    lock: lock === opts.lock ? null : lock,
    snapshots: snapshotsOf(plan, opts.snapshots),
    quiet,
    datesOnly,
  };
}

/** A UTC day (YYYY-MM-DD) of a time in ms. */
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Whether the catalog or a runtime list would change (the snapshot and the log carry dates and are not compared);
 * an output that is on but not there yet would change.
 */
async function listsDiffer(files: readonly FileWrite[], paths: ResolvedOutputs): Promise<boolean> {
  const dated = new Set([paths.snapshot, paths.log]);
  const compared = files.filter((f) => !dated.has(f.path));
  const same = await Promise.all(
    compared.map(async (f) => (await readFile(f.path, 'utf8').catch(() => null)) === f.content),
  );
  if (same.includes(false)) return true;
  // A snapshot or log that is on but missing is a change too (the first write of an output).
  const missing = await Promise.all(
    [paths.snapshot, paths.log]
      .filter((p): p is string => p !== undefined)
      .map((p) =>
        readFile(p).then(
          () => false,
          () => true,
        ),
      ),
  );
  return missing.includes(true);
}

/** What a lock entry records of an accepted snapshot of this run: its tools digest and the SHA-256 of its file. */
function lockDigests(
  plan: Plan,
  snapshots: ReadonlyMap<string, StoredSnapshot>,
  hash: string,
): { toolsDigest?: string; snapshotSha256?: string } {
  const s = snapshots.get(hash);
  const sha = plan.rows.find((r) => r.toolsHash === hash)?.snapshotSha256;
  if (!s || !sha) return {};
  return { ...(s.toolsDigest ? { toolsDigest: s.toolsDigest } : {}), snapshotSha256: sha };
}

/** A server with no accepted tool list has this run's accepted on first use (never a flagged one). */
function acceptOnFirstUse(
  lock: ToolsLock,
  plan: Plan,
  at: string,
  snapshots: ReadonlyMap<string, StoredSnapshot>,
): ToolsLock {
  // A list accepted since the plan was made (a recorded run applied later) stays accepted as it is.
  const first = plan.rows.filter((r) => r.firstUse && r.decision !== 'drop' && !lock.servers[r.url]);
  if (first.length === 0) return lock;
  const servers = { ...lock.servers };
  for (const r of first)
    servers[r.url] = {
      name: r.name,
      hash: r.toolsHash!,
      ...lockDigests(plan, snapshots, r.toolsHash!),
      by: 'onetap refresh',
      why: 'accepted on first use',
      at,
    };
  return { version: 1, servers };
}

/**
 * Acceptances of a list this run saw again (same hash, so the same tools) get its tools digest and its file's
 * SHA-256: entries written before these were recorded gain them, and a file this run rewrote stays verifiable.
 */
function withVerifiedDigests(lock: ToolsLock, plan: Plan, snapshots: ReadonlyMap<string, StoredSnapshot>): ToolsLock {
  let servers: ToolsLock['servers'] | null = null;
  for (const [url, e] of Object.entries(lock.servers)) {
    const d = lockDigests(plan, snapshots, e.hash);
    if (
      d.snapshotSha256 === undefined ||
      (d.snapshotSha256 === e.snapshotSha256 && (d.toolsDigest ?? e.toolsDigest) === e.toolsDigest)
    )
      continue;
    servers ??= { ...lock.servers };
    servers[url] = { ...e, ...d };
  }
  return servers ? { version: 1, servers } : lock;
}
