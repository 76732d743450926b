/**
 * The record of what the clients saw (`src/model/evidence.ts`), made from their live runs: everything a server
 * controls is made one line and clipped to `RECORD_LIMITS` here, once, so every later form (the verdict, the
 * history line, a page) is bounded by construction. No request header and no session id is recorded.
 */
import { createHash } from 'node:crypto';
import type { ClientRun, Evidence, Exchange, RpcReading } from '../model/evidence.js';
import { RECORD_LIMITS as L } from '../model/limits.js';
import { clipText, oneLine, oneLineOrNull } from '../text/clip.js';
import type { LiveExchange, LiveObservation, LiveRun } from './live.js';
import type { ClientProfile } from './profile.js';
import { canonicalJson } from './snapshot.js';

/** Response headers kept as evidence are the transport's; the session id's value is a credential of sorts. */
const NOT_RECORDED = new Set(['mcp-session-id']);

function recordHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!NOT_RECORDED.has(name)) kept[name] = oneLine(value, L.headerChars);
  return kept;
}

function rpcReading(e: LiveExchange): RpcReading | null {
  const r = e.response;
  if (r === null) return null;
  const id = typeof r.id === 'number' ? r.id : typeof r.id === 'string' ? clipText(r.id, L.nameChars) : null;
  const err = r.error;
  return {
    id,
    result: typeof r.result === 'object' && r.result !== null,
    error: err ? { code: typeof err.code === 'number' && Number.isFinite(err.code) ? err.code : null, message: oneLine(String(err.message), L.errorChars) } : null,
  };
}

export function recordExchange(e: LiveExchange): Exchange {
  const x: Exchange = {
    step: e.step, status: e.status, contentType: oneLineOrNull(e.contentType, L.nameChars), headers: recordHeaders(e.headers), body: e.body,
    bodySnippet: e.bodySnippet === null ? null : clipText(e.bodySnippet, L.snippetChars), rpc: rpcReading(e), problem: e.problem,
    errorCode: oneLineOrNull(e.errorCode, L.nameChars), error: oneLineOrNull(e.error, L.errorChars), durationMs: Math.round(e.durationMs),
  };
  if (e.app) x.app = { ...e.app };
  return x;
}

export function recordRun(r: LiveRun): ClientRun {
  return {
    profile: r.profile, works: r.works, connected: r.connected, toolCount: r.tools?.length ?? null, error: oneLineOrNull(r.error, L.errorChars),
    steps: r.steps.map(recordExchange), protocolVersion: oneLineOrNull(r.protocolVersion, L.nameChars),
    serverInfo: r.serverInfo ? { name: oneLine(r.serverInfo.name, L.nameChars), version: oneLineOrNull(r.serverInfo.version, L.nameChars) } : null,
    sessionId: r.sessionId, quirks: [...new Set(r.quirks)], cutShort: r.cutShort, durationMs: Math.round(r.durationMs),
    excludedTools: r.excludedTools.map((e) => ({ name: clipText(e.name, L.nameChars), reason: oneLine(e.reason, L.errorChars) })),
  };
}

const recordRuns = (runs: Record<string, LiveRun>) => Object.fromEntries(Object.entries(runs).map(([id, r]) => [id, recordRun(r)]));

/** The evidence of one attempt, with the runs `--matrix` added beside it (null without the matrix). */
export function evidenceOf(o: LiveObservation, matrix: { diagnosis: LiveRun | null; others: Record<string, LiveRun> } | null = null): Evidence {
  return {
    deciding: recordRun(o.deciding), diagnosis: o.diagnosis && recordRun(o.diagnosis), others: recordRuns(o.others),
    legacySse: o.legacySse, auth: o.auth, uaBlocked: o.uaBlocked,
    unprocessable: o.unprocessable && { stage: o.unprocessable.stage, error: oneLine(o.unprocessable.error, L.errorChars) },
    matrix: matrix && { diagnosis: matrix.diagnosis && recordRun(matrix.diagnosis), others: recordRuns(matrix.others) },
  };
}

const digests = new WeakMap<ClientProfile, string>();

/** SHA-256 (16 hex) of a profile's definition: records made by a profile that behaves differently say so. */
export function profileDigest(p: ClientProfile): string {
  let d = digests.get(p);
  if (d === undefined) {
    d = createHash('sha256').update(canonicalJson(p)).digest('hex').slice(0, 16);
    digests.set(p, d);
  }
  return d;
}

/** Shorter values are not redacted: they would match ordinary text. */
const MIN_SECRET_CHARS = 8;
/** Authorization schemes: the credential after one is a secret of its own (a server may send back the token alone). */
const SCHEME = /^(?:bearer|basic|token|apikey|api-key|key|digest)\s+(\S+)$/i;

/**
 * The values of the headers a probe was given, the credential of a `<scheme> <credential>` value, and `keys` (the
 * secrets of probe-only headers, sent after any prefix), longest first.
 */
export function secretsOf(headers: Readonly<Record<string, string>> | undefined, keys: readonly string[] = []): string[] {
  const values = [...Object.values(headers ?? {}), ...keys].flatMap((v) => {
    const value = v.trim();
    const credential = SCHEME.exec(value)?.[1];
    return credential ? [value, credential] : [value];
  });
  return [...new Set(values.filter((v) => v.length >= MIN_SECRET_CHARS))].sort((a, b) => b.length - a.length);
}

const REDACTED = '[redacted]';

/**
 * `text` with every secret replaced by `[redacted]`, and a tail that begins a secret too (text the source cut, a
 * snippet's 2,048 characters, may end inside one).
 */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const secret of secrets) {
    for (let n = Math.min(secret.length - 1, out.length); n >= 4; n--) {
      if (out.endsWith(secret.slice(0, n))) { out = out.slice(0, out.length - n) + REDACTED; break; }
    }
  }
  return out;
}

/** A JSON value with `redactText` applied to every string in it (tool definitions). */
function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, secrets)]));
  return value;
}

/**
 * A client's run with whatever the server sent back of a probe-only header's value redacted, in place, before
 * anything reads, hashes, screens, clips or records it: bodies, header values, errors, JSON-RPC error messages,
 * serverInfo, the tools. What the policy classifies is what is recorded.
 */
export function redactRun(run: LiveRun, secrets: readonly string[]): LiveRun {
  if (!secrets.length) return run;
  const text = (t: string) => redactText(t, secrets);
  for (const e of run.steps) {
    if (e.bodySnippet !== null) e.bodySnippet = text(e.bodySnippet);
    if (e.error !== null) e.error = text(e.error);
    if (Object.keys(e.headers).length) e.headers = Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k, text(v)]));
    if (e.response?.error && typeof e.response.error.message === 'string') e.response.error.message = text(e.response.error.message);
  }
  if (run.error !== null) run.error = text(run.error);
  if (run.protocolVersion !== null) run.protocolVersion = text(run.protocolVersion);
  if (run.serverInfo) run.serverInfo = { name: text(run.serverInfo.name), version: run.serverInfo.version === null ? null : text(run.serverInfo.version) };
  if (run.tools) run.tools = run.tools.map(text);
  if (run.toolDefinitions) run.toolDefinitions = run.toolDefinitions.map((t) => redactValue(t, secrets) as typeof t);
  if (run.excludedTools.length) run.excludedTools = run.excludedTools.map((x) => ({ name: text(x.name), reason: text(x.reason) }));
  return run;
}
