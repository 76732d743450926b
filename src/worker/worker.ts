/**
 * A probe worker for one vantage: takes its queue's jobs, probes each URL as the job's run asks (the job's profile,
 * time limit and matrix; probe-only keys from this worker's own environment), and records the observation, with its
 * vantage (and signed with its key, when it holds one), in the store as the job finishes. A job taken again (its worker
 * was killed) records nothing new. Nothing is decided here: the process that enqueued the run decides once the vantages
 * have answered.
 *
 * A worker trusts no job: the queue is a table anyone who can write the store can write. Every job is checked
 * (`readJob`: parsed with its schema, `../model/jobs.ts`) against what the worker was started to do before any request:
 * keys only from the variables it was given (`--key-env`), http:// and loopback only when it was started with
 * `--allow-http`.
 *
 * Politeness is shared by every worker through leases in the store, counted by host (normalised name and port,
 * `../net/host-key.ts`) whatever the spelling; a census's jobs also by resolved address: one port at a time per
 * address, at most `PER_ADDRESS` probes in flight on it.
 */
import { hostname } from 'node:os';
import { isLoopbackUrl } from '../catalog/url.js';
import { keysFrom } from '../attest/keys.js';
import { isReachable } from '../attest/reachable.js';
import { retryAfterMs } from '../attest/retry-after.js';
import { collect } from '../collect/collect.js';
import { guardedLookup, systemResolver } from '../net/fetcher.js';
import {
  addressesBy,
  hostKey,
  isLoopback,
  PER_ADDRESS,
  RESOLVE_MS,
  resolverWithin,
  type HostKey,
} from '../net/host-key.js';
import { storeUnreachable } from '../store/unreachable.js';
import type { Coordination, HostLeases } from '../queue/coordination.js';
import { LeaseLost } from '../net/fence.js';
import { backoffMs } from '../util/backoff.js';
import { RateLimitedLog, WORKER_BACKOFF } from './faults.js';
import { LeaseFence } from './lease.js';
import {
  hostLeaseMs,
  jobUrlOf,
  lockMs,
  prepareQueue,
  queueConnection,
  QUEUE_POOL,
  queueNameOf,
  readJob,
  type ProbeJob,
  type WorkerPermits,
} from '../queue/queue.js';
import type { JobProgress, PostgresConnectionOptions, PostgresQueueBackend } from 'bullmq';

export interface WorkerOptions {
  vantage: string;
  /** The store the workers share (PostgreSQL): leases, not-before times, observations. */
  store: Coordination;
  /** The queue's PostgreSQL URL (the store's by default). */
  queueUrl: string;
  concurrency: number;
  /**
   * The only variables probe keys are read from, and whether http:// on loopback is open (`--key-env`, `--allow-http`).
   */
  permits: WorkerPermits;
  /** The vantage's signing key (`ONETAP_VANTAGE_KEY`), or null: what it records is then unsigned. */
  signingKey: string | null;
  /** One line per job. */
  log: (line: string) => void;
}

/** What a job is worked with: this worker's vantage, store, permissions and key. */
export type WorkContext = Pick<WorkerOptions, 'vantage' | 'store' | 'permits' | 'signingKey'>;

export interface RunningWorker {
  /** Stops taking jobs, lets those in flight finish within `drainMs`, hands the rest back to the queue. */
  stop: (drainMs: number) => Promise<void>;
}

/** A slot's lease: renewed every `leaseMs / 3` while its probe runs, gone `leaseMs` after the last renewal. */
const RENEW_PARTS = 3;
/**
 * The lease is taken for lost this long before it would expire: the margin for two clocks' rates and a request sent.
 */
const LEASE_MARGIN_MS = 2_000;
const pause = () => new Promise((r) => setTimeout(r, 50 + Math.random() * 100));

/**
 * Runs `probe` holding one of the host's slots (at most `limit` probes in flight per host over every worker),
 * waiting for one while all are held or the host answered 429 not long ago; and, when `addresses` are given (a
 * census's: what the host's name resolved to), a slot on each of them too: at most `PER_ADDRESS` probes in flight
 * per address, all on the same port, over every worker. The host's slot is taken first and kept while the
 * addresses' are waited for (every job of this host needs the same ones).
 *
 * The probe runs under the leases' fence: a renewal that finds a lease another's, or none that succeeds before the
 * lease would expire, ends its requests and throws `LeaseLost` (nothing it observed is recorded).
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function underHostLeases<T>(
  store: HostLeases,
  host: HostKey,
  limit: number,
  addresses: readonly string[],
  holder: string,
  probe: (fence: LeaseFence) => Promise<T>,
): Promise<T> {
  const leaseMs = hostLeaseMs();
  let sentAt = performance.now();
  let slot = await store.acquireHost(host.key, limit, holder, leaseMs);
  while (slot === null) {
    await pause();
    sentAt = performance.now();
    slot = await store.acquireHost(host.key, limit, holder, leaseMs);
  }
  const fence = new LeaseFence(`the lease of ${host.key}`, leaseMs, Math.min(LEASE_MARGIN_MS, leaseMs / 4), sentAt);
  let watchdog: NodeJS.Timeout | undefined;
  const watch = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(
      () => {
        try {
          fence.check();
          watch();
        } catch {
          /* lost: the probe's requests end */
        }
      },
      Math.max(10, fence.until - performance.now()),
    );
  };
  const renew = setInterval(() => {
    const at = performance.now();
    Promise.all([
      store.renewHost(host.key, slot!, holder, leaseMs),
      addresses.length ? store.renewAddresses(addresses, holder, leaseMs) : true,
    ]).then(
      ([hostHeld, addressesHeld]) => {
        if (hostHeld && addressesHeld) {
          fence.renewed(at);
          watch();
        } else fence.lose('taken by another worker since (it expired)');
      },
      () => {
        /* not renewed this time: the next tries, and the watchdog ends the probe if none does in time */
      },
    );
  }, leaseMs / RENEW_PARTS);
  watch();
  try {
    while (!(await store.acquireAddresses(addresses, host.port, PER_ADDRESS, holder, leaseMs))) {
      fence.check();
      await pause();
    }
    fence.check();
    const value = await probe(fence);
    fence.check();
    return value;
  } finally {
    clearInterval(renew);
    clearTimeout(watchdog);
    if (addresses.length) await store.releaseAddresses(addresses, holder).catch(() => {});
    await store.releaseHost(host.key, slot, holder).catch(() => {});
  }
}

/**
 * The addresses a census job's host counts on: its name resolved once through the guarded lookup (the address rule
 * as the probe applies it, `allowPrivate` as the probe has it), in at most `RESOLVE_MS`; an address is its own.
 * Loopback is left out when this worker was started with --allow-http (local fixtures, as a one-process census under
 * --allow-private). None when the name does not resolve or is refused: the probe then fails on its own.
 */
async function addressesToLease(host: HostKey, allowPrivate: boolean, permits: WorkerPermits): Promise<string[]> {
  const lookup = guardedLookup([], resolverWithin(systemResolver, RESOLVE_MS), { allowPrivate });
  return (await addressesBy(lookup)(host.name)).filter((a) => !(permits.allowHttp && isLoopback(a)));
}

/** One job done (a job `readJob` passed): the observation recorded (or the canaries reported). */
export async function work(job: ProbeJob, ctx: WorkContext, holder = `${hostname()}:${process.pid}`): Promise<string> {
  const { vantage, store, permits, signingKey } = ctx;
  const run = { id: job.run.id, startedAt: job.run.startedAt, vantage };
  // Loopback (local fixtures) only when this worker was started with --allow-http and the run asks for it.
  const open = (url: string) => permits.allowHttp && job.allowHttp && isLoopbackUrl(url);
  if (job.kind === 'canaries') {
    const reached = await Promise.all(job.canaries.map((u) => isReachable(u, 15_000, { allowPrivate: open(u) })));
    await store.recordCanaries(
      job.run.id,
      vantage,
      { configured: job.canaries.length, reachable: reached.filter(Boolean).length },
      signingKey,
    );
    return `canaries: ${reached.filter(Boolean).length} of ${job.canaries.length} answered`;
  }
  // Keys come from this worker's environment, and only from the variables it was started to read: the job names
  // them (checked against the same list), never their values.
  const readable = Object.fromEntries([...permits.keyEnv].map((name) => [name, process.env[name]]));
  const keys = job.requiresAuth && job.probeHeaders ? keysFrom(job.probeHeaders, readable) : null;
  // The run's own refusals (the catalog's key rule) are recorded beside the worker's.
  const refusedKeys = [...(keys?.refusedKeys ?? []), ...(job.requiresAuth ? (job.refusedKeys ?? []) : [])];
  const target = {
    url: job.url,
    requiresAuth: job.requiresAuth,
    headers: job.headers,
    ...keys,
    ...(refusedKeys.length ? { refusedKeys } : {}),
  };
  // Politeness counts hosts by their normalised name and port, whatever the spelling; a census's, addresses too.
  const host = hostKey(new URL(job.url));
  const addresses = job.census ? await addressesToLease(host, open(job.url), permits) : [];
  const collected = await underHostLeases(
    store,
    host,
    job.perHost,
    addresses,
    `${holder}:${job.run.id}:${vantage}:${job.url}`,
    async (fence) => {
      const c = await collect([target], {
        run,
        profile: job.profile,
        timeoutMs: job.timeoutMs,
        matrix: job.matrix,
        concurrency: 1,
        fence,
        allowPrivate: open(job.url),
        allowPrivateCard: open,
        ...(job.census ? { identity: job.census.identity, cards: false } : {}),
      });
      // Held back while this worker still holds its slot: no other worker slips in between the 429 (or a census's
      // rest between two probes of a host) and the hold.
      const o = c.observations[0]!;
      const holdMs = Math.max(job.census?.gapMs ?? 0, o.reason === 'rate-limited' ? retryAfterMs(o) : 0);
      fence.check();
      if (holdMs > 0) await store.holdHost(host.key, holdMs);
      return c;
    },
  );
  const o = collected.observations[0]!;
  const fresh = await store.recordObservation(
    o,
    o.toolsHash ? (collected.snapshots.get(o.toolsHash) ?? null) : null,
    signingKey,
  );
  return `${o.verdict}/${o.reason} in ${Math.round(o.durationMs)} ms${fresh ? '' : ' (recorded before: not again)'}`;
}

/**
 * Stalls a job survives (a worker killed, paused or cut off while it held it): the work is idempotent, an observation
 * is keyed by its job.
 */
export const MAX_STALLS = 50;
/**
 * Job locks are renewed this many times per lock duration (BullMQ's default is twice). The engine's PostgreSQL backend
 * sets and reads job locks by each worker's own clock: a worker whose clock is ahead by `skew` takes a job whose lock
 * was renewed more than `lock - skew` ago. Renewing every twentieth of the lock keeps every skew up to 95% of it
 * from taking a job another worker holds (one statement per worker per renewal, whatever its jobs).
 */
const LOCK_RENEWALS = 20;
/** A job handed back because of a lease lost waits this long before it is taken again. */
const HAND_BACK_MS = 1_000;

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const { Worker, UnrecoverableError, DelayedError, createPostgresBackend } = await import('bullmq');
  const lock = lockMs();
  const log = new RateLimitedLog(opts.log);
  await prepareQueue(opts.queueUrl);
  let closing = false;
  let outage: Promise<void> | null = null;
  let faults = 0;

  /**
   * The store is out of reach: take no job until it answers again, asking after a wait that grows each time (capped,
   * jittered). Jobs in flight go on; each that meets the outage is handed back.
   */
  const waitOutOutage = (err: unknown) => {
    if (outage) return;
    log.line(
      'store',
      `${opts.vantage}: the store is out of reach (${(err as Error).message}); taking no job until it answers`,
    );
    outage = (async () => {
      await worker.pause(true);
      for (let attempt = 0; !closing; attempt++) {
        await new Promise((r) => setTimeout(r, backoffMs(attempt, Math.random(), WORKER_BACKOFF)).unref());
        if (await opts.store.reachable()) break;
        log.line('store', `${opts.vantage}: the store is still out of reach; asking again`);
      }
      faults = 0;
      if (!closing) {
        worker.resume();
        log.line('store-back', `${opts.vantage}: the store answers again; taking jobs`);
      }
      outage = null;
    })();
  };

  const worker = new Worker<ProbeJob, void, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>(
    queueNameOf(opts.vantage),
    async (job, token) => {
      const { job: data, problem } = readJob(job.data, opts.vantage, opts.permits);
      if (data === undefined) {
        // Named by its URL and the problem (a variable's name, never a value); refused for good, before any request.
        opts.log(
          `${opts.vantage}: job ${job.id?.slice(0, 12)} for ${jobUrlOf(job.data)} refused: ${problem} (not tried again)`,
        );
        throw new UnrecoverableError(`refused: ${problem}`);
      }
      const started = Date.now();
      try {
        const said = await work(data, opts);
        opts.log(
          `${opts.vantage}: ${job.data.kind === 'canaries' ? '' : `${job.data.url} `}${said} (run ${job.data.run.id}, job ${job.id?.slice(0, 12)})`,
        );
      } catch (err) {
        const lost = err instanceof LeaseLost;
        if (lost || storeUnreachable(err)) {
          // Not the job's failure: it is handed back, none of its attempts used. When the queue is out of reach too,
          // the job's lock lapses and it is taken again as a stalled job (tolerated, MAX_STALLS).
          if (lost)
            log.line(
              'lease',
              `${opts.vantage}: ${job.data.url}: ${(err as Error).message}; its probe was stopped and the job handed back (job ${job.id?.slice(0, 12)})`,
            );
          else waitOutOutage(err);
          await job
            .moveToDelayed(
              Date.now() + (lost ? HAND_BACK_MS : backoffMs(faults++, Math.random(), WORKER_BACKOFF)),
              token,
            )
            .catch(() => {});
          throw new DelayedError('handed back');
        }
        opts.log(
          `${opts.vantage}: ${job.data.url} failed after ${Date.now() - started} ms: ${(err as Error).message} (job ${job.id?.slice(0, 12)}; tried again)`,
        );
        throw err;
      }
    },
    {
      connection: queueConnection(opts.queueUrl, false, QUEUE_POOL.worker),
      concurrency: opts.concurrency,
      lockDuration: lock,
      lockRenewTime: lock / LOCK_RENEWALS,
      stalledInterval: lock,
      maxStalledCount: MAX_STALLS,
    },
    createPostgresBackend,
  );
  // The engine's own errors (the queue out of reach: each poll and each lock renewal fails) come once per 10 s.
  worker.on('error', (err) => log.line('queue', `${opts.vantage}: the queue: ${err.message}`));
  await worker.waitUntilReady();
  return {
    stop: async (drainMs) => {
      closing = true;
      const closed = worker.close();
      const timedOut = await Promise.race([
        closed.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), drainMs).unref()),
      ]);
      // Jobs still in flight go back to the queue: their locks are released, another worker takes them.
      if (timedOut) await worker.close(true);
      log.flush();
    },
  };
}
