/**
 * Attest one server: run the deciding profile's client (the app's, by default); when it would not list
 * tools, run the spec-correct diagnosis (and, when that finds no working server, the other protocol eras)
 * so the verdict can say why; ask the policy; retry exactly once when the policy calls the failure retryable.
 */
import { Agent, type Dispatcher } from 'undici';
import { classify, classifyAs, isTransient, RETRYABLE, type EntryFacts } from '../policy/policy.js';
import { runAppClient, runAppFallbackClient, type ClientOptions } from './app-client.js';
import { authEvidence } from './auth.js';
import { emptyRun, type LiveObservation, type LiveRun } from './live.js';
import { stepOf } from '../model/read.js';
import {
  BROWSER_USER_AGENT,
  CLIENT_PROFILES,
  DIAGNOSIS,
  KAI_9000,
  MCP_2025_11_25,
  MCP_2026_07_28,
  profileById,
  type ClientProfile,
} from './profile.js';
import { exchangeError, runSpecClient, runStatelessClient } from './spec-client.js';
import { firstSseEvent } from './transport.js';
import { fencedDispatcher, type Fence } from '../net/fence.js';
import { screenTools } from '../screen/screen.js';
import { duplicateNames, storedSnapshot, toolListSnapshot, toolSetDigests } from '../model/snapshot-hash.js';
import { countTokens, TOKEN_LIMITS } from './tokens.js';
import { remembered } from './list-cache.js';
import { readRetryAfter } from './retry-after.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/json.js';
import { evidenceOf, profileDigest, redactRun, redactText, secretsOf, type Redactor } from './record.js';
import type { Evidence, Unprocessable } from '../model/evidence.js';
import type { Finding, MatrixCell, Observation } from '../model/observation.js';
import type { StoredSnapshot, ToolDefinition } from '../model/snapshot.js';
import { hash } from 'node:crypto';
import type { Reason, UnprocessableStage } from '../model/words.js';
import { LOCAL_VANTAGE, RECORD_LIMITS } from '../model/limits.js';
import { clipText, oneLine, oneLineOrNull } from '../text/clip.js';
import { ONETAP_VERSION } from '../util/version.js';
import type { BodyBudget } from './budget.js';

/** A probe-only header's value: the secret, after an optional prefix (`Bearer `). */
export interface ProbeKey {
  value: string;
  prefix?: string;
}

export interface ProbeOptions {
  /** The entry is auth-optional (initialize without a key is enough). */
  requiresAuth?: boolean;
  /** The deciding profile (an id of CLIENT_PROFILES, or a profile); default the app's, `kai-9000`. */
  profile?: string | ClientProfile;
  /** Also run every other profile and report `matrix` (informational: only the deciding profile decides). */
  matrix?: boolean;
  /**
   * Per-request time limit override, ms; a limit shorter than the profile's own sets `cutShort` when it ends a request.
   */
  timeoutMs?: number;
  /** Extra request headers (the entry's own headers; sent to this URL only). */
  headers?: Record<string, string>;
  /**
   * Probe-only keys of a requiresAuth entry, by header name (`probeHeaders`, read from the environment): the keyless
   * handshake decides the verdict; a second session of the deciding client, with these appended, lists the tools.
   * Never recorded; whatever the server sends back of them is redacted.
   */
  keys?: Record<string, ProbeKey>;
  /** Environment variables the entry's `probeHeaders` name that were not set: recorded, so the plan says why. */
  missingKeys?: string[];
  /**
   * Environment variables the entry's `probeHeaders` name that the key rule refused (never read): recorded, so the plan
   * says so.
   */
  refusedKeys?: string[];
  /** Replaces the deciding profile's User-Agent (diagnostic). */
  userAgent?: string;
  /** The User-Agent of every request the probe sends, every client's and every read's (a census identifies itself). */
  identity?: string;
  /** Cap on one response body after decompression, bytes. */
  maxBodyBytes?: number;
  /** Pause before the one retry, ms. */
  retryDelayMs?: number;
  /**
   * A 429's Retry-After (`readRetryAfter`: seconds or an HTTP-date) is waited out up to this long; a longer one is not
   * retried.
   */
  maxRetryAfterMs?: number;
  /** Bounds the bytes all body reads of a run hold together (probeMany shares one). */
  budget?: BodyBudget;
  /** Permit private addresses for URLs a server supplies (auth metadata on another origin); tests only. */
  allowPrivate?: boolean;
  dispatcher?: Dispatcher;
  /**
   * The lease the probe runs under (a worker's host slot): every request checks it, its loss ends them. What a probe
   * observes after its lease is lost is not to be recorded; the caller looks at `fence.signal`.
   */
  fence?: Fence;
}

/**
 * The outcome of attesting one URL: the observation record (what the deciding client sees, the reading that
 * explains it, the evidence of both), and the tool list as it is stored (hashed on the full text, then clipped),
 * or null without a tool list (or one not processed).
 */
export type ProbeResult = Observation & { snapshot: StoredSnapshot | null };

export const PROBE_DEFAULTS = {
  maxBodyBytes: 4 * 1024 * 1024,
  retryDelayMs: 1_000,
  maxRetryAfterMs: 5_000,
} as const;

/** Every option named (a new one that \`probe()\` forgets to pass on fails to compile), the defaults filled in. */
type Resolved = { [K in keyof Required<ProbeOptions>]: ProbeOptions[K] } & {
  maxBodyBytes: number;
  retryDelayMs: number;
  maxRetryAfterMs: number;
  dispatcher: Dispatcher;
  secrets: Redactor;
};

export function resolveProfile(profile: string | ClientProfile | undefined): ClientProfile {
  if (profile === undefined) return KAI_9000;
  if (typeof profile !== 'string') return profile;
  const found = profileById(profile);
  if (!found)
    throw new Error(`unknown client profile "${profile}" (known: ${Object.keys(CLIENT_PROFILES).join(', ')})`);
  return found;
}

/** The probe-only headers as sent: each key after its prefix. */
const keyHeaders = (keys: Record<string, ProbeKey> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(keys ?? {}).map(([name, k]) => [name, `${k.prefix ?? ''}${k.value}`]));

/** A dispatcher with a client's connect limit (the app's 10 s; an override may shorten it). */
export function probeDispatcher(timeoutMs?: number, lookup?: unknown): Agent {
  const connect = Math.min(KAI_9000.connectTimeoutMs, timeoutMs ?? Infinity);
  return new Agent({
    keepAliveTimeout: 4_000,
    connect: { timeout: connect, ...(lookup ? { lookup: lookup as never } : {}) },
  });
}

export async function probe(url: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  const own = options.dispatcher
    ? null
    : options.fence
      ? fencedDispatcher(probeDispatcher(options.timeoutMs), options.fence)
      : probeDispatcher(options.timeoutMs);
  // Every field by name, not a spread or withDefaults: this runs once per probe, thousands of times a run.
  const opts: Resolved = {
    requiresAuth: options.requiresAuth,
    profile: options.profile,
    matrix: options.matrix,
    timeoutMs: options.timeoutMs,
    headers: options.headers,
    keys: options.keys,
    missingKeys: options.missingKeys,
    refusedKeys: options.refusedKeys,
    userAgent: options.userAgent,
    identity: options.identity,
    budget: options.budget,
    allowPrivate: options.allowPrivate,
    fence: options.fence,
    maxBodyBytes: options.maxBodyBytes ?? PROBE_DEFAULTS.maxBodyBytes,
    retryDelayMs: options.retryDelayMs ?? PROBE_DEFAULTS.retryDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? PROBE_DEFAULTS.maxRetryAfterMs,
    dispatcher: options.dispatcher ?? own!,
    // Whatever the server sends back of the headers it was given is redacted before anything reads it.
    secrets: secretsOf(
      options.headers,
      Object.values(options.keys ?? {}).map((k) => k.value),
    ),
  };
  try {
    return await attest(url, resolveProfile(options.profile), opts);
  } finally {
    own?.destroy().catch(() => {});
  }
}

async function attest(url: string, profile: ClientProfile, opts: Resolved): Promise<ProbeResult> {
  const requiresAuth = opts.requiresAuth ?? false;
  const started = performance.now();
  const observedAt = new Date().toISOString();
  let attempts = 1;
  let stage: UnprocessableStage = 'read';
  try {
    let [o, snapshot] = await observe(url, profile, opts);
    const verdict = classify(evidenceOf(o), factsOf(o, requiresAuth));
    if (RETRYABLE.has(verdict.reason)) {
      const wait = retryWait(o, opts);
      if (wait !== null) {
        await sleep(wait);
        attempts = 2;
        [o, snapshot] = await observe(url, profile, opts);
      }
    }
    // The matrix reads the same server with every other profile, beside the verdict's observation, never in it:
    // what the deciding client and its own explanation saw is what decides, with or without --matrix.
    const wide = opts.matrix && !o.unprocessable ? await widened(o, url, profile, opts) : null;
    if (classify(evidenceOf(o), factsOf(o, requiresAuth)).reason === 'auth-required') {
      const answer = stepOf(o.diagnosis ?? o.deciding, 'initialize');
      // Evidence of how to authenticate explains a verdict; a metadata document that cannot be read is no evidence.
      if (answer)
        o.auth = await authEvidence(url, answer, {
          timeoutMs: 10_000,
          allowPrivate: opts.allowPrivate,
          userAgent: opts.identity,
          fence: opts.fence,
        }).catch(() => 'unknown' as const);
    }
    stage = 'store';
    const durationMs = Math.round(performance.now() - started);
    // Counted after the timed part: the count (and the tokenizer's first load) is this process's work, not the server's
    // latency.
    if (o.toolSet)
      Object.assign(
        o.toolSet,
        await countTokens(toolsRunOf(o).toolDefinitions!, Math.min(TOKEN_LIMITS.countMs, opts.timeoutMs ?? Infinity)),
      );
    return summarize(url, profile, o, wide, opts, { attempts, durationMs, observedAt }, snapshot);
  } catch (err) {
    // Whatever the server sent, this row has a verdict and the run goes on.
    const error = String((err as Error)?.message ?? err);
    const o = emptyObservation(url, profile, { stage, error: redactText(error, opts.secrets) });
    if (o.unprocessable!.error !== error) o.deciding.redacted = 1;
    return summarize(
      url,
      profile,
      o,
      null,
      opts,
      { attempts, durationMs: Math.round(performance.now() - started), observedAt },
      null,
    );
  }
}

const factsOf = (o: LiveObservation, requiresAuth: boolean): EntryFacts => ({
  requiresAuth,
  flagged: o.findings.length > 0,
});

function emptyObservation(url: string, profile: ClientProfile, unprocessable: Unprocessable | null): LiveObservation {
  return {
    url,
    deciding: emptyRun(profile.id),
    diagnosis: null,
    others: {},
    legacySse: null,
    auth: null,
    uaBlocked: null,
    keyed: null,
    findings: [],
    unprocessable,
  };
}

/** The run whose tool list the record keeps: the keyed session's when it listed tools, else the deciding client's. */
const toolsRunOf = (o: LiveObservation): LiveRun => (o.keyed?.toolDefinitions ? o.keyed : o.deciding);

/** A tool list worked out: its snapshot, fingerprints and findings, or the stage that could not process it. */
type Processed =
  | {
      snapshot: StoredSnapshot;
      digests: { nameBlind: string; descriptionBlind: string } | { nameBlind: null; descriptionBlind: null };
      findings: Finding[];
    }
  | { unprocessable: Unprocessable };

/** Lists up to this many characters (as JSON) are worked out once per process; a longer one each time it is seen. */
const PROCESSED_CHARS = 32 * 1024;
const PROCESSED_ENTRIES = 256;

/**
 * The deciding client's tool list (the keyed session's, when it listed tools) as a snapshot, with the findings on
 * its full text. A list nested deeper than MAX_NESTING, or one whose hashing or screening throws, is not
 * processed: the observation says where. The same list (as redacted, with the same server info) is worked out once
 * per process: most probes of a run see a list seen before (many hosts of a registry serve one set).
 */
function processTools(o: LiveObservation): StoredSnapshot | null {
  const run = toolsRunOf(o);
  const definitions = run.toolDefinitions;
  if (!definitions) return null;
  let processed: Processed;
  if (definitions.some((t) => nestsDeeperThan(t, MAX_NESTING)))
    processed = {
      unprocessable: { stage: 'nesting', error: `a tool definition is nested deeper than ${MAX_NESTING} levels` },
    };
  else {
    const text = JSON.stringify([run.serverInfo, definitions]);
    const work = () => processList(run.serverInfo, definitions);
    processed =
      text.length <= PROCESSED_CHARS
        ? remembered('processed-tools', hash('sha256', text, 'hex'), work, PROCESSED_ENTRIES)
        : work();
  }
  if ('unprocessable' in processed) {
    o.unprocessable = processed.unprocessable;
    o.findings = [];
    return null;
  }
  // Fingerprinted (and, once the probe is over, counted) on the full list, before anything is clipped for storage.
  o.toolSet = { tokens: null, tokensError: null, ...processed.digests };
  o.findings = [...processed.findings];
  return processed.snapshot;
}

function processList(serverInfo: LiveRun['serverInfo'], definitions: readonly ToolDefinition[]): Processed {
  let stage: UnprocessableStage = 'hash';
  try {
    const listed = toolListSnapshot(serverInfo, definitions);
    const snapshot = storedSnapshot(listed);
    // Once per distinct set in this process (the tools digest is of the same canonical tools), however long.
    const digests = remembered('set-digests', snapshot.toolsDigest ?? snapshot.hash, () =>
      toolSetDigests(listed.tools),
    ) ?? { nameBlind: null, descriptionBlind: null };
    stage = 'screen';
    // Screened on the full text, before anything is clipped for storage.
    const findings = screenTools(definitions);
    for (const d of duplicateNames(listed)) {
      findings.push({
        tool: d.name,
        field: 'name',
        rule: 'duplicate-name',
        excerpt: `${d.digests.length} definitions of one name (digests ${d.digests.join(', ')})`,
      });
    }
    return { snapshot, digests, findings };
  } catch (err) {
    return { unprocessable: { stage, error: String((err as Error)?.message ?? err) } };
  }
}

/** One attempt: the deciding client, then the reads that explain a failure. */
async function observe(
  url: string,
  profile: ClientProfile,
  opts: Resolved,
): Promise<[LiveObservation, StoredSnapshot | null]> {
  const o = emptyObservation(url, profile, null);
  o.deciding = await runProfile(url, profile, opts, opts.userAgent);
  // The keyless handshake decides (the policy); with the entry's keys, the same client lists what a user with a key
  // sees.
  if (opts.keys && Object.keys(opts.keys).length && o.deciding.connected) {
    o.keyed = await runProfile(
      url,
      profile,
      { ...opts, headers: { ...opts.headers, ...keyHeaders(opts.keys) } },
      opts.userAgent,
    );
  }
  const snapshot = processTools(o);
  if (o.unprocessable) return [o, null];
  return [await explain(o, url, profile, opts), snapshot];
}

/** The runs `--matrix` adds beside the verdict's: the diagnosis when it has none, and every other profile's run. */
async function widened(o: LiveObservation, url: string, profile: ClientProfile, opts: Resolved): Promise<Wide> {
  const diagnosis = o.diagnosis ? null : await runProfile(url, DIAGNOSIS, opts);
  const others: Record<string, LiveRun> = {};
  for (const other of Object.values(CLIENT_PROFILES)) {
    if (other.id !== profile.id && !o.others[other.id]) others[other.id] = await runProfile(url, other, opts);
  }
  return { diagnosis, others };
}

async function explain(
  o: LiveObservation,
  url: string,
  profile: ClientProfile,
  opts: Resolved,
): Promise<LiveObservation> {
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
  if (
    (first && first.status === null && deciding.steps.length === 1) ||
    isTransient(last) ||
    last?.problem === 'oversize'
  )
    return o;
  o.diagnosis = await runProfile(url, DIAGNOSIS, opts);
  if (o.diagnosis.works && isAppLike(profile) && (stepOf(deciding, 'initialize')?.status ?? 0) >= 400) {
    // Is it the app's agent? The same client with a browser's agent tells.
    o.uaBlocked = (await runProfile(url, profile, opts, BROWSER_USER_AGENT)).works;
  }
  if (!o.diagnosis.works) {
    const init = stepOf(o.diagnosis, 'initialize');
    if (init && (init.status === 400 || init.status === 404 || init.status === 405) && init.response === null) {
      o.legacySse =
        (await firstSseEvent(
          url,
          { 'user-agent': opts.identity ?? BROWSER_USER_AGENT },
          AbortSignal.timeout(Math.min(10_000, opts.timeoutMs ?? 10_000)),
          opts.dispatcher,
        )) === 'endpoint';
    }
    const answered =
      init &&
      init.status !== null &&
      (init.status === 400 ||
        init.status === 404 ||
        init.status === 405 ||
        init.status === 406 ||
        !!init.response?.error);
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

async function runProfile(url: string, profile: ClientProfile, opts: Resolved, userAgent?: string): Promise<LiveRun> {
  return redactRun(await runClient(url, profile, opts, userAgent), opts.secrets);
}

function runClient(url: string, profile: ClientProfile, opts: Resolved, userAgent?: string): Promise<LiveRun> {
  const client: ClientOptions = {
    // The client's own headers, then the entry's (the app appends the user's headers after its own).
    headers: profile.headers ? { ...profile.headers, ...opts.headers } : (opts.headers ?? {}),
    requestTimeoutMs: Math.min(profile.requestTimeoutMs, opts.timeoutMs ?? Infinity),
    maxBodyBytes: opts.maxBodyBytes,
    dispatcher: opts.dispatcher,
    userAgent: opts.identity ?? userAgent,
    budget: opts.budget,
  };
  switch (profile.handshake) {
    case 'app':
      return runAppClient(url, profile, client);
    case 'app-fallback':
      return runAppFallbackClient(url, profile, client);
    case 'spec':
      return runSpecClient(url, profile, client);
    case 'stateless':
      return runStatelessClient(url, profile, client);
  }
}

/** Each profile judged as if it decided, against the same diagnosis (`classifyAs`), in matrix order. */
function matrixOf(e: Evidence, live: LiveObservation, wide: Wide, entry: EntryFacts): Record<string, MatrixCell> {
  const cells: Record<string, MatrixCell> = {};
  for (const p of Object.values(CLIENT_PROFILES)) {
    const run = p.id === live.deciding.profile ? live.deciding : (live.others[p.id] ?? wide.others[p.id]);
    const v = run && classifyAs(e, p.id, entry);
    if (!v) continue;
    cells[p.id] = { works: run.works, verdict: v.verdict, reason: v.reason, tools: run.tools && clipNames(run.tools) };
  }
  return cells;
}

/** The runs `--matrix` added beside the verdict's observation. */
type Wide = { diagnosis: LiveRun | null; others: Record<string, LiveRun> };

/**
 * The observation record. Its verdict is the policy's reading of the recorded evidence (`classify`), so the same
 * record always gives the same verdict again; every top-level field outside `diagnosis` and `matrix` is the
 * deciding client's: adding --matrix (which runs the diagnosis too) does not change what the deciding client saw.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function summarize(
  url: string,
  profile: ClientProfile,
  o: LiveObservation,
  wide: Wide | null,
  opts: Resolved,
  when: { attempts: number; durationMs: number; observedAt: string },
  snapshot: StoredSnapshot | null,
): ProbeResult {
  const evidence = evidenceOf(o, wide);
  const entry = factsOf(o, opts.requiresAuth ?? false);
  const v = classify(evidence, entry);
  const run = o.deciding;
  const toolsRun = toolsRunOf(o);
  const recorded = evidence.deciding;
  const init = firstStep(run);
  const decidingStep = stepOf(run, 'tools/list') ?? init;
  // The app's own error is the deciding client's when it is the app (or its fork); the matrix holds the rest.
  const app = isAppLike(profile) ? run : null;
  const live = v.verdict === 'live';
  // The diagnosis as the wide reading saw it: the verdict's own, or the one the matrix ran.
  const diagnosis = o.diagnosis ?? wide?.diagnosis ?? null;
  const L = RECORD_LIMITS;
  return {
    url,
    run: null,
    vantage: LOCAL_VANTAGE,
    observedAt: when.observedAt,
    profile: profile.id,
    probe: {
      version: ONETAP_VERSION,
      profileDigest: profileDigest(profile),
      requiresAuth: opts.requiresAuth ?? false,
      timeoutMs: opts.timeoutMs ?? null,
      matrix: opts.matrix ?? false,
      headers: Object.keys(opts.headers ?? {})
        .map((h) => h.toLowerCase())
        .sort(),
      ...(opts.keys || opts.missingKeys?.length || opts.refusedKeys?.length
        ? {
            keys: {
              headers: Object.keys(opts.keys ?? {})
                .map((h) => h.toLowerCase())
                .sort(),
              missing: [...(opts.missingKeys ?? [])].sort(),
              ...(opts.refusedKeys?.length ? { refused: [...opts.refusedKeys].sort() } : {}),
              listed: !!o.keyed?.toolDefinitions,
              error:
                o.keyed && !o.keyed.toolDefinitions
                  ? oneLineOrNull(o.keyed.error ?? firstProblem(o.keyed), L.errorChars)
                  : null,
            },
          }
        : {}),
    },
    verdict: v.verdict,
    reason: v.reason,
    reasons: v.reasons,
    attempts: when.attempts,
    durationMs: when.durationMs,
    httpStatus: decidingStep?.status ?? null,
    protocolVersion: recorded.protocolVersion,
    serverName: recorded.serverInfo?.name ?? null,
    serverVersion: recorded.serverInfo?.version ?? null,
    tools: toolsRun.tools && clipNames(toolsRun.tools),
    toolCount: toolsRun.tools?.length ?? null,
    sessionId: run.sessionId,
    error: o.unprocessable
      ? oneLine(`${o.unprocessable.stage}: ${o.unprocessable.error}`, L.errorChars)
      : live && v.reason === 'ok'
        ? null
        : oneLineOrNull(errorText(o, v.reason), L.errorChars),
    appError: oneLineOrNull(
      app && !app.works
        ? (app.error ?? (app.tools?.length === 0 ? 'connected, but the app lists 0 tools' : null))
        : null,
      L.errorChars,
    ),
    quirks: recorded.quirks,
    excludedTools: recorded.excludedTools,
    cutShort: run.cutShort,
    auth: o.auth,
    location: oneLineOrNull(
      init?.status !== null && init !== undefined && init.status >= 300 && init.status < 400
        ? init.headers.location
        : null,
      L.locationChars,
    ),
    diagnosis: diagnosis
      ? {
          works: diagnosis.works,
          tools: diagnosis.tools && clipNames(diagnosis.tools),
          error: oneLineOrNull(diagnosis.error ?? (diagnosis.works ? null : firstProblem(diagnosis)), L.errorChars),
          httpStatus: (stepOf(diagnosis, 'tools/list') ?? firstStep(diagnosis))?.status ?? null,
          protocolVersion: oneLineOrNull(diagnosis.protocolVersion, L.nameChars),
          serverName: oneLineOrNull(diagnosis.serverInfo?.name, L.nameChars),
          serverVersion: oneLineOrNull(diagnosis.serverInfo?.version, L.nameChars),
          quirks: [...new Set(diagnosis.quirks)],
        }
      : null,
    // An answer that could not be processed ran no other profile: its matrix is the deciding profile's one cell.
    matrix: opts.matrix ? matrixOf(evidence, o, wide ?? { diagnosis: null, others: {} }, entry) : null,
    toolsHash: snapshot?.hash ?? null,
    toolsDigest: snapshot?.toolsDigest ?? null,
    tokens: o.toolSet?.tokens ?? null,
    tokensError: o.toolSet?.tokensError ?? null,
    nameBlindDigest: o.toolSet?.nameBlind ?? null,
    descriptionBlindDigest: o.toolSet?.descriptionBlind ?? null,
    findings: o.findings.slice(0, L.findings).map(boundedFinding),
    findingsSeen: o.findings.length,
    cardMismatches: null,
    evidence,
    ...redactedCount(o, wide),
    snapshot,
  };
}

/**
 * `redacted`: the texts redacted in every run the record holds (the keyed session's tools included); absent when none.
 */
function redactedCount(o: LiveObservation, wide: Wide | null): { redacted?: number } {
  const runs = [
    o.deciding,
    o.keyed,
    o.diagnosis,
    ...Object.values(o.others),
    wide?.diagnosis,
    ...Object.values(wide?.others ?? {}),
  ];
  const n = runs.reduce((sum, r) => sum + (r?.redacted ?? 0), 0);
  return n ? { redacted: n } : {};
}

/** Tool names as recorded: each at most RECORD_LIMITS.nameChars (the list itself is bounded where it is stored). */
function clipNames(names: string[]): string[] {
  const max = RECORD_LIMITS.nameChars;
  return names.some((n) => n.length > max) ? names.map((n) => clipText(n, max)) : names;
}

const boundedFinding = (f: Finding): Finding => ({
  tool: clipText(f.tool, RECORD_LIMITS.nameChars),
  field: clipText(f.field, RECORD_LIMITS.fieldChars),
  rule: f.rule,
  excerpt: clipText(f.excerpt, RECORD_LIMITS.fieldChars),
});

const firstStep = (run: LiveRun) => stepOf(run, 'initialize') ?? stepOf(run, 'server/discover') ?? run.steps[0];

/** The first thing that went wrong in the deciding client's exchanges, as short text. */
function errorText(o: LiveObservation, reason: Reason): string | null {
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

function firstProblem(run: LiveRun): string | null {
  for (const s of run.steps) {
    if (s.step === 'notifications/initialized') continue;
    if (s.error || s.response?.error || (s.status !== null && s.status >= 300) || s.problem) return exchangeError(s);
  }
  return run.error;
}

function retryWait(o: LiveObservation, opts: Resolved): number | null {
  const steps = [...o.deciding.steps, ...(o.diagnosis?.steps ?? [])];
  const limited = steps.find((s) => s.status === 429);
  if (!limited) return opts.retryDelayMs;
  const ms = readRetryAfter(limited.headers['retry-after'], Date.now());
  if (ms === null) return opts.retryDelayMs;
  return ms <= opts.maxRetryAfterMs ? ms : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
