/**
 * What the clients record while they talk to a server: the evidence of `src/model/evidence.ts` as it is being
 * made, with what only the probe itself needs (the JSON-RPC responses with their results, the tool definitions).
 * `./record.ts` turns it into the record, bounded. No judgement lives here: the policy reads the record.
 */
import type { ClientRun, Exchange, Unprocessable } from '../model/evidence.js';
import type { Finding } from '../model/observation.js';
import type { ToolDefinition } from '../model/snapshot.js';
import type { AuthKind, Quirk } from '../model/words.js';

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcResponse {
  jsonrpc?: unknown;
  id: string | number | null;
  result?: unknown;
  error?: JsonRpcError;
}

/** One HTTP exchange of a handshake, with the response the client read. */
export interface LiveExchange extends Omit<Exchange, 'rpc'> {
  /** The JSON-RPC response to our request as the spec reads it (for a notification: null). */
  response: JsonRpcResponse | null;
}

/** What one client (one profile) made of a server, as it runs. */
export interface LiveRun extends Omit<ClientRun, 'steps' | 'toolCount'> {
  steps: LiveExchange[];
  /** The tool names this client would list (null: it never got a tool list). */
  tools: string[] | null;
  toolDefinitions: ToolDefinition[] | null;
  /** How many texts of this run onetap redacted (a secret the server sent back: `./record.ts` redactRun). */
  redacted: number;
}

/** Everything one attempt at a server observed: the deciding client, and the reads that explain it. */
export interface LiveObservation {
  url: string;
  deciding: LiveRun;
  diagnosis: LiveRun | null;
  others: Record<string, LiveRun>;
  legacySse: boolean | null;
  auth: AuthKind | null;
  uaBlocked: boolean | null;
  /** The deciding client again with the entry's probe-only keys (null: none, or the keyless client never connected). */
  keyed: LiveRun | null;
  /** What screening found in the deciding client's tool list (src/screen), on the full text. */
  findings: Finding[];
  /**
   * What the tool list costs a conversation (null: not counted, `tokensError` says why) and its name- and
   * description-blind digests.
   */
  toolSet?: { tokens: number | null; tokensError: string | null } & (
    | { nameBlind: string; descriptionBlind: string }
    | { nameBlind: null; descriptionBlind: null }
  );
  unprocessable: Unprocessable | null;
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

/** Shared by every run that excludes nothing (most): a run keeps thousands of these. */
const NONE_EXCLUDED: LiveRun['excludedTools'] = Object.freeze([]) as unknown as LiveRun['excludedTools'];

export function emptyRun(profile: string): LiveRun {
  return {
    profile,
    works: false,
    connected: false,
    tools: null,
    toolDefinitions: null,
    error: null,
    steps: [],
    protocolVersion: null,
    serverInfo: null,
    sessionId: false,
    quirks: [],
    cutShort: false,
    durationMs: 0,
    excludedTools: NONE_EXCLUDED,
    redacted: 0,
  };
}

export function addQuirk(run: LiveRun, quirk: Quirk): void {
  if (!run.quirks.includes(quirk)) run.quirks.push(quirk);
}
