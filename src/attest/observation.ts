/** Raw facts recorded by the clients. No judgement lives here: the policy reads these. */
import type { Finding } from '../screen/types.js';

export type StepName = 'initialize' | 'notifications/initialized' | 'tools/list' | 'server/discover';

/** How a response body was understood. */
export type BodyKind = 'json' | 'sse' | 'empty' | 'other';

/**
 * Why a body was not a usable JSON-RPC response (spec reading).
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

/** How the app's reader took a body (src/attest/app-reader.ts); present on the app's exchanges only. */
export interface AppReading {
  read: 'sse' | 'json';
  /** What the app took as the answer: a response, or another message it cannot tell from one. */
  winner: 'response' | 'notification' | 'request' | 'other' | null;
  winnerId: number | null;
  spacelessDataLines: number;
  undecodedDataLines: number;
  /** The body ended by itself within the time limit (the app waits for the end). */
  ended: boolean;
  /** The body started with something the app cannot decode; the rest was not read. */
  stoppedEarly: boolean;
  /** Oversize only: the text read so far could still be valid JSON. */
  validPrefix: boolean;
}

/** One HTTP exchange of a handshake. */
export interface Exchange {
  step: StepName;
  /** HTTP status, or null when no response arrived. */
  status: number | null;
  /** Media type without parameters, lower-cased. */
  contentType: string | null;
  /** The response headers the policy and reports need (lower-case names). */
  headers: Record<string, string>;
  body: BodyKind | null;
  /** The first bytes of a body that was not a plain success, for reasons and error text. */
  bodySnippet: string | null;
  /** The JSON-RPC response to our request as the spec reads it (for a notification: null). */
  response: JsonRpcResponse | null;
  problem: BodyProblem | null;
  /** Low-level failure: TIMEOUT, ENOTFOUND, EAI_AGAIN, ECONNREFUSED, ECONNRESET, TLS codes, ... */
  errorCode: string | null;
  /** Short human text for a failure, or null. */
  error: string | null;
  durationMs: number;
  app?: AppReading;
}

/** Behaviour that does not change the verdict but that a server author should know about. */
export type Quirk =
  | 'sse-data-without-space' // `data:{...}`: the app's SSE reader requires `data: `
  | 'messages-before-response' // notifications/requests on the POST stream ahead of the response
  | 'notification-rejected' // 4xx/5xx to notifications/initialized, tools/list still answered
  | 'batch-response' // a JSON array answered a single request
  | 'error-id-not-matching' // an error response whose id is null or "server-error"
  | 'http-error-status' // a valid JSON-RPC result sent with an HTTP error status (the app never checks it)
  | 'no-protocol-version' // an initialize result without protocolVersion (the app does not read it)
  | 'id-not-matching' // the object the app took as the answer carries another id (the app does not match ids)
  | 'gzip-response' // answered gzip (Android asks for it); desktop's CIO engine asks for none
  | 'tools-paginated' // more tools behind nextCursor: the app shows page 1 only
  | 'version-corrected' // a -32022 named a version of ours, and the retry with it worked (2026-07-28)
  | 'invalid-tool-headers'; // tools with an invalid x-mcp-header declaration, which a 2026-07-28 client excludes (`excludedTools`)

/** A tool as a client listed it (the full definition; clipped only where it is stored or shown). */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: unknown;
}

/** One tool as a server listed it, its fields kept as sent (the name as text). */
export function toolDefinition(t: Record<string, unknown>): ToolDefinition {
  const d: ToolDefinition = { name: String(t.name) };
  if (typeof t.title === 'string') d.title = t.title;
  if (typeof t.description === 'string') d.description = t.description;
  if (t.inputSchema !== undefined) d.inputSchema = t.inputSchema;
  if (t.annotations !== undefined) d.annotations = t.annotations;
  return d;
}

/** What one client (one profile) made of a server. */
export interface ClientRun {
  profile: string;
  /** The client would connect and list at least one tool. */
  works: boolean;
  /** The handshake got as far as a usable initialize (or discover) answer. */
  connected: boolean;
  /** The tool names this client would list (null: it never got a tool list). */
  tools: string[] | null;
  toolDefinitions: ToolDefinition[] | null;
  /** The client's own error, as its code words it (null when it works). */
  error: string | null;
  steps: Exchange[];
  protocolVersion: string | null;
  serverInfo: { name: string; version: string | null } | null;
  sessionId: boolean;
  quirks: Quirk[];
  /** A time limit shorter than the client's own (an override) ended a request. */
  cutShort: boolean;
  durationMs: number;
  /** Tools the server listed that this client leaves out (2026-07-28: invalid `x-mcp-header`), with why. */
  excludedTools: Array<{ name: string; reason: string }>;
}

export function stepOf(run: Pick<ClientRun, 'steps'>, step: StepName): Exchange | undefined {
  return run.steps.find((s) => s.step === step);
}

/** Shared by every run that excludes nothing (most): a run keeps thousands of these. */
const NONE_EXCLUDED: ClientRun['excludedTools'] = Object.freeze([]) as unknown as ClientRun['excludedTools'];

export function emptyRun(profile: string): ClientRun {
  return {
    profile, works: false, connected: false, tools: null, toolDefinitions: null, error: null, steps: [],
    protocolVersion: null, serverInfo: null, sessionId: false, quirks: [], cutShort: false, durationMs: 0, excludedTools: NONE_EXCLUDED,
  };
}

export function addQuirk(run: ClientRun, quirk: Quirk): void {
  if (!run.quirks.includes(quirk)) run.quirks.push(quirk);
}

/** What an auth answer said about how to authenticate (401/403 evidence). */
export type AuthKind = 'oauth' | 'api-key' | 'unknown';

/** Everything one attempt at a server observed: the deciding client, and the reads that explain it. */
export interface Observation {
  url: string;
  /** The deciding profile's run. */
  deciding: ClientRun;
  /** The spec-correct diagnosis (run when the deciding client would not list tools), or null. */
  diagnosis: ClientRun | null;
  /** Runs of other profiles (the matrix, or the era check of the diagnosis), by profile id. */
  others: Record<string, ClientRun>;
  /** Result of a GET looking for a legacy HTTP+SSE `endpoint` event (null: not checked). */
  legacySse: boolean | null;
  /** How a 401/403 asked to authenticate (null: no such answer, or not checked). */
  auth: AuthKind | null;
  /** The app's client with a browser's User-Agent works while its own agent does not (null: not checked). */
  uaBlocked: boolean | null;
  /** What screening found in the deciding client's tool list (src/screen), on the full text. */
  findings: Finding[];
  /** onetap could not process the server's answer (null: it could); the row is review/unprocessable. */
  unprocessable: Unprocessable | null;
}

/**
 * Where processing one server's answer failed: `read` (a client run threw), `nesting` (deeper than 256 levels),
 * `hash` (the tool snapshot), `screen`, `review` (drift, card check), `store` (the record).
 */
export type UnprocessableStage = 'read' | 'nesting' | 'hash' | 'screen' | 'review' | 'store';
export interface Unprocessable { stage: UnprocessableStage; error: string }

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

/** Low-level error codes of a failed TLS handshake (Node's and OpenSSL's). */
export function isTlsCode(code: string): boolean {
  return TLS_CODE.test(code);
}
