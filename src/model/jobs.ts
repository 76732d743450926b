/**
 * A probe job as the queue carries it: one URL to probe from one vantage in one run (or that vantage's canaries). The
 * queue is a table anyone who can write the store can write, so a worker parses every job with `probeJobSchema`
 * before it acts: every field and its bounds. Each problem is one sentence naming the field (a variable by its name,
 * never a value): a worker logs the first. What depends on the worker itself (its vantage, the variables it was
 * started to read, `--allow-http`, the address rule, the built-in client profiles) is checked by `readJob` in
 * `../queue/queue.ts` once the job has parsed.
 */
import { z } from 'zod';
import { isObject, nestsDeeperThan } from '../util/json.js';

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

/** The `url` of a canaries job (the store's `CANARIES_URL`). */
export const CANARIES_JOB_URL = '#canaries';

/** An environment variable's name, as a job may name one. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
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
const PRINTABLE = /^[\x20-\x7e]+$/;

/** Printable ASCII, 1 to `max` characters (what a request line or a User-Agent may carry). */
export const printableText = (max: number, error: string) =>
  z.string({ error }).min(1, { error }).max(max, { error }).regex(PRINTABLE, { error });
const bool = (error: string) => z.boolean({ error });
const whole = (min: number, max: number, error: string) =>
  z.number({ error }).int({ error }).min(min, { error }).max(max, { error });

/** A set of headers (a job's, or its profile's) that can be sent; `where` names it in a problem. */
export function headersSchema(where: string) {
  return z.record(z.string(), z.unknown(), { error: `${where}: expected names and text values` }).check((ctx) => {
    const entries = Object.entries(ctx.value);
    const problem = (message: string): void => {
      ctx.issues.push({ code: 'custom', message, input: ctx.value });
    };
    if (entries.length > JOB_LIMITS.headers) return problem(`${where}: at most ${JOB_LIMITS.headers} headers`);
    let chars = 0;
    for (const [name, value] of entries) {
      if (name.length > JOB_LIMITS.headerNameChars || !HEADER_NAME.test(name))
        return problem(`${where}: a name that is not a header name`);
      if (FRAMING_HEADERS.has(name.toLowerCase()))
        return problem(`${where}: ${name} frames the request (the client sets it)`);
      if (typeof value !== 'string' || value.length > JOB_LIMITS.headerValueChars || !HEADER_VALUE.test(value))
        return problem(
          `${where}.${name}: expected text up to ${JOB_LIMITS.headerValueChars} characters, no control characters`,
        );
      chars += name.length + value.length;
    }
    if (chars > JOB_LIMITS.headerChars) problem(`${where}: more than ${JOB_LIMITS.headerChars} characters in all`);
  }) as unknown as z.ZodType<Record<string, string>, Record<string, unknown>>;
}

/** Where a probe-only key is read: a variable (never its value) and the text before it. */
const keySourceSchema = z.strictObject({ env: z.string(), prefix: z.string().optional() });

/**
 * The probe-only keys of a job: each a header name and `{env, prefix?}`. Whether `env` is one of the variables the
 * worker was started to read is the worker's check.
 */
const probeHeadersSchema = z
  .record(z.string(), z.unknown(), { error: 'probeHeaders: expected header names and {env, prefix}' })
  .check((ctx) => {
    const problem = (message: string): void => {
      ctx.issues.push({ code: 'custom', message, input: ctx.value });
    };
    const entries = Object.entries(ctx.value);
    if (entries.length > JOB_LIMITS.probeHeaders) return problem(`probeHeaders: at most ${JOB_LIMITS.probeHeaders}`);
    for (const [name, source] of entries) {
      if (name.length > JOB_LIMITS.headerNameChars || !HEADER_NAME.test(name))
        return problem('probeHeaders: a name that is not a header name');
      const parsed = keySourceSchema.safeParse(source);
      if (!parsed.success) return problem(`probeHeaders.${name}: expected {env, prefix}`);
      const { env, prefix } = parsed.data;
      if (!ENV_NAME.test(env)) return problem(`probeHeaders.${name}.env: not the name of a variable`);
      if (prefix !== undefined && (prefix.length > JOB_LIMITS.prefixChars || !HEADER_VALUE.test(prefix)))
        return problem(`probeHeaders.${name}.prefix: expected text up to ${JOB_LIMITS.prefixChars} characters`);
    }
  }) as unknown as z.ZodType<Record<string, z.infer<typeof keySourceSchema>>, Record<string, unknown>>;

const RUN_PROBLEM = 'run: expected {id, startedAt: an ISO time}';
const URL_PROBLEM = `expected a URL up to ${JOB_LIMITS.urlChars} characters`;
const REFUSED_PROBLEM = `refusedKeys: at most ${JOB_LIMITS.probeHeaders} variable names`;
const CENSUS_PROBLEM = 'census: expected {identity: printable text up to 300, gapMs: up to 60000}';

/**
 * A job's client profile as the queue carries it: an object with a printable id. Whether it is a built-in profile,
 * or one derived from a built-in one by the changes a catalog may make, is the worker's check (the profiles are the
 * prober's).
 */
export const jobProfileSchema = z.looseObject(
  { id: printableText(JOB_LIMITS.profileIdChars, 'profile: expected a client profile') },
  { error: 'profile: expected a client profile' },
);

const CLIENT_INFO_PROBLEM = 'profile.clientInfo: expected {name, version}, printable text up to 100 each';

/**
 * The fields a catalog may change in a profile it derives from a built-in one (`extends`), each bounded; the rest
 * must be the built-in's (the worker's check).
 */
export const derivedProfileSchema = z.looseObject({
  clientInfo: z.looseObject(
    { name: printableText(100, CLIENT_INFO_PROBLEM), version: printableText(100, CLIENT_INFO_PROBLEM) },
    { error: CLIENT_INFO_PROBLEM },
  ),
  userAgent: printableText(300, 'profile.userAgent: printable text up to 300, or null').nullable(),
  protocolVersion: printableText(64, 'profile.protocolVersion: printable text up to 64'),
  headers: headersSchema('profile.headers'),
  requestTimeoutMs: whole(
    1,
    JOB_LIMITS.timeoutMs,
    `profile.requestTimeoutMs: a whole number of ms up to ${JOB_LIMITS.timeoutMs}`,
  ),
});

/** A job's fields, each bounded (its published JSON Schema; `probeJobSchema` adds the checks across fields). */
export const jobFieldsSchema = z.strictObject(
  {
    run: z.strictObject(
      {
        id: z.string({ error: RUN_PROBLEM }).max(JOB_LIMITS.runIdChars, { error: RUN_PROBLEM }).regex(RUN_ID, {
          error: RUN_PROBLEM,
        }),
        startedAt: z
          .string({ error: RUN_PROBLEM })
          .regex(ISO_TIME, { error: RUN_PROBLEM })
          .refine((v) => !Number.isNaN(Date.parse(v)), { error: RUN_PROBLEM }),
      },
      { error: RUN_PROBLEM },
    ),
    /** The vantage the job is for (its queue's). */
    vantage: z.string({ error: 'vantage: expected a name' }),
    /** `canaries`: the job reports the vantage's canaries instead of probing a catalog row. */
    kind: z.enum(['probe', 'canaries'], { error: 'kind is neither probe nor canaries' }),
    url: z.string({ error: `url: ${URL_PROBLEM}` }).max(JOB_LIMITS.urlChars, { error: `url: ${URL_PROBLEM}` }),
    name: z
      .string({ error: `name: expected text up to ${JOB_LIMITS.urlChars} characters` })
      .max(JOB_LIMITS.urlChars, { error: `name: expected text up to ${JOB_LIMITS.urlChars} characters` }),
    requiresAuth: bool('requiresAuth, matrix: expected true or false'),
    headers: headersSchema('headers'),
    /** Probe-only keys: header → the environment variable the worker reads it from (and a prefix). */
    probeHeaders: probeHeadersSchema.optional(),
    /** Variables the catalog's key rule refused for the row (`policy.keyEnv`): left out of `probeHeaders`, named. */
    refusedKeys: z
      .array(z.string({ error: REFUSED_PROBLEM }).max(JOB_LIMITS.headerNameChars, { error: REFUSED_PROBLEM }), {
        error: REFUSED_PROBLEM,
      })
      .max(JOB_LIMITS.probeHeaders, { error: REFUSED_PROBLEM })
      .refine((names) => names.every((n) => ENV_NAME.test(n)), { error: REFUSED_PROBLEM })
      .optional(),
    profile: jobProfileSchema,
    timeoutMs: whole(
      1,
      JOB_LIMITS.timeoutMs,
      `timeoutMs: a whole number of ms up to ${JOB_LIMITS.timeoutMs}`,
    ).optional(),
    matrix: bool('requiresAuth, matrix: expected true or false'),
    /**
     * The run asks for http:// on loopback (local fixtures): a worker probes and fetches cards there only when it
     * was itself started with `--allow-http`; this alone never opens it.
     */
    allowHttp: bool('allowHttp: expected true or false'),
    /** Probes in flight per host, over every worker of every vantage (leases in the store). */
    perHost: whole(1, JOB_LIMITS.perHost, `perHost: a whole number from 1 to ${JOB_LIMITS.perHost}`),
    canaries: z.array(
      z.string({ error: 'canaries: expected URLs' }).max(JOB_LIMITS.urlChars, { error: 'canaries: expected URLs' }),
      { error: 'canaries: expected URLs' },
    ),
    /** A census's job: its requests carry `identity` as User-Agent, no card is fetched, its host rests `gapMs`. */
    census: z
      .strictObject(
        { identity: printableText(300, CENSUS_PROBLEM), gapMs: whole(0, 60_000, CENSUS_PROBLEM) },
        { error: CENSUS_PROBLEM },
      )
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `a field no job has (${JSON.stringify(String(issue.keys[0]).slice(0, 40))})`
        : undefined,
  },
);

/**
 * A job read from the queue: an object no larger than a job is, its fields as `jobFieldsSchema` bounds them, and its
 * URL and canaries as its kind has them.
 */
export const probeJobSchema = z
  .custom<Record<string, unknown>>(isObject, { error: 'not an object' })
  .check((ctx) => {
    if (nestsDeeperThan(ctx.value, JOB_LIMITS.depth) || JSON.stringify(ctx.value).length > JOB_LIMITS.jsonChars)
      ctx.issues.push({
        code: 'custom',
        message: `larger than a job is (${JOB_LIMITS.jsonChars} characters, ${JOB_LIMITS.depth} levels)`,
        input: ctx.value,
      });
  })
  .pipe(jobFieldsSchema)
  .check((ctx) => {
    const job = ctx.value;
    const problem = (message: string): void => {
      ctx.issues.push({ code: 'custom', message, input: job });
    };
    if (job.kind === 'probe') {
      if (job.canaries.length) problem('canaries: a probe job has none');
    } else if (job.url !== CANARIES_JOB_URL) problem(`url: a canaries job's is ${CANARIES_JOB_URL}`);
    else if (job.canaries.length < 1 || job.canaries.length > JOB_LIMITS.canaries)
      problem(`canaries: 1 to ${JOB_LIMITS.canaries} URLs`);
  });

/** A probe job as the schema reads it (the queue's `ProbeJob` narrows its profile to a client profile). */
export type ProbeJobData = z.infer<typeof probeJobSchema>;

/** The first problem of a job that does not parse: one sentence, naming the field. */
export function jobParseProblem(error: z.ZodError): string {
  return error.issues[0]?.message ?? 'not a job';
}
