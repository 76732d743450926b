/**
 * A probe worker for one vantage: takes its queue's jobs, probes each URL as the job's run asks (the job's profile,
 * time limit and matrix; probe-only keys from this worker's own environment), and records the observation, with
 * its vantage, in the store as the job finishes. A job taken again (its worker was killed) records nothing new.
 * Nothing is decided here: the process that enqueued the run decides once the vantages have answered.
 */
import { hostname } from 'node:os';
import { isLoopbackUrl } from '../catalog/url.js';
import { keysFrom } from '../attest/keys.js';
import { isReachable } from '../attest/reachable.js';
import { retryAfterMs } from '../attest/retry-after.js';
import { collect } from '../collect/collect.js';
import type { PgStore } from '../store/pg-store.js';
import { jobProblem, lockMs, queueConnection, queueNameOf, type ProbeJob } from '../queue/queue.js';
import type { JobProgress, PostgresConnectionOptions, PostgresQueueBackend } from 'bullmq';

export interface WorkerOptions {
  vantage: string;
  store: PgStore;
  /** The queue's PostgreSQL URL (the store's by default). */
  queueUrl: string;
  concurrency: number;
  /** One line per job. */
  log: (line: string) => void;
}

export interface RunningWorker {
  /** Stops taking jobs, lets those in flight finish within `drainMs`, hands the rest back to the queue. */
  stop: (drainMs: number) => Promise<void>;
}

/** A slot's lease: renewed every 10 s while its probe runs, gone 30 s after the last renewal. */
const LEASE_MS = 30_000;
const RENEW_MS = 10_000;

/**
 * Runs `probe` holding one of the host's slots (at most `limit` probes in flight per host over every worker),
 * waiting for one while all are held or the host answered 429 not long ago.
 */
async function politely<T>(store: PgStore, url: string, limit: number, holder: string, probe: () => Promise<T>): Promise<T> {
  const host = new URL(url).host;
  let slot: number | null;
  while ((slot = await store.acquireHost(host, limit, holder, LEASE_MS)) === null) await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
  const renew = setInterval(() => { void store.renewHost(host, slot!, holder, LEASE_MS).catch(() => {}); }, RENEW_MS);
  try {
    return await probe();
  } finally {
    clearInterval(renew);
    await store.releaseHost(host, slot, holder).catch(() => {});
  }
}

/** One job done: the observation recorded (or the canaries reported). */
export async function work(job: ProbeJob, vantage: string, store: PgStore, holder = `${hostname()}:${process.pid}`): Promise<string> {
  const run = { id: job.run.id, startedAt: job.run.startedAt, vantage };
  if (job.kind === 'canaries') {
    const reached = await Promise.all(job.canaries.map((u) => isReachable(u, 15_000)));
    await store.recordCanaries(job.run.id, vantage, { configured: job.canaries.length, reachable: reached.filter(Boolean).length });
    return `canaries: ${reached.filter(Boolean).length} of ${job.canaries.length} answered`;
  }
  // Keys come from this worker's environment: the job names the variables, never their values.
  const keys = job.requiresAuth && job.probeHeaders ? keysFrom(job.probeHeaders, process.env) : {};
  const target = { url: job.url, requiresAuth: job.requiresAuth, headers: job.headers, ...keys };
  const collected = await politely(store, job.url, job.perHost, `${holder}:${job.run.id}:${vantage}:${job.url}`, async () => {
    const c = await collect([target], {
      run, profile: job.profile, timeoutMs: job.timeoutMs, matrix: job.matrix, concurrency: 1,
      allowPrivate: job.allowHttp && isLoopbackUrl(job.url), allowPrivateCard: (url) => job.allowHttp && isLoopbackUrl(url),
      ...(job.census ? { identity: job.census.identity, cards: false } : {}),
    });
    // Held back while this worker still holds its slot: no other worker slips in between the 429 (or a census's
    // rest between two probes of a host) and the hold.
    const o = c.observations[0]!;
    const holdMs = Math.max(job.census?.gapMs ?? 0, o.reason === 'rate-limited' ? retryAfterMs(o) : 0);
    if (holdMs > 0) await store.holdHost(new URL(job.url).host, new Date(Date.now() + holdMs));
    return c;
  });
  const o = collected.observations[0]!;
  const fresh = await store.recordObservation(o, o.toolsHash ? collected.snapshots.get(o.toolsHash) ?? null : null);
  return `${o.verdict}/${o.reason} in ${Math.round(o.durationMs)} ms${fresh ? '' : ' (recorded before: not again)'}`;
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const { Worker, UnrecoverableError, createPostgresBackend } = await import('bullmq');
  const lock = lockMs();
  const worker = new Worker<ProbeJob, void, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>(queueNameOf(opts.vantage), async (job) => {
    const problem = jobProblem(job.data, opts.vantage);
    if (problem !== null) {
      opts.log(`${opts.vantage}: job ${job.id?.slice(0, 12)} refused: ${problem} (not tried again)`);
      throw new UnrecoverableError(`refused: ${problem}`);
    }
    const started = Date.now();
    try {
      const said = await work(job.data, opts.vantage, opts.store);
      opts.log(`${opts.vantage}: ${job.data.kind === 'canaries' ? '' : `${job.data.url} `}${said} (run ${job.data.run.id}, job ${job.id?.slice(0, 12)})`);
    } catch (err) {
      opts.log(`${opts.vantage}: ${job.data.url} failed after ${Date.now() - started} ms: ${(err as Error).message} (job ${job.id?.slice(0, 12)}; tried again)`);
      throw err;
    }
  }, { connection: queueConnection(opts.queueUrl), concurrency: opts.concurrency, lockDuration: lock, stalledInterval: lock }, createPostgresBackend);
  worker.on('error', (err) => opts.log(`${opts.vantage}: the queue: ${err.message}`));
  await worker.waitUntilReady();
  return {
    stop: async (drainMs) => {
      const closing = worker.close();
      const timedOut = await Promise.race([closing.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), drainMs).unref())]);
      // Jobs still in flight go back to the queue: their locks are released, another worker takes them.
      if (timedOut) await worker.close(true);
    },
  };
}
