/**
 * A run across vantages, the collecting half: one job per catalog row (or probed URL) and vantage (and one for each
 * vantage's canaries) on the queue, then the wait: each poll counts the observations the workers recorded and the jobs
 * that failed for good (the queue's state), until every job is accounted for or the deadline passed. What did not
 * answer is missing (`decide` says so, and why when its job failed). A poll that fails is tried again with backoff
 * until the deadline; failing then, the run stops (exit 1) naming the store.
 *
 * The run and its jobs are registered in the store before they are on the queue: only what a job that was enqueued
 * recorded after that counts, so nothing written ahead of a run (its id may be predictable) decides it. With
 * `policy.signedVantages`, only what a vantage signed with its key counts, the keys being this process's own.
 */
import { backoffMs } from '../util/backoff.js';
import type { ClientProfile } from '../attest/profile.js';
import { CatalogError, type CatalogServer } from '../catalog/model.js';
import { hostOf } from '../catalog/url.js';
import { keyEnvRefusal } from '../catalog/key-env.js';
import type { CanaryCheck } from '../model/plan.js';
import type { Observation } from '../model/observation.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import { enqueue, jobIdOf, type ProbeJob } from '../queue/queue.js';
import { openFailedJobs } from '../queue/states.js';
import { vantageKeyEnvOf, vantageKeyProblem, type VantageKeys } from '../store/signatures.js';
import { CANARIES_URL, type Store, type VantageObservations } from '../store/store.js';
import { redactStoreUrl } from '../store/url.js';
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
  /**
   * `policy.signedVantages`: only what each vantage signed counts, verified with its key from `env` (`vantageKeys`).
   */
  signed?: boolean;
  /** Where the vantages' keys are read from (default: this process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The catalog's `policy.keyEnv`: which variables its rows may name as probe keys. */
  keyEnv?: readonly string[];
  /** Called when a poll failed (the store or the queue), with the pause before the next. */
  onPollFailed?: (err: Error, retryInMs: number) => void;
  /** Called once the wait ends: whether every job was accounted for, and how they stood. */
  onWaited?: (ended: WaitEnded) => void;
  /** The wait's clock (tests inject one): now in ms, a pause, and the jitter's randomness in [0, 1). */
  clock?: WaitClock;
}

export interface WaitClock {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

const SYSTEM_CLOCK: WaitClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  random: Math.random,
};

/** How the wait ended: every job accounted for (`accounted`) or the deadline; the jobs and how they stood then. */
export interface WaitEnded {
  accounted: boolean;
  jobs: number;
  answered: number;
  failed: number;
  outstanding: number;
}

/**
 * A failed poll's pause before the next: doubling from `baseMs` up to `capMs`, jittered to between half and all of it.
 */
export const POLL_BACKOFF = { baseMs: 250, capMs: 8_000 } as const;

/** The pause after the `failures`-th failed poll in a row (1-based), `random` in [0, 1) (pure). */
export const pollBackoffMs = (failures: number, random: number): number =>
  backoffMs(failures - 1, random, POLL_BACKOFF);

/** What one poll saw of a run's jobs. */
export interface PollSeen {
  /** Observations recorded that count, over every vantage asked. */
  observed: number;
  /** Vantages whose canaries reported. */
  reported: ReadonlySet<string>;
  /** Jobs failed for good (a canaries job's URL is `CANARIES_URL`), with why. */
  failed: ReadonlyArray<{ url: string; vantage: string; why: string }>;
  /** Of the failed jobs, those whose observation was recorded all the same (`url` newline `vantage`): they answered. */
  observedFailed: ReadonlySet<string>;
}

/**
 * The jobs a run is waiting for, and what a poll saw of them: how many are outstanding, and which failed for good (none
 * observed).
 */
export interface Accounting {
  outstanding: number;
  answered: number;
  failed: Map<string, Map<string, string>>;
}

export const jobKey = (url: string, vantage: string) => `${url}\n${vantage}`;

/**
 * The wait's accounting (pure): `probes` jobs (rows × vantages) and a canaries job for each of `canaries`; each is
 * answered (an observation, a canaries report), failed for good without one, or outstanding. The wait ends at none
 * outstanding. A failed job that answered all the same counts as answered, once.
 */
export function accountJobs(expected: { probes: number; canaries: readonly string[] }, seen: PollSeen): Accounting {
  const failed = new Map<string, Map<string, string>>();
  let failedProbes = 0;
  let failedCanaries = 0;
  for (const f of seen.failed) {
    const canaries = f.url === CANARIES_URL;
    if (
      canaries
        ? seen.reported.has(f.vantage) || !expected.canaries.includes(f.vantage)
        : seen.observedFailed.has(jobKey(f.url, f.vantage))
    )
      continue;
    if (canaries) failedCanaries++;
    else failedProbes++;
    failed.set(f.url, new Map([...(failed.get(f.url) ?? []), [f.vantage, f.why]]));
  }
  const reported = expected.canaries.filter((v) => seen.reported.has(v)).length;
  const answered = Math.min(seen.observed, expected.probes) + reported;
  const outstanding =
    Math.max(0, expected.probes - seen.observed - failedProbes) +
    Math.max(0, expected.canaries.length - reported - failedCanaries);
  return { outstanding, answered, failed };
}

/**
 * The key each vantage's records must verify with, from the decider's own environment: `ONETAP_VANTAGE_KEY_<NAME>`
 * (the name in upper case, `-` as `_`). Refused before anything is enqueued when one is missing or too short, or two
 * vantages would read the same variable (never a value in the message).
 */
export function vantageKeys(
  vantages: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): VantageKeys {
  const keys = new Map<string, string>();
  const byVariable = new Map<string, string>();
  for (const v of vantages) {
    const name = vantageKeyEnvOf(v);
    if (byVariable.has(name))
      throw new CatalogError(
        `policy.signedVantages: vantages ${byVariable.get(name)} and ${v} would both read ${name}; rename one`,
      );
    byVariable.set(name, v);
    const key = env[name];
    if (!key)
      throw new CatalogError(
        `policy.signedVantages: ${name} is not set: the decider needs each vantage's key (the one its workers hold as ONETAP_VANTAGE_KEY)`,
      );
    const problem = vantageKeyProblem(key);
    if (problem) throw new CatalogError(`policy.signedVantages: ${name}: ${problem}`);
    keys.set(v, key);
  }
  return keys;
}

export interface Gathered {
  /** The run as registered at its first enqueue (its start is that enqueue's, whoever decides it). */
  run: { id: string; startedAt: string };
  /** Per URL, the observations of the vantages that answered. */
  byUrl: Map<string, Observation[]>;
  /** Per URL, the vantages whose job failed for good without answering, and why (as a note says it). */
  unanswered: Map<string, Map<string, string>>;
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
export function jobKeys(
  t: Target,
  keyEnv: readonly string[] | undefined,
): Pick<ProbeJob, 'probeHeaders' | 'refusedKeys'> {
  if (!t.probeHeaders) return {};
  const permitted = Object.entries(t.probeHeaders).filter(([, h]) => keyEnvRefusal(h.env, keyEnv) === null);
  const refused = Object.values(t.probeHeaders)
    .filter((h) => keyEnvRefusal(h.env, keyEnv) !== null)
    .map((h) => h.env);
  return {
    ...(permitted.length ? { probeHeaders: Object.fromEntries(permitted) } : {}),
    ...(refused.length ? { refusedKeys: refused } : {}),
  };
}

/** What every job of a run shares. */
export interface JobSettings {
  profile: ClientProfile;
  timeoutMs?: number;
  matrix: boolean;
  allowHttp: boolean;
  perHost: number;
  census?: ProbeJob['census'];
}

/**
 * The run and its jobs registered, the jobs on the queue, then the wait until every job is accounted for (answered, or
 * failed for good) or the deadline. Resolves to the run as registered, how many records written ahead of the jobs
 * were discarded, and the jobs that failed for good without answering (per URL and vantage, why).
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function awaitAcross(
  targets: readonly Target[],
  canaries: readonly string[],
  store: Store & VantageObservations,
  asked: { id: string; startedAt: string },
  settings: JobSettings,
  opts: AcrossOptions,
): Promise<{ discarded: number; run: { id: string; startedAt: string }; failed: Map<string, Map<string, string>> }> {
  const urls = [...targets.map((t) => t.url), ...(canaries.length ? [CANARIES_URL] : [])];
  const { registration, discarded } = await store.registerRun(
    asked,
    opts.vantages,
    opts.vantages.flatMap((vantage) => urls.map((url) => ({ url, vantage }))),
  );
  // Every job of a run carries the run as first registered, whichever enqueue added it.
  const run = { id: registration.id, startedAt: registration.startedAt };
  const jobs: ProbeJob[] = opts.vantages.flatMap((vantage) => [
    // Each host's URLs in turns: a worker waiting for a host's slot holds a job no other host could use.
    ...inTurns(targets, (t) => hostOf(t.url) ?? t.url).map(
      (s): ProbeJob => ({
        run,
        vantage,
        kind: 'probe',
        url: s.url,
        name: s.name,
        requiresAuth: s.requiresAuth,
        headers: { ...s.headers },
        ...jobKeys(s, opts.keyEnv),
        ...settings,
        canaries: [],
      }),
    ),
    ...(canaries.length
      ? [
          {
            run,
            vantage,
            kind: 'canaries' as const,
            url: CANARIES_URL,
            name: 'canaries',
            requiresAuth: false,
            headers: {},
            ...settings,
            canaries: [...canaries],
          },
        ]
      : []),
  ]);
  await enqueue(opts.queueUrl, jobs);
  const clock = opts.clock ?? SYSTEM_CLOCK;
  const until = clock.now() + opts.deadlineMs;
  opts.onWaiting?.(new Date(until), jobs.length);
  const expected = {
    probes: new Set(targets.map((t) => t.url)).size * opts.vantages.length,
    canaries: canaries.length ? opts.vantages : [],
  };
  const queue = await openFailedJobs(opts.queueUrl);
  try {
    const accounting = await waitFor(expected, pollOf(run.id, urls, store, queue, opts), until, clock, opts);
    return { discarded, run, failed: accounting.failed };
  } finally {
    await queue.close();
  }
}

/** A poll: the store's observations and canaries reports, and the queue's jobs that failed for good. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function pollOf(
  runId: string,
  urls: readonly string[],
  store: VantageObservations,
  queue: Awaited<ReturnType<typeof openFailedJobs>>,
  opts: AcrossOptions,
): () => Promise<PollSeen> {
  const jobsOf = new Map(opts.vantages.map((v) => [v, new Map(urls.map((url) => [jobIdOf(runId, url, v), url]))]));
  const idsOf = new Map([...jobsOf].map(([v, jobs]) => [v, new Set(jobs.keys())]));
  const fromQueue = async <T>(read: Promise<T>): Promise<T> =>
    read.catch((err: Error) => {
      throw new Error(`the queue ${redactStoreUrl(opts.queueUrl)}: ${err.message}`, { cause: err });
    });
  return async () => {
    const observed = await store.observationCount(runId, opts.vantages);
    const reported = new Set(urls.includes(CANARIES_URL) ? (await store.canariesOf(runId)).keys() : []);
    const failed: Array<{ url: string; vantage: string; why: string }> = [];
    for (const v of opts.vantages) {
      for (const [id, why] of await fromQueue(queue.failedOf(v, idsOf.get(v)!)))
        failed.push({ url: jobsOf.get(v)!.get(id)!, vantage: v, why });
    }
    const probes = failed.filter((f) => f.url !== CANARIES_URL);
    const observedFailed = new Set((await store.observedOf(runId, probes)).map((o) => jobKey(o.url, o.vantage)));
    return { observed, reported, failed, observedFailed };
  };
}

/** How long one poll may take (a store that hangs rather than refuses must not hold the wait past its deadline). */
const POLL_TIMEOUT_MS = 10_000;

/**
 * Polls until nothing is outstanding or the deadline; a failed poll is tried again after `pollBackoffMs`. The last
 * poll is at the deadline: when it fails, so does the wait (its error names the store or the queue).
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function waitFor(
  expected: { probes: number; canaries: readonly string[] },
  poll: () => Promise<PollSeen>,
  until: number,
  clock: WaitClock,
  opts: AcrossOptions,
): Promise<Accounting> {
  let last: Accounting = { outstanding: expected.probes + expected.canaries.length, answered: 0, failed: new Map() };
  const jobs = last.outstanding;
  const ended = (accounted: boolean) => {
    opts.onWaited?.({
      accounted,
      jobs,
      answered: last.answered,
      failed: [...last.failed.values()].reduce((n, m) => n + m.size, 0),
      outstanding: last.outstanding,
    });
    return last;
  };
  for (let failures = 0; ; ) {
    let error: Error | null = null;
    try {
      last = accountJobs(
        expected,
        await within(poll(), Math.min(POLL_TIMEOUT_MS, Math.max(until - clock.now(), 2_000))),
      );
      failures = 0;
    } catch (err) {
      error = err as Error;
      failures++;
    }
    if (!error && last.outstanding === 0) return ended(true);
    const left = until - clock.now();
    if (left <= 0) {
      if (error)
        throw new Error(
          `${error.message} (the wait's polls failed until the deadline, ${failures} in a row, each tried again with backoff)`,
          { cause: error },
        );
      return ended(false);
    }
    const pause = Math.min(error ? pollBackoffMs(failures, clock.random()) : (opts.pollMs ?? 500), left);
    if (error) opts.onPollFailed?.(error, pause);
    await clock.sleep(pause);
  }
}

/** A promise, or a rejection once `ms` passed without it settling (its late outcome is ignored). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  p.catch(() => {});
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** `awaitAcross`, then what arrived, read once: what arrived by the deadline decides. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function gatherAcross(
  targets: readonly Target[],
  canaries: readonly string[],
  store: Store & VantageObservations,
  asked: { id: string; startedAt: string },
  settings: JobSettings,
  opts: AcrossOptions,
): Promise<Gathered> {
  // The keys first: a decider missing one enqueues nothing.
  const keys = opts.signed ? vantageKeys(opts.vantages, opts.env ?? process.env) : undefined;
  const { discarded, run, failed } = await awaitAcross(targets, canaries, store, asked, settings, opts);
  // What the reads leave out, the store counts among its problems (and names the first few there).
  const problemsBefore = (await store.problems()).count;
  const observations = (await store.observationsOf(run.id, keys)).filter((o) => opts.vantages.includes(o.vantage));
  const checks = await store.canariesOf(run.id, keys);
  const leftOut = (await store.problems()).count - problemsBefore;
  const byUrl = new Map<string, Observation[]>();
  for (const o of observations) byUrl.set(o.url, [...(byUrl.get(o.url) ?? []), o]);
  // A job that failed for good and brought no observation (or report) after all: that vantage did not answer, and why.
  const unanswered = new Map<string, Map<string, string>>();
  for (const [url, vantages] of failed) {
    for (const [v, why] of vantages) {
      if (url === CANARIES_URL ? checks.has(v) : byUrl.get(url)?.some((o) => o.vantage === v)) continue;
      unanswered.set(url, new Map([...(unanswered.get(url) ?? []), [v, `its job failed: ${why}`]]));
    }
  }
  const canariesFailed = [...(unanswered.get(CANARIES_URL) ?? [])];
  const warnings = [
    ...(discarded
      ? [
          `${discarded} observation(s) or canaries report(s) of run ${run.id} were written before their jobs were enqueued: discarded, not counted`,
        ]
      : []),
    ...(leftOut
      ? [
          `${leftOut} observation(s) or canaries report(s) of run ${run.id} were left out: not of a job it ` +
            `enqueued${keys ? ", or not signed with their vantage's key" : ''}, or not readable`,
        ]
      : []),
    ...canariesFailed.map(([v, why]) => `vantage ${v} reported no canaries: ${why}`),
  ];
  const snapshots = new Map<string, StoredSnapshot>();
  for (const hash of new Set(observations.flatMap((o) => (o.toolsHash ? [o.toolsHash] : [])))) {
    const read = await store.snapshot(hash);
    if (read.snapshot) snapshots.set(hash, read.snapshot);
  }
  unanswered.delete(CANARIES_URL);
  return { run, byUrl, unanswered, snapshots, canaries: checks, warnings };
}
