/**
 * The evidence of one observation: every exchange each client made with the server, as the policy reads it. The
 * policy (`src/policy/policy.ts`) classifies exactly this form, during the probe and again in `onetap rejudge`,
 * so a verdict can always be judged again from what was recorded. Bounded at the source (`RECORD_LIMITS`); no
 * request header and no session id is kept, so no secret reaches a record.
 */
import { z } from 'zod';
import { count, duration } from './scalars.js';
import { AUTH_KINDS, APP_WINNERS, BODY_KINDS, BODY_PROBLEMS, QUIRKS, STEPS, UNPROCESSABLE_STAGES } from './words.js';

/** How the app's reader took a body (`src/attest/app-reader.ts`); present on the app's exchanges only. */
export const appReadingSchema = z.object({
  read: z.enum(['sse', 'json']),
  /** What the app took as the answer: a response, or another message it cannot tell from one. */
  winner: z.enum(APP_WINNERS).nullable(),
  winnerId: z.number().nullable(),
  spacelessDataLines: count,
  undecodedDataLines: count,
  /** The body ended by itself within the time limit (the app waits for the end). */
  ended: z.boolean(),
  /** The body started with something the app cannot decode; the rest was not read. */
  stoppedEarly: z.boolean(),
  /** Oversize only: the text read so far could still be valid JSON. */
  validPrefix: z.boolean(),
});

/** The JSON-RPC response to our request as the spec reads it, without its result (which may be megabytes). */
export const rpcReadingSchema = z.object({
  id: z.union([z.string(), z.number()]).nullable(),
  /** The response carries a result that is an object (what a usable answer needs). */
  result: z.boolean(),
  /** A JSON-RPC error: its code (null when the server sent no number) and message. */
  error: z.object({ code: z.number().nullable(), message: z.string() }).nullable(),
});

/** One HTTP exchange of a handshake: the request's method, the answer, the time it took. */
export const exchangeSchema = z.object({
  /** The JSON-RPC method posted. */
  step: z.enum(STEPS),
  /** HTTP status, or null when no response arrived. */
  status: z.number().int().nullable(),
  /** Media type without parameters, lower-cased. */
  contentType: z.string().nullable(),
  /** The response headers the policy and reports read (lower-case names; the session id is never kept). */
  headers: z.record(z.string(), z.string()),
  body: z.enum(BODY_KINDS).nullable(),
  /** The first characters of a body that was not a plain success, for reasons and error text. */
  bodySnippet: z.string().nullable(),
  /** The JSON-RPC response to our request (for a notification: null). */
  rpc: rpcReadingSchema.nullable(),
  problem: z.enum(BODY_PROBLEMS).nullable(),
  /** Low-level failure: TIMEOUT, ENOTFOUND, EAI_AGAIN, ECONNREFUSED, ECONNRESET, TLS codes, ... */
  errorCode: z.string().nullable(),
  /** Short human text for a failure, or null. */
  error: z.string().nullable(),
  durationMs: duration,
  app: appReadingSchema.optional(),
});

/** What one client (one profile) made of a server. */
export const clientRunSchema = z.object({
  profile: z.string(),
  /** The client would connect and list at least one tool. */
  works: z.boolean(),
  /** The handshake got as far as a usable initialize (or discover) answer. */
  connected: z.boolean(),
  /** How many tools this client would list (null: it never got a tool list). */
  toolCount: count.nullable(),
  /** The client's own error, as its code words it (null when it works). */
  error: z.string().nullable(),
  steps: z.array(exchangeSchema),
  protocolVersion: z.string().nullable(),
  serverInfo: z.object({ name: z.string(), version: z.string().nullable() }).nullable(),
  sessionId: z.boolean(),
  quirks: z.array(z.enum(QUIRKS)),
  /** A time limit shorter than the client's own (an override) ended a request. */
  cutShort: z.boolean(),
  durationMs: duration,
  /** Tools the server listed that this client leaves out (2026-07-28: an invalid `x-mcp-header`), with why. */
  excludedTools: z.array(z.object({ name: z.string(), reason: z.string() })),
});

/** Everything one attempt at a server observed: the deciding client, and the reads that explain it. */
export const evidenceSchema = z.object({
  /** The deciding profile's run. */
  deciding: clientRunSchema,
  /** The spec-correct diagnosis (run when the deciding client would not list tools), or null. */
  diagnosis: clientRunSchema.nullable(),
  /** Runs of other profiles the diagnosis made (the era check), by profile id. */
  others: z.record(z.string(), clientRunSchema),
  /** Result of a GET looking for a legacy HTTP+SSE `endpoint` event (null: not checked). */
  legacySse: z.boolean().nullable(),
  /** How a 401/403 asked to authenticate (null: no such answer, or not checked). */
  auth: z.enum(AUTH_KINDS).nullable(),
  /** The app's client with a browser's User-Agent works while its own agent does not (null: not checked). */
  uaBlocked: z.boolean().nullable(),
  /** onetap could not process the server's answer (null: it could); the row is review/unprocessable. */
  unprocessable: z.object({ stage: z.enum(UNPROCESSABLE_STAGES), error: z.string() }).nullable(),
  /**
   * The runs `--matrix` added beside the verdict's (never in it): the diagnosis when the verdict had none, and
   * every other profile's run. Null without the matrix.
   */
  matrix: z.object({ diagnosis: clientRunSchema.nullable(), others: z.record(z.string(), clientRunSchema) }).nullable(),
});

export type AppReading = z.infer<typeof appReadingSchema>;
export type RpcReading = z.infer<typeof rpcReadingSchema>;
export type Exchange = z.infer<typeof exchangeSchema>;
export type ClientRun = z.infer<typeof clientRunSchema>;
export type Evidence = z.infer<typeof evidenceSchema>;
export type Unprocessable = NonNullable<Evidence['unprocessable']>;
