/**
 * A probe worker for one vantage: takes its queue's jobs, probes each URL as the job's run asks (the job's profile,
 * time limit and matrix; probe-only keys from this worker's own environment), and records the observation, with
 * its vantage, in the store as the job finishes. A job taken again (its worker was killed) records nothing new.
 * Nothing is decided here: the process that enqueued the run decides once the vantages have answered.
 */
import { isLoopbackUrl } from '../catalog/url.js';
import { keysFrom } from '../attest/keys.js';
import { isReachable } from '../attest/reachable.js';
import { collect } from '../collect/collect.js';
import type { PgStore } from '../store/pg-store.js';
import { lockMs, queueConnection, queueNameOf, type ProbeJob } from '../queue/queue.js';
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

/** One job done: the observation recorded (or the canaries reported). */
export async function work(job: ProbeJob, vantage: string, store: PgStore): Promise<string> {
  const run = { id: job.run.id, startedAt: job.run.startedAt, vantage };
  if (job.kind === 'canaries') {
    const reached = await Promise.all(job.canaries.map((u) => isReachable(u, 15_000)));
    await store.recordCanaries(job.run.id, vantage, { configured: job.canaries.length, reachable: reached.filter(Boolean).length });
    return `canaries: ${reached.filter(Boolean).length} of ${job.canaries.length} answered`;
  }
  // Keys come from this worker's environment: the job names the variables, never their values.
  const keys = job.requiresAuth && job.probeHeaders ? keysFrom(job.probeHeaders, process.env) : {};
  const target = { url: job.url, requiresAuth: job.requiresAuth, headers: job.headers, ...keys };
  const collected = await collect([target], {
    run, profile: job.profile, timeoutMs: job.timeoutMs, matrix: job.matrix, concurrency: 1,
    allowPrivate: job.allowHttp && isLoopbackUrl(job.url), allowPrivateCard: (url) => job.allowHttp && isLoopbackUrl(url),
  });
  const o = collected.observations[0]!;
  const fresh = await store.recordObservation(o, o.toolsHash ? collected.snapshots.get(o.toolsHash) ?? null : null);
  return `${o.verdict}/${o.reason} in ${Math.round(o.durationMs)} ms${fresh ? '' : ' (recorded before: not again)'}`;
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const { Worker, createPostgresBackend } = await import('bullmq');
  const lock = lockMs();
  const worker = new Worker<ProbeJob, void, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>(queueNameOf(opts.vantage), async (job) => {
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
