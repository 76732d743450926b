/**
 * `applyPlan`: a plan → the catalog's files and the store. The run is recorded as it happened: an outage-aborted
 * run as one aborted run and no observation (what it saw describes this machine's network); a plan-only run with
 * its observations and tool lists; a `write` run with every file, all or none, the catalog last, and `applied`
 * only once they were written. One writer at a time: the catalog's write lock is held throughout, and a catalog
 * that changed since the plan was made (another refresh, an editor) is not overwritten.
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CatalogError, type Catalog } from '../catalog/model.js';
import type { ToolsLock } from '../model/acceptance.js';
import type { Plan, RecordedRun } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import type { Store } from '../store/store.js';
import { acquireLock } from '../util/atomic.js';
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
  kotlinPackage?: string;
  now?: () => Date;
}

export interface Applied {
  /** The catalog's files written (empty unless `write` and not aborted). */
  written: string[];
}

export async function applyPlan(plan: Plan, opts: ApplyOptions): Promise<Applied> {
  const now = opts.now ?? (() => new Date());
  const release = await acquireLock(opts.catalogPath, 10_000);
  try {
    const unchanged = (await readFile(opts.catalogPath, 'utf8')) === opts.catalogText;
    const recorded = (applied: boolean): RecordedRun => ({
      run: { id: opts.run.id, startedAt: opts.run.startedAt, finishedAt: now().toISOString(), catalog: opts.catalogPath, applied, aborted: plan.aborted, summary: plan.summary, warnings: plan.warnings },
      rows: plan.rows,
    });
    const snapshots = [...new Set(plan.rows.map((r) => r.toolsHash).filter((h): h is string => h !== null))].map((h) => opts.snapshots.get(h)).filter((s): s is StoredSnapshot => !!s);
    if (plan.aborted) {
      await opts.store.record(recorded(false), { snapshots: [], lock: null, files: [], rewriteSnapshots: false });
      return { written: [] };
    }
    if (!opts.write || !unchanged) {
      // The rows recorded the snapshot files' SHA-256 as a `write` run leaves them: written so, whatever happens next.
      await opts.store.record(recorded(false), { snapshots, lock: null, files: [], rewriteSnapshots: opts.write });
      if (!opts.write) return { written: [] };
      throw new CatalogError(`${opts.catalogPath} changed during the refresh; nothing was written, run it again`);
    }
    const startedAt = opts.run.startedAt;
    const paths = outputPaths(opts.catalogPath, opts.outDir ?? dirname(opts.catalogPath));
    const staleAfter = new Date(Date.parse(startedAt) + STALE_AFTER_DAYS * 86_400_000).toISOString().slice(0, 10);
    const model = { catalog: nextCatalog(opts.catalog, plan, startedAt), plan, probedAt: startedAt, staleAfter };
    const existingLog = await readFile(paths.log, 'utf8').catch(() => null);
    const heldOut = new Set(plan.rows.filter((r) => r.heldOut).map((r) => r.url));
    const files = refreshFiles(model, paths, existingLog, opts.kotlinPackage, heldOut);
    const lock = withVerifiedDigests(acceptOnFirstUse(opts.lock, plan, startedAt, opts.snapshots), plan, opts.snapshots);
    await opts.store.record(recorded(true), { snapshots, lock: lock === opts.lock ? null : lock, files, rewriteSnapshots: true });
    return { written: files.map((f) => f.path) };
  } finally {
    await release();
  }
}

/** What a lock entry records of an accepted snapshot of this run: its tools digest and the SHA-256 of its file. */
function lockDigests(plan: Plan, snapshots: ReadonlyMap<string, StoredSnapshot>, hash: string): { toolsDigest?: string; snapshotSha256?: string } {
  const s = snapshots.get(hash);
  const sha = plan.rows.find((r) => r.toolsHash === hash)?.snapshotSha256;
  if (!s || !sha) return {};
  return { ...(s.toolsDigest ? { toolsDigest: s.toolsDigest } : {}), snapshotSha256: sha };
}

/** A server with no accepted tool list has this run's accepted on first use (never a flagged one). */
function acceptOnFirstUse(lock: ToolsLock, plan: Plan, at: string, snapshots: ReadonlyMap<string, StoredSnapshot>): ToolsLock {
  const first = plan.rows.filter((r) => r.firstUse && r.decision !== 'drop');
  if (first.length === 0) return lock;
  const servers = { ...lock.servers };
  for (const r of first) servers[r.url] = { name: r.name, hash: r.toolsHash!, ...lockDigests(plan, snapshots, r.toolsHash!), by: 'onetap refresh', why: 'accepted on first use', at };
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
    if (d.snapshotSha256 === undefined || (d.snapshotSha256 === e.snapshotSha256 && (d.toolsDigest ?? e.toolsDigest) === e.toolsDigest)) continue;
    servers ??= { ...lock.servers };
    servers[url] = { ...e, ...d };
  }
  return servers ? { version: 1, servers } : lock;
}
