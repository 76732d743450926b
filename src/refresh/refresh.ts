/**
 * `refresh`: probe every catalog entry, decide per row, show the plan, then (with `write`) record and
 * apply atomically. The order is the contract: nothing is written before `onPlan` has been called.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PROBE_MANY_DEFAULTS, probeMany } from '../attest/probe-many.js';
import type { ProbeOptions } from '../attest/probe.js';
import { isReachable } from '../attest/reachable.js';
import { probeOutcome, unprocessableOutcome, type ProbeOutcome } from '../attest/result.js';
import type { ProbeResult } from '../attest/probe.js';
import { profileById } from '../attest/profile.js';
import { curatedCard } from '../discover/discover.js';
import { cardMismatches, type Mismatch } from '../discover/consistency.js';
import { CatalogError, loadCatalog } from '../catalog/model.js';
import { isLoopbackUrl } from '../catalog/url.js';
import { buildPlan, type Plan } from '../decide/decide.js';
import { planJson } from '../decide/plan-json.js';

export { planJson };
import type { HistoryStore, ObservationRecord } from '../history/store.js';
import { HistoryIndex, historyProblemsOf, openHistory } from '../history/open.js';
import { appendRuns, historyDir, type HistoryProblems } from '../history/text.js';
import { acquireLock, writeAllAtomic, type FileWrite } from '../util/atomic.js';
import { lockPath, readLock, readSnapshot, serializeLock, snapshotFile, type LockEntry, type ToolsLock } from '../catalog/lock.js';
import { reviewAgainst, type ToolReview } from '../decide/drift.js';
import { parseStoredSnapshot, type StoredSnapshot } from '../attest/snapshot.js';
import { createHash } from 'node:crypto';
import type { Mismatch as CardMismatch } from '../discover/consistency.js';
import { nextCatalog, outputPaths, refreshFiles } from './apply.js';

export interface RefreshOptions {
  catalogPath: string;
  /**
   * The history index (SQLite file, default `.onetap/history.db`) of the text history in
   * `<catalog dir>/history/`; ignored when `store` is given.
   */
  statePath?: string;
  /** Another history store (e.g. a server database): read and recorded instead of the text history. */
  store?: HistoryStore;
  write?: boolean;
  /**
   * Record the run in the history. Default: only a `write` run records; `true` also records a plan-only run
   * (one that should count); `false` never touches any history or store (e.g. for agents).
   */
  record?: boolean;
  /** Also run every client profile and record the matrix (informational: only the deciding profile decides). */
  matrix?: boolean;
  /** The deciding client profile (default: the catalog's `policy.clientProfile`, else `kai-9000`). */
  profile?: string;
  concurrency?: number;
  /** Probes in flight per host (default 4). */
  perHost?: number;
  /** Progress: a row's probe started / ended (by catalog index). */
  onProbeStart?: (index: number) => void;
  onProbeResult?: (index: number) => void;
  /** Per-request time limit override (default: the catalog's `policy.timeoutMs`, else the profile's own). */
  timeoutMs?: number;
  allowHttp?: boolean;
  confirmDrops?: number;
  /** Directory for generated files (default: the catalog's directory). */
  outDir?: string;
  kotlinPackage?: string;
  /** Called with the plan before anything is written. */
  onPlan?: (plan: Plan) => void;
  /** Passed to every probe (retry delay, user agent, …). */
  probe?: Omit<ProbeOptions, 'requiresAuth' | 'headers' | 'timeoutMs' | 'dispatcher' | 'profile' | 'matrix'>;
  now?: () => Date;
}

export interface RefreshResult {
  plan: Plan;
  probedAt: string;
  /** Files written (empty without `write` or when aborted). */
  written: string[];
  /** 0 ran, 3 the outage guard aborted. */
  exitCode: 0 | 3;
  /** History lines skipped as unreadable when this run read the history (they decide nothing). */
  historyProblems: HistoryProblems;
}

export const STALE_AFTER_DAYS = 14;
/** Canaries only say whether this machine reaches the internet: a short limit is enough. */
const CANARY_TIMEOUT_MS = 15_000;

/** A Kotlin package name: dot-separated identifiers (the generated file declares it). */
export const KOTLIN_PACKAGE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export async function refresh(opts: RefreshOptions): Promise<RefreshResult> {
  const now = opts.now ?? (() => new Date());
  // What would make the write fail is checked before the first probe.
  if (opts.kotlinPackage !== undefined && !KOTLIN_PACKAGE.test(opts.kotlinPackage)) throw new CatalogError(`--kotlin-package: not a Kotlin package name: "${opts.kotlinPackage}"`);
  if (opts.outDir !== undefined && existsSync(opts.outDir) && !statSync(opts.outDir).isDirectory()) throw new CatalogError(`--out: ${opts.outDir} exists and is not a directory`);
  const { catalog, text } = await loadCatalog(opts.catalogPath);
  const insecure = catalog.servers.filter((s) => !s.url.startsWith('https://') && !(opts.allowHttp && s.url.startsWith('http://') && isLoopbackUrl(s.url)));
  if (insecure.length) throw new CatalogError(`${opts.catalogPath}: HTTPS only (--allow-http opens http:// on loopback only): ${insecure.map((s) => s.url).join(', ')}`);
  // A run that is not recorded reads the history without touching any file (not even the index).
  const recorded = opts.record ?? !!opts.write;
  const statePath = opts.statePath ?? '.onetap/history.db';
  let store = opts.store ?? (await openHistory(opts.catalogPath, statePath, { readonly: !recorded }));
  const historyProblems = historyProblemsOf(store);
  let release: (() => Promise<void>) | null = null;
  try {
    const confirmDrops = opts.confirmDrops ?? catalog.policy.confirmDrops ?? 1;
    const timeoutMs = opts.timeoutMs ?? catalog.policy.timeoutMs;
    const profile = opts.profile ?? catalog.policy.clientProfile;
    const startedAt = now().toISOString();
    // Each row's own card is fetched while the row is probed (no added wall time), compared once both are in.
    const cards: Array<Promise<unknown | null>> = [];
    const [results, canaries] = await Promise.all([
      probeMany(catalog.servers.map((s) => ({ url: s.url, requiresAuth: s.requiresAuth, headers: s.headers })), {
        ...opts.probe, concurrency: opts.concurrency ?? PROBE_MANY_DEFAULTS.concurrency, perHost: opts.perHost, timeoutMs, profile, matrix: opts.matrix,
        onStart: (i) => {
          const url = catalog.servers[i]!.url;
          cards[i] = curatedCard(url, { allowPrivate: !!opts.allowHttp && isLoopbackUrl(url) });
          opts.onProbeStart?.(i);
        },
        onResult: opts.onProbeResult ? (_, i) => opts.onProbeResult!(i) : undefined,
      }),
      checkCanaries(catalog.policy.canaries ?? [], Math.min(timeoutMs ?? CANARY_TIMEOUT_MS, CANARY_TIMEOUT_MS)),
    ]);
    const lock = await readLock(opts.catalogPath);
    const warnings: string[] = [];
    // The tool lists of this run, content-addressed beside the catalog (what `accept` accepts): which files a
    // recorded run writes, and the SHA-256 of each file's bytes as they will be on disk.
    const files = await snapshotFiles(opts.catalogPath, results.map((r) => r.snapshot), !!opts.write);
    const rows = await Promise.all(catalog.servers.map(async (s, i) => {
      const row = await processRow(opts.catalogPath, s.name, results[i]!, lock.servers[s.url], cards[i]!, warnings);
      if (row.toolsHash !== null) row.snapshotSha256 = files.sha.get(row.toolsHash) ?? null;
      return { ...row, history: store?.recent(s.url, confirmDrops + 1) ?? [] };
    }));
    const plan = buildPlan(rows, { confirmDrops, canaries, warnings });
    opts.onPlan?.(plan);
    const exitCode = plan.aborted ? 3 : 0;
    if (!recorded) return { plan, probedAt: startedAt, written: [], exitCode, historyProblems };

    // One writer at a time, and the catalog must not have changed since it was read (another refresh, an editor).
    // The history is appended under the same lock, so its order is the order the catalog was written in.
    release = await acquireLock(opts.catalogPath, 10_000);
    const unchanged = (await readFile(opts.catalogPath, 'utf8')) === text;
    // Every observation carries the run's time: the history is a series of runs. An outage run records one
    // aborted line and no observation: what it saw describes this machine's network, not the servers.
    const observations: ObservationRecord[] = plan.aborted ? [] : plan.rows.map(({ decision: _d, previous: _p, changed: _c, dropStreak: _s, note: _n, toolChanges: _t, acceptedHash: _a, firstUse: _f, heldOut: _h, cardMismatches: _m, ...outcome }) => ({ ...outcome, at: startedAt }));
    // The run is recorded as it happened: `applied` only once every file was written.
    const record = async (applied: boolean) => {
      const run = { startedAt, finishedAt: now().toISOString(), catalog: opts.catalogPath, applied, plan: planJson(plan) };
      if (opts.store) return opts.store.recordRun(run, observations);
      await appendRuns(historyDir(opts.catalogPath), [{ run, observations }]);
      store ??= await openHistory(opts.catalogPath, statePath);
      if (store instanceof HistoryIndex) store.sync();
    };
    if (plan.aborted) { await record(false); return { plan, probedAt: startedAt, written: [], exitCode: 3, historyProblems }; }
    const snapshots = files.writes;
    if (!opts.write || !unchanged) {
      await writeAllAtomic(snapshots);
      await record(false);
      if (!opts.write) return { plan, probedAt: startedAt, written: [], exitCode: 0, historyProblems };
      throw new CatalogError(`${opts.catalogPath} changed during the refresh; nothing was written, run it again`);
    }

    const paths = outputPaths(opts.catalogPath, opts.outDir ?? dirname(opts.catalogPath));
    const staleAfter = new Date(Date.parse(startedAt) + STALE_AFTER_DAYS * 86_400_000).toISOString().slice(0, 10);
    const model = { catalog: nextCatalog(catalog, plan, startedAt), plan, probedAt: startedAt, staleAfter };
    const existingLog = await readFile(paths.log, 'utf8').catch(() => null);
    const nextLock = withVerifiedDigests(acceptOnFirstUse(lock, plan, startedAt, files), files);
    const heldOut = new Set(plan.rows.filter((r) => r.heldOut).map((r) => r.url));
    const outputs = refreshFiles(model, paths, existingLog, opts.kotlinPackage, heldOut);
    // The acceptances go in before the catalog, which stays last.
    if (nextLock !== lock) outputs.splice(outputs.length - 1, 0, { path: lockPath(opts.catalogPath), content: serializeLock(nextLock) });
    try {
      await writeAllAtomic([...snapshots, ...outputs]);
    } catch (err) {
      await record(false);
      throw err;
    }
    await record(true);
    return { plan, probedAt: startedAt, written: outputs.map((f) => f.path), exitCode: 0, historyProblems };
  } finally {
    if (!opts.store) store?.close();
    await release?.();
  }
}

/** The server's own card (`<url>/server-card`) against what answered; null without a card. */
function cardCheck(url: string, r: ProbeResult, card: unknown | null): Mismatch[] | null {
  if (card === null || r.verdict === 'drop' || r.verdict === 'failed') return null;
  const eras = Object.fromEntries(Object.entries(r.matrix ?? {}).flatMap(([id, cell]) => {
    const p = profileById(id);
    return p && p.handshake !== 'app-fallback' ? [[p.protocolVersion, cell.works]] : [];
  }));
  // The deciding client's reading first; when it never got past initialize, the diagnosis's.
  return cardMismatches(card, { url, serverVersion: r.serverVersion ?? r.diagnosis?.serverVersion ?? null, protocolVersion: r.protocolVersion ?? r.diagnosis?.protocolVersion ?? null, eras });
}

/**
 * One row's outcome, its tool review and card check. Whatever goes wrong here is this row's verdict
 * (review/unprocessable), never the run's: the other rows are decided, written and recorded.
 */
async function processRow(catalogPath: string, name: string, r: ProbeResult, accepted: LockEntry | undefined, card: Promise<unknown | null>, warnings: string[]): Promise<ProbeOutcome & { toolReview?: ToolReview; cardMismatches: CardMismatch[] | null }> {
  let stage: 'review' | 'store' = 'store';
  try {
    const outcome = probeOutcome(name, r);
    JSON.stringify(outcome); // what will be recorded must serialise
    stage = 'review';
    const row = { ...outcome, toolReview: await toolReview(catalogPath, accepted, r.snapshot, warnings), cardMismatches: cardCheck(r.url, r, await card.catch(() => null)) };
    stage = 'store';
    JSON.stringify(row.cardMismatches);
    return row;
  } catch (err) {
    return { ...unprocessableOutcome(name, r, stage, err), cardMismatches: null };
  }
}

/** The row's tools against their acceptance: drift and identity against the accepted snapshot (verified). */
async function toolReview(catalogPath: string, accepted: LockEntry | undefined, latest: StoredSnapshot | null, warnings: string[]): Promise<ToolReview> {
  if (!accepted || !latest || accepted.hash === latest.hash) return reviewAgainst(accepted ? { hash: accepted.hash, toolsDigest: accepted.toolsDigest, snapshot: null } : null, latest);
  const read = await readSnapshot(catalogPath, accepted.hash, accepted.snapshotSha256);
  if (read.warning) warnings.push(read.warning);
  return reviewAgainst({ hash: accepted.hash, toolsDigest: accepted.toolsDigest, snapshot: read.snapshot }, latest);
}

/** A server with no accepted tool list has this run's accepted on first use (never a flagged one). */
function acceptOnFirstUse(lock: ToolsLock, plan: Plan, at: string, files: SnapshotFiles): ToolsLock {
  const first = plan.rows.filter((r) => r.firstUse && r.decision !== 'drop');
  if (first.length === 0) return lock;
  const servers = { ...lock.servers };
  for (const r of first) servers[r.url] = { name: r.name, hash: r.toolsHash!, ...lockDigests(files, r.toolsHash!), by: 'onetap refresh', why: 'accepted on first use', at };
  return { version: 1, servers };
}

/**
 * Acceptances of a list this run saw again (same hash, so the same tools) get its tools digest and its file's
 * SHA-256: entries written before these were recorded gain them, and a file this run rewrote stays verifiable.
 */
function withVerifiedDigests(lock: ToolsLock, files: SnapshotFiles): ToolsLock {
  let servers: ToolsLock['servers'] | null = null;
  for (const [url, e] of Object.entries(lock.servers)) {
    const d = lockDigests(files, e.hash);
    if (d.snapshotSha256 === undefined || (d.snapshotSha256 === e.snapshotSha256 && (d.toolsDigest ?? e.toolsDigest) === e.toolsDigest)) continue;
    servers ??= { ...lock.servers };
    servers[url] = { ...e, ...d };
  }
  return servers ? { version: 1, servers } : lock;
}

interface SnapshotFiles {
  /** Files this run writes when it records. */
  writes: FileWrite[];
  /** Per snapshot hash of this run, the SHA-256 of the file's bytes as they are once the run is recorded. */
  sha: Map<string, string>;
  snapshots: Map<string, StoredSnapshot>;
}

/**
 * This run's snapshot files: a missing one is written, and so is one whose bytes are not this snapshot's (an
 * edit; or an older format, which only a `--write` run rewrites, since it also updates the lock's SHA-256).
 */
async function snapshotFiles(catalogPath: string, list: Array<StoredSnapshot | null>, write: boolean): Promise<SnapshotFiles> {
  const snapshots = new Map(list.filter((s): s is StoredSnapshot => s !== null).map((s) => [s.hash, s]));
  const writes: FileWrite[] = [];
  const sha = new Map<string, string>();
  await Promise.all([...snapshots.values()].map(async (s) => {
    const file = snapshotFile(catalogPath, s);
    const current = await readFile(file.path).catch(() => null);
    const text = current?.toString('utf8');
    if (current && (text === file.content || (!write && isFormat1(text!, s.hash)))) {
      sha.set(s.hash, createHash('sha256').update(current).digest('hex'));
      return;
    }
    writes.push(file);
    sha.set(s.hash, createHash('sha256').update(file.content).digest('hex'));
  }));
  return { writes, sha, snapshots };
}

function isFormat1(text: string, hash: string): boolean {
  try { return parseStoredSnapshot(JSON.parse(text), hash)?.format === 1; } catch { return false; }
}

async function checkCanaries(urls: string[], timeoutMs: number) {
  const answers = await Promise.all(urls.map((u) => isReachable(u, timeoutMs)));
  return { configured: urls.length, reachable: answers.filter(Boolean).length };
}

/** What a lock entry records of an accepted snapshot of this run: its tools digest and the SHA-256 of its file. */
function lockDigests(files: SnapshotFiles, hash: string): { toolsDigest?: string; snapshotSha256?: string } {
  const s = files.snapshots.get(hash);
  const sha = files.sha.get(hash);
  if (!s || !sha) return {};
  return { ...(s.toolsDigest ? { toolsDigest: s.toolsDigest } : {}), snapshotSha256: sha };
}
