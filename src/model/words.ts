/**
 * The words of the record: every enumeration the observation record, the plan and the history use, each
 * declared once as a list from which its type follows. No schema library here: the prober imports these, and a
 * probing process loads no validator (the schemas in this folder take these lists).
 */

export const VERDICTS = ['live', 'review', 'drop', 'failed'] as const;
export type VerdictName = (typeof VERDICTS)[number];

/** Every reason a verdict can give; `src/policy/policy.ts` says when each applies and what it means. */
export const REASONS = [
  // live
  'ok',
  'auth-optional',
  // review: alive, but the app cannot use it
  'app-sse-format',
  'app-stream-open',
  'app-wrong-message',
  'app-notification-rejected',
  'app-ua-blocked',
  'app-batch-response',
  'app-encoding',
  'app-tool-list',
  'app-incompatible',
  'era-incompatible',
  // review: other
  'suspicious-tools',
  'tools-changed',
  'identity-changed',
  'unprocessable',
  'vantage-split',
  'context-budget',
  'zero-tools',
  'auth-required',
  'payment-required',
  'redirected',
  'handshake-error',
  'tools-error',
  'oversize',
  // drop
  'dns',
  'refused',
  'http-404',
  'http-410',
  'not-mcp',
  'not-streamable-http',
  'origin-tls',
  'origin-dns',
  'non-retryable-5xx',
  // failed (keep the row)
  'timeout',
  'retryable-5xx',
  'network',
  'rate-limited',
  'edge-blocked',
  'tls',
  'vantage-incomplete',
] as const;
export type Reason = (typeof REASONS)[number];

/** What happens to a catalog row. */
export const DECISIONS = ['keep', 'keep-failed', 'review', 'drop'] as const;
export type Decision = (typeof DECISIONS)[number];

export const STEPS = ['initialize', 'notifications/initialized', 'tools/list', 'server/discover'] as const;
export type StepName = (typeof STEPS)[number];

/** How a response body was understood. */
export const BODY_KINDS = ['json', 'sse', 'empty', 'other'] as const;
export type BodyKind = (typeof BODY_KINDS)[number];

/**
 * Why a body was not a usable JSON-RPC response (spec reading).
 * - invalid-json: a JSON media type (or JSON-looking body) that does not parse
 * - not-jsonrpc: parsed, but no JSON-RPC response object in it
 * - wrong-id: JSON-RPC responses, but none for our request id
 * - no-response-in-stream: an SSE stream that ended without our response
 * - endpoint-event: an SSE `endpoint` event, the legacy HTTP+SSE transport's greeting
 * - oversize: the body passed the size cap and was cut off
 */
export const BODY_PROBLEMS = [
  'invalid-json',
  'not-jsonrpc',
  'wrong-id',
  'no-response-in-stream',
  'endpoint-event',
  'oversize',
] as const;
export type BodyProblem = (typeof BODY_PROBLEMS)[number];

/** Behaviour that does not change the verdict but that a server author should know about. */
export const QUIRKS = [
  'sse-data-without-space', // `data:{...}`: the app's SSE reader requires `data: `
  'messages-before-response', // notifications/requests on the POST stream ahead of the response
  'notification-rejected', // 4xx/5xx to notifications/initialized, tools/list still answered
  'batch-response', // a JSON array answered a single request
  'error-id-not-matching', // an error response whose id is null or "server-error"
  'http-error-status', // a valid JSON-RPC result sent with an HTTP error status (the app never checks it)
  'no-protocol-version', // an initialize result without protocolVersion (the app does not read it)
  'id-not-matching', // the object the app took as the answer carries another id (the app does not match ids)
  'gzip-response', // answered gzip (Android asks for it); desktop's CIO engine asks for none
  'tools-paginated', // more tools behind nextCursor: the app shows page 1 only
  'version-corrected', // a -32022 named a version of ours, and the retry with it worked (2026-07-28)
  // tools with an invalid x-mcp-header declaration, which a 2026-07-28 client excludes (`excludedTools`)
  'invalid-tool-headers',
] as const;
export type Quirk = (typeof QUIRKS)[number];

/** What an auth answer said about how to authenticate (401/403 evidence). */
export const AUTH_KINDS = ['oauth', 'api-key', 'unknown'] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

/**
 * Where processing one server's answer failed: `read` (a client run threw), `nesting` (deeper than 256 levels),
 * `hash` (the tool snapshot), `screen`, `review` (drift, card check), `store` (the record).
 */
export const UNPROCESSABLE_STAGES = ['read', 'nesting', 'hash', 'screen', 'review', 'store'] as const;
export type UnprocessableStage = (typeof UNPROCESSABLE_STAGES)[number];

/** What the app's reader took as the answer: a response, or another message it cannot tell from one. */
export const APP_WINNERS = ['response', 'notification', 'request', 'other'] as const;
