/**
 * The one-tap policy as a table (source: docs/one-tap-policy.md (shared/spec/ of the planning repository)).
 * `classify(observation, entry)` is pure. One rule, in this order, so that two readers get the same verdict:
 *   1. live: the deciding profile's client (the app's, by default) would connect and list >= 1 tool;
 *   2. review: the spec-correct diagnosis finds a working server the app cannot use (the reason names what
 *      the app trips on), or a server of another protocol era, or one with no tools;
 *   3. otherwise the seed's taxonomy decides from the evidence (drop, or retry once and keep as failed).
 * In each group the first rule whose `when` holds gives the reason; every rule that holds is in `reasons`.
 * Each rule quotes the sentence of the policy it implements, so the two can be read side by side.
 */
import type { ClientRun, Evidence, Exchange } from '../model/evidence.js';
import { RECORD_LIMITS } from '../model/limits.js';
import type { Observation } from '../model/observation.js';
import { oneLine } from '../text/clip.js';
import { isTlsCode, stepOf } from '../model/read.js';
import type { Reason, UnprocessableStage, VerdictName } from '../model/words.js';

export type { Reason, VerdictName };

export interface Verdict {
  verdict: VerdictName;
  reason: Reason;
}

/** What the policy knows besides the evidence: how the entry is curated, and whether screening flagged its tools. */
export interface EntryFacts {
  requiresAuth: boolean;
  /** Screening found something in the deciding client's tool list (`findingsSeen > 0`). */
  flagged?: boolean;
}

/** Plain-language meaning of each reason, for tables, snapshots, the status page and `explain`. */
export const REASON_TEXT: Record<Reason, string> = {
  ok: "the app's client connects and lists tools",
  'auth-optional': 'initialize succeeded without a key; tools need the optional key',
  'app-sse-format':
    'the server works, but its SSE `data:` lines are not what the app reads (no space after `data:`, or JSON split over several lines)',
  'app-stream-open':
    'the server answers, but keeps the response stream open: the app waits for its end and gives up after 60 s',
  'app-wrong-message':
    'the server works, but sends another message first; the app takes that as the answer (ids are not matched)',
  'app-notification-rejected':
    "the server refuses the app's notifications/initialized (sent with Accept: */*) and then refuses tools/list",
  'app-ua-blocked': "an edge blocks the app's User-Agent (Ktor client) but lets a browser through",
  'app-batch-response': 'the server answers with a JSON array; the app decodes one object only',
  'app-encoding': "the server compresses its answer in a way the app's engine does not decode",
  'app-tool-list':
    'the server lists tools, but the app cannot decode the list (a tool without a name, an inputSchema that is not an object)',
  'app-incompatible': "the server works for a spec-correct client, but not for the app's",
  'era-incompatible': "an alive server of another protocol revision: it refuses the app's 2024-11-05 handshake",
  'suspicious-tools':
    "a tool's text carries what screening flags as an attack on the model (hidden instructions, secrets, exfiltration, invisible text): a human decides",
  'tools-changed':
    "the server's tools changed since a maintainer accepted them (added or changed tools): review the diff, then `onetap accept`",
  'identity-changed':
    'the server turned into another one (another serverInfo.name and fewer than half of the accepted tools): held out until accepted',
  unprocessable:
    "onetap could not process the server's answer (nested too deep, or an error while reading, hashing, screening or storing it): a human looks; never live",
  'zero-tools': 'the server works but lists no tools',
  'auth-required': '401/403 on initialize: the server wants credentials',
  'payment-required': 'HTTP 402 on initialize: the server wants payment',
  redirected: 'initialize was redirected; the URL should be updated (the app does not follow POST redirects)',
  'handshake-error': "the server speaks JSON-RPC but refused the app's handshake",
  'tools-error': 'initialize succeeded but tools/list did not return a result',
  oversize: 'the answer is larger than onetap reads (4 MiB) and still valid so far: a human decides',
  dns: 'the host does not exist (DNS)',
  refused: 'connection refused',
  'http-404': 'HTTP 404 on initialize',
  'http-410': 'HTTP 410 Gone on initialize',
  'not-mcp': 'the answer is not JSON-RPC MCP',
  'not-streamable-http': 'the server does not speak Streamable HTTP',
  'origin-tls': "edge 526: the origin's TLS certificate is invalid",
  'origin-dns': 'edge 530: the origin cannot be resolved',
  'non-retryable-5xx': 'a server error that says it will not recover without the owner',
  timeout: 'timed out, also on the retry',
  'retryable-5xx': 'a server error, also on the retry',
  network: 'a network error, also on the retry',
  'rate-limited': 'HTTP 429 rate limited, also on the retry',
  'edge-blocked': 'a 403 bot wall or challenge at the edge (not proof of auth)',
  tls: 'the TLS handshake with the server failed',
  'vantage-split':
    "reachable from some vantages, drop-class from others: one network's view is not the internet's, a human decides (the note names each side)",
  'vantage-incomplete':
    'fewer vantages than the quorum answered by the deadline: kept and marked; neither extends nor resets a drop streak',
  'context-budget':
    "its tool list costs more tokens than the catalog's policy.maxToolTokens allows: every conversation of every user who adds it pays that",
};

/** The plain-language reason of a record: its reason's text, and where onetap could not process the answer. */
export function detailOf(r: { reason: Reason; evidence: Pick<Evidence, 'unprocessable'> | null }): string {
  const u = r.evidence?.unprocessable;
  return u && r.reason === 'unprocessable' ? `${REASON_TEXT.unprocessable} (stage: ${u.stage})` : REASON_TEXT[r.reason];
}

/**
 * An observation whose processing failed at `stage` after the probe: review/unprocessable, its evidence saying
 * where, so judging the record again gives the same verdict.
 */
export function asUnprocessable(o: Observation, stage: UnprocessableStage, err: unknown): Observation {
  const error = oneLine(String((err as Error)?.message ?? err), RECORD_LIMITS.errorChars);
  return {
    ...o,
    verdict: 'review',
    reason: 'unprocessable',
    reasons: ['unprocessable'],
    tools: null,
    toolCount: null,
    error: oneLine(`${stage}: ${error}`, RECORD_LIMITS.errorChars),
    appError: null,
    location: null,
    matrix: null,
    toolsHash: null,
    toolsDigest: null,
    findings: [],
    findingsSeen: 0,
    cardMismatches: null,
    evidence: o.evidence && { ...o.evidence, unprocessable: { stage, error } },
  };
}

/** Failures worth exactly one retry (policy: "Timeouts and retryable 5xx: retry once"). */
export const RETRYABLE: ReadonlySet<Reason> = new Set(['timeout', 'retryable-5xx', 'network', 'rate-limited']);

/** Failures before any HTTP answer, which say as much about this machine's network as about the server. */
export const NETWORK_LEVEL: ReadonlySet<Reason> = new Set(['dns', 'refused', 'timeout', 'network', 'tls']);

/** Whether a reason (as read, any string) is a network-level failure. */
export const isNetworkLevel = (reason: string): boolean => (NETWORK_LEVEL as ReadonlySet<string>).has(reason);

/**
 * The outage guard's rule where no canary decides: this machine's network looks down when at least half of what was
 * probed failed at the network level, and at least `fewest` was probed. A run counts its entries (`fewest` 1: any
 * entry); the census counts hosts, and stops only once 20 were probed (`OUTAGE_HOSTS`); a vantage of a run across
 * vantages counts the servers other vantages reached, and needs two of them failing too.
 */
export function networkLooksDown(failing: number, probed: number, fewest = 1): boolean {
  return probed >= fewest && failing * 2 >= probed;
}

/** What a rule reads: the deciding client's run, the diagnosis, the other profiles, the entry. */
interface Facts {
  o: Evidence;
  entry: EntryFacts;
  app: ClientRun;
  /** The run whose evidence the taxonomy reads: the diagnosis when there is one, else the deciding run. */
  evidence: ClientRun;
  init: Exchange;
  tools: Exchange | undefined;
  /** The app's last exchange (where it stopped). */
  appLast: Exchange | undefined;
}

interface Rule extends Verdict {
  /** The policy sentence (or the row) this rule implements. */
  policy: string;
  when: (f: Facts) => boolean;
}

const status = (e: Pick<Exchange, 'status'> | undefined) => e?.status ?? null;
const is5xx = (e: Pick<Exchange, 'status'> | undefined) => (status(e) ?? 0) >= 500;
const isAuthStatus = (e: Exchange) => e.status === 401 || e.status === 403;
const code = (e: Exchange | undefined) => e?.errorCode ?? null;
const rpcOk = (e: Exchange | undefined) =>
  !!e && (e.status ?? 0) < 300 && e.rpc !== null && e.rpc.error === null && e.rpc.result;
const rpcError = (e: Exchange | undefined) => !!e?.rpc?.error;
const body = (e: Exchange | undefined) => e?.bodySnippet ?? '';
const appStep = (f: Facts, step: Exchange['step']) => stepOf(f.app, step);
/** The app stopped at `step` with a JSON-RPC error ("tools/list failed: ..."). */
const rpcErrorApp = (f: Facts, step: Exchange['step']) => /failed:/.test(f.app.error ?? '') && f.appLast?.step === step;

/** 5xx bodies that say waiting will not help (Cloudflare's `retryable: false`, `owner_action_required`). */
const NON_RETRYABLE_BODY = /"?retryable"?\s*[:=]\s*false|owner_action_required/i;
/** Edge challenge pages: a bot wall is not an auth answer. */
const CHALLENGE_BODY = /cf-chl|challenge-platform|just a moment|attention required|error code:? 10\d\d|captcha/i;
/** JSON-RPC errors that mean "another protocol revision": method not found, or a version refused. */
const ERA_MESSAGE = /protocol version|unsupported.*version|version mismatch/i;

const isEdgeChallenge = (e: Exchange) =>
  e.status === 403 &&
  (e.headers['cf-mitigated'] !== undefined || CHALLENGE_BODY.test(body(e)) || e.contentType === 'text/html');
/** An auth answer: 401, or 403 with WWW-Authenticate or a JSON error body. */
const isAuthAnswer = (e: Exchange) =>
  e.status === 401 || (e.status === 403 && (e.headers['www-authenticate'] !== undefined || e.body === 'json'));
const isEraError = (e: Exchange | undefined) =>
  !!e?.rpc?.error && (e.rpc.error.code === -32601 || ERA_MESSAGE.test(e.rpc.error.message));

// ---- 0. what onetap could not process is never live, and stops nothing else (the row's own verdict)
const unprocessableRules: Rule[] = [
  {
    verdict: 'review',
    reason: 'unprocessable',
    policy:
      'nothing a server sends can stop the run: an answer onetap cannot process (deeper than 256 levels, or one ' +
      "that fails reading, hashing, screening or storing) is that row's verdict, for a human",
    when: ({ o }) => o.unprocessable !== null,
  },
];

// ---- 1. live: the deciding client's outcome (a tool list that screening flags goes to a human first)
const screenRules: Rule[] = [
  {
    verdict: 'review',
    reason: 'suspicious-tools',
    policy:
      'a one-tap row is a promise that the server is safe to connect to: flagged tool text is never dropped automatically, a human decides',
    when: ({ app, entry }) => app.connected && entry.flagged === true,
  },
];
const liveRules: Rule[] = [
  {
    verdict: 'live',
    reason: 'ok',
    policy: 'Attested live: a probe matching the app client succeeds (tools/list returns a JSON-RPC result with tools)',
    when: ({ app }) => app.works,
  },
  {
    verdict: 'live',
    reason: 'auth-optional',
    policy: 'Auth-optional hosts: initialize without a key is enough; tools/list may be empty or return an auth error',
    when: ({ app, entry }) => entry.requiresAuth && app.connected,
  },
];

// ---- 2. review: the diagnosis finds a working server; what the app trips on, first match by this order
const appTripRules: Rule[] = [
  {
    verdict: 'review',
    reason: 'oversize',
    policy: "the app has no size cap: an answer still valid at onetap's cap is a human's call",
    when: (f) => f.appLast?.problem === 'oversize' && f.appLast.app?.validPrefix === true,
  },
  {
    verdict: 'review',
    reason: 'app-ua-blocked',
    policy: 'the verdict follows the app: an edge that blocks its User-Agent blocks its users',
    when: ({ o }) => o.uaBlocked === true,
  },
  {
    verdict: 'review',
    reason: 'app-sse-format',
    policy: 'the app reads only lines starting with `data: ` (space required), each line alone',
    when: (f) =>
      f.app.steps.some(
        (s) =>
          s.app?.read === 'sse' &&
          s.app.winner === null &&
          (s.app.spacelessDataLines > 0 || s.app.undecodedDataLines > 0),
      ),
  },
  {
    verdict: 'review',
    reason: 'app-stream-open',
    policy: 'the app reads the whole body: a stream left open ends in its 60 s timeout',
    when: (f) => code(f.appLast) === 'TIMEOUT' && f.appLast?.status !== null,
  },
  {
    verdict: 'review',
    reason: 'app-notification-rejected',
    policy: 'the app sends notifications/initialized with Accept: */*; a server that refuses it may refuse tools/list',
    when: (f) => (status(appStep(f, 'notifications/initialized')) ?? 0) >= 400 && rpcErrorApp(f, 'tools/list'),
  },
  {
    verdict: 'review',
    reason: 'app-batch-response',
    policy: 'the app decodes one JSON object per answer; an array fails',
    when: (f) => f.appLast?.app?.read === 'json' && /^\s*\[/.test(body(f.appLast)),
  },
  {
    verdict: 'review',
    reason: 'app-encoding',
    policy: "the app's engine asks for gzip and decodes nothing else",
    when: (f) => /br|deflate|zstd/i.test(f.appLast?.headers['content-encoding'] ?? ''),
  },
  {
    verdict: 'review',
    reason: 'app-wrong-message',
    policy: 'the app takes the first object it can decode as the answer; ids are not matched',
    when: (f) =>
      f.app.steps.some((s) => s.app !== undefined && s.app.winner !== null && s.app.winner !== 'response') ||
      f.app.quirks.includes('id-not-matching'),
  },
  {
    verdict: 'review',
    reason: 'app-tool-list',
    policy: 'the app decodes every tool (name required, inputSchema an object); one bad tool fails the list',
    when: (f) => f.appLast?.step === 'tools/list' && /McpToolDefinition|\$\.tools/.test(f.app.error ?? ''),
  },
  {
    verdict: 'review',
    reason: 'app-incompatible',
    policy: 'the verdict follows the app: alive for a spec-correct client, unusable in the app',
    when: () => true,
  },
];

/** A working server for some client: the diagnosis, or another profile. */
const diagnosisWorks = (f: Facts) => f.o.diagnosis?.works === true;
const otherProfileWorks = (f: Facts) => Object.values(f.o.others).some((r) => r.works);

const reviewRules: Rule[] = [
  {
    verdict: 'review',
    reason: 'era-incompatible',
    policy: 'alive under a newer revision, or a JSON-RPC error that names the protocol version: not a dead host',
    when: (f) =>
      !diagnosisWorks(f) && (otherProfileWorks(f) || isEraError(stepOf(f.app, 'initialize')) || isEraError(f.init)),
  },
  {
    verdict: 'review',
    reason: 'zero-tools',
    policy: 'zero tools is unusual: treat as review, not an automatic drop',
    when: (f) => f.evidence.connected && f.evidence.toolCount === 0,
  },
];

// ---- 3. the seed's taxonomy, from the evidence of the reads (initialize, then tools/list)
const initRules: Rule[] = [
  { verdict: 'drop', reason: 'dns', policy: 'Must drop: DNS failure', when: ({ init }) => code(init) === 'ENOTFOUND' },
  {
    verdict: 'drop',
    reason: 'refused',
    policy: 'Must drop: connection refused',
    when: ({ init }) => code(init) === 'ECONNREFUSED',
  },
  {
    verdict: 'failed',
    reason: 'timeout',
    policy: 'Must not drop on one flake: timeouts, retry once',
    when: ({ init }) => code(init) === 'TIMEOUT',
  },
  {
    verdict: 'failed',
    reason: 'tls',
    policy: "not named by the policy: a TLS failure may be this machine's network, so keep and mark",
    when: ({ init }) => isTlsCode(code(init) ?? ''),
  },
  {
    verdict: 'failed',
    reason: 'network',
    policy: 'Do not remove a previously live server because this machine had a bad network moment',
    when: ({ init }) => code(init) !== null,
  },
  {
    verdict: 'drop',
    reason: 'origin-tls',
    policy: 'Must drop: Cloudflare/edge 526 (invalid origin TLS)',
    when: ({ init }) => init.status === 526,
  },
  {
    verdict: 'drop',
    reason: 'origin-dns',
    policy: 'Must drop: Cloudflare/edge 530 (origin DNS)',
    when: ({ init }) => init.status === 530,
  },
  {
    verdict: 'drop',
    reason: 'non-retryable-5xx',
    policy: 'Must drop: a 5xx body that says retryable: false / owner_action_required',
    when: ({ init }) => is5xx(init) && NON_RETRYABLE_BODY.test(body(init)),
  },
  {
    verdict: 'failed',
    reason: 'retryable-5xx',
    policy: 'Must not drop on one flake: retryable 5xx, retry once',
    when: ({ init }) => is5xx(init),
  },
  {
    verdict: 'failed',
    reason: 'rate-limited',
    policy: '429 is not an observation of the server: retry once, then keep',
    when: ({ init }) => init.status === 429,
  },
  {
    verdict: 'review',
    reason: 'payment-required',
    policy: "Paid-only hosts stay out; an auth-optional entry that now wants payment is a human's call",
    when: ({ init, entry }) => init.status === 402 && entry.requiresAuth,
  },
  {
    verdict: 'drop',
    reason: 'payment-required',
    policy: 'Must hold: free to add. Paid-only hosts stay out (HTTP 402, as x402-style paid servers answer)',
    when: ({ init }) => init.status === 402,
  },
  {
    verdict: 'drop',
    reason: 'not-streamable-http',
    policy: 'Must drop: anything that is not Streamable HTTP (legacy HTTP+SSE answers GET with an endpoint event)',
    when: ({ o, init }) =>
      o.legacySse === true || init.problem === 'endpoint-event' || (init.status === 405 && init.rpc === null),
  },
  {
    verdict: 'drop',
    reason: 'http-404',
    policy: 'Must drop: 404',
    when: ({ init }) => init.status === 404 && init.rpc === null,
  },
  {
    verdict: 'drop',
    reason: 'http-410',
    policy: 'Must drop: 410',
    when: ({ init }) => init.status === 410 && init.rpc === null,
  },
  {
    verdict: 'review',
    reason: 'redirected',
    policy: 'not named by the policy: the app does not follow a redirected POST, a human updates the URL',
    when: ({ init }) => (status(init) ?? 0) >= 300 && (status(init) ?? 0) < 400,
  },
  {
    verdict: 'failed',
    reason: 'edge-blocked',
    policy: 'A 403 alone is not proof of auth-gating (edges 403 non-browser agents)',
    when: ({ init }) => isEdgeChallenge(init),
  },
  {
    verdict: 'review',
    reason: 'auth-required',
    policy:
      'Auth-optional hosts: initialize without a key is enough; a 401/403 there means the key is no longer optional',
    when: ({ init, entry }) => entry.requiresAuth && isAuthStatus(init),
  },
  {
    verdict: 'drop',
    reason: 'auth-required',
    policy: 'Must drop: 401/403 on initialize for a previously no-auth entry',
    when: ({ init }) => isAuthAnswer(init),
  },
  {
    verdict: 'failed',
    reason: 'edge-blocked',
    policy: 'A 403 alone is not proof of auth-gating',
    when: ({ init }) => init.status === 403,
  },
  {
    verdict: 'review',
    reason: 'handshake-error',
    policy: "not named by the policy: alive and speaking JSON-RPC, but refusing the app's handshake",
    when: ({ init }) => rpcError(init),
  },
  {
    verdict: 'review',
    reason: 'oversize',
    policy: "the app has no size cap: an answer still valid at onetap's cap is a human's call",
    when: (f) => f.appLast?.problem === 'oversize' && f.appLast.app?.validPrefix === true,
  },
  {
    verdict: 'drop',
    reason: 'not-mcp',
    policy:
      'Must drop: a response that is not JSON-RPC MCP (over the cap and not JSON-RPC in its first bytes included)',
    when: (f) => f.appLast?.problem === 'oversize' || !rpcOk(f.init),
  },
];

const toolsRules: Rule[] = [
  {
    verdict: 'failed',
    reason: 'timeout',
    policy: 'Must not drop on one flake: timeouts, retry once',
    when: ({ tools }) => code(tools) === 'TIMEOUT',
  },
  {
    verdict: 'failed',
    reason: 'network',
    policy: 'Do not remove a previously live server because this machine had a bad network moment',
    when: ({ tools }) => code(tools) !== null,
  },
  {
    verdict: 'drop',
    reason: 'non-retryable-5xx',
    policy: 'Must drop: a 5xx body that says retryable: false / owner_action_required',
    when: ({ tools }) => is5xx(tools) && NON_RETRYABLE_BODY.test(body(tools)),
  },
  {
    verdict: 'failed',
    reason: 'retryable-5xx',
    policy: 'Must not drop on one flake: retryable 5xx, retry once',
    when: ({ tools }) => is5xx(tools),
  },
  {
    verdict: 'failed',
    reason: 'rate-limited',
    policy: '429: retry once, then keep',
    when: ({ tools }) => status(tools) === 429,
  },
  {
    verdict: 'review',
    reason: 'tools-error',
    policy: 'Attested live needs tools/list to return a JSON-RPC result',
    when: () => true,
  },
];

export interface Classification extends Verdict {
  /** Every reason that applies, `reason` first. */
  reasons: Reason[];
  /** The policy sentence behind `reason`. */
  policy: string;
}

/** A failure that passes (5xx, 429, a network error other than DNS or refused): retried, never a trip of the app's. */
export function isTransient(e: Pick<Exchange, 'errorCode' | 'status'> | undefined): boolean {
  if (!e) return false;
  if (e.errorCode !== null && e.status === null) return e.errorCode !== 'ENOTFOUND' && e.errorCode !== 'ECONNREFUSED';
  return is5xx(e) || e.status === 429;
}

function facts(o: Evidence, entry: EntryFacts): Facts {
  const evidence = o.diagnosis ?? o.deciding;
  const init =
    stepOf(evidence, 'initialize') ??
    stepOf(evidence, 'server/discover') ??
    stepOf(o.deciding, 'initialize') ??
    evidence.steps[0];
  if (!init) throw new Error('observation has no first step');
  return {
    o,
    entry,
    app: o.deciding,
    evidence,
    init,
    tools: stepOf(evidence, 'tools/list'),
    appLast: o.deciding.steps.at(-1),
  };
}

function decide(rules: Rule[], f: Facts): Classification | null {
  const matching = rules.filter((r) => r.when(f));
  const first = matching[0];
  if (!first) return null;
  const reasons = [...new Set(matching.filter((r) => r.verdict === first.verdict).map((r) => r.reason))];
  return { verdict: first.verdict, reason: first.reason, reasons, policy: first.policy };
}

/** The policy: the evidence + entry facts → verdict, reason, every reason that applies. */
export function classify(o: Evidence, entry: EntryFacts): Classification {
  // Before the facts: an answer that could not be processed may have no steps to read.
  if (o.unprocessable) {
    const r = unprocessableRules[0]!;
    return { verdict: r.verdict, reason: r.reason, reasons: [r.reason], policy: r.policy };
  }
  const f = facts(o, entry);
  const screened = decide(screenRules, f);
  const live = decide(liveRules, f);
  // Flagged tool text comes first; what the row would otherwise be follows in `reasons` (an accepted list restores it).
  if (screened) return { ...screened, reasons: [...screened.reasons, ...(live?.reasons ?? [])] };
  if (live) return live;
  // The app failed on something passing (5xx, 429, a network error): a flake to retry, not a trip of the
  // app's, even when the diagnosis read a moment later worked.
  if (isTransient(f.appLast)) return decide(initRules, { ...f, evidence: f.app, init: f.appLast!, tools: undefined })!;
  if (diagnosisWorks(f)) {
    const trips = decide(appTripRules, f)!;
    // The catch-all names no trip of its own when a specific one was found.
    const reasons = trips.reasons.length > 1 ? trips.reasons.filter((r) => r !== 'app-incompatible') : trips.reasons;
    return { ...trips, reasons };
  }
  const review = decide(reviewRules, f);
  if (review) return review;
  const initStep = decide(initRules, f);
  if (initStep) return initStep;
  return decide(toolsRules, f)!;
}

/**
 * The evidence judged as if `profile` had decided (the matrix, and `rejudge` under another deciding profile): that
 * profile's run in the deciding place, beside the same diagnosis, the matrix's runs counted. Null when the record
 * holds no run of that profile (no evidence).
 */
export function classifyAs(e: Evidence, profile: string, entry: EntryFacts): Classification | null {
  const others = { ...e.others, ...e.matrix?.others };
  const own = profile === e.deciding.profile;
  const run = own ? e.deciding : others[profile];
  if (!run) return null;
  delete others[profile];
  return classify(
    {
      ...e,
      deciding: run,
      diagnosis: e.diagnosis ?? e.matrix?.diagnosis ?? null,
      others,
      uaBlocked: own ? e.uaBlocked : null,
    },
    entry,
  );
}

/** Every rule, in order, for documentation, `explain` and tests. */
/**
 * Tool review in a refresh, for a row that is otherwise live (src/decide/drift.ts says what changed). Precedence
 * when several apply: identity-changed, then suspicious-tools, then tools-changed; all of them in `reasons`.
 */
export const DRIFT_RULES: ReadonlyArray<Verdict & { policy: string }> = [
  {
    verdict: 'review',
    reason: 'identity-changed',
    policy:
      'a host whose domain lapsed and now serves something else: held out of the runtime lists until a maintainer accepts it',
  },
  {
    verdict: 'review',
    reason: 'suspicious-tools',
    policy: 'flagged tool text: held out of the runtime lists until a maintainer accepts it',
  },
  {
    verdict: 'review',
    reason: 'tools-changed',
    policy:
      'a server that changes its tools after it was vetted ("rug pull"): review the diff; the row stays in the runtime lists',
  },
];

/**
 * Whether a user could use the server in an observation: the deciding client listed its tools. Live, or in review only
 * for what those tools say or cost (drift and budget rules); an `app-*` review or any failure is not usable. Uptime
 * counts these.
 */
export function usable(v: { verdict: string; reason: string }): boolean {
  return (
    v.verdict === 'live' ||
    (v.verdict === 'review' && [...DRIFT_RULES, ...BUDGET_RULES].some((r) => r.reason === v.reason))
  );
}

/**
 * Many vantages, one verdict (`./vantages.ts` combines them): the two reasons only a run across vantages gives. The
 * rest of its rules keep a vantage's own verdict: a drop needs drop-class evidence from at least the quorum of
 * vantages and none that reached the server; reachable in some and only failed in others keeps the row, with a note.
 */
export const VANTAGE_RULES: ReadonlyArray<Verdict & { policy: string }> = [
  {
    verdict: 'failed',
    reason: 'vantage-incomplete',
    policy:
      'a drop needs the quorum: fewer answers than it by the deadline keep the row, and the run counts for no streak',
  },
  {
    verdict: 'review',
    reason: 'vantage-split',
    policy:
      'one machine is not one view of the internet: reachable from some vantages and drop-class from others is never an automatic drop',
  },
];

/**
 * What a live server's tools cost every conversation, against the catalog's `policy.maxToolTokens` (off without it).
 */
export const BUDGET_RULES: ReadonlyArray<Verdict & { policy: string }> = [
  {
    verdict: 'review',
    reason: 'context-budget',
    policy:
      'a tool list above policy.maxToolTokens (o200k tokens of its compact form), or too costly to count within its ' +
      'time, goes to a human: the server works, and stays in the runtime lists',
  },
];

export const POLICY_TABLE: ReadonlyArray<
  Verdict & {
    stage: 'vantages' | 'budget' | 'live' | 'drift' | 'app-trip' | 'review' | 'initialize' | 'tools/list';
    policy: string;
  }
> = [
  ...unprocessableRules.map(({ verdict, reason, policy }) => ({ stage: 'live' as const, verdict, reason, policy })),
  ...screenRules.map(({ verdict, reason, policy }) => ({ stage: 'live' as const, verdict, reason, policy })),
  ...liveRules.map(({ verdict, reason, policy }) => ({ stage: 'live' as const, verdict, reason, policy })),
  ...DRIFT_RULES.map(({ verdict, reason, policy }) => ({ stage: 'drift' as const, verdict, reason, policy })),
  ...BUDGET_RULES.map(({ verdict, reason, policy }) => ({ stage: 'budget' as const, verdict, reason, policy })),
  ...appTripRules.map(({ verdict, reason, policy }) => ({ stage: 'app-trip' as const, verdict, reason, policy })),
  ...reviewRules.map(({ verdict, reason, policy }) => ({ stage: 'review' as const, verdict, reason, policy })),
  ...initRules.map(({ verdict, reason, policy }) => ({ stage: 'initialize' as const, verdict, reason, policy })),
  ...toolsRules.map(({ verdict, reason, policy }) => ({ stage: 'tools/list' as const, verdict, reason, policy })),
  // After every vantage's own verdict: a run across vantages makes them one (`./vantages.ts`).
  ...VANTAGE_RULES.map(({ verdict, reason, policy }) => ({ stage: 'vantages' as const, verdict, reason, policy })),
];
