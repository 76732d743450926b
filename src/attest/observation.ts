/** Raw facts recorded by the prober. No judgement lives here: the policy reads these. */

export type StepName = 'initialize' | 'notifications/initialized' | 'tools/list';

/** How a response body was understood. */
export type BodyKind = 'json' | 'sse' | 'empty' | 'other';

/**
 * Why a body was not a usable JSON-RPC response.
 * - invalid-json: a JSON media type (or JSON-looking body) that does not parse
 * - not-jsonrpc: parsed, but no JSON-RPC response object in it
 * - wrong-id: JSON-RPC responses, but none for our request id
 * - no-response-in-stream: an SSE stream that ended without our response
 * - endpoint-event: an SSE `endpoint` event, the legacy HTTP+SSE transport's greeting
 * - oversize: the body passed the size cap and was cut off
 */
export type BodyProblem = 'invalid-json' | 'not-jsonrpc' | 'wrong-id' | 'no-response-in-stream' | 'endpoint-event' | 'oversize';

export interface JsonRpcError { code: number; message: string; data?: unknown }

export interface JsonRpcResponse {
  jsonrpc?: unknown;
  id: string | number | null;
  result?: unknown;
  error?: JsonRpcError;
}

/** One HTTP exchange of the handshake. */
export interface Exchange {
  step: StepName;
  /** HTTP status, or null when no response arrived. */
  status: number | null;
  /** Media type without parameters, lower-cased. */
  contentType: string | null;
  /** The response headers the policy and reports need (lower-case names). */
  headers: Record<string, string>;
  body: BodyKind | null;
  /** The first bytes of a body that was not a JSON-RPC response, for reasons and error text. */
  bodySnippet: string | null;
  /** The JSON-RPC response to our request (for a notification: null). */
  response: JsonRpcResponse | null;
  problem: BodyProblem | null;
  /** Low-level failure: TIMEOUT, ENOTFOUND, EAI_AGAIN, ECONNREFUSED, ECONNRESET, TLS codes, ... */
  errorCode: string | null;
  /** Short human text for a failure, or null. */
  error: string | null;
  durationMs: number;
}

/** Behaviour that does not change the verdict but that a server author should know about. */
export type Quirk =
  | 'sse-data-without-space' // `data:{...}`: the app's SSE reader requires `data: ` and would miss it
  | 'messages-before-response' // notifications/requests on the POST stream ahead of the response
  | 'notification-rejected' // 4xx/5xx to notifications/initialized, tools/list still answered
  | 'batch-response' // a JSON array answered a single request
  | 'error-id-not-matching'; // an error response whose id is null or "server-error"

export interface Attempt {
  steps: Exchange[];
  durationMs: number;
}

export interface Observation {
  url: string;
  profile: string;
  startedAt: string;
  durationMs: number;
  /** Number of handshake attempts made (1, or 2 after one retry). */
  attempts: number;
  /** Steps of the last attempt, in order. */
  steps: Exchange[];
  /** Steps of the first attempt when a retry happened, for the record. */
  firstAttempt: Exchange[] | null;
  /** Result of a GET looking for a legacy HTTP+SSE `endpoint` event (null: not checked). */
  legacySse: boolean | null;
  protocolVersion: string | null;
  serverInfo: { name: string; version: string | null } | null;
  tools: string[] | null;
  /** True when tools/list had more pages than the page limit allowed. */
  toolsTruncated: boolean;
  sessionId: boolean;
  quirks: Quirk[];
}

export function stepOf(o: Pick<Observation, 'steps'>, step: StepName): Exchange | undefined {
  return o.steps.find((s) => s.step === step);
}
