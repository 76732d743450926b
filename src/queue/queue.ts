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
import type { ProbeHeader } from '../catalog/model.js';
import { isLoopbackUrl } from '../catalog/url.js';
import { checkUrl, FetchRefused } from '../net/fetcher.js';
import { CANARIES_URL } from '../store/store.js';
import { connection, queueSchemaOf } from '../store/url.js';
import { isObject, nestsDeeperThan } from '../util/json.js';

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
  /** Variables the catalog's key rule refused for the row (`policy.keyEnv`): left out of `probeHeaders`, named in the record. */
  refusedKeys?: string[];
  profile: ClientProfile;
  timeoutMs?: number;
  matrix: boolean;
  /**
   * The run asks for http:// on loopback (local fixtures): a worker probes and fetches cards there only when it was
   * itself started with `--allow-http`; this alone never opens it.
   */
  allowHttp: boolean;
  /** Probes in flight per host, over every worker of every vantage (leases in the store). */
  perHost: number;
  canaries: string[];
  /** A census's job: every request carries `identity` as its User-Agent, no card is fetched, and its host rests `gapMs` after the probe. */
  census?: { identity: string; gapMs: number };
}

/** What a worker was started with: the only variables it reads probe keys from, and whether http:// on loopback is open. */
export interface WorkerPermits {
  keyEnv: ReadonlySet<string>;
  allowHttp: boolean;
}

/** The bounds of a job: whatever the queue holds, a worker acts on no more than this. */
export const JOB_LIMITS = {
  /** A job's JSON, characters. */
  jsonChars: 64 * 1024,
  /** Nesting of a job's JSON, levels. */
  depth: 8,
  /** A URL (the probed one, a canary, a name), characters. */
  urlChars: 2_048,
  /** A run's id, characters. */
  runIdChars: 200,
  /** Headers of a job, or of its profile. */
  headers: 32,
  /** A header's name, characters. */
  headerNameChars: 100,
  /** A header's value, characters. */
  headerValueChars: 4_096,
  /** A job's (or its profile's) header names and values together, characters. */
  headerChars: 16 * 1024,
  /** Probe-only keys a job names. */
  probeHeaders: 8,
  /** The text before a probe-only key (`Bearer `), characters. */
  prefixChars: 100,
  /** Canaries of a canaries job. */
  canaries: 20,
  /** A job's (or its profile's) per-request time limit, ms. */
  timeoutMs: 600_000,
  /** Probes in flight per host a job may ask for. */
  perHost: 1_000,
  /** A client profile's id, characters. */
  profileIdChars: 100,
} as const;

const FIELDS = new Set([
  'run',
  'vantage',
  'kind',
  'url',
  'name',
  'requiresAuth',
  'headers',
  'probeHeaders',
  'refusedKeys',
  'profile',
  'timeoutMs',
  'matrix',
  'allowHttp',
  'perHost',
  'canaries',
  'census',
]);
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:+-]*$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value: no control character but tab (no CR or LF: nothing can be added to the request). */
const HEADER_VALUE = /^[^\x00-\x08\x0a-\x1f\x7f]*$/;
/** Headers that frame the request or the connection: the client sets them, a job never does. */
const FRAMING_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
]);
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Printable ASCII, 1 to `max` characters (what a request line or a User-Agent may carry). */
const printable = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= max && /^[\x20-\x7e]+$/.test(v);

/** Why a set of headers (a job's, or its profile's) cannot be sent, or null. */
function headersProblem(headers: unknown, where: string): string | null {
  if (!isObject(headers)) return `${where}: expected names and text values`;
  const entries = Object.entries(headers);
  if (entries.length > JOB_LIMITS.headers) return `${where}: at most ${JOB_LIMITS.headers} headers`;
  let bytes = 0;
  for (const [name, value] of entries) {
    if (name.length > JOB_LIMITS.headerNameChars || !HEADER_NAME.test(name))
      return `${where}: a name that is not a header name`;
    if (FRAMING_HEADERS.has(name.toLowerCase())) return `${where}: ${name} frames the request (the client sets it)`;
    if (typeof value !== 'string' || value.length > JOB_LIMITS.headerValueChars || !HEADER_VALUE.test(value))
      return `${where}.${name}: expected text up to ${JOB_LIMITS.headerValueChars} characters, no control characters`;
    bytes += name.length + value.length;
  }
  return bytes > JOB_LIMITS.headerChars ? `${where}: more than ${JOB_LIMITS.headerChars} characters in all` : null;
}

/**
 * Why the probe-only keys of a job cannot be read, or null: each a header name and `{env, prefix?}`, and `env` one
 * of the variables this worker was started to read (`--key-env`). The problem names the variable, never a value.
 */
function probeHeadersProblem(probeHeaders: unknown, keyEnv: ReadonlySet<string>): string | null {
  if (probeHeaders === undefined) return null;
  if (!isObject(probeHeaders)) return 'probeHeaders: expected header names and {env, prefix}';
  const entries = Object.entries(probeHeaders);
  if (entries.length > JOB_LIMITS.probeHeaders) return `probeHeaders: at most ${JOB_LIMITS.probeHeaders}`;
  for (const [name, source] of entries) {
    if (name.length > JOB_LIMITS.headerNameChars || !HEADER_NAME.test(name))
      return 'probeHeaders: a name that is not a header name';
    if (
      !isObject(source) ||
      typeof source.env !== 'string' ||
      Object.keys(source).some((k) => k !== 'env' && k !== 'prefix')
    )
      return `probeHeaders.${name}: expected {env, prefix}`;
    if (!ENV_NAME.test(source.env)) return `probeHeaders.${name}.env: not the name of a variable`;
    if (
      source.prefix !== undefined &&
      (typeof source.prefix !== 'string' ||
        source.prefix.length > JOB_LIMITS.prefixChars ||
        !HEADER_VALUE.test(source.prefix))
    )
      return `probeHeaders.${name}.prefix: expected text up to ${JOB_LIMITS.prefixChars} characters`;
    if (!keyEnv.has(source.env))
      return `probeHeaders.${name} reads ${source.env}, which this worker was not started to read (--key-env)`;
  }
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
 * Why a job's client profile cannot be used, or null. A job carries a whole profile (a catalog may derive its own),
 * but a worker sends nothing a profile could not hold: it must be a built-in one exactly, or one derived from a
 * built-in one by the changes a catalog may make (client info, User-Agent, protocol version, headers, time limit),
 * each bounded. Everything else (the handshake, capabilities, limits, pages) is the built-in's.
 */
function profileProblem(p: unknown): string | null {
  if (!isObject(p) || !printable(p.id, JOB_LIMITS.profileIdChars)) return 'profile: expected a client profile';
  let expected: ClientProfile;
  const builtIn = profileById(p.id);
  if (builtIn) expected = builtIn;
  else {
    const base = typeof p.extends === 'string' ? profileById(p.extends) : undefined;
    if (!base) return 'profile: neither a built-in profile nor derived from one';
    const info = p.clientInfo;
    if (!isObject(info) || !printable(info.name, 100) || !printable(info.version, 100))
      return 'profile.clientInfo: expected {name, version}, printable text up to 100 each';
    if (p.userAgent !== null && !printable(p.userAgent, 300))
      return 'profile.userAgent: printable text up to 300, or null';
    if (!printable(p.protocolVersion, 64)) return 'profile.protocolVersion: printable text up to 64';
    const headers = headersProblem(p.headers, 'profile.headers');
    if (headers) return headers;
    if (
      !Number.isInteger(p.requestTimeoutMs) ||
      (p.requestTimeoutMs as number) < 1 ||
      (p.requestTimeoutMs as number) > JOB_LIMITS.timeoutMs
    )
      return `profile.requestTimeoutMs: a whole number of ms up to ${JOB_LIMITS.timeoutMs}`;
    expected = deriveProfile(p.id, base, {
      clientInfo: { name: info.name, version: info.version },
      userAgent: p.userAgent,
      protocolVersion: p.protocolVersion,
      headers: p.headers as Record<string, string>,
      requestTimeoutMs: p.requestTimeoutMs as number,
    });
  }
  return canonical(p) === canonical(expected)
    ? null
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
 * Why a job read from the queue cannot be worked on, or null. The queue is a database table: whatever it holds is
 * checked before a worker acts on it, every field and its bounds, against what this worker was started to do
 * (`permits`): a written job can send a worker to no private address and make it read no variable it was not given.
 */
export function jobProblem(job: unknown, vantage: string, permits: WorkerPermits): string | null {
  if (!isObject(job)) return 'not an object';
  if (nestsDeeperThan(job, JOB_LIMITS.depth) || JSON.stringify(job).length > JOB_LIMITS.jsonChars)
    return `larger than a job is (${JOB_LIMITS.jsonChars} characters, ${JOB_LIMITS.depth} levels)`;
  const unknown = Object.keys(job).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) return `a field no job has (${JSON.stringify(unknown.slice(0, 40))})`;
  if (job.vantage !== vantage)
    return `for vantage ${JSON.stringify(String(job.vantage)).slice(0, 80)}, not this worker's`;
  if (job.kind !== 'probe' && job.kind !== 'canaries') return 'kind is neither probe nor canaries';
  const run = job.run;
  if (
    !isObject(run) ||
    Object.keys(run).length !== 2 ||
    typeof run.id !== 'string' ||
    run.id.length > JOB_LIMITS.runIdChars ||
    !RUN_ID.test(run.id) ||
    typeof run.startedAt !== 'string' ||
    !ISO_TIME.test(run.startedAt) ||
    Number.isNaN(Date.parse(run.startedAt))
  )
    return 'run: expected {id, startedAt: an ISO time}';
  if (typeof job.allowHttp !== 'boolean') return 'allowHttp: expected true or false';
  if (typeof job.requiresAuth !== 'boolean' || typeof job.matrix !== 'boolean')
    return 'requiresAuth, matrix: expected true or false';
  if (typeof job.name !== 'string' || job.name.length > JOB_LIMITS.urlChars)
    return `name: expected text up to ${JOB_LIMITS.urlChars} characters`;
  if (job.kind === 'probe') {
    const url = addressProblem(job.url, 'url', job.allowHttp, permits);
    if (url) return url;
    if (!Array.isArray(job.canaries) || job.canaries.length) return 'canaries: a probe job has none';
  } else {
    if (job.url !== CANARIES_URL) return `url: a canaries job's is ${CANARIES_URL}`;
    if (!Array.isArray(job.canaries) || job.canaries.length < 1 || job.canaries.length > JOB_LIMITS.canaries)
      return `canaries: 1 to ${JOB_LIMITS.canaries} URLs`;
    for (const [i, c] of job.canaries.entries()) {
      const problem = addressProblem(c, `canaries[${i}]`, job.allowHttp, permits);
      if (problem) return problem;
    }
  }
  const headers = headersProblem(job.headers, 'headers');
  if (headers) return headers;
  const keys = probeHeadersProblem(job.probeHeaders, permits.keyEnv);
  if (keys) return keys;
  if (
    job.refusedKeys !== undefined &&
    (!Array.isArray(job.refusedKeys) ||
      job.refusedKeys.length > JOB_LIMITS.probeHeaders ||
      !job.refusedKeys.every(
        (n) => typeof n === 'string' && n.length <= JOB_LIMITS.headerNameChars && ENV_NAME.test(n),
      ))
  )
    return `refusedKeys: at most ${JOB_LIMITS.probeHeaders} variable names`;
  const profile = profileProblem(job.profile);
  if (profile) return profile;
  if (!Number.isInteger(job.perHost) || (job.perHost as number) < 1 || (job.perHost as number) > JOB_LIMITS.perHost)
    return `perHost: a whole number from 1 to ${JOB_LIMITS.perHost}`;
  if (
    job.timeoutMs !== undefined &&
    (!Number.isInteger(job.timeoutMs) ||
      (job.timeoutMs as number) < 1 ||
      (job.timeoutMs as number) > JOB_LIMITS.timeoutMs)
  )
    return `timeoutMs: a whole number of ms up to ${JOB_LIMITS.timeoutMs}`;
  if (
    job.census !== undefined &&
    (!isObject(job.census) ||
      Object.keys(job.census).length !== 2 ||
      !printable(job.census.identity, 300) ||
      !Number.isInteger(job.census.gapMs) ||
      (job.census.gapMs as number) < 0 ||
      (job.census.gapMs as number) > 60_000)
  )
    return 'census: expected {identity: printable text up to 300, gapMs: up to 60000}';
  return null;
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
): { connectionString: string; schema: string; migrate: boolean } {
  const c = connection(url);
  return { connectionString: c.connectionString, schema: queueSchemaOf(c.schema), migrate };
}

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

/** How long a worker holds a job without renewing (ms) and how often stalled jobs are looked for: a killed worker's job is taken again within about twice this. */
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
