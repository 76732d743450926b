/**
 * How the app reads a response body, as its code does (pure; docs/app-client.md §4.2):
 * kotlinx `Json { ignoreUnknownKeys; isLenient }` decoding into
 *   JsonRpcResponse(jsonrpc: String = "2.0", id: Int? = null, result: JsonElement? = null, error: JsonRpcError? = null)
 *   JsonRpcError(code: Int, message: String, data: JsonElement? = null)
 *   McpToolsResult(tools: List<McpToolDefinition> = emptyList())
 *   McpToolDefinition(name: String, description: String? = null, inputSchema: JsonObject? = null)
 * and, for `text/event-stream`, `body.lines().filter { it.startsWith("data: ") }`, each line alone,
 * `removePrefix("data: ").trim()`, empty skipped, the first line that decodes wins (ids are not matched).
 * Error texts follow kotlinx's wording as closely as it can be reproduced.
 */
import { HeldBytes } from './budget.js';
import { isObject } from '../util/json.js';

export interface AppResponse {
  id: number | null;
  /** The `result` element; null when absent or JSON null (the app's `result == null`). */
  result: unknown;
  error: { code: number; message: string } | null;
  /** What the winning object was, for the diagnosis: the app does not look. */
  kind: 'response' | 'notification' | 'request' | 'other';
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const SERIAL = 'com.inspiredandroid.kai.mcp';

/** kotlinx accepts a number, or (lenient and not) a quoted number, for an Int field. */
function asInt(value: unknown): number | null {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
  return Number.isInteger(n) && n >= INT_MIN && n <= INT_MAX ? n : null;
}

/** Lenient kotlinx takes any primitive for a String field; null and structures fail. */
const isLenientString = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function missing(field: string, type: string, path: string): string {
  return `Field '${field}' is required for type with serial name '${SERIAL}.${type}', but it was missing at path: ${path}`;
}

const WHITESPACE = /\s/;

/**
 * Where the first non-whitespace character is (as `search(/\S/)`), or -1 (a loop: this runs for every answer decoded).
 */
function firstToken(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!(c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c > 0x7f && WHITESPACE.test(text[i]!)))) return i;
  }
  return -1;
}

function tokenName(text: string): string {
  const at = firstToken(text);
  return at < 0 ? 'EOF' : text[at]!;
}

/** `json.decodeFromString(JsonRpcResponse.serializer(), text)` */
export function decodeAppResponse(text: string): Decoded<AppResponse> {
  const start = tokenName(text);
  if (start !== '{') {
    return {
      ok: false,
      error: `Unexpected JSON token at offset ${Math.max(0, firstToken(text))}: Expected start of the object '{', but had '${start}' instead at path: $`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `Unexpected JSON token: ${(err as Error).message}` };
  }
  return decodeAppObject(value);
}

/** The DTO rules applied to a parsed value. */
export function decodeAppObject(value: unknown): Decoded<AppResponse> {
  if (!isObject(value)) return { ok: false, error: `Expected start of the object '{' at path: $` };
  if ('jsonrpc' in value && !isLenientString(value.jsonrpc))
    return { ok: false, error: `Expected string literal for 'jsonrpc' at path: $.jsonrpc` };
  let id: number | null = null;
  if (value.id !== undefined && value.id !== null) {
    id = asInt(value.id);
    if (id === null)
      return {
        ok: false,
        error: `Failed to parse type 'int' for input '${String(JSON.stringify(value.id)).slice(0, 60)}' at path: $.id`,
      };
  }
  let error: AppResponse['error'] = null;
  if (value.error !== undefined && value.error !== null) {
    const e = value.error;
    if (!isObject(e)) return { ok: false, error: `Expected start of the object '{' at path: $.error` };
    if (e.code === undefined) return { ok: false, error: missing('code', 'JsonRpcError', '$.error') };
    if (e.message === undefined) return { ok: false, error: missing('message', 'JsonRpcError', '$.error') };
    const code = asInt(e.code);
    if (code === null) return { ok: false, error: `Failed to parse type 'int' at path: $.error.code` };
    if (!isLenientString(e.message)) return { ok: false, error: `Expected string literal at path: $.error.message` };
    error = { code, message: String(e.message) };
  }
  const result = value.result === undefined ? null : value.result;
  const kind: AppResponse['kind'] =
    'result' in value || value.error !== undefined
      ? 'response'
      : typeof value.method === 'string'
        ? value.id === undefined || value.id === null
          ? 'notification'
          : 'request'
        : 'other';
  return { ok: true, value: { id, result, error, kind } };
}

export interface AppTool {
  name: string;
  description: string | null;
  inputSchema: Record<string, unknown> | null;
}

/** `json.decodeFromJsonElement<McpToolsResult>(result).tools` (the tree decoder, lenient). */
export function decodeAppTools(result: unknown): Decoded<AppTool[]> {
  if (!isObject(result))
    return { ok: false, error: `Expected JsonObject as the serialized body of ${SERIAL}.McpToolsResult at path: $` };
  if (result.tools === undefined) return { ok: true, value: [] };
  if (!Array.isArray(result.tools)) return { ok: false, error: `Expected JsonArray at path: $.tools` };
  const tools: AppTool[] = [];
  for (const [i, t] of result.tools.entries()) {
    const path = `$.tools[${i}]`;
    if (!isObject(t)) return { ok: false, error: `Expected JsonObject at path: ${path}` };
    if (t.name === undefined) return { ok: false, error: missing('name', 'McpToolDefinition', path) };
    if (!isLenientString(t.name)) return { ok: false, error: `Expected string literal at path: ${path}.name` };
    if (t.description !== undefined && t.description !== null && !isLenientString(t.description))
      return { ok: false, error: `Expected string literal at path: ${path}.description` };
    if (t.inputSchema !== undefined && t.inputSchema !== null && !isObject(t.inputSchema))
      return { ok: false, error: `Expected JsonObject at path: ${path}.inputSchema` };
    tools.push({
      name: String(t.name),
      description: t.description == null ? null : String(t.description),
      inputSchema: (t.inputSchema as Record<string, unknown> | undefined) ?? null,
    });
  }
  return { ok: true, value: tools };
}

export const NO_SSE_RESPONSE = 'No valid JSON-RPC response found in SSE stream';

const LF = 0x0a;
const CR = 0x0d;
const DATA = Buffer.from('data:');

/** The line starts with `data:` (compared byte by byte: this runs for every line of every SSE answer). */
function startsWithData(bytes: Uint8Array, start = 0, end = bytes.length): boolean {
  if (end - start < DATA.length) return false;
  for (let i = 0; i < DATA.length; i++) if (bytes[start + i] !== DATA[i]) return false;
  return true;
}

/**
 * Kotlin's `String.trim()`: what `Char.isWhitespace` is on the JVM (`Character.isWhitespace || isSpaceChar`):
 * tab to carriage return, U+001C to U+001F, and every space and line or paragraph separator. Not JavaScript's
 * `trim()`, which keeps U+001C to U+001F and removes a BOM (U+FEFF), which Kotlin keeps (and kotlinx then refuses).
 */
const KOTLIN_WHITESPACE = /[\t-\r\x1c-\x1f\p{Zs}\p{Zl}\p{Zp}]/u;
export function kotlinTrim(text: string): string {
  // Index loops, not one regular expression: `\s+$` backtracks quadratically over a long line of inner spaces.
  let start = 0;
  let end = text.length;
  while (start < end && KOTLIN_WHITESPACE.test(text[start]!)) start++;
  while (end > start && KOTLIN_WHITESPACE.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/**
 * The app's SSE reading, fed incrementally so that a long stream holds no more than the `data:` line not yet
 * ended: lines split on CRLF, LF or CR (Kotlin's `lines()`; on bytes, as no UTF-8 sequence contains them), the
 * first `data: ` line that decodes wins. Lines are decoded one by one, as Java's UTF-8 decoder would (a BOM
 * stays). Also counts what the app skips, for the diagnosis (`data:` without the space, data lines that do not
 * decode on their own). The line not yet ended lives in `held`, so a caller can bound it across reads.
 */
export class AppSseReader {
  winner: AppResponse | null = null;
  /** Lines starting with `data:` but not `data: ` (the app ignores them). */
  spacelessDataLines = 0;
  /** `data: ` lines that did not decode on their own (multi-line JSON, garbage). */
  undecodedDataLines = 0;
  private pendingCr = false;
  /** What the line not yet ended is, once its first five bytes are known; only a `data:` line is kept. */
  private pending: 'unknown' | 'data' | 'other' = 'unknown';

  constructor(private readonly held: HeldBytes = new HeldBytes(Infinity)) {}

  /** The data of a `data: ` line not yet ended (its first `max` bytes, decoded), or null. */
  pendingData(max: number): string | null {
    if (this.winner !== null || this.pending !== 'data' || this.held.length < 6) return null;
    const line = this.held.bytes();
    return line[5] === 0x20 ? line.toString('utf8', 6, 6 + max) : null;
  }

  /** Bytes held for a line not yet ended. */
  get buffered(): number {
    return this.held.length;
  }

  /** Reads a chunk; a promise when the line not yet ended must wait for memory (see HeldBytes). */
  feed(chunk: Buffer | string): Promise<void> | null {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    if (this.pendingCr && bytes[0] === LF) start = 1; // the LF of a CRLF split across chunks
    this.pendingCr = false;
    // The next LF and the next CR, each searched again only once passed (a body without CR is scanned once).
    let lf = bytes.indexOf(LF, start);
    let cr = bytes.indexOf(CR, start);
    for (;;) {
      if (lf >= 0 && lf < start) lf = bytes.indexOf(LF, start);
      if (cr >= 0 && cr < start) cr = bytes.indexOf(CR, start);
      const i = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (i < 0) break;
      this.endLine(bytes, start, i);
      let next = i + 1;
      if (bytes[i] === CR) {
        if (i === bytes.length - 1) this.pendingCr = true;
        else if (bytes[next] === LF) next++;
      }
      start = next;
    }
    if (start === bytes.length || this.winner !== null) return null;
    const rest = bytes.subarray(start);
    if (this.pending === 'unknown' && this.held.length + rest.length >= DATA.length) {
      this.pending = startsWithData(Buffer.concat([this.held.bytes(), rest.subarray(0, DATA.length)]))
        ? 'data'
        : 'other';
    }
    if (this.pending === 'other') {
      this.held.clear();
      return null;
    }
    return this.held.add(rest);
  }

  end(): void {
    if (this.held.length > 0) this.endLine(Buffer.alloc(0), 0, 0);
  }

  /** The line ending at `end` in `bytes` (after what is held) is complete. */
  private endLine(bytes: Buffer, start: number, end: number): void {
    const pending = this.pending;
    this.pending = 'unknown';
    if (this.winner !== null || pending === 'other') return;
    if (this.held.length === 0) {
      this.line(bytes, start, end);
      return;
    }
    const line = Buffer.concat([this.held.bytes(), bytes.subarray(start, end)]);
    this.held.clear();
    this.line(line, 0, line.length);
  }

  private line(bytes: Buffer, start: number, end: number): void {
    if (!startsWithData(bytes, start, end)) return;
    if (bytes[start + 5] !== 0x20) {
      if (kotlinTrim(bytes.toString('utf8', start + 5, end)) !== '') this.spacelessDataLines++;
      return;
    }
    const data = kotlinTrim(bytes.toString('utf8', start + 6, end));
    if (data === '') return;
    const decoded = decodeAppResponse(data);
    if (decoded.ok) this.winner = decoded.value;
    else this.undecodedDataLines++;
  }
}
