/**
 * The one-tap policy as a table (source: shared/spec/one-tap-policy.md).
 * `classify(observation, entry)` is pure: the first rule whose `when` holds gives the verdict.
 * Each rule quotes the sentence of the policy it implements, so the two can be read side by side.
 */
import type { Exchange, Observation } from '../attest/observation.js';
import { stepOf } from '../attest/observation.js';
import { isTlsCode } from '../attest/transport.js';

export type VerdictName = 'live' | 'review' | 'drop' | 'failed';

export type Reason =
  // live
  | 'ok' | 'auth-optional'
  // review
  | 'zero-tools' | 'auth-required' | 'redirected' | 'handshake-error' | 'tools-error'
  // drop
  | 'dns' | 'refused' | 'http-404' | 'http-410' | 'not-mcp' | 'not-streamable-http'
  | 'origin-tls' | 'origin-dns' | 'non-retryable-5xx'
  // failed (keep the row)
  | 'timeout' | 'retryable-5xx' | 'network' | 'rate-limited' | 'edge-blocked' | 'tls';

export interface Verdict { verdict: VerdictName; reason: Reason }

export interface EntryFacts { requiresAuth: boolean }

/** Plain-language meaning of each reason, for tables, snapshots and the status page. */
export const REASON_TEXT: Record<Reason, string> = {
  'ok': 'initialize and tools/list succeeded',
  'auth-optional': 'initialize succeeded without a key; tools need the optional key',
  'zero-tools': 'tools/list returned no tools',
  'auth-required': '401/403 on initialize: the server wants credentials',
  'redirected': 'initialize was redirected; the URL should be updated (the app does not follow POST redirects)',
  'handshake-error': 'the server speaks JSON-RPC but refused the app\'s handshake',
  'tools-error': 'initialize succeeded but tools/list did not return a result',
  'dns': 'the host does not exist (DNS)',
  'refused': 'connection refused',
  'http-404': 'HTTP 404 on initialize',
  'http-410': 'HTTP 410 Gone on initialize',
  'not-mcp': 'the answer is not JSON-RPC MCP',
  'not-streamable-http': 'the server does not speak Streamable HTTP',
  'origin-tls': 'edge 526: the origin\'s TLS certificate is invalid',
  'origin-dns': 'edge 530: the origin cannot be resolved',
  'non-retryable-5xx': 'a server error that says it will not recover without the owner',
  'timeout': 'timed out, also on the retry',
  'retryable-5xx': 'a server error, also on the retry',
  'network': 'a network error, also on the retry',
  'rate-limited': 'HTTP 429 rate limited, also on the retry',
  'edge-blocked': 'a 403 bot wall or challenge at the edge (not proof of auth)',
  'tls': 'the TLS handshake with the server failed',
};

/** Failures worth exactly one retry (policy: "Timeouts and retryable 5xx: retry once"). */
export const RETRYABLE: ReadonlySet<Reason> = new Set(['timeout', 'retryable-5xx', 'network', 'rate-limited']);

interface Facts {
  o: Observation;
  entry: EntryFacts;
  init: Exchange;
  tools: Exchange | undefined;
}

interface Rule extends Verdict {
  /** The policy sentence (or the table row) this rule implements. */
  policy: string;
  when: (f: Facts) => boolean;
}

const status = (e: Exchange | undefined) => e?.status ?? null;
const is5xx = (e: Exchange | undefined) => (status(e) ?? 0) >= 500;
const isAuthStatus = (e: Exchange) => e.status === 401 || e.status === 403;
const code = (e: Exchange | undefined) => e?.errorCode ?? null;
const rpcOk = (e: Exchange | undefined) => !!e && (e.status ?? 0) < 300 && e.response !== null && e.response.error === undefined && typeof e.response.result === 'object' && e.response.result !== null;
const rpcError = (e: Exchange | undefined) => !!e?.response?.error;
const body = (e: Exchange) => e.bodySnippet ?? '';

/** 5xx bodies that say waiting will not help (Cloudflare's `retryable: false`, `owner_action_required`). */
const NON_RETRYABLE_BODY = /"?retryable"?\s*[:=]\s*false|owner_action_required/i;
/** Edge challenge pages: a bot wall is not an auth answer. */
const CHALLENGE_BODY = /cf-chl|challenge-platform|just a moment|attention required|error code:? 10\d\d|captcha/i;

const isEdgeChallenge = (e: Exchange) =>
  e.status === 403 && (e.headers['cf-mitigated'] !== undefined || CHALLENGE_BODY.test(body(e)) || e.contentType === 'text/html');
/** An auth answer: 401, or 403 with WWW-Authenticate or a JSON error body. */
const isAuthAnswer = (e: Exchange) =>
  e.status === 401 || (e.status === 403 && (e.headers['www-authenticate'] !== undefined || e.body === 'json'));

const initRules: Rule[] = [
  // Network-level failures on initialize.
  { verdict: 'drop', reason: 'dns', policy: 'Must drop: DNS failure', when: ({ init }) => code(init) === 'ENOTFOUND' },
  { verdict: 'drop', reason: 'refused', policy: 'Must drop: connection refused', when: ({ init }) => code(init) === 'ECONNREFUSED' },
  { verdict: 'failed', reason: 'timeout', policy: 'Must not drop on one flake: timeouts, retry once', when: ({ init }) => code(init) === 'TIMEOUT' },
  { verdict: 'failed', reason: 'tls', policy: 'not named by the policy: a TLS failure may be this machine\'s network, so keep and mark', when: ({ init }) => isTlsCode(code(init) ?? '') },
  { verdict: 'failed', reason: 'network', policy: 'Do not remove a previously live server because this machine had a bad network moment', when: ({ init }) => code(init) !== null },
  // HTTP answers to initialize.
  { verdict: 'drop', reason: 'origin-tls', policy: 'Must drop: Cloudflare/edge 526 (invalid origin TLS)', when: ({ init }) => init.status === 526 },
  { verdict: 'drop', reason: 'origin-dns', policy: 'Must drop: Cloudflare/edge 530 (origin DNS)', when: ({ init }) => init.status === 530 },
  { verdict: 'drop', reason: 'non-retryable-5xx', policy: 'Must drop: a 5xx body that says retryable: false / owner_action_required', when: ({ init }) => is5xx(init) && NON_RETRYABLE_BODY.test(body(init)) },
  { verdict: 'failed', reason: 'retryable-5xx', policy: 'Must not drop on one flake: retryable 5xx, retry once', when: ({ init }) => is5xx(init) },
  { verdict: 'failed', reason: 'rate-limited', policy: '429 is not an observation of the server: retry once, then keep', when: ({ init }) => init.status === 429 },
  { verdict: 'drop', reason: 'not-streamable-http', policy: 'Must drop: anything that is not Streamable HTTP (legacy HTTP+SSE answers GET with an endpoint event)', when: ({ o, init }) => o.legacySse === true || init.problem === 'endpoint-event' || init.status === 405 },
  { verdict: 'drop', reason: 'http-404', policy: 'Must drop: 404', when: ({ init }) => init.status === 404 },
  { verdict: 'drop', reason: 'http-410', policy: 'Must drop: 410', when: ({ init }) => init.status === 410 },
  { verdict: 'review', reason: 'redirected', policy: 'not named by the policy: the app does not follow a redirected POST, a human updates the URL', when: ({ init }) => (status(init) ?? 0) >= 300 && (status(init) ?? 0) < 400 },
  { verdict: 'failed', reason: 'edge-blocked', policy: 'A 403 alone is not proof of auth-gating (edges 403 non-browser agents)', when: ({ init }) => isEdgeChallenge(init) },
  { verdict: 'review', reason: 'auth-required', policy: 'Auth-optional hosts: initialize without a key is enough; a 401/403 there means the key is no longer optional', when: ({ init, entry }) => entry.requiresAuth && isAuthStatus(init) },
  { verdict: 'drop', reason: 'auth-required', policy: 'Must drop: 401/403 on initialize for a previously no-auth entry', when: ({ init }) => isAuthAnswer(init) },
  { verdict: 'failed', reason: 'edge-blocked', policy: 'A 403 alone is not proof of auth-gating', when: ({ init }) => init.status === 403 },
  { verdict: 'review', reason: 'handshake-error', policy: 'not named by the policy: alive and speaking JSON-RPC, but refusing protocol 2024-11-05 or the app\'s headers', when: ({ init }) => rpcError(init) },
  { verdict: 'drop', reason: 'not-mcp', policy: 'Must drop: a response that is not JSON-RPC MCP', when: ({ init }) => !rpcOk(init) || !hasProtocolVersion(init) },
];

const toolsRules: Rule[] = [
  { verdict: 'live', reason: 'ok', policy: 'Attested live: tools/list returns a JSON-RPC result', when: ({ o }) => (o.tools?.length ?? 0) > 0 },
  { verdict: 'failed', reason: 'timeout', policy: 'Must not drop on one flake: timeouts, retry once', when: ({ tools }) => code(tools) === 'TIMEOUT' },
  { verdict: 'live', reason: 'auth-optional', policy: 'Auth-optional hosts: tools/list may be empty or return an auth error; do not drop for that', when: ({ entry }) => entry.requiresAuth },
  { verdict: 'failed', reason: 'network', policy: 'Do not remove a previously live server because this machine had a bad network moment', when: ({ tools }) => code(tools) !== null },
  { verdict: 'drop', reason: 'non-retryable-5xx', policy: 'Must drop: a 5xx body that says retryable: false / owner_action_required', when: ({ tools }) => is5xx(tools) && NON_RETRYABLE_BODY.test(tools?.bodySnippet ?? '') },
  { verdict: 'failed', reason: 'retryable-5xx', policy: 'Must not drop on one flake: retryable 5xx, retry once', when: ({ tools }) => is5xx(tools) },
  { verdict: 'failed', reason: 'rate-limited', policy: '429: retry once, then keep', when: ({ tools }) => status(tools) === 429 },
  { verdict: 'review', reason: 'zero-tools', policy: 'zero tools is unusual: treat as review, not an automatic drop', when: ({ o }) => o.tools !== null && o.tools.length === 0 },
  { verdict: 'review', reason: 'tools-error', policy: 'Attested live needs tools/list to return a JSON-RPC result', when: () => true },
];

function hasProtocolVersion(e: Exchange): boolean {
  return typeof (e.response?.result as { protocolVersion?: unknown } | undefined)?.protocolVersion === 'string';
}

/** The policy: observation + entry facts → verdict and reason. */
export function classify(o: Observation, entry: EntryFacts): Verdict & { policy: string } {
  const init = stepOf(o, 'initialize');
  if (!init) throw new Error('observation has no initialize step');
  const facts: Facts = { o, entry, init, tools: stepOf(o, 'tools/list') };
  const rule = initRules.find((r) => r.when(facts)) ?? toolsRules.find((r) => r.when(facts))!;
  return { verdict: rule.verdict, reason: rule.reason, policy: rule.policy };
}

/** Every rule, in order, for documentation and tests. */
export const POLICY_TABLE: ReadonlyArray<Verdict & { step: 'initialize' | 'tools/list'; policy: string }> = [
  ...initRules.map(({ verdict, reason, policy }) => ({ step: 'initialize' as const, verdict, reason, policy })),
  ...toolsRules.map(({ verdict, reason, policy }) => ({ step: 'tools/list' as const, verdict, reason, policy })),
];
