/**
 * The app's reading of an MCP answer body (src/attest/app-reader.ts), pinned case by case. Every expectation comes
 * from docs/app-client.md §4 (the classic Kai 9000 client: §4.2 "Response parsing", "SSE path",
 * "DTO looseness", "Success/failure", and the consequences in §4.3), i.e. from the app's Kotlin:
 *   - JSON bodies: `decodeFromString<JsonRpcResponse>(body)`, with ignoreUnknownKeys; JsonRpcResponse(jsonrpc = "2.0",
 *     id: Int? = null, result: JsonElement? = null, error: JsonRpcError? = null), so any JSON object decodes, the id
 *     is never matched, and anything that is not one object (array batch, primitive, bad JSON) is an exception;
 *   - SSE bodies: `body.lines()` (split on CRLF, LF or CR only), keep lines starting with "data: " (space required),
 *     each alone `removePrefix("data: ").trim()`, empty skipped, the first that decodes wins; none →
 *     "No valid JSON-RPC response found in SSE stream"; multi-line data is not joined; event:/id:/comments ignored;
 *   - tools/list: `result` decoded as {tools: [{name, description?, inputSchema?}]} (`result == null` → no tools is
 *     decided by the app before decoding, so by the caller here, and is not tested in this file).
 * Field types and defaults (JsonRpcError(code: Int, message: String), McpToolsResult(tools = emptyList()),
 * McpToolDefinition(inputSchema: JsonObject?)) are those of the DTO file §4.1 cites (shibmaster/Lefty McpModels.kt).
 * `kind` is only the diagnosis' name for the JSON-RPC message type (response / notification / request), asserted
 * only where the message type is unambiguous. Error texts are asserted only where §4 gives the app's wording.
 * The SSE reader is fed every body whole, split at every byte position (inside multi-byte UTF-8 too), byte by byte,
 * and as string chunks: the outcome must not depend on how the body arrives.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AppSseReader,
  NO_SSE_RESPONSE,
  decodeAppObject,
  decodeAppResponse,
  decodeAppTools,
  type AppResponse,
} from '../../src/attest/app-reader.js';
import { readAsApp as read } from '../helpers.js';

type Kind = AppResponse['kind'];
interface Want {
  id: number | null;
  result: unknown;
  error: { code: number; message: string } | null;
  /** Asserted only when given (unambiguous JSON-RPC message types). */
  kind?: Kind;
}

/** The fields compared, as one string (a fast path for the thousands of deliveries below). */
function key(r: AppResponse | null, kind: boolean): string {
  return r === null ? 'null' : JSON.stringify([r.id, r.result, r.error, kind ? r.kind : '']);
}

function assertResponse(got: AppResponse | null, want: Want | null, msg: string): void {
  if (
    want !== null &&
    got !== null &&
    key(got, want.kind !== undefined) === key({ kind: 'other', ...want }, want.kind !== undefined)
  )
    return;
  if (want === null) {
    assert.equal(got, null, msg);
    return;
  }
  assert.ok(got !== null, `${msg}: expected an answer, got none`);
  assert.deepEqual(
    { id: got.id, result: got.result, error: got.error },
    { id: want.id, result: want.result, error: want.error },
    msg,
  );
  if (want.kind !== undefined) assert.equal(got.kind, want.kind, `${msg}: kind`);
}

const R1 = '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05"}}';
const W1: Want = { id: 1, result: { protocolVersion: '2024-11-05' }, error: null, kind: 'response' };
const R2 = '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}';
const W2: Want = { id: 2, result: { tools: [] }, error: null, kind: 'response' };
const NOTE = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}';
const EMPTY_OBJECT: Want = { id: null, result: null, error: null, kind: 'other' };

describe('NO_SSE_RESPONSE', () => {
  it("is the app's exact McpException text (§4.2 SSE path)", () => {
    assert.equal(NO_SSE_RESPONSE, 'No valid JSON-RPC response found in SSE stream');
  });
});

// ------------------------------------------------------------------------------------------------------------------
// decodeAppResponse / decodeAppObject: decodeFromString<JsonRpcResponse>, ignoreUnknownKeys, every field optional.

const decodes: Array<{ name: string; text: string; want: Want }> = [
  { name: 'a result response', text: R1, want: W1 },
  { name: 'the tools/list response', text: R2, want: W2 },
  { name: 'an empty object (every field optional)', text: '{}', want: EMPTY_OBJECT },
  {
    name: 'an object that is not JSON-RPC (unknown keys ignored)',
    text: '{"hello":"world","n":[1,2]}',
    want: EMPTY_OBJECT,
  },
  { name: 'a server notification', text: NOTE, want: { id: null, result: null, error: null, kind: 'notification' } },
  {
    name: 'a server request (its id is taken, not matched)',
    text: '{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{}}',
    want: { id: 7, result: null, error: null, kind: 'request' },
  },
  {
    name: 'an error response',
    text: '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
    want: { id: 1, result: null, error: { code: -32601, message: 'Method not found' }, kind: 'response' },
  },
  {
    name: 'an error response with error data (data not kept)',
    text: '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid request parameters","data":{"x":[1]}}}',
    want: { id: 2, result: null, error: { code: -32602, message: 'Invalid request parameters' }, kind: 'response' },
  },
  {
    name: 'an error with id null (SDK HTTP-level error body)',
    text: '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}',
    want: { id: null, result: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } },
  },
  {
    name: 'result and error both present: both kept',
    text: '{"jsonrpc":"2.0","id":3,"result":{"a":1},"error":{"code":5,"message":"m"}}',
    want: { id: 3, result: { a: 1 }, error: { code: 5, message: 'm' } },
  },
  {
    name: 'an unmatched id',
    text: '{"jsonrpc":"2.0","id":99,"result":{}}',
    want: { id: 99, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'id 0',
    text: '{"jsonrpc":"2.0","id":0,"result":{}}',
    want: { id: 0, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'a negative id',
    text: '{"jsonrpc":"2.0","id":-1,"result":{}}',
    want: { id: -1, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'id = Int.MAX_VALUE',
    text: '{"jsonrpc":"2.0","id":2147483647,"result":{}}',
    want: { id: 2147483647, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'id = Int.MIN_VALUE',
    text: '{"jsonrpc":"2.0","id":-2147483648,"result":{}}',
    want: { id: -2147483648, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'error code = Int.MIN_VALUE',
    text: '{"id":1,"error":{"code":-2147483648,"message":"x"}}',
    want: { id: 1, result: null, error: { code: -2147483648, message: 'x' } },
  },
  {
    name: 'an explicit null id',
    text: '{"jsonrpc":"2.0","id":null,"result":{}}',
    want: { id: null, result: {}, error: null },
  },
  {
    name: 'an explicit null result',
    text: '{"jsonrpc":"2.0","id":1,"result":null}',
    want: { id: 1, result: null, error: null },
  },
  {
    name: 'an explicit null error',
    text: '{"jsonrpc":"2.0","id":1,"result":{},"error":null}',
    want: { id: 1, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'no jsonrpc member',
    text: '{"id":4,"result":{"ok":true}}',
    want: { id: 4, result: { ok: true }, error: null },
  },
  {
    name: 'another jsonrpc version (not checked)',
    text: '{"jsonrpc":"1.0","id":4,"result":{}}',
    want: { id: 4, result: {}, error: null },
  },
  {
    name: 'an array result',
    text: '{"jsonrpc":"2.0","id":1,"result":[1,"a",null]}',
    want: { id: 1, result: [1, 'a', null], error: null, kind: 'response' },
  },
  {
    name: 'a string result',
    text: '{"jsonrpc":"2.0","id":1,"result":"s"}',
    want: { id: 1, result: 's', error: null, kind: 'response' },
  },
  {
    name: 'a zero result',
    text: '{"jsonrpc":"2.0","id":1,"result":0}',
    want: { id: 1, result: 0, error: null, kind: 'response' },
  },
  {
    name: 'a false result',
    text: '{"jsonrpc":"2.0","id":1,"result":false}',
    want: { id: 1, result: false, error: null, kind: 'response' },
  },
  {
    name: 'a nested result, kept whole',
    text: '{"jsonrpc":"2.0","id":1,"result":{"a":{"b":[{"c":"d"},2.5,true]},"e":"héllo ✓ 𝄞"}}',
    want: { id: 1, result: { a: { b: [{ c: 'd' }, 2.5, true] }, e: 'héllo ✓ 𝄞' }, error: null, kind: 'response' },
  },
  {
    name: 'unknown keys next to the known ones',
    text: '{"jsonrpc":"2.0","id":1,"result":{},"extra":{"a":[1]},"method2":"x"}',
    want: { id: 1, result: {}, error: null, kind: 'response' },
  },
  {
    name: 'JSON whitespace around the object',
    text: ' \n\t{"jsonrpc":"2.0","id":1,"result":{}}\r\n ',
    want: { id: 1, result: {}, error: null, kind: 'response' },
  },
];

const rejects: Array<{ name: string; text: string }> = [
  { name: 'an empty body', text: '' },
  { name: 'a whitespace body', text: ' \n ' },
  { name: 'an empty JSON array', text: '[]' },
  { name: 'a JSON array batch', text: `[${R1}]` },
  { name: 'a number', text: '42' },
  { name: 'a string', text: '"ok"' },
  { name: 'null', text: 'null' },
  { name: 'true', text: 'true' },
  { name: 'an HTML page', text: '<html><body>404 Not Found</body></html>' },
  { name: 'plain text', text: 'Bad Request: Unsupported protocol version' },
  { name: 'truncated JSON', text: '{"jsonrpc":"2.0","id":1,' },
  { name: 'one brace too many', text: `${R1}}` },
  { name: 'text after the object', text: '{} x' },
  { name: 'two objects', text: '{}{}' },
  { name: 'id above Int.MAX_VALUE', text: '{"jsonrpc":"2.0","id":2147483648,"result":{}}' },
  { name: 'id below Int.MIN_VALUE', text: '{"jsonrpc":"2.0","id":-2147483649,"result":{}}' },
  { name: 'a fractional id', text: '{"jsonrpc":"2.0","id":1.5,"result":{}}' },
  { name: 'a non-numeric string id', text: '{"jsonrpc":"2.0","id":"abc","result":{}}' },
  { name: 'an object id', text: '{"jsonrpc":"2.0","id":{},"result":{}}' },
  { name: 'an array id', text: '{"jsonrpc":"2.0","id":[1],"result":{}}' },
  { name: 'a string error', text: '{"jsonrpc":"2.0","id":1,"error":"boom"}' },
  { name: 'an empty error object', text: '{"jsonrpc":"2.0","id":1,"error":{}}' },
  { name: 'an error without message', text: '{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}' },
  { name: 'an error without code', text: '{"jsonrpc":"2.0","id":1,"error":{"message":"Method not found"}}' },
  {
    name: 'an error code above Int.MAX_VALUE',
    text: '{"jsonrpc":"2.0","id":1,"error":{"code":2147483648,"message":"m"}}',
  },
  { name: 'a fractional error code', text: '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}' },
];

function assertRejected(d: { ok: boolean; error?: string }, msg: string): void {
  assert.equal(d.ok, false, msg);
  assert.equal(typeof d.error, 'string', `${msg}: error text`);
  assert.ok((d.error ?? '').length > 0, `${msg}: error text not empty`);
}

function parsed(text: string): { value: unknown } | null {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return null;
  }
}

describe('decodeAppResponse: the JSON body path (decodeFromString<JsonRpcResponse>)', () => {
  for (const c of decodes) {
    it(`decodes ${c.name}`, () => {
      const d = decodeAppResponse(c.text);
      assert.ok(d.ok, `${c.name}: ${d.ok ? '' : d.error}`);
      assertResponse(d.value, c.want, c.name);
    });
  }
  for (const c of rejects) {
    it(`rejects ${c.name}`, () => {
      assertRejected(decodeAppResponse(c.text), c.name);
    });
  }
});

describe('decodeAppObject: the same DTO rules on a parsed value', () => {
  it('agrees with the JSON body path on every decodable case', () => {
    for (const c of decodes) {
      const p = parsed(c.text);
      assert.ok(p, c.name);
      const d = decodeAppObject(p.value);
      assert.ok(d.ok, `${c.name}: ${d.ok ? '' : d.error}`);
      assertResponse(d.value, c.want, c.name);
    }
  });
  it('rejects every parseable case the JSON body path rejects', () => {
    let n = 0;
    for (const c of rejects) {
      const p = parsed(c.text);
      if (p === null) continue;
      n++;
      assertRejected(decodeAppObject(p.value), c.name);
    }
    assert.ok(n >= 18, 'most rejected cases are valid JSON');
  });
});

// ------------------------------------------------------------------------------------------------------------------
// AppSseReader: body.lines().filter { startsWith("data: ") }, removePrefix + trim, empty skipped, first decode wins.

interface SseCase {
  name: string;
  body: string;
  want: Want | null;
  /** `data:` lines without the space (ignored by the app), counted; asserted only where no line follows the answer. */
  spaceless?: number;
  /** non-empty `data: ` lines that do not decode on their own; same condition. */
  undecoded?: number;
}

const sse: SseCase[] = [
  {
    name: 'one event (event: message + data: + blank line)',
    body: `event: message\ndata: ${R1}\n\n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  { name: 'a bare data line', body: `data: ${R1}\n`, want: W1, spaceless: 0, undecoded: 0 },
  {
    name: 'the last line without a line end (read to the end of the body)',
    body: `event: message\ndata: ${R1}`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  { name: 'CRLF line ends', body: `event: message\r\ndata: ${R1}\r\n\r\n`, want: W1, spaceless: 0, undecoded: 0 },
  {
    name: 'CR line ends',
    body: `: ping\revent: message\rid: 1\rdata: ${R1}\r\r`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  {
    name: 'mixed line ends',
    body: `: a\r\nevent: message\rid: 9\ndata: ${R1}\r\n\n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  {
    name: 'data: without the space is ignored',
    body: `event: message\ndata:${R1}\n\n`,
    want: null,
    spaceless: 1,
    undecoded: 0,
  },
  {
    name: 'data: without the space, then with it',
    body: `data:${R1}\n\ndata: ${R2}\n\n`,
    want: W2,
    spaceless: 1,
    undecoded: 0,
  },
  { name: 'data: followed by a tab is not "data: "', body: `data:\t${R1}\n`, want: null, spaceless: 1, undecoded: 0 },
  {
    name: 'extra spaces after "data: " are trimmed',
    body: `data:    ${R1}   \n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  {
    name: 'tabs and spaces around the data are trimmed',
    body: `data: \t ${R1} \t\r\n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  {
    name: "whitespace that JSON does not allow (VT, FF, NBSP, EM SPACE) is trimmed too (Kotlin's trim)",
    body: `data: \u00A0\u000B${R1}\f\u2003\u000B\n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  {
    // Kotlin's Char.isWhitespace is Java's Character.isWhitespace (which has U+001C-U+001F) or isSpaceChar.
    name: "the information separators U+001C-U+001F are whitespace to Kotlin's trim",
    body: `data: \u001C${R1}\u001F\u001E\u001D\n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
  {
    // U+FEFF is a format character, not whitespace: Kotlin keeps it, and kotlinx refuses a body that starts with it.
    name: 'a BOM after "data: " stays, so the line does not decode',
    body: `data: \uFEFF${R1}\n`,
    want: null,
    spaceless: 0,
    undecoded: 1,
  },
  { name: 'the prefix is case-sensitive', body: `Data: ${R1}\nDATA: ${R1}\n`, want: null, spaceless: 0, undecoded: 0 },
  {
    name: 'a line must start with the prefix',
    body: ` data: ${R1}\nid: data: ${R1}\nxdata: ${R1}\n`,
    want: null,
    spaceless: 0,
    undecoded: 0,
  },
  { name: 'the prefix is removed once', body: `data: data: ${R1}\n`, want: null, spaceless: 0, undecoded: 1 },
  {
    name: 'comments, event:, id:, retry: and empty data lines are skipped',
    body: `: keepalive\n\nid: 0\nretry: 1000\ndata: \n\n:\nevent: endpoint\n\ndata:    \n\nevent: message\nid: 1\ndata: ${R1}\n\n`,
    want: W1,
  },
  {
    name: 'short lines and a bare "data:" before the answer',
    body: `d\nda\ndat\ndata\ndata:\ndata: \n\ndata: ${R1}\n`,
    want: W1,
  },
  {
    name: 'JSON split over two data lines is not joined',
    body: 'event: message\ndata: {"jsonrpc":"2.0",\ndata: "id":1,"result":{}}\n\n',
    want: null,
    spaceless: 0,
    undecoded: 2,
  },
  {
    name: 'JSON split over two data lines, then a whole one',
    body: `data: {"jsonrpc":"2.0",\ndata: "id":1,"result":{}}\n\ndata: ${R2}\n\n`,
    want: W2,
    spaceless: 0,
    undecoded: 2,
  },
  {
    name: 'two data lines in one event that each decode: the first line alone wins',
    body: `event: message\ndata: ${R1}\ndata: ${R2}\n\n`,
    want: W1,
  },
  {
    name: 'a notification before the response is taken as the answer',
    body: `event: message\ndata: ${NOTE}\n\nevent: message\ndata: ${R1}\n\n`,
    want: { id: null, result: null, error: null, kind: 'notification' },
  },
  {
    name: 'a server request before the response is taken as the answer',
    body: `data: {"jsonrpc":"2.0","id":7,"method":"roots/list"}\n\ndata: ${R1}\n\n`,
    want: { id: 7, result: null, error: null, kind: 'request' },
  },
  {
    name: 'an unmatched id is taken',
    body: 'data: {"jsonrpc":"2.0","id":99,"result":{"tools":[]}}\n\n',
    want: { id: 99, result: { tools: [] }, error: null, kind: 'response' },
    spaceless: 0,
    undecoded: 0,
  },
  {
    name: 'an error response is the answer',
    body: 'event: message\ndata: {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}\n\n',
    want: { id: 1, result: null, error: { code: -32601, message: 'Method not found' }, kind: 'response' },
    spaceless: 0,
    undecoded: 0,
  },
  { name: 'a JSON array batch does not decode', body: `data: [${R1}]\n\n`, want: null, spaceless: 0, undecoded: 1 },
  {
    name: 'a JSON array batch, then a response',
    body: `data: [${R1}]\n\ndata: ${R2}\n\n`,
    want: W2,
    spaceless: 0,
    undecoded: 1,
  },
  {
    name: 'invalid JSON does not decode',
    body: 'data: {"jsonrpc":"2.0","id":1,\n\ndata: <html>\n\ndata: not json\n\n',
    want: null,
    spaceless: 0,
    undecoded: 3,
  },
  {
    name: 'one brace too many does not decode',
    body: `data: ${R1}}\n\ndata: ${R2}\n`,
    want: W2,
    spaceless: 0,
    undecoded: 1,
  },
  {
    name: 'JSON primitives do not decode',
    body: `data: 42\ndata: "x"\ndata: null\ndata: true\ndata: ${R1}\n`,
    want: W1,
    spaceless: 0,
    undecoded: 4,
  },
  {
    name: 'an object that is not JSON-RPC is taken',
    body: `data: {"hello":"world"}\n\ndata: ${R1}\n\n`,
    want: EMPTY_OBJECT,
  },
  { name: 'an empty object is taken', body: `data: {}\n\ndata: ${R1}\n\n`, want: EMPTY_OBJECT },
  {
    name: 'an id out of Int range does not decode',
    body: `data: {"jsonrpc":"2.0","id":2147483648,"result":{}}\ndata: ${R1}\n`,
    want: W1,
    spaceless: 0,
    undecoded: 1,
  },
  {
    name: 'an error without message does not decode',
    body: `data: {"jsonrpc":"2.0","id":1,"error":{"code":-32601}}\ndata: ${R1}\n`,
    want: W1,
    spaceless: 0,
    undecoded: 1,
  },
  {
    name: 'a CR inside the JSON ends the line',
    body: 'data: {"jsonrpc":"2.0",\r"id":1,"result":{}}\n\n',
    want: null,
    spaceless: 0,
    undecoded: 1,
  },
  {
    name: 'an LF inside the JSON ends the line',
    body: 'data: {"jsonrpc":"2.0",\n"id":1,"result":{}}\n\n',
    want: null,
    spaceless: 0,
    undecoded: 1,
  },
  { name: 'U+2028 does not end a line', body: `: note\u2028data: ${R1}\n`, want: null, spaceless: 0, undecoded: 0 },
  { name: 'U+0085 does not end a line', body: `: note\u0085data: ${R1}\n`, want: null, spaceless: 0, undecoded: 0 },
  { name: 'a form feed does not end a line', body: `: note\fdata: ${R1}\n`, want: null, spaceless: 0, undecoded: 0 },
  { name: 'an empty body', body: '', want: null, spaceless: 0, undecoded: 0 },
  { name: 'only blank lines', body: '\n\r\n\r\n', want: null, spaceless: 0, undecoded: 0 },
  { name: 'only comments and a priming event', body: ': hello\n\nid: abc\ndata: \n\n: keepalive\n\n', want: null },
  {
    name: 'multi-byte UTF-8 in the answer and around it',
    body: `: é ✓ 日本 😀\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"text":"héllo ✓ 日本 𝄞 😀"}}\r\n\r\n`,
    want: { id: 1, result: { text: 'héllo ✓ 日本 𝄞 😀' }, error: null, kind: 'response' },
    spaceless: 0,
    undecoded: 0,
  },
  {
    name: 'multi-byte UTF-8 in data that does not decode, then the answer',
    body: `data: {"ü":"✓"\ndata: ${R1}\n`,
    want: W1,
    spaceless: 0,
    undecoded: 1,
  },
  {
    name: 'the first answer stays when more follow',
    body: `data: ${R1}\ndata: ${R2}\ndata: [garbage\ndata:{}\n`,
    want: W1,
  },
  {
    name: 'a long comment line before the answer',
    body: `: ${'x'.repeat(120)}\ndata: ${R1}\n`,
    want: W1,
    spaceless: 0,
    undecoded: 0,
  },
];

/** Ways a body can arrive: whole (string and Buffer), in two at every byte, byte by byte, code point by code point. */
function deliveries(body: string): Array<[string, Array<Buffer | string>]> {
  const bytes = Buffer.from(body, 'utf8');
  const out: Array<[string, Array<Buffer | string>]> = [
    ['whole string', [body]],
    ['whole Buffer', [bytes]],
    ['byte by byte', [...bytes].map((b) => Buffer.from([b]))],
    ['code point strings', [...body]],
  ];
  for (let i = 0; i <= bytes.length; i++) out.push([`split at byte ${i}`, [bytes.subarray(0, i), bytes.subarray(i)]]);
  return out;
}

describe('AppSseReader: the SSE path, however the body arrives', () => {
  for (const c of sse) {
    it(c.name, async () => {
      for (const [how, chunks] of deliveries(c.body)) {
        const r = await read(chunks);
        const msg = `${c.name} (${how})`;
        assertResponse(r.winner, c.want, msg);
        if (c.spaceless !== undefined && r.spacelessDataLines !== c.spaceless) {
          assert.equal(r.spacelessDataLines, c.spaceless, `${msg}: data: lines without the space`);
        }
        if (c.undecoded !== undefined && r.undecodedDataLines !== c.undecoded) {
          assert.equal(r.undecodedDataLines, c.undecoded, `${msg}: data: lines that do not decode`);
        }
      }
    });
  }

  it('splits in three at every pair of byte positions of a body with CRLF, 2- and 4-byte UTF-8', async () => {
    const body = `data:x\r\ndata: {"id":3,"result":"é𝄞"}\r\n`;
    const bytes = Buffer.from(body, 'utf8');
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j++) {
        const r = await read([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
        assertResponse(r.winner, { id: 3, result: 'é𝄞', error: null }, `split at ${i}, ${j}`);
        assert.equal(r.spacelessDataLines, 1, `split at ${i}, ${j}: data: lines without the space`);
        assert.equal(r.undecodedDataLines, 0, `split at ${i}, ${j}: data: lines that do not decode`);
      }
    }
  });

  it('a data line is judged whole: a chunk that ends in valid JSON is not yet the answer', async () => {
    const r = new AppSseReader();
    for (const chunk of [`data: ${R1}`, '}', '\n', `data: ${R2}`, '\n']) {
      const wait = r.feed(chunk);
      if (wait !== null) await wait;
    }
    r.end();
    assertResponse(r.winner, W2, 'the line with the extra brace does not decode; the next one wins');
  });

  it('chunks of a line separated from the next by a CR are not merged with it', async () => {
    const r = await read(['data: {"jsonrpc":"2.0",\r', '"id":1,"result":{}}\n', `data: ${R2}\r`]);
    assertResponse(r.winner, W2, 'CR then the rest of the JSON on a new line');
  });

  it('a CR at the end of one chunk and an LF at the start of the next make one line end', async () => {
    const r = await read([`data: ${R1}\r`, `\ndata: ${R2}\r\n`]);
    assertResponse(r.winner, W1, 'CRLF across chunks');
  });

  it('readers are independent', async () => {
    const a = await read([`data: ${R1}\n`]);
    const b = await read([`data: ${R2}\n`]);
    assertResponse(a.winner, W1, 'first reader');
    assertResponse(b.winner, W2, 'second reader');
  });
});

// ------------------------------------------------------------------------------------------------------------------
// decodeAppTools: decodeFromJsonElement<McpToolsResult>(result).tools (the app returns no tools before this when
// result == null, so that case belongs to the caller and is not tested here).

const toolCases: Array<{
  name: string;
  result: unknown;
  want: Array<{ name: string; description: string | null; inputSchema: Record<string, unknown> | null }>;
}> = [
  { name: 'a result without tools (tools defaults to empty)', result: {}, want: [] },
  { name: 'a result with only other keys', result: { nextCursor: 'abc', _meta: {} }, want: [] },
  { name: 'an empty list', result: { tools: [] }, want: [] },
  {
    name: 'a full tool',
    result: {
      tools: [
        {
          name: 'search',
          description: 'Search the web',
          inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        },
      ],
    },
    want: [
      {
        name: 'search',
        description: 'Search the web',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      },
    ],
  },
  {
    name: 'a tool with only a name',
    result: { tools: [{ name: 'ping' }] },
    want: [{ name: 'ping', description: null, inputSchema: null }],
  },
  {
    name: 'explicit null description and inputSchema',
    result: { tools: [{ name: 'a', description: null, inputSchema: null }] },
    want: [{ name: 'a', description: null, inputSchema: null }],
  },
  {
    name: 'an empty description and an empty schema',
    result: { tools: [{ name: 'a', description: '', inputSchema: {} }] },
    want: [{ name: 'a', description: '', inputSchema: {} }],
  },
  {
    name: 'unknown keys of the tool and of the result are ignored',
    result: {
      tools: [
        { name: 'a', title: 'A', annotations: { readOnlyHint: true }, outputSchema: { type: 'object' }, _meta: {} },
      ],
      nextCursor: 'n',
    },
    want: [{ name: 'a', description: null, inputSchema: null }],
  },
  {
    name: 'several tools, in order',
    result: {
      tools: [
        { name: 'b', description: 'second letter' },
        { name: 'a' },
        { name: 'c', inputSchema: { type: 'object' } },
      ],
    },
    want: [
      { name: 'b', description: 'second letter', inputSchema: null },
      { name: 'a', description: null, inputSchema: null },
      { name: 'c', description: null, inputSchema: { type: 'object' } },
    ],
  },
  {
    name: 'multi-byte text kept',
    result: { tools: [{ name: 'météo', description: '天气 ✓ 😀' }] },
    want: [{ name: 'météo', description: '天气 ✓ 😀', inputSchema: null }],
  },
];

const toolRejects: Array<{ name: string; result: unknown }> = [
  { name: 'a tool without a name', result: { tools: [{ description: 'no name', inputSchema: { type: 'object' } }] } },
  {
    name: 'one nameless tool among named ones (the whole list fails)',
    result: { tools: [{ name: 'a' }, { description: 'x' }, { name: 'c' }] },
  },
  { name: 'a string inputSchema', result: { tools: [{ name: 'a', inputSchema: 'object' }] } },
  { name: 'an array inputSchema', result: { tools: [{ name: 'a', inputSchema: [] }] } },
  { name: 'a number inputSchema', result: { tools: [{ name: 'a', inputSchema: 1 }] } },
  { name: 'a boolean inputSchema', result: { tools: [{ name: 'a', inputSchema: true }] } },
  { name: 'a tool that is a string', result: { tools: ['search'] } },
  { name: 'a tool that is null', result: { tools: [null] } },
  { name: 'tools as an object', result: { tools: { search: { name: 'search' } } } },
  { name: 'tools as a string', result: { tools: 'search' } },
  { name: 'a result that is an array', result: [{ name: 'a' }] },
  { name: 'a result that is a string', result: 'tools' },
  { name: 'a result that is a number', result: 0 },
];

describe('decodeAppTools: the tools/list result as the app decodes it', () => {
  for (const c of toolCases) {
    it(`decodes ${c.name}`, () => {
      const d = decodeAppTools(c.result);
      assert.ok(d.ok, `${c.name}: ${d.ok ? '' : d.error}`);
      assert.deepEqual(d.value, c.want, c.name);
    });
  }
  for (const c of toolRejects) {
    it(`rejects ${c.name}`, () => {
      assertRejected(decodeAppTools(c.result), c.name);
    });
  }
});
