/**
 * The probe queue, on an existing job engine: BullMQ 6 with its PostgreSQL backend, in the store's database (schema
 * `<store schema>_queue`), loaded when a queue is opened. One queue per vantage; a job is one URL to probe from one
 * vantage in one run (or that vantage's canaries), carrying the run's probe settings and the names of the
 * environment variables that hold probe-only keys, never their values. Its id is the SHA-256 of run id, URL and
 * vantage: enqueueing a run twice adds nothing, and a job taken again after its worker died records once (the
 * observation's key is the job's).
 */
import { createHash } from 'node:crypto';
import type { ClientProfile } from '../attest/profile.js';
import type { ProbeHeader } from '../catalog/model.js';
import { connection } from '../store/url.js';
import { isLoopbackUrl } from '../catalog/url.js';

/** What a worker needs to probe one URL as the run asks. */
export interface ProbeJob {
  run: { id: string; startedAt: string };
  /** The vantage the job is for (its queue's). */
  vantage: string;
  /** `canaries`: the job reports the vantage's canaries instead of probing a catalog row. */
  kind: 'probe' | 'canaries';
  url: string;
  name: string;
  requiresAuth: boolean;
  headers: Record<string, string>;
  /** Probe-only keys: header → the environment variable the worker reads it from (and a prefix). */
  probeHeaders?: Record<string, ProbeHeader>;
  profile: ClientProfile;
  timeoutMs?: number;
  matrix: boolean;
  /** The run permits http:// on loopback (local fixtures): the worker probes and fetches cards there too. */
  allowHttp: boolean;
  /** Probes in flight per host, over every worker of every vantage (leases in the store). */
  perHost: number;
  canaries: string[];
  /** A census's job: every request carries `identity` as its User-Agent, no card is fetched, and its host rests `gapMs` after the probe. */
  census?: { identity: string; gapMs: number };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An address a job may send a worker to: https, or http on loopback when the run permits it (local fixtures). */
function probeable(url: unknown, allowHttp: boolean): boolean {
  if (typeof url !== 'string' || url.length > 2_048) return false;
  let u: URL;
  try { u = new URL(url); } catch { return false; }
  return u.protocol === 'https:' || (allowHttp && u.protocol === 'http:' && isLoopbackUrl(url));
}

/**
 * Why a job read from the queue cannot be worked on, or null. The queue is a database table: what it holds is
 * checked before a worker acts on it (the address above all, so a written job cannot send a worker anywhere).
 */
export function jobProblem(job: unknown, vantage: string): string | null {
  if (!isObject(job)) return 'not an object';
  if (job.vantage !== vantage) return `for vantage ${JSON.stringify(String(job.vantage)).slice(0, 80)}, not this worker's`;
  if (job.kind !== 'probe' && job.kind !== 'canaries') return 'kind is neither probe nor canaries';
  if (!isObject(job.run) || typeof job.run.id !== 'string' || job.run.id.length > 200 || typeof job.run.startedAt !== 'string' || Number.isNaN(Date.parse(job.run.startedAt))) return 'run: expected {id, startedAt}';
  const allowHttp = job.allowHttp === true;
  if (job.kind === 'probe' && !probeable(job.url, allowHttp)) return 'url: not an https URL (nor http on loopback with the run\'s permission)';
  if (!Array.isArray(job.canaries) || job.canaries.length > 20 || !job.canaries.every((c) => probeable(c, allowHttp))) return 'canaries: at most 20 https URLs';
  if (!Number.isInteger(job.perHost) || (job.perHost as number) < 1 || (job.perHost as number) > 1_000) return 'perHost: a whole number from 1 to 1000';
  if (job.timeoutMs !== undefined && (!Number.isInteger(job.timeoutMs) || (job.timeoutMs as number) < 1 || (job.timeoutMs as number) > 600_000)) return 'timeoutMs: a whole number of ms up to 600000';
  if (!isObject(job.profile) || typeof job.profile.id !== 'string') return 'profile: expected a client profile';
  if (!isObject(job.headers) || !Object.values(job.headers).every((h) => typeof h === 'string')) return 'headers: expected names and text values';
  if (job.census !== undefined && (!isObject(job.census) || typeof job.census.identity !== 'string' || !/^[\x20-\x7e]{1,300}$/.test(job.census.identity) || !Number.isInteger(job.census.gapMs) || (job.census.gapMs as number) < 0 || (job.census.gapMs as number) > 60_000)) return 'census: expected {identity: printable text up to 300, gapMs: up to 60000}';
  return null;
}

/** The job's id: SHA-256 of run id, URL and vantage (BullMQ refuses `:` in ids, and all-digit ones). */
export const jobIdOf = (runId: string, url: string, vantage: string) => createHash('sha256').update(`${runId}\n${url}\n${vantage}`).digest('hex');

/** The queue of a vantage. */
export const queueNameOf = (vantage: string) => `onetap-probe-${vantage}`;

/** A vantage's name: what a queue name and a record may carry. */
export const VANTAGE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The engine's connection for a queue URL (a PostgreSQL URL; its schema, default onetap, gets `_queue`). */
export function queueConnection(url: string): { connectionString: string; schema: string; migrate: true } {
  const c = connection(url);
  return { connectionString: c.connectionString, schema: `${c.schema}_queue`, migrate: true };
}

/** How long a worker holds a job without renewing (ms) and how often stalled jobs are looked for: a killed worker's job is taken again within about twice this. */
export function lockMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.ONETAP_QUEUE_LOCK_MS);
  return Number.isInteger(n) && n >= 1_000 ? n : 30_000;
}

/** Enqueues one run's jobs, per vantage (each job once, whatever was enqueued before). */
export async function enqueue(queueUrl: string, jobs: readonly ProbeJob[]): Promise<void> {
  const { Queue, createPostgresBackend } = await import('bullmq');
  const byVantage = new Map<string, ProbeJob[]>();
  for (const j of jobs) {
    const list = byVantage.get(j.vantage);
    if (list) list.push(j); else byVantage.set(j.vantage, [j]);
  }
  for (const [vantage, list] of byVantage) {
    const queue = new Queue(queueNameOf(vantage), { connection: queueConnection(queueUrl) }, createPostgresBackend);
    try {
      await queue.addBulk(list.map((data) => ({
        name: data.kind, data,
        // Kept a day once done, so the same run enqueued again adds nothing; a failed job is tried three times.
        opts: { jobId: jobIdOf(data.run.id, data.url, vantage), removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 }, attempts: 3 },
      })));
    } finally {
      await queue.close();
    }
  }
}
