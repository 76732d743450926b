/**
 * The only module that speaks HTTP for MCP. One POST in, one recorded exchange out.
 * Bounded: `timeoutMs` bounds each request, body included; `maxBodyBytes` bounds the (decompressed) body,
 * and redirects are never followed (the app's client does not follow them for POST either).
 */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { request, type Dispatcher } from 'undici';
import { dispatchRequest, streamReader, type BodyReader, type ResponseHead } from './dispatch.js';
import { createParser } from 'eventsource-parser';
import type { JsonRpcResponse, LiveExchange } from './live.js';
import type { AppReading } from '../model/evidence.js';
import { isTlsCode } from '../model/read.js';
import type { BodyKind, BodyProblem, Quirk, StepName } from '../model/words.js';
import { HeldBytes, type BodyBudget, type Clock } from './budget.js';
import { AppSseReader, decodeAppResponse, NO_SSE_RESPONSE, type AppResponse, type Decoded } from './app-reader.js';

export interface PostOptions {
  /** Shared across the probes of one run: bounds the bytes held by all body reads together. */
  budget?: BodyBudget;
  /** Request headers; a flat [name, value, ...] list keeps duplicates and order, as the app appends them. */
  headers: Record<string, string> | string[];
  /** The request's time limit, headers and body together. */
  timeoutMs: number;
  maxBodyBytes: number;
  dispatcher?: Dispatcher;
}

export interface PostOutcome {
  exchange: LiveExchange;
  sessionId: string | null;
  quirks: Quirk[];
}

/** Response headers worth keeping: auth answers, edge marks, retry hints, redirects, session. */
const KEPT_HEADERS = [
  'www-authenticate',
  'cf-mitigated',
  'retry-after',
  'location',
  'server',
  'content-encoding',
  'mcp-session-id',
];
const SNIPPET_CHARS = 2048;
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/**
 * POST one JSON-RPC message. `id` is the request id whose response we wait for, or null for a
 * notification (whose answer is recorded but not read).
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function postJsonRpc(
  url: string,
  step: StepName,
  message: unknown,
  id: number | null,
  opts: PostOptions,
): Promise<PostOutcome> {
  const started = performance.now();
  const exchange = newExchange(step);
  const quirks: Quirk[] = [];
  let sessionId: string | null = null;
  try {
    const { head, body, deadline } = await timedPost(url, opts.headers, message, opts.timeoutMs, opts.dispatcher);
    recordHead(exchange, head);
    sessionId = headerValue(head.headers['mcp-session-id']);
    if (id === null) {
      try {
        await discard(body, exchange.contentType);
      } finally {
        deadline.clear();
      }
    } else {
      const held = new HeldBytes(opts.maxBodyBytes, opts.budget, deadline);
      let read: ReadResult;
      try {
        read = await readResponse(
          body,
          exchange.contentType,
          exchange.headers['content-encoding'],
          id,
          opts.maxBodyBytes,
          quirks,
          held,
        );
      } finally {
        held.release();
        deadline.clear();
      }
      exchange.body = read.body;
      exchange.response = read.response;
      exchange.problem = read.problem;
      // Keep the text of anything that is not a plain success: the policy reads error bodies.
      if (head.statusCode >= 300 || !read.response) exchange.bodySnippet = read.text;
    }
  } catch (err) {
    exchange.errorCode = lowLevelCode(err);
    exchange.error = describeError(exchange.errorCode, err);
  }
  exchange.durationMs = Math.round(performance.now() - started);
  return { exchange, sessionId, quirks };
}

/**
 * POST with one time limit for the whole request: undici's headers timeout until the answer starts, then a
 * deadline that ends the body (the app's `requestTimeoutMillis` covers both). No AbortSignal: a listener per
 * request was a tenth of the prober's CPU. Clear the deadline once the body is read.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function timedPost(
  url: string,
  headers: PostOptions['headers'],
  message: unknown,
  timeoutMs: number,
  dispatcher?: Dispatcher,
): Promise<{ head: ResponseHead; body: BodyReader; deadline: Deadline }> {
  const started = performance.now();
  const { head, body } = await dispatchRequest(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(message),
    dispatcher,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const deadline = new Deadline(timeoutMs - (performance.now() - started), () =>
    body.destroy(Object.assign(new Error('request timed out'), { code: 'TIMEOUT' })),
  );
  return { head, body, deadline };
}

/**
 * The time left for a body. It stops while the read waits for memory (the budget's wait is onetap's, not the
 * server's, and undici's own body timeout stops too while the stream is paused); every read that holds memory
 * runs against its own deadline, so every wait ends.
 */
export class Deadline implements Clock {
  private timer: NodeJS.Timeout | null = null;
  private endsAt = 0;
  private left: number;
  private cleared = false;

  /** `now`: the clock it reads (the monotonic one; a test's fake timers give their own). */
  constructor(
    ms: number,
    private readonly expire: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.left = Math.max(0, ms);
    this.resume();
  }

  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.left = Math.max(0, this.endsAt - this.now());
  }

  resume(): void {
    if (this.timer || this.cleared) return;
    this.endsAt = this.now() + this.left;
    // Whole milliseconds: Node keeps one timer list per distinct duration, and fractions would make one per request.
    this.timer = setTimeout(this.expire, Math.ceil(this.left));
    this.timer.unref(); // a body that ended on an error path must not keep the process alive
  }

  clear(): void {
    this.cleared = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

function newExchange(step: StepName): LiveExchange {
  return {
    step,
    status: null,
    contentType: null,
    headers: NO_HEADERS,
    body: null,
    bodySnippet: null,
    response: null,
    problem: null,
    errorCode: null,
    error: null,
    durationMs: 0,
    app: undefined, // set by the app's reads: declared here so every exchange has one shape, its fields in-object
  };
}

/** Most answers keep no header: they share one empty, frozen record (a run keeps thousands of exchanges). */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function recordHead(exchange: LiveExchange, head: ResponseHead): void {
  exchange.status = head.statusCode;
  exchange.contentType = mediaType(head.headers['content-type']);
  for (const name of KEPT_HEADERS) {
    const value = headerValue(head.headers[name]);
    if (value === null) continue;
    if (exchange.headers === NO_HEADERS) exchange.headers = {};
    exchange.headers[name] = value;
  }
}

const GZIP = /^\s*(x-)?gzip\s*$/i;

export interface AppPostOptions extends PostOptions {
  /** Decode a gzip answer (Android's engine asks for gzip and un-gzips; nothing else is decoded). */
  gunzip: boolean;
}

export interface AppPostOutcome {
  exchange: LiveExchange;
  /** The object the app takes as the answer, or the app's error for this request. */
  decoded: Decoded<AppResponse> | null;
  /** `response.headers["Mcp-Session-Id"]` (the first value, as Ktor's `headers[name]`). */
  sessionId: string | null;
}

/**
 * POST as the app does: the whole body is read until it ends (Ktor's `bodyAsText()`), the status is never
 * checked, SSE is chosen by `Content-Type` containing `text/event-stream` and read line by line
 * (src/attest/app-reader.ts), anything else is decoded as one JSON-RPC object. `decoded` is null for a
 * notification, whose answer the app reads and ignores. Bounded: the signal bounds time, `maxBodyBytes`
 * the body; an SSE body costs one line of memory, a JSON body up to the cap.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function appPost(
  url: string,
  step: StepName,
  message: unknown,
  expectAnswer: boolean,
  opts: AppPostOptions,
): Promise<AppPostOutcome> {
  const started = performance.now();
  const exchange = newExchange(step);
  let decoded: Decoded<AppResponse> | null = null;
  let sessionId: string | null = null;
  try {
    const { head, body, deadline } = await timedPost(url, opts.headers, message, opts.timeoutMs, opts.dispatcher);
    recordHead(exchange, head);
    const first = head.headers['mcp-session-id'];
    sessionId = (Array.isArray(first) ? first[0] : first) ?? null;
    const rawType = headerValue(head.headers['content-type']);
    const source =
      opts.gunzip && GZIP.test(exchange.headers['content-encoding'] ?? '') ? decompress(body, 'gzip') : body;
    const sse = rawType?.includes('text/event-stream') === true;
    const held = new HeldBytes(opts.maxBodyBytes, opts.budget, deadline);
    let read: AppRead;
    try {
      read = await readForApp(source, sse, expectAnswer, opts.maxBodyBytes, held);
    } finally {
      held.release();
      deadline.clear();
    }
    exchange.app = sharedReading(read.reading);
    exchange.body = read.kind;
    // Keep the text of anything that is not a plain success (the policy and reports read it); a run of
    // thousands of probes keeps nothing for the rest.
    const plain =
      read.decoded?.ok === true &&
      read.decoded.value.kind === 'response' &&
      read.decoded.value.error === null &&
      head.statusCode < 300;
    const text = plain ? null : read.snippet();
    exchange.bodySnippet = text === null ? null : snippet(text);
    if (read.oversize) exchange.problem = 'oversize';
    // A body that timed out or broke is the app's failure, whatever it held so far (kept in `app`).
    if (read.failure !== null) throw read.failure;
    decoded = read.decoded;
  } catch (err) {
    exchange.errorCode = lowLevelCode(err);
    exchange.error = describeError(exchange.errorCode, err);
  }
  exchange.durationMs = Math.round(performance.now() - started);
  return { exchange, decoded, sessionId };
}

/** Readings are few in kind and a run keeps thousands of them: equal ones share one frozen record. */
const READINGS = new Map<string, AppReading>();

function sharedReading(r: AppReading): AppReading {
  const key = `${r.read}|${r.winner}|${r.winnerId}|${r.spacelessDataLines}|${r.undecodedDataLines}|${r.ended}|${r.stoppedEarly}|${r.validPrefix}`;
  const kept = READINGS.get(key);
  if (kept) return kept;
  if (READINGS.size < 1000) READINGS.set(key, Object.freeze(r));
  return r;
}

interface AppRead {
  kind: BodyKind;
  reading: AppReading;
  decoded: Decoded<AppResponse> | null;
  /** The body's text (or its start), for a snippet when the answer is not a plain success (decoded only then). */
  snippet: () => string | null;
  oversize: boolean;
  /** The body did not end well (time limit, reset): the reading so far is kept for the diagnosis. */
  failure: unknown;
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function readForApp(
  source: BodyReader,
  sse: boolean,
  expectAnswer: boolean,
  maxBytes: number,
  held: HeldBytes,
): Promise<AppRead> {
  const reading: AppReading = {
    read: sse ? 'sse' : 'json',
    winner: null,
    winnerId: null,
    spacelessDataLines: 0,
    undecodedDataLines: 0,
    ended: false,
    stoppedEarly: false,
    validPrefix: false,
  };
  let total = 0;
  let oversize = false;
  let failure: unknown = null;
  const fail = (err: unknown) => {
    failure = err;
    return true;
  };
  if (sse) {
    // The start of the body, for a snippet when the answer is not a plain success (views of the first chunks).
    const head: Buffer[] = [];
    let headBytes = 0;
    const reader = new AppSseReader(held);
    const stopped = await source
      .read((chunk) => {
        total += chunk.length;
        if (total > maxBytes) {
          oversize = true;
          return true;
        }
        if (headBytes < SNIPPET_CHARS) {
          head.push(chunk);
          headBytes += chunk.length;
        }
        return waitFor(reader.feed(chunk));
      })
      .catch(fail);
    // Over the cap the stream has not ended: its last line is unfinished, judged on its start only.
    if (oversize)
      reading.validPrefix = reader.winner !== null || isValidJsonPrefix(reader.pendingData(PREFIX_CHECK_BYTES) ?? '');
    else reader.end();
    reading.ended = !stopped;
    reading.spacelessDataLines = reader.spacelessDataLines;
    reading.undecodedDataLines = reader.undecodedDataLines;
    reading.winner = reader.winner?.kind ?? null;
    reading.winnerId = reader.winner?.id ?? null;
    const decoded: Decoded<AppResponse> = reader.winner
      ? { ok: true, value: reader.winner }
      : { ok: false, error: NO_SSE_RESPONSE };
    return {
      kind: 'sse',
      reading,
      decoded: expectAnswer ? decoded : null,
      snippet: () => Buffer.concat(head).toString('utf8', 0, SNIPPET_CHARS) || null,
      oversize,
      failure,
    };
  }
  let firstChar: string | null = null;
  const stopped = await source
    .read((chunk) => {
      total += chunk.length;
      if (total > maxBytes) {
        oversize = true;
        return true;
      }
      if (!expectAnswer) return false; // a notification's answer is waited for, never kept
      if (firstChar === null) {
        const at = chunk.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d);
        if (at >= 0) firstChar = String.fromCharCode(chunk[at]!);
        // Not an object in its first bytes: the app cannot decode it whatever follows.
        if (firstChar !== null && firstChar !== '{') {
          held.add(chunk);
          reading.stoppedEarly = true;
          return true;
        }
      }
      return waitFor(held.add(chunk));
    })
    .catch(fail);
  reading.ended = !stopped;
  if (!expectAnswer)
    return { kind: total === 0 ? 'empty' : 'other', reading, decoded: null, snippet: () => null, oversize, failure };
  if (oversize) {
    // Over the cap the app's outcome cannot be known; whether the body is still valid JSON so far is judged on its
    // first bytes (decoding megabytes to learn what their start already says would cost every hostile probe).
    const head = held.bytes().toString('utf8', 0, PREFIX_CHECK_BYTES);
    reading.validPrefix = isValidJsonPrefix(head);
    return { kind: 'json', reading, decoded: null, snippet: () => head || null, oversize, failure };
  }
  const text = held.bytes().toString('utf8');
  const decoded = decodeAppResponse(text);
  if (decoded.ok) {
    reading.winner = decoded.value.kind;
    reading.winnerId = decoded.value.id;
  }
  const kind: BodyKind = text.trim() === '' ? 'empty' : firstChar === '{' || firstChar === '[' ? 'json' : 'other';
  return { kind, reading, decoded, snippet: () => text || null, oversize, failure };
}

/** How much of an oversize body is read to tell "still valid JSON so far" (`review/oversize`) from "not JSON-RPC". */
const PREFIX_CHECK_BYTES = 64 * 1024;

/** True when `text` is the start of some valid JSON object (V8 reports the error at the very end). */
function isValidJsonPrefix(text: string): boolean {
  if (!text.trimStart().startsWith('{')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch (err) {
    const message = (err as Error).message;
    if (/end of JSON input/i.test(message)) return true;
    const at = /position (\d+)/.exec(message);
    return at !== null && Number(at[1]) >= text.length - 1;
  }
}

/** Ends a session politely; failures are ignored (many servers answer 405). */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function deleteSession(
  url: string,
  headers: Record<string, string>,
  sessionId: string,
  timeoutMs: number,
  dispatcher?: Dispatcher,
): Promise<void> {
  try {
    const res = await request(url, {
      method: 'DELETE',
      headers: { ...withoutContentType(headers), 'mcp-session-id': sessionId },
      signal: AbortSignal.timeout(timeoutMs),
      dispatcher,
    });
    await res.body.dump({ limit: 64 * 1024 });
  } catch {
    // ignored on purpose: ending a session is a courtesy, not part of the attestation
  }
}

function withoutContentType(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
}

/**
 * GET the URL as a legacy HTTP+SSE client would and return the type of the first SSE event, or null
 * (`endpoint` means the legacy transport). Reads at most 64 KiB; any failure is null.
 */
export async function firstSseEvent(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  dispatcher?: Dispatcher,
): Promise<string | null> {
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { ...withoutContentType(headers), accept: 'text/event-stream' },
      signal,
      dispatcher,
    });
    if (mediaType(res.headers['content-type']) !== 'text/event-stream') {
      await res.body.dump({ limit: 64 * 1024 });
      return null;
    }
    let first: string | null = null;
    const parser = createParser({
      onEvent: (e) => {
        first ??= e.event ?? 'message';
      },
    });
    const decoder = new TextDecoder();
    let total = 0;
    for await (const chunk of res.body) {
      total += chunk.length;
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (first !== null || total > 64 * 1024) break;
    }
    res.body.destroy();
    return first;
  } catch {
    return null;
  }
}

interface ReadResult {
  body: BodyKind;
  response: JsonRpcResponse | null;
  problem: BodyProblem | null;
  /** The start of the body as text (for SSE: of its first events). */
  text: string | null;
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function readResponse(
  body: BodyReader,
  contentType: string | null,
  encoding: string | undefined,
  id: number,
  maxBytes: number,
  quirks: Quirk[],
  held: HeldBytes,
): Promise<ReadResult> {
  const source = decompress(body, encoding);
  if (contentType === 'text/event-stream') return readSse(source, id, maxBytes, quirks, held);
  let total = 0;
  const oversize = await source.read((chunk) => {
    total += chunk.length;
    if (total > maxBytes) return true;
    return waitFor(held.add(chunk));
  });
  if (oversize)
    return {
      body: 'other',
      response: null,
      problem: 'oversize',
      text: snippet(held.bytes().toString('utf8', 0, SNIPPET_CHARS)),
    };
  const text = held.bytes().toString('utf8');
  if (text.trim() === '') return { body: 'empty', response: null, problem: 'not-jsonrpc', text: null };
  const looksJson = contentType === 'application/json' || contentType?.endsWith('+json') || /^\s*[[{]/.test(text);
  if (!looksJson) return { body: 'other', response: null, problem: 'not-jsonrpc', text: snippet(text) };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { body: 'json', response: null, problem: 'invalid-json', text: snippet(text) };
  }
  return { body: 'json', ...pickResponse(value, id, quirks), text: snippet(text) };
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function readSse(
  source: BodyReader,
  id: number,
  maxBytes: number,
  quirks: Quirk[],
  held: HeldBytes,
): Promise<ReadResult> {
  // What the parser may hold: the bytes since the last whole event.
  let sinceEvent = 0;
  let response: JsonRpcResponse | null = null;
  let problem: BodyProblem | null = null;
  let sawResponse = false;
  let otherMessages = 0;
  let dataWithoutSpace = false;
  const seen: string[] = [];
  const parser = createParser({
    onEvent(event) {
      sinceEvent = 0;
      if (response || problem) return;
      if (event.event === 'endpoint') {
        problem = 'endpoint-event';
        return;
      }
      if (event.data.trim() === '') return; // priming event or keep-alive
      if (seen.length < 4) seen.push(snippet(event.data, 256));
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        return;
      }
      const picked = pickResponse(value, id, quirks);
      if (picked.response) response = picked.response;
      else if (picked.problem === 'wrong-id') sawResponse = true;
      else otherMessages++;
    },
  });
  const decoder = new TextDecoder();
  let total = 0;
  // Stop as soon as the response arrives: some servers leave the stream open afterwards.
  await source.read((chunk) => {
    total += chunk.length;
    if (total > maxBytes) {
      problem = 'oversize';
      return true;
    }
    const text = decoder.decode(chunk, { stream: true });
    if (!dataWithoutSpace && /(?:^|[\r\n])data:[^ \r\n]/.test(text)) dataWithoutSpace = true;
    sinceEvent += chunk.length;
    parser.feed(text);
    if (response !== null || problem !== null) return true;
    return waitFor(held.reserve(sinceEvent));
  });
  if (dataWithoutSpace) quirks.push('sse-data-without-space');
  if (otherMessages > 0 && response) quirks.push('messages-before-response');
  const text = seen.length ? snippet(seen.join('\n')) : null;
  if (response) return { body: 'sse', response, problem: null, text };
  return {
    body: 'sse',
    response: null,
    problem: problem ?? (sawResponse ? 'wrong-id' : 'no-response-in-stream'),
    text,
  };
}

/** Finds the response to request `id` in a parsed body (one message or a batch array). */
function pickResponse(
  value: unknown,
  id: number,
  quirks: Quirk[],
): { response: JsonRpcResponse | null; problem: BodyProblem | null } {
  const messages = Array.isArray(value) ? value : [value];
  if (Array.isArray(value)) quirks.push('batch-response');
  let unmatchedError: JsonRpcResponse | null = null;
  let sawResponse = false;
  for (const m of messages) {
    if (!isResponse(m)) continue;
    sawResponse = true;
    if (m.id === id || String(m.id) === String(id)) return { response: m, problem: null };
    // Error answers the server could not tie to a request: null id, or Python SDK's "server-error".
    if (m.error && (m.id === null || m.id === 'server-error')) unmatchedError ??= m;
  }
  if (unmatchedError) {
    quirks.push('error-id-not-matching');
    return { response: unmatchedError, problem: null };
  }
  return { response: null, problem: sawResponse ? 'wrong-id' : 'not-jsonrpc' };
}

function isResponse(m: unknown): m is JsonRpcResponse {
  if (typeof m !== 'object' || m === null || !('id' in m)) return false;
  if ('result' in m) return true;
  const error = (m as { error?: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'number';
}

/** Keep reading (false), or first wait for the budget (see HeldBytes). */
function waitFor(pending: Promise<void> | null): false | Promise<boolean> {
  return pending ? pending.then(() => false) : false;
}

/** A notification's answer is not read; drain small bodies so the connection can be reused. */
async function discard(body: BodyReader, contentType: string | null): Promise<void> {
  if (contentType === 'text/event-stream') {
    body.destroy();
    return;
  }
  let total = 0;
  await body.read((chunk) => (total += chunk.length) > 64 * 1024);
}

/** The body as its `Content-Encoding` decodes (the raw body when none that onetap decodes). */
function decompress(body: BodyReader, encoding: string | undefined): BodyReader {
  const enc = encoding?.trim().toLowerCase();
  const decoder =
    enc === 'gzip' || enc === 'x-gzip'
      ? createGunzip()
      : enc === 'deflate'
        ? createInflate()
        : enc === 'br'
          ? createBrotliDecompress()
          : null;
  if (!decoder) return body;
  body
    .read((chunk) =>
      decoder.write(chunk) ? false : new Promise((resolve) => decoder.once('drain', () => resolve(false))),
    )
    .then(
      () => decoder.end(),
      (err) => decoder.destroy(err),
    );
  return streamReader(decoder, body);
}

/** The media types met every day, one string each however many answers carry them. */
const COMMON_MEDIA_TYPES = new Map(
  ['application/json', 'text/event-stream', 'text/html', 'text/plain'].map((t) => [t, t]),
);

export function mediaType(value: string | string[] | undefined): string | null {
  const v = headerValue(value);
  if (v === null) return null;
  const semi = v.indexOf(';');
  const type = (semi < 0 ? v : v.slice(0, semi)).trim().toLowerCase();
  return COMMON_MEDIA_TYPES.get(type) ?? (type || null);
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The start of a body, as its own string: a plain slice would keep the whole body alive (V8 slices share their
 * parent), and an observation outlives the read.
 */
function snippet(text: string, chars = SNIPPET_CHARS): string {
  return Buffer.from(text.length > chars ? text.slice(0, chars) : text, 'utf8').toString('utf8');
}

function lowLevelCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : 'ERROR';
  return TIMEOUT_CODES.has(code) ? 'TIMEOUT' : code;
}

function describeError(code: string, err: unknown): string {
  switch (code) {
    case 'TIMEOUT':
      return 'timed out';
    case 'ENOTFOUND':
      return 'DNS: host not found';
    case 'EAI_AGAIN':
      return 'DNS: temporary resolver failure';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed by the server';
  }
  if (isTlsCode(code)) return `TLS: ${code}`;
  const message = err instanceof Error ? err.message : String(err);
  return `${code}: ${message}`.slice(0, 200);
}
