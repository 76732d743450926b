/**
 * A run across vantages, the collecting half: one job per catalog row (or probed URL) and vantage (and one for each vantage's
 * canaries) on the queue, then the observations the workers record, read back from the store until every vantage
 * answered for every row or the deadline passed. What did not answer by then is missing: `decide` says so.
 *
 * The run and its jobs are registered in the store before they are on the queue: only what a job that was enqueued
 * recorded after that counts, so nothing written ahead of a run (its id may be predictable) decides it. With
 * `policy.signedVantages`, only what a vantage signed with its key counts, the keys being this process's own.
 */
import type { ClientProfile } from '../attest/profile.js';
import { CatalogError, type CatalogServer } from '../catalog/model.js';
import { hostOf } from '../catalog/url.js';
import { keyEnvRefusal } from '../catalog/key-env.js';
import type { CanaryCheck } from '../decide/decide.js';
import type { Observation } from '../model/observation.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import { enqueue, type ProbeJob } from '../queue/queue.js';
import { vantageKeyEnvOf, vantageKeyProblem, type VantageKeys } from '../store/signatures.js';
import { CANARIES_URL, type Store, type VantageObservations } from '../store/store.js';
import { inTurns } from '../util/pool.js';

export interface AcrossOptions {
  vantages: readonly string[];
  /** The queue's PostgreSQL URL. */
  queueUrl: string;
  /** How long to wait for the workers, ms. */
  deadlineMs: number;
  /** Called once the jobs are on the queue, with when the wait ends. */
  onWaiting?: (until: Date, jobs: number) => void;
  /** How often the store is asked (default 500 ms). */
  pollMs?: number;
  /** `policy.signedVantages`: only what each vantage signed counts, verified with its key from `env` (`vantageKeys`). */
  signed?: boolean;
  /** Where the vantages' keys are read from (default: this process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The catalog's `policy.keyEnv`: which variables its rows may name as probe keys. */
  keyEnv?: readonly string[];
}

/**
 * The key each vantage's records must verify with, from the decider's own environment: `ONETAP_VANTAGE_KEY_<NAME>`
 * (the name in upper case, `-` as `_`). Refused before anything is enqueued when one is missing or too short, or two
 * vantages would read the same variable (never a value in the message).
 */
export function vantageKeys(vantages: readonly string[], env: Readonly<Record<string, string | undefined>>): VantageKeys {
  const keys = new Map<string, string>();
  const byVariable = new Map<string, string>();
  for (const v of vantages) {
    const name = vantageKeyEnvOf(v);
    if (byVariable.has(name)) throw new CatalogError(`policy.signedVantages: vantages ${byVariable.get(name)} and ${v} would both read ${name}; rename one`);
    byVariable.set(name, v);
    const key = env[name];
    if (!key) throw new CatalogError(`policy.signedVantages: ${name} is not set: the decider needs each vantage's key (the one its workers hold as ONETAP_VANTAGE_KEY)`);
    const problem = vantageKeyProblem(key);
    if (problem) throw new CatalogError(`policy.signedVantages: ${name}: ${problem}`);
    keys.set(v, key);
  }
  return keys;
}

export interface Gathered {
  /** Per URL, the observations of the vantages that answered. */
  byUrl: Map<string, Observation[]>;
  /** The tool lists they name, by hash. */
  snapshots: Map<string, StoredSnapshot>;
  canaries: Map<string, CanaryCheck>;
  /** What the run's plan should say: records written ahead of its jobs (discarded) or not counted (left out). */
  warnings: string[];
}

/** The worst case of one row: every step at the time limit, retried once, plus the queue's own slack. */
export function defaultDeadlineMs(profile: ClientProfile, timeoutMs: number | undefined): number {
  return (timeoutMs ?? profile.requestTimeoutMs) * 3 * 2 + profile.connectTimeoutMs + 30_000;
}

/** What a job probes: a catalog row, or a URL `probe` was given. */
export type Target = Pick<CatalogServer, 'url' | 'name' | 'requiresAuth' | 'headers' | 'probeHeaders'>;

/**
 * A row's probe-only keys as its jobs carry them: the variables the catalog's key rule permits (`policy.keyEnv`);
 * those it refuses are left out, and named so the record says the row was probed without them.
 */
export function jobKeys(t: Target, keyEnv: readonly string[] | undefined): Pick<ProbeJob, 'probeHeaders' | 'refusedKeys'> {
  if (!t.probeHeaders) return {};
  const permitted = Object.entries(t.probeHeaders).filter(([, h]) => keyEnvRefusal(h.env, keyEnv) === null);
  const refused = Object.values(t.probeHeaders).filter((h) => keyEnvRefusal(h.env, keyEnv) !== null).map((h) => h.env);
  return { ...(permitted.length ? { probeHeaders: Object.fromEntries(permitted) } : {}), ...(refused.length ? { refusedKeys: refused } : {}) };
}

/** What every job of a run shares. */
export interface JobSettings { profile: ClientProfile; timeoutMs?: number; matrix: boolean; allowHttp: boolean; perHost: number; census?: ProbeJob['census'] }

/**
 * The run and its jobs registered, the jobs on the queue, then the wait until every vantage answered for every target
 * and reported its canaries, or the deadline. Resolves to how many records written ahead of the jobs were discarded.
 */
export async function awaitAcross(
  targets: readonly Target[], canaries: readonly string[], store: Store & VantageObservations, asked: { id: string; startedAt: string }, settings: JobSettings, opts: AcrossOptions,
): Promise<{ discarded: number }> {
  const urls = [...targets.map((t) => t.url), ...(canaries.length ? [CANARIES_URL] : [])];
  const { registration, discarded } = await store.registerRun(asked, opts.vantages, opts.vantages.flatMap((vantage) => urls.map((url) => ({ url, vantage }))));
  // Every job of a run carries the run as first registered, whichever enqueue added it.
  const run = { id: registration.id, startedAt: registration.startedAt };
  const jobs: ProbeJob[] = opts.vantages.flatMap((vantage) => [
    // Each host's URLs in turns: a worker waiting for a host's slot holds a job no other host could use.
    ...inTurns(targets, (t) => hostOf(t.url) ?? t.url).map((s): ProbeJob => ({
      run, vantage, kind: 'probe', url: s.url, name: s.name, requiresAuth: s.requiresAuth, headers: { ...s.headers },
      ...jobKeys(s, opts.keyEnv), ...settings, canaries: [],
    })),
    ...(canaries.length ? [{ run, vantage, kind: 'canaries' as const, url: CANARIES_URL, name: 'canaries', requiresAuth: false, headers: {}, ...settings, canaries: [...canaries] }] : []),
  ]);
  await enqueue(opts.queueUrl, jobs);
  const until = Date.now() + opts.deadlineMs;
  opts.onWaiting?.(new Date(until), jobs.length);
  const expected = new Set(targets.map((t) => t.url)).size * opts.vantages.length;
  for (;;) {
    const arrived = await store.observationCount(run.id, opts.vantages);
    const reported = canaries.length ? (await store.canariesOf(run.id)).size : 0;
    if ((arrived >= expected && reported >= (canaries.length ? opts.vantages.length : 0)) || Date.now() >= until) break;
    await new Promise((r) => setTimeout(r, Math.min(opts.pollMs ?? 500, Math.max(0, until - Date.now()))));
  }
  return { discarded };
}

/** `awaitAcross`, then what arrived, read once: what arrived by the deadline decides. */
export async function gatherAcross(
  targets: readonly Target[], canaries: readonly string[], store: Store & VantageObservations, run: { id: string; startedAt: string }, settings: JobSettings, opts: AcrossOptions,
): Promise<Gathered> {
  // The keys first: a decider missing one enqueues nothing.
  const keys = opts.signed ? vantageKeys(opts.vantages, opts.env ?? process.env) : undefined;
  const { discarded } = await awaitAcross(targets, canaries, store, run, settings, opts);
  // What the reads leave out, the store counts among its problems (and names the first few there).
  const problemsBefore = (await store.problems()).count;
  const observations = (await store.observationsOf(run.id, keys)).filter((o) => opts.vantages.includes(o.vantage));
  const checks = await store.canariesOf(run.id, keys);
  const leftOut = (await store.problems()).count - problemsBefore;
  const warnings = [
    ...(discarded ? [`${discarded} observation(s) or canaries report(s) of run ${run.id} were written before their jobs were enqueued: discarded, not counted`] : []),
    ...(leftOut ? [`${leftOut} observation(s) or canaries report(s) of run ${run.id} were left out: not of a job it enqueued${keys ? ', or not signed with their vantage\'s key' : ''}, or not readable`] : []),
  ];
  const byUrl = new Map<string, Observation[]>();
  for (const o of observations) byUrl.set(o.url, [...(byUrl.get(o.url) ?? []), o]);
  const snapshots = new Map<string, StoredSnapshot>();
  for (const hash of new Set(observations.flatMap((o) => (o.toolsHash ? [o.toolsHash] : [])))) {
    const read = await store.snapshot(hash);
    if (read.snapshot) snapshots.set(hash, read.snapshot);
  }
  return { byUrl, snapshots, canaries: checks, warnings };
}
