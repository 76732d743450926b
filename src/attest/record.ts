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
const MIN_SECRET_CHARS = 6;

/** The values of the headers a probe was given, and each word of them (a server may send the token back alone). */
export function secretsOf(headers: Readonly<Record<string, string>> | undefined): string[] {
  const values = Object.values(headers ?? {}).flatMap((v) => [v.trim(), ...v.trim().split(/\s+/)]);
  // Longest first, so a whole value is replaced before a word of it.
  return [...new Set(values.filter((v) => v.length >= MIN_SECRET_CHARS))].sort((a, b) => b.length - a.length);
}

/**
 * `value` with every occurrence of a secret in any string replaced by `[redacted]`: what a server sends back of a
 * key it was given (in an error, a header, a body) is recorded, printed and shown without it.
 */
export function redacted<T>(value: T, secrets: readonly string[]): T {
  if (!secrets.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return secrets.reduce((s, secret) => (s.includes(secret) ? s.split(secret).join('[redacted]') : s), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [walk(k) as string, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
