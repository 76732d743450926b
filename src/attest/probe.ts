/**
 * Attest one server: run the deciding profile's client (the app's, by default); when it would not list
 * tools, run the spec-correct diagnosis (and, when that finds no working server, the other protocol eras)
 * so the verdict can say why; ask the policy; retry exactly once when the policy calls the failure retryable.
 */
import { Agent, type Dispatcher } from 'undici';
import { classify, isTransient, RETRYABLE, REASON_TEXT, type Reason, type VerdictName } from '../policy/policy.js';
import { runAppClient, runAppFallbackClient, type ClientOptions } from './app-client.js';
import { authEvidence } from './auth.js';
import { emptyRun, stepOf, type AuthKind, type ClientRun, type Observation, type Quirk, type ToolDefinition, type Unprocessable, type UnprocessableStage } from './observation.js';
import { BROWSER_USER_AGENT, CLIENT_PROFILES, DIAGNOSIS, KAI_9000, MCP_2025_11_25, MCP_2026_07_28, profileById, type ClientProfile } from './profile.js';
import { exchangeError, runSpecClient, runStatelessClient } from './spec-client.js';
import { firstSseEvent } from './transport.js';
import { screenTools } from '../screen/screen.js';
import type { Finding } from '../screen/types.js';
import { duplicateNames, nestsDeeperThan, storedSnapshot, toolListSnapshot, MAX_NESTING, type StoredSnapshot } from './snapshot.js';
import { RECORD_LIMITS, type MatrixCell } from './result.js';
import { clipText, oneLine, oneLineOrNull } from '../util/text.js';
import type { BodyBudget } from './budget.js';


export interface ProbeOptions {
  /** The entry is auth-optional (initialize without a key is enough). */
  requiresAuth?: boolean;
  /** The deciding profile (an id of CLIENT_PROFILES, or a profile); default the app's, `kai-9000`. */
  profile?: string | ClientProfile;
  /** Also run every other profile and report `matrix` (informational: only the deciding profile decides). */
  matrix?: boolean;
  /** Per-request time limit override, ms; a limit shorter than the profile's own sets `cutShort` when it ends a request. */
  timeoutMs?: number;
  /** Extra request headers (the entry's own headers; sent to this URL only). */
  headers?: Record<string, string>;
  /** Replaces the deciding profile's User-Agent (diagnostic). */
  userAgent?: string;
  /** Cap on one response body after decompression, bytes. */
  maxBodyBytes?: number;
  /** Pause before the one retry, ms. */
  retryDelayMs?: number;
  /** A 429's Retry-After is honoured up to this long; a longer one is not retried. */
  maxRetryAfterMs?: number;
  /** Bounds the bytes all body reads of a run hold together (probeMany shares one). */
  budget?: BodyBudget;
  /** Permit private addresses for URLs a server supplies (auth metadata on another origin); tests only. */
  allowPrivate?: boolean;
  dispatcher?: Dispatcher;
}


/** The outcome of attesting one URL: what the deciding client sees, and the reading that explains it. */
export interface ProbeResult {
  url: string;
  /** The deciding profile's id. */
  profile: string;
  verdict: VerdictName;
  reason: Reason;
  /** Every reason that applies, `reason` first. */
  reasons: Reason[];
  /** Plain-language reason. */
  detail: string;
  attempts: number;
  /** HTTP status of the step that decided (initialize, or tools/list once initialize succeeded). */
  httpStatus: number | null;
  protocolVersion: string | null;
  serverName: string | null;
  serverVersion: string | null;
  /** What the deciding profile's client lists (page 1 for the app). */
  tools: string[] | null;
  /** The tools' full definitions as served (for snapshots and screening). */
  toolDefinitions: ToolDefinition[] | null;
  sessionId: boolean;
  durationMs: number;
  /** The first thing that went wrong, as short text (null when live/ok). */
  error: string | null;
  /** The app's own error message when the app would not list tools (null otherwise). */
  appError: string | null;
  quirks: Quirk[];
  /** A time limit override stopped a request before the client's own limit. */
  cutShort: boolean;
  /** Tools the server listed that the deciding client leaves out (2026-07-28: an invalid `x-mcp-header`), with why. */
  excludedTools: Array<{ name: string; reason: string }>;
  /** The spec-correct reading, when it ran, with its own evidence (the top-level fields are the deciding client's). */
  diagnosis: { works: boolean; tools: string[] | null; error: string | null; httpStatus: number | null; protocolVersion: string | null; serverName: string | null; serverVersion: string | null; quirks: Quirk[] } | null;
  /** How a 401/403 asked to authenticate. */
  auth: AuthKind | null;
  /** Where a redirected initialize points. */
  location: string | null;
  /** Per profile, with `matrix`. */
  matrix: Record<string, MatrixCell> | null;
  /** Screening findings on the deciding client's tool list (full text). */
  findings: Finding[];
  /** The tool list as stored (hashed on the full text, then clipped), or null without a tool list (or one not processed). */
  snapshot: StoredSnapshot | null;
  observation: Observation;
}

export const PROBE_DEFAULTS = {
  maxBodyBytes: 4 * 1024 * 1024,
  retryDelayMs: 1_000,
  maxRetryAfterMs: 5_000,
} as const;

/** Every option named (a new one that \`probe()\` forgets to pass on fails to compile), the defaults filled in. */
type Resolved = { [K in keyof Required<ProbeOptions>]: ProbeOptions[K] } & { maxBodyBytes: number; retryDelayMs: number; maxRetryAfterMs: number; dispatcher: Dispatcher };

export function resolveProfile(profile: string | ClientProfile | undefined): ClientProfile {
  if (profile === undefined) return KAI_9000;
  if (typeof profile !== 'string') return profile;
  const found = profileById(profile);
  if (!found) throw new Error(`unknown client profile "${profile}" (known: ${Object.keys(CLIENT_PROFILES).join(', ')})`);
  return found;
}

/** A dispatcher with a client's connect limit (the app's 10 s; an override may shorten it). */
export function probeDispatcher(timeoutMs?: number, lookup?: unknown): Agent {
  const connect = Math.min(KAI_9000.connectTimeoutMs, timeoutMs ?? Infinity);
  return new Agent({ keepAliveTimeout: 4_000, connect: { timeout: connect, ...(lookup ? { lookup: lookup as never } : {}) } });
}

export async function probe(url: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  const own = options.dispatcher ? null : probeDispatcher(options.timeoutMs);
  // Every field by name, not a spread or withDefaults: this runs once per probe, thousands of times a run.
  const opts: Resolved = {
    requiresAuth: options.requiresAuth,
    profile: options.profile,
    matrix: options.matrix,
    timeoutMs: options.timeoutMs,
    headers: options.headers,
    userAgent: options.userAgent,
    budget: options.budget,
    allowPrivate: options.allowPrivate,
    maxBodyBytes: options.maxBodyBytes ?? PROBE_DEFAULTS.maxBodyBytes,
    retryDelayMs: options.retryDelayMs ?? PROBE_DEFAULTS.retryDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? PROBE_DEFAULTS.maxRetryAfterMs,
    dispatcher: options.dispatcher ?? own!,
  };
  try {
    return await attest(url, resolveProfile(options.profile), opts);
  } finally {
    own?.destroy().catch(() => {});
  }
}

async function attest(url: string, profile: ClientProfile, opts: Resolved): Promise<ProbeResult> {
  const entry = { requiresAuth: opts.requiresAuth ?? false };
  const started = performance.now();
  let attempts = 1;
  let stage: UnprocessableStage = 'read';
  try {
    let [observation, snapshot] = await observe(url, profile, opts);
    let verdict = classify(observation, entry);
    if (RETRYABLE.has(verdict.reason)) {
      const wait = retryWait(observation, opts);
      if (wait !== null) {
        await sleep(wait);
        attempts = 2;
        [observation, snapshot] = await observe(url, profile, opts);
        verdict = classify(observation, entry);
      }
    }
    // The matrix reads the same server with every other profile, beside the verdict's observation, never in it:
    // what the deciding client and its own explanation saw is what decides, with or without --matrix.
    const wide = opts.matrix && !observation.unprocessable ? await widened(observation, url, profile, opts) : observation;
    if (verdict.reason === 'auth-required') {
      const answer = stepOf(observation.diagnosis ?? observation.deciding, 'initialize');
      // Evidence of how to authenticate explains a verdict; a metadata document that cannot be read is no evidence.
      if (answer) observation.auth = await authEvidence(url, answer, { timeoutMs: 10_000, allowPrivate: opts.allowPrivate }).catch(() => 'unknown' as const);
    }
    stage = 'store';
    const matrix = opts.matrix ? matrixOf(wide, profile, entry) : null;
    return summarize(url, profile, observation, verdict, attempts, Math.round(performance.now() - started), matrix, snapshot, wide.diagnosis);
  } catch (err) {
    // Whatever the server sent, this row has a verdict and the run goes on.
    const o = emptyObservation(url, profile, { stage, error: oneLine(String((err as Error)?.message ?? err), RECORD_LIMITS.errorChars) });
    return summarize(url, profile, o, classify(o, entry), attempts, Math.round(performance.now() - started), null, null);
  }
}

function emptyObservation(url: string, profile: ClientProfile, unprocessable: Unprocessable | null): Observation {
  return { url, deciding: emptyRun(profile.id), diagnosis: null, others: {}, legacySse: null, auth: null, uaBlocked: null, findings: [], unprocessable };
}

/**
 * The deciding client's tool list as a snapshot, with the findings on its full text. A list nested deeper than
 * MAX_NESTING, or one whose hashing or screening throws, is not processed: the observation says where.
 */
function processTools(o: Observation): StoredSnapshot | null {
  const run = o.deciding;
  const definitions = run.toolDefinitions;
  if (!definitions) return null;
  let stage: UnprocessableStage = 'nesting';
  try {
    if (definitions.some((t) => nestsDeeperThan(t, MAX_NESTING))) {
      o.unprocessable = { stage, error: `a tool definition is nested deeper than ${MAX_NESTING} levels` };
      return null;
    }
    stage = 'hash';
    const listed = toolListSnapshot(run.serverInfo, definitions);
    const snapshot = storedSnapshot(listed);
    stage = 'screen';
    // Screened on the full text, before anything is clipped for storage.
    o.findings = screenTools(definitions);
    for (const d of duplicateNames(listed)) {
      o.findings.push({ tool: clipText(d.name, RECORD_LIMITS.nameChars), field: 'name', rule: 'duplicate-name', excerpt: `${d.digests.length} definitions of one name (digests ${d.digests.join(', ')})` });
    }
    return snapshot;
  } catch (err) {
    o.unprocessable = { stage, error: oneLine(String((err as Error)?.message ?? err), RECORD_LIMITS.errorChars) };
    o.findings = [];
    return null;
  }
}

/** One attempt: the deciding client, then the reads that explain a failure. */
async function observe(url: string, profile: ClientProfile, opts: Resolved): Promise<[Observation, StoredSnapshot | null]> {
  const deciding = await runProfile(url, profile, opts, opts.userAgent);
  const o: Observation = emptyObservation(url, profile, null);
  o.deciding = deciding;
  const snapshot = processTools(o);
  if (o.unprocessable) return [o, null];
  return [await explain(o, url, profile, opts), snapshot];
}

/** The observation with the diagnosis and every other profile's run, for the matrix only. */
async function widened(o: Observation, url: string, profile: ClientProfile, opts: Resolved): Promise<Observation> {
  const wide: Observation = { ...o, others: { ...o.others } };
  wide.diagnosis ??= await runProfile(url, DIAGNOSIS, opts);
  for (const other of Object.values(CLIENT_PROFILES)) {
    if (other.id !== profile.id) wide.others[other.id] ??= await runProfile(url, other, opts);
  }
  return wide;
}

async function explain(o: Observation, url: string, profile: ClientProfile, opts: Resolved): Promise<Observation> {
  const deciding = o.deciding;
  const appUsable = deciding.works || ((opts.requiresAuth ?? false) && deciding.connected);
  if (appUsable) return o;
  // A spec-correct deciding client that connected read the server as the diagnosis would (zero tools, a
  // tools/list error): a second handshake would add nothing but a request the server sees as this client's.
  if (!isAppLike(profile) && deciding.connected) return o;
  // A failure before any HTTP answer (DNS, refused, connect timeout, TLS) reads the same for every client,
  // and a passing one (5xx, 429) is retried: neither needs the diagnosis.
  // An answer over the cap is judged on its start alone (review/oversize or drop/not-mcp): no second read.
  const first = deciding.steps[0];
  const last = deciding.steps.at(-1);
  if ((first && first.status === null && deciding.steps.length === 1) || isTransient(last) || last?.problem === 'oversize') return o;
  o.diagnosis = await runProfile(url, DIAGNOSIS, opts);
  if (o.diagnosis.works && isAppLike(profile) && (stepOf(deciding, 'initialize')?.status ?? 0) >= 400) {
    // Is it the app's agent? The same client with a browser's agent tells.
    o.uaBlocked = (await runProfile(url, profile, opts, BROWSER_USER_AGENT)).works;
  }
  if (!o.diagnosis.works) {
    const init = stepOf(o.diagnosis, 'initialize');
    if (init && (init.status === 400 || init.status === 404 || init.status === 405) && init.response === null) {
      o.legacySse = (await firstSseEvent(url, { 'user-agent': BROWSER_USER_AGENT }, AbortSignal.timeout(Math.min(10_000, opts.timeoutMs ?? 10_000)), opts.dispatcher)) === 'endpoint';
    }
    const answered = init && init.status !== null && (init.status === 400 || init.status === 404 || init.status === 405 || init.status === 406 || !!init.response?.error);
    if (answered && !o.legacySse) {
      // Another protocol era? The diagnosis tries the other profiles to tell an alive server from a 404 page.
      for (const era of [MCP_2025_11_25, MCP_2026_07_28]) {
        if (era.id !== profile.id) o.others[era.id] ??= await runProfile(url, era, opts);
      }
    }
  }
  return o;
}

const isAppLike = (p: ClientProfile) => p.handshake === 'app' || p.handshake === 'app-fallback';

function runProfile(url: string, profile: ClientProfile, opts: Resolved, userAgent?: string): Promise<ClientRun> {
  const client: ClientOptions = {
    headers: opts.headers ?? {},
    requestTimeoutMs: Math.min(profile.requestTimeoutMs, opts.timeoutMs ?? Infinity),
    maxBodyBytes: opts.maxBodyBytes,
    dispatcher: opts.dispatcher,
    userAgent,
    budget: opts.budget,
  };
  switch (profile.handshake) {
    case 'app': return runAppClient(url, profile, client);
    case 'app-fallback': return runAppFallbackClient(url, profile, client);
    case 'spec': return runSpecClient(url, profile, client);
    case 'stateless': return runStatelessClient(url, profile, client);
  }
}

/** Each profile judged as if it decided, against the same diagnosis. */
function matrixOf(o: Observation, deciding: ClientProfile, entry: { requiresAuth: boolean }): Record<string, MatrixCell> {
  const cells: Record<string, MatrixCell> = {};
  for (const p of Object.values(CLIENT_PROFILES)) {
    const run = p.id === deciding.id ? o.deciding : o.others[p.id];
    if (!run) continue;
    const others = Object.fromEntries(Object.entries(o.others).filter(([id]) => id !== p.id));
    const v = classify({ ...o, deciding: run, others, uaBlocked: p.id === deciding.id ? o.uaBlocked : null }, entry);
    cells[p.id] = { works: run.works, verdict: v.verdict, reason: v.reason, tools: run.tools && clipNames(run.tools) };
  }
  return cells;
}

function summarize(url: string, profile: ClientProfile, o: Observation, v: ReturnType<typeof classify>, attempts: number, durationMs: number, matrix: ProbeResult['matrix'], snapshot: StoredSnapshot | null, diagnosis = o.diagnosis): ProbeResult {
  // Every field outside `diagnosis` and `matrix` is the deciding client's: adding --matrix (which runs the
  // diagnosis too) must not change what the deciding client saw.
  const run = o.deciding;
  const init = firstStep(run);
  const deciding = stepOf(run, 'tools/list') ?? init;
  // The app's own error is the deciding client's when it is the app (or its fork); the matrix holds the rest.
  const app = isAppLike(profile) ? run : null;
  const live = v.verdict === 'live';
  const serverInfo = run.serverInfo;
  for (const r of [run, diagnosis, ...Object.values(o.others)]) {
    if (!r) continue;
    r.toolDefinitions = null;
    r.steps = r.steps.slice(); // an array grown by push keeps room for 17; a run keeps thousands of these
  }
  // Everything the server controls is bounded (and one line) from here on: results are printed and recorded.
  const L = RECORD_LIMITS;
  return new AttestedResult({
    url,
    profile: profile.id,
    verdict: v.verdict,
    reason: v.reason,
    reasons: v.reasons,
    detail: o.unprocessable ? `${REASON_TEXT.unprocessable} (stage: ${o.unprocessable.stage})` : REASON_TEXT[v.reason],
    attempts,
    httpStatus: deciding?.status ?? null,
    protocolVersion: oneLineOrNull(run.protocolVersion, L.nameChars),
    serverName: oneLineOrNull(serverInfo?.name, L.nameChars),
    serverVersion: oneLineOrNull(serverInfo?.version, L.nameChars),
    tools: run.tools && clipNames(run.tools),
    sessionId: run.sessionId,
    durationMs,
    error: o.unprocessable ? `${o.unprocessable.stage}: ${o.unprocessable.error}` : live && v.reason === 'ok' ? null : oneLineOrNull(errorText(o, v.reason), L.errorChars),
    appError: oneLineOrNull(app && !app.works ? app.error ?? (app.tools?.length === 0 ? 'connected, but the app lists 0 tools' : null) : null, L.errorChars),
    quirks: unique(run.quirks),
    excludedTools: run.excludedTools.map((e) => ({ name: clipText(e.name, L.nameChars), reason: oneLine(e.reason, L.errorChars) })),
    cutShort: run.cutShort,
    diagnosis: diagnosis ? {
      works: diagnosis.works, tools: diagnosis.tools && clipNames(diagnosis.tools), error: oneLineOrNull(diagnosis.error ?? (diagnosis.works ? null : firstProblem(diagnosis)), L.errorChars),
      httpStatus: (stepOf(diagnosis, 'tools/list') ?? firstStep(diagnosis))?.status ?? null,
      protocolVersion: oneLineOrNull(diagnosis.protocolVersion, L.nameChars), serverName: oneLineOrNull(diagnosis.serverInfo?.name, L.nameChars),
      serverVersion: oneLineOrNull(diagnosis.serverInfo?.version, L.nameChars),
      quirks: unique(diagnosis.quirks),
    } : null,
    auth: o.auth,
    location: oneLineOrNull(init?.status !== null && init !== undefined && init.status >= 300 && init.status < 400 ? init.headers.location : null, L.locationChars),
    matrix,
    findings: o.findings,
    observation: o,
    snapshot,
  });
}

/** Tool names as recorded: each at most RECORD_LIMITS.nameChars (the list itself is bounded where it is stored). */
function clipNames(names: string[]): string[] {
  const max = RECORD_LIMITS.nameChars;
  return names.some((n) => n.length > max) ? names.map((n) => clipText(n, max)) : names;
}

/**
 * A result as one class, so that the thousands of results a run keeps share one shape (an object literal with
 * getters became a hash table of its properties, 1.6 KB per result).
 */
class AttestedResult implements ProbeResult {
  constructor(f: Omit<ProbeResult, 'toolDefinitions'>) {
    // Field by field, not Object.assign: V8 sizes an instance by the constructor's own assignments, so these sit
    // in the object itself rather than in a second, out-of-object array.
    this.url = f.url; this.profile = f.profile; this.verdict = f.verdict; this.reason = f.reason; this.reasons = f.reasons;
    this.detail = f.detail; this.attempts = f.attempts; this.httpStatus = f.httpStatus; this.protocolVersion = f.protocolVersion;
    this.serverName = f.serverName; this.serverVersion = f.serverVersion; this.tools = f.tools; this.sessionId = f.sessionId;
    this.durationMs = f.durationMs; this.error = f.error; this.appError = f.appError; this.quirks = f.quirks; this.excludedTools = f.excludedTools; this.cutShort = f.cutShort;
    this.diagnosis = f.diagnosis; this.auth = f.auth; this.location = f.location; this.matrix = f.matrix; this.findings = f.findings;
    this.observation = f.observation; this.snapshot = f.snapshot;
  }

  /** The tool definitions as stored (clipped). */
  get toolDefinitions(): ToolDefinition[] | null {
    return this.snapshot?.tools ?? null;
  }
}

// The fields of AttestedResult are ProbeResult's, assigned in its constructor.
interface AttestedResult extends Omit<ProbeResult, 'toolDefinitions'> {}

const firstStep = (run: ClientRun) => stepOf(run, 'initialize') ?? stepOf(run, 'server/discover') ?? run.steps[0];

/** The first thing that went wrong in the deciding client's exchanges, as short text. */
function errorText(o: Observation, reason: Reason): string | null {
  if (o.legacySse) return 'GET answered with an SSE `endpoint` event: legacy HTTP+SSE transport';
  if (reason.startsWith('app-') || reason === 'auth-optional' || reason === 'oversize') return o.deciding.error;
  const own = firstProblem(o.deciding);
  if (own) return own;
  // The deciding client took the answer and named nothing wrong (it does not match ids, or it listed no tool):
  // the spec-correct reading of the same server says what was wrong, labelled as such.
  const spec = o.diagnosis ? firstProblem(o.diagnosis) : null;
  if (spec) return `spec-correct reading: ${spec}`;
  return o.deciding.connected && o.deciding.tools?.length === 0 ? 'connected, but lists 0 tools' : null;
}

function firstProblem(run: ClientRun): string | null {
  for (const s of run.steps) {
    if (s.step === 'notifications/initialized') continue;
    if (s.error || s.response?.error || (s.status !== null && s.status >= 300) || s.problem) return exchangeError(s);
  }
  return run.error;
}

function retryWait(o: Observation, opts: Resolved): number | null {
  const steps = [...o.deciding.steps, ...(o.diagnosis?.steps ?? [])];
  const limited = steps.find((s) => s.status === 429);
  if (!limited) return opts.retryDelayMs;
  const header = limited.headers['retry-after'];
  if (header === undefined) return opts.retryDelayMs;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(ms)) return opts.retryDelayMs;
  return ms <= opts.maxRetryAfterMs ? Math.max(ms, 0) : null;
}

const unique = <T>(xs: readonly T[]): T[] => (xs.length < 2 ? [...xs] : [...new Set(xs)]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
