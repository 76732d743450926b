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
import { canonicalJson } from '../model/snapshot-hash.js';
import { MAX_NESTING } from '../util/json.js';

/** Response headers kept as evidence are the transport's; the session id's value is a credential of sorts. */
const NOT_RECORDED = new Set(['mcp-session-id']);

function recordHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!NOT_RECORDED.has(name)) kept[name] = oneLine(value, L.headerChars);
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
    error: err
      ? {
          code: typeof err.code === 'number' && Number.isFinite(err.code) ? err.code : null,
          message: oneLine(String(err.message), L.errorChars),
        }
      : null,
  };
}

export function recordExchange(e: LiveExchange): Exchange {
  const x: Exchange = {
    step: e.step,
    status: e.status,
    contentType: oneLineOrNull(e.contentType, L.nameChars),
    headers: recordHeaders(e.headers),
    body: e.body,
    bodySnippet: e.bodySnippet === null ? null : clipText(e.bodySnippet, L.snippetChars),
    rpc: rpcReading(e),
    problem: e.problem,
    errorCode: oneLineOrNull(e.errorCode, L.nameChars),
    error: oneLineOrNull(e.error, L.errorChars),
    durationMs: Math.round(e.durationMs),
  };
  if (e.app) x.app = { ...e.app };
  return x;
}

export function recordRun(r: LiveRun): ClientRun {
  return {
    profile: r.profile,
    works: r.works,
    connected: r.connected,
    toolCount: r.tools?.length ?? null,
    error: oneLineOrNull(r.error, L.errorChars),
    steps: r.steps.map(recordExchange),
    protocolVersion: oneLineOrNull(r.protocolVersion, L.nameChars),
    serverInfo: r.serverInfo
      ? { name: oneLine(r.serverInfo.name, L.nameChars), version: oneLineOrNull(r.serverInfo.version, L.nameChars) }
      : null,
    sessionId: r.sessionId,
    quirks: [...new Set(r.quirks)],
    cutShort: r.cutShort,
    durationMs: Math.round(r.durationMs),
    excludedTools: r.excludedTools.map((e) => ({
      name: clipText(e.name, L.nameChars),
      reason: oneLine(e.reason, L.errorChars),
    })),
  };
}

const recordRuns = (runs: Record<string, LiveRun>) =>
  Object.fromEntries(Object.entries(runs).map(([id, r]) => [id, recordRun(r)]));

/** The evidence of one attempt, with the runs `--matrix` added beside it (null without the matrix). */
export function evidenceOf(
  o: LiveObservation,
  matrix: { diagnosis: LiveRun | null; others: Record<string, LiveRun> } | null = null,
): Evidence {
  return {
    deciding: recordRun(o.deciding),
    diagnosis: o.diagnosis && recordRun(o.diagnosis),
    others: recordRuns(o.others),
    legacySse: o.legacySse,
    auth: o.auth,
    uaBlocked: o.uaBlocked,
    unprocessable: o.unprocessable && {
      stage: o.unprocessable.stage,
      error: oneLine(o.unprocessable.error, L.errorChars),
    },
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

// ---------------------------------------------------------------------------------------------------------
// Redaction: whatever a server sends back of a secret it was given

/** Shorter values are not redacted: they would match ordinary text. */
const MIN_SECRET_CHARS = 8;
/** A probe key this long or longer is also looked for in any case, as base64 and base64url, and in part. */
const MIN_TRANSFORMED_CHARS = 12;
/** A part of a key this long counts (holding a letter, a digit and a character that is not hex)… */
const FRAGMENT_CHARS = 8;
/** …or this long, when it is all hex digits (a hex digest's 8-character run would match a hex key by chance). */
const HEX_FRAGMENT_CHARS = 16;
/** A text that ends in the first characters of a secret (a snippet cut inside one): at least this many. */
const MIN_TAIL_CHARS = 4;
/** Authorization schemes: the credential after one is a secret of its own (a server may send back the token alone). */
const SCHEME = /^(?:bearer|basic|token|apikey|api-key|key|digest)\s+(\S+)$/i;

const REDACTED = '[redacted]';

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const alternation = (forms: Iterable<string>, flags: string): RegExp | null => {
  const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length);
  return sorted.length ? new RegExp(sorted.map(escapeRegExp).join('|'), flags) : null;
};

/**
 * The parts of a key's base64 that any base64 of a text holding the key contains, whatever the key's offset in it:
 * for each of the three alignments, the whole 3-byte groups that are the key's own bytes.
 */
function base64Cores(key: string): string[] {
  const bytes = Buffer.from(key, 'utf8');
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const groups = Math.floor((bytes.length - shift) / 3);
    if (groups < 3) continue;
    const core = bytes.subarray(shift, shift + groups * 3);
    cores.push(core.toString('base64'), core.toString('base64url'));
  }
  return cores;
}

const lowerCode = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);
const pairOf = (text: string, i: number) =>
  ((lowerCode(text.charCodeAt(i)) & 0xff) << 8) | (lowerCode(text.charCodeAt(i + 1)) & 0xff);
const HEX = /^[0-9a-f]+$/i;

/**
 * A key's parts that count (`FRAGMENT_CHARS`, `HEX_FRAGMENT_CHARS`), lower-cased, with a filter on their first two
 * characters.
 */
interface Fragments {
  short: Set<string>;
  hex: Set<string>;
  pairs: Uint8Array;
  grow: RegExp;
}

function fragmentsOf(key: string): Fragments {
  const lower = key.toLowerCase();
  const short = new Set<string>();
  const hex = new Set<string>();
  for (let i = 0; i + FRAGMENT_CHARS <= lower.length; i++) {
    const w = lower.slice(i, i + FRAGMENT_CHARS);
    if (/[a-z]/.test(w) && /[0-9]/.test(w) && !HEX.test(w)) short.add(w);
  }
  for (let i = 0; i + HEX_FRAGMENT_CHARS <= lower.length; i++) {
    const w = lower.slice(i, i + HEX_FRAGMENT_CHARS);
    if (HEX.test(w)) hex.add(w);
  }
  const pairs = new Uint8Array(65_536);
  for (const w of [...short, ...hex]) pairs[pairOf(w, 0)] = 1;
  // A part found is grown to the whole run of key-like characters around it: what is left then does not depend on the
  // key.
  const own = [...new Set(key.replace(/[A-Za-z0-9_-]/g, ''))].map((c) => escapeRegExp(c)).join('');
  return { short, hex, pairs, grow: new RegExp(`[A-Za-z0-9_\\-${own}]`) };
}

/**
 * Everything a probe redacts, compiled once per probe (`secretsOf`): each form a secret may come back in. `count`
 * is how many texts it redacted (the record says so: `redacted`).
 */
export interface Redactor {
  /** Exact values: the headers' values, a `<scheme> <credential>`'s credential, the keys. */
  exact: RegExp | null;
  /** Probe keys of `MIN_TRANSFORMED_CHARS` or more, in any case. */
  caseless: RegExp | null;
  /** Their base64 and base64url cores; a match grows to the whole base64 run around it. */
  base64: RegExp | null;
  fragments: Fragments[];
  /** What a cut text may end inside of. */
  tails: string[];
  count: number;
}

/** No secret: nothing to redact. */
const NO_SECRETS: Readonly<Redactor> = Object.freeze({
  exact: null,
  caseless: null,
  base64: null,
  fragments: [],
  tails: [],
  count: 0,
});

/**
 * What a probe redacts: the values of the headers it was given (and the credential of a `<scheme> <credential>`
 * value), and `keys` (the secrets of probe-only headers, whatever the prefix they are sent after), each of
 * `MIN_SECRET_CHARS` or more. A key of `MIN_TRANSFORMED_CHARS` or more is also redacted in any case, as base64 or
 * base64url at any alignment, and in part (`FRAGMENT_CHARS`). docs/clients.md states the rule.
 */
export function secretsOf(
  headers: Readonly<Record<string, string>> | undefined,
  keys: readonly string[] = [],
): Redactor {
  const exact = new Set<string>();
  const tails = new Set<string>();
  for (const v of Object.values(headers ?? {})) {
    const value = v.trim();
    const credential = SCHEME.exec(value)?.[1];
    // The credential alone is the tail to look for: a text ending in "Bear" is not a secret cut short.
    for (const s of credential ? [value, credential] : [value]) if (s.length >= MIN_SECRET_CHARS) exact.add(s);
    const tail = credential ?? value;
    if (tail.length >= MIN_SECRET_CHARS) tails.add(tail);
  }
  const strong = keys.map((k) => k.trim()).filter((k) => k.length >= MIN_SECRET_CHARS);
  for (const k of strong) {
    exact.add(k);
    tails.add(k);
  }
  const transformed = strong.filter((k) => k.length >= MIN_TRANSFORMED_CHARS);
  if (!exact.size) return { ...NO_SECRETS };
  return {
    exact: alternation(exact, 'g'),
    caseless: alternation(transformed, 'gi'),
    base64: alternation(transformed.flatMap(base64Cores), 'g'),
    fragments: transformed.map(fragmentsOf),
    tails: [...tails],
    count: 0,
  };
}

type Range = [start: number, end: number];

function matchRanges(text: string, re: RegExp | null, out: Range[], grow?: (r: Range) => Range): void {
  if (re === null) return;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const r: Range = [m.index, m.index + m[0].length];
    out.push(grow ? grow(r) : r);
  }
}

const BASE64_CHAR = /[A-Za-z0-9+/_-]/;
function growOver(text: string, [start, end]: Range, char: RegExp, padding = false): Range {
  while (start > 0 && char.test(text[start - 1]!)) start--;
  while (end < text.length && char.test(text[end]!)) end++;
  if (padding) while (end < text.length && text[end] === '=') end++;
  return [start, end];
}

function fragmentRanges(text: string, f: Fragments, out: Range[]): void {
  // Found in order of their start, so each one found extends the last or starts the next (linear, whatever the text).
  const found: Range[] = [];
  const add = (start: number, end: number) => {
    const last = found.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else found.push([start, end]);
  };
  for (let i = 0; i + FRAGMENT_CHARS <= text.length; i++) {
    if (!f.pairs[pairOf(text, i)]) continue;
    if (f.short.has(text.slice(i, i + FRAGMENT_CHARS).toLowerCase())) add(i, i + FRAGMENT_CHARS);
    if (
      f.hex.size &&
      i + HEX_FRAGMENT_CHARS <= text.length &&
      f.hex.has(text.slice(i, i + HEX_FRAGMENT_CHARS).toLowerCase())
    )
      add(i, i + HEX_FRAGMENT_CHARS);
  }
  for (const r of found) out.push(growOver(text, r, f.grow));
}

/** Ranges sorted, those that overlap or touch made one. */
function merged(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/**
 * `text` with every form of every secret replaced by `[redacted]` (one marker for each run of redacted text), and a
 * tail that begins a secret too (text the source cut, a snippet's 2,048 characters, may end inside one).
 */
export function redactText(text: string, secrets: Redactor): string {
  if (secrets.exact === null || text.length < MIN_TAIL_CHARS) return text;
  const ranges: Range[] = [];
  matchRanges(text, secrets.exact, ranges);
  matchRanges(text, secrets.caseless, ranges);
  matchRanges(text, secrets.base64, ranges, (r) => growOver(text, r, BASE64_CHAR, true));
  if (text.length >= FRAGMENT_CHARS) for (const f of secrets.fragments) fragmentRanges(text, f, ranges);
  for (const secret of secrets.tails) {
    for (let n = Math.min(secret.length - 1, text.length); n >= MIN_TAIL_CHARS; n--) {
      if (text.endsWith(secret.slice(0, n))) {
        ranges.push([text.length - n, text.length]);
        break;
      }
    }
  }
  if (!ranges.length) return text;
  secrets.count++;
  let out = '';
  let at = 0;
  for (const [start, end] of merged(ranges)) {
    out += text.slice(at, start) + REDACTED;
    at = end;
  }
  return out + text.slice(at);
}

/** The canonical JSON of a value, or '' past the nesting canonical JSON allows (then the server's order stands). */
const orderKey = (value: unknown) => {
  try {
    return canonicalJson(value);
  } catch {
    return '';
  }
};

/**
 * An object with `redactText` applied to its property names as well as to its values. Names that redaction makes
 * equal (two properties both `[redacted]`) are numbered (`[redacted 2]`), in the order of their values' canonical
 * JSON: neither is lost, and the result does not depend on the key nor on the order the server sent them in.
 */
function redactObject(value: Record<string, unknown>, secrets: Redactor, depth: number): Record<string, unknown> {
  const entries = Object.entries(value).map(([name, v]) => ({
    name,
    redactedName: redactText(name, secrets),
    value: redactValue(v, secrets, depth + 1),
  }));
  const redacted = entries.filter((e) => e.redactedName !== e.name);
  if (!redacted.length) return Object.fromEntries(entries.map((e) => [e.name, e.value]));
  const used = new Set(entries.filter((e) => e.redactedName === e.name).map((e) => e.name));
  const keys = new Map(redacted.map((e) => [e, orderKey(e.value)]));
  for (const e of [...redacted].sort((a, b) =>
    keys.get(a)! < keys.get(b)! ? -1 : keys.get(a)! > keys.get(b)! ? 1 : 0,
  )) {
    let name = e.redactedName;
    const at = name.lastIndexOf(REDACTED);
    for (let n = 2; used.has(name); n++)
      name = `${e.redactedName.slice(0, at)}[redacted ${n}]${e.redactedName.slice(at + REDACTED.length)}`;
    used.add(name);
    e.redactedName = name;
  }
  return Object.fromEntries(entries.map((e) => [e.redactedName, e.value]));
}

/**
 * A JSON value with `redactText` applied to every string in it and every property name, at any depth up to
 * MAX_NESTING (a deeper definition is refused as a whole before anything reads it: `processTools`).
 */
function redactValue(value: unknown, secrets: Redactor, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (value === null || typeof value !== 'object' || depth > MAX_NESTING) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets, depth + 1));
  return redactObject(value as Record<string, unknown>, secrets, depth);
}

/**
 * A client's run with whatever the server sent back of a header's value or a probe-only key redacted, in place,
 * before anything reads, hashes, screens, counts, clips or records it: bodies, header values, the media type,
 * errors, JSON-RPC ids and error messages, serverInfo, the tools (names, values and property names at any depth).
 * What the policy classifies is what is recorded. `run.redacted` counts the texts redacted.
 */
export function redactRun(run: LiveRun, secrets: Redactor): LiveRun {
  if (secrets.exact === null) return run;
  const before = secrets.count;
  const text = (t: string) => redactText(t, secrets);
  for (const e of run.steps) {
    if (e.bodySnippet !== null) e.bodySnippet = text(e.bodySnippet);
    if (e.error !== null) e.error = text(e.error);
    if (e.contentType !== null) e.contentType = text(e.contentType);
    if (Object.keys(e.headers).length)
      e.headers = Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [text(k), text(v)]));
    if (e.response) {
      if (typeof e.response.id === 'string') e.response.id = text(e.response.id);
      if (e.response.error && typeof e.response.error.message === 'string')
        e.response.error.message = text(e.response.error.message);
    }
  }
  if (run.error !== null) run.error = text(run.error);
  if (run.protocolVersion !== null) run.protocolVersion = text(run.protocolVersion);
  if (run.serverInfo)
    run.serverInfo = {
      name: text(run.serverInfo.name),
      version: run.serverInfo.version === null ? null : text(run.serverInfo.version),
    };
  if (run.tools) run.tools = run.tools.map(text);
  if (run.toolDefinitions) run.toolDefinitions = run.toolDefinitions.map((t) => redactValue(t, secrets) as typeof t);
  if (run.excludedTools.length)
    run.excludedTools = run.excludedTools.map((x) => ({ name: text(x.name), reason: text(x.reason) }));
  run.redacted = secrets.count - before;
  return run;
}
