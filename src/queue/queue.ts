/**
 * The probe queue, on an existing job engine: BullMQ 6 with its PostgreSQL backend, in the store's database (schema
 * `<store schema>_queue`), loaded when a queue is opened. One queue per vantage; a job is one URL to probe from one
 * vantage in one run (or that vantage's canaries), carrying the run's probe settings and the names of the
 * environment variables that hold probe-only keys, never their values. Its id is the SHA-256 of run id, URL and
 * vantage: enqueueing a run twice adds nothing, and a job taken again after its worker died records once (the
 * observation's key is the job's).
 */
import { createHash } from 'node:crypto';
import { deriveProfile, profileById, type ClientProfile } from '../attest/profile.js';
import { isLoopbackUrl } from '../catalog/url.js';
import { checkUrl, FetchRefused } from '../net/fetcher.js';
import { connection, queueSchemaOf } from '../store/url.js';
import {
  derivedProfileSchema,
  ENV_NAME,
  JOB_LIMITS,
  jobParseProblem,
  probeJobSchema,
  type ProbeJobData,
} from '../model/jobs.js';
import { isObject } from '../util/json.js';

/**
 * What a worker needs to probe one URL as the run asks: a job as its schema (`../model/jobs.ts`) reads it, with its
 * profile a client profile.
 */
export type ProbeJob = Omit<ProbeJobData, 'profile'> & { profile: ClientProfile };

/**
 * What a worker was started with: the only variables it reads probe keys from, and whether http:// on loopback is open.
 */
export interface WorkerPermits {
  keyEnv: ReadonlySet<string>;
  allowHttp: boolean;
}

export { ENV_NAME, JOB_LIMITS };

/**
 * Why the probe-only keys of a parsed job cannot be read, or null: each `env` must be one of the variables this
 * worker was started to read (`--key-env`). The problem names the variable, never a value.
 */
function keysProblem(probeHeaders: ProbeJobData['probeHeaders'], keyEnv: ReadonlySet<string>): string | null {
  for (const [name, source] of Object.entries(probeHeaders ?? {}))
    if (!keyEnv.has(source.env))
      return `probeHeaders.${name} reads ${source.env}, which this worker was not started to read (--key-env)`;
  return null;
}

/** JSON with its keys in order: two values are the same profile when these are equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * A job's client profile as this worker will use it, or why it cannot be used. A job carries a whole profile (a
 * catalog may derive its own), but a worker sends nothing a profile could not hold: it must be a built-in one
 * exactly, or one derived from a built-in one by the changes a catalog may make (`derivedProfileSchema`: client
 * info, User-Agent, protocol version, headers, time limit), each bounded. Everything else (the handshake,
 * capabilities, limits, pages) is the built-in's: the profile used is the one the worker builds itself.
 */
function profileOf(p: ProbeJobData['profile']): ClientProfile | string {
  let expected: ClientProfile;
  const builtIn = profileById(p.id);
  if (builtIn) expected = builtIn;
  else {
    const base = typeof p.extends === 'string' ? profileById(p.extends) : undefined;
    if (!base) return 'profile: neither a built-in profile nor derived from one';
    const derived = derivedProfileSchema.safeParse(p);
    if (!derived.success) return jobParseProblem(derived.error);
    const { clientInfo, userAgent, protocolVersion, headers, requestTimeoutMs } = derived.data;
    expected = deriveProfile(p.id, base, {
      clientInfo: { name: clientInfo.name, version: clientInfo.version },
      userAgent,
      protocolVersion,
      headers,
      requestTimeoutMs,
    });
  }
  return canonical(p) === canonical(expected)
    ? expected
    : `profile: ${p.id} differs from the ${builtIn ? 'built-in profile' : `profile derived from ${String(p.extends)}`} in what a job may not change`;
}

/**
 * Why a URL the job sends the worker to cannot be asked, or null: the address rule (`../net/address.ts`) before any
 * request, https only; http://, and loopback, only when the run asks for it and this worker was started with
 * `--allow-http` (local fixtures): the job's own word never opens it.
 */
function addressProblem(url: unknown, where: string, runAllowsHttp: boolean, permits: WorkerPermits): string | null {
  if (typeof url !== 'string' || url.length > JOB_LIMITS.urlChars)
    return `${where}: expected a URL up to ${JOB_LIMITS.urlChars} characters`;
  const open = permits.allowHttp && runAllowsHttp && isLoopbackUrl(url);
  try {
    checkUrl(url, { allowPrivate: open });
  } catch (err) {
    const code = err instanceof FetchRefused ? err.code : 'bad-url';
    if (code === 'scheme') return `${where}: https only (http on loopback only for a worker started with --allow-http)`;
    if (code === 'private-address')
      return `${where}: a private, loopback or reserved address (loopback only for a worker started with --allow-http)`;
    return `${where}: not a URL a worker asks (no credentials in it)`;
  }
  return null;
}

/**
 * A job read from the queue, or why it cannot be worked on. The queue is a database table: whatever it holds is
 * parsed with the job's schema (every field and its bounds), then checked against what this worker was started to do
 * (`permits`): a written job can send a worker to no private address and make it read no variable it was not given.
 */
export function readJob(
  data: unknown,
  vantage: string,
  permits: WorkerPermits,
): { job: ProbeJob; problem?: undefined } | { job?: undefined; problem: string } {
  const parsed = probeJobSchema.safeParse(data);
  if (!parsed.success) return { problem: jobParseProblem(parsed.error) };
  const job = parsed.data;
  if (job.vantage !== vantage)
    return { problem: `for vantage ${JSON.stringify(job.vantage).slice(0, 80)}, not this worker's` };
  const urls = job.kind === 'probe' ? [['url', job.url]] : job.canaries.map((c, i) => [`canaries[${i}]`, c]);
  for (const [where, url] of urls) {
    const problem = addressProblem(url, where, job.allowHttp, permits);
    if (problem) return { problem };
  }
  const keys = keysProblem(job.probeHeaders, permits.keyEnv);
  if (keys) return { problem: keys };
  const profile = profileOf(job.profile);
  return typeof profile === 'string' ? { problem: profile } : { job: { ...job, profile } };
}

/** A job's URL as a log line may name it (any text: the line is escaped where it is printed). */
export function jobUrlOf(job: unknown): string {
  const url = isObject(job) ? job.url : undefined;
  return typeof url === 'string' ? (url.length > 300 ? `${url.slice(0, 300)}…` : url) : '(no URL)';
}

/** The job's id: SHA-256 of run id, URL and vantage (BullMQ refuses `:` in ids, and all-digit ones). */
export const jobIdOf = (runId: string, url: string, vantage: string) =>
  createHash('sha256').update(`${runId}\n${url}\n${vantage}`).digest('hex');

/** The queue of a vantage. */
export const queueNameOf = (vantage: string) => `onetap-probe-${vantage}`;

/** A vantage's name: what a queue name and a record may carry. */
export const VANTAGE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * The engine's connection for a queue URL (a PostgreSQL URL; its schema, default onetap, gets `_queue`). Only the
 * enqueuing side migrates on connect: the engine's migration alters its tables, which a vantage's own role
 * (`onetap store grant-vantage`) may not; a worker runs `prepareQueue` first.
 */
export function queueConnection(
  url: string,
  migrate = true,
  max: number = QUEUE_POOL.enqueue,
): { connectionString: string; schema: string; migrate: boolean; max: number; idleTimeoutMillis: number } {
  const c = connection(url);
  // Idle connections go back to the server after a second (the driver's default is ten): slots are shared.
  return {
    connectionString: c.connectionString,
    schema: queueSchemaOf(c.schema),
    migrate,
    max,
    idleTimeoutMillis: 1_000,
  };
}

/**
 * Connections each engine pool may hold (its waiting worker's LISTEN connection aside). The engine's default is
 * 10 per queue: a decider over three vantages and three workers held about 100 at once, PostgreSQL's default limit,
 * and two such runs on one server were refused ("too many clients"). Its queries are short; a few suffice.
 */
export const QUEUE_POOL = { enqueue: 2, worker: 4 } as const;

/**
 * A worker's queue, ready: its schema as this onetap's engine needs it. When it is behind (or missing: the queue is
 * in a database `onetap store migrate` did not see), migrated here, which only the schema's owner may do.
 */
export async function prepareQueue(url: string): Promise<void> {
  const [
    { assertSchemaCompatibility, runMigrations, LATEST_SCHEMA_VERSION, SchemaMigrationRequiredError },
    { default: pg },
  ] = await Promise.all([import('bullmq'), import('pg')]);
  const { connectionString, schema } = queueConnection(url);
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {}); // the query under way fails and says so
  await client.connect();
  try {
    try {
      if ((await assertSchemaCompatibility(client, schema)) >= LATEST_SCHEMA_VERSION) return;
    } catch (err) {
      if (!(err instanceof SchemaMigrationRequiredError)) throw err;
    }
    await runMigrations(client, schema);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * How long a worker holds a job without renewing (ms) and how often stalled jobs are looked for: a killed worker's job
 * is taken again within about twice this.
 */
export function lockMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.ONETAP_QUEUE_LOCK_MS);
  return Number.isInteger(n) && n >= 1_000 ? n : 30_000;
}

/**
 * How long a host's slot is leased without renewal (ms; `ONETAP_HOST_LEASE_MS`, default 30 s): a worker that stops
 * renewing (killed, paused) frees the host within this, and stops its own probe before it.
 */
export function hostLeaseMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.ONETAP_HOST_LEASE_MS);
  return Number.isInteger(n) && n >= 3_000 ? n : 30_000;
}

/** A job's attempts: for what its probe did (a store or queue out of reach uses none), each after a longer wait. */
export const JOB_ATTEMPTS = { attempts: 3, backoff: { type: 'exponential', delay: 5_000 } } as const;
/** Failed jobs' ids read per statement when a run is enqueued again. */
const FAILED_PAGE = 1_000;

/**
 * Enqueues one run's jobs, per vantage (each job once, whatever was enqueued before); a job of the run that failed for
 * good is tried again (`job.retry()`, its attempts counted afresh), so enqueueing a run again can complete it.
 */
export async function enqueue(queueUrl: string, jobs: readonly ProbeJob[]): Promise<void> {
  const { Queue, createPostgresBackend } = await import('bullmq');
  const byVantage = new Map<string, ProbeJob[]>();
  for (const j of jobs) {
    const list = byVantage.get(j.vantage);
    if (list) list.push(j);
    else byVantage.set(j.vantage, [j]);
  }
  for (const [vantage, list] of byVantage) {
    const queue = new Queue(queueNameOf(vantage), { connection: queueConnection(queueUrl) }, createPostgresBackend);
    try {
      await queue.addBulk(
        list.map((data) => ({
          name: data.kind,
          data,
          // Kept a day once done, so the same run enqueued again adds nothing; a failed job is tried three times.
          opts: {
            jobId: jobIdOf(data.run.id, data.url, vantage),
            removeOnComplete: { age: 86_400 },
            removeOnFail: { age: 86_400 },
            ...JOB_ATTEMPTS,
          },
        })),
      );
      if ((await queue.getFailedCount()) > 0) {
        const ids = new Set(list.map((data) => jobIdOf(data.run.id, data.url, vantage)));
        const failed: string[] = [];
        for (let start = 0; ; start += FAILED_PAGE) {
          const page = await queue.getRanges(['failed'], start, start + FAILED_PAGE - 1, true);
          failed.push(...page.filter((id) => ids.has(id)));
          if (page.length < FAILED_PAGE) break;
        }
        for (const id of failed)
          await (await queue.getJob(id))?.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      }
    } finally {
      await queue.close();
    }
  }
}
