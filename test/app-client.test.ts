/**
 * The verdict is what the app will see. One case per behaviour of the app's client (docs/app-client.md
 * §4.2, from McpClient.kt and McpModels.kt) and per §4.3 consequence. Each expectation is written from the
 * app's code, quoted in the test name, not computed by the prober: where the app fails, the spec-correct
 * diagnosis explains why (a review reason naming the trip), and `appError` carries the app's own words.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe, type ProbeOptions, type ProbeResult } from '../src/index.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet();
});
after(async () => {
  await fleet.close();
});

const fast: ProbeOptions = { timeoutMs: 2_000, retryDelayMs: 10 };
const run = (scenario: string, opts: ProbeOptions = {}) => probe(fleet.url(scenario), { ...fast, ...opts });
const is = (r: ProbeResult, verdict: string) =>
  assert.equal(`${r.verdict}/${r.reason}`, verdict, `${r.url}: ${r.error} | app: ${r.appError}`);

describe('what the app reads: live', () => {
  it('HTTP status is never checked: a valid result inside HTTP 500 is live (quirk http-error-status)', async () => {
    const r = await run('http-500-result');
    is(r, 'live/ok');
    assert.ok(r.quirks.includes('http-error-status'));
  });
  it('a session id from initialize is sent on the next requests; no DELETE is ever sent', async () => {
    const r = await run('session-required');
    is(r, 'live/ok');
    assert.equal(r.sessionId, true);
    assert.equal(fleet.hits('session-required').DELETE, 0);
  });
  for (const s of ['notification-200-empty', 'notification-200-object', 'notification-204', 'notification-406']) {
    it(`the notification's answer is read and ignored (${s})`, async () => is(await run(s), 'live/ok'));
  }
  it("Android asks for gzip and un-gzips (quirk gzip-response: desktop's CIO asks for none)", async () => {
    const r = await run('gzip');
    is(r, 'live/ok');
    assert.ok(r.quirks.includes('gzip-response'));
  });
  it('no cursor: only page 1 of tools is listed (quirk tools-paginated)', async () => {
    const r = await run('paginated');
    is(r, 'live/ok');
    assert.deepEqual(r.tools, ['t0']);
    assert.ok(r.quirks.includes('tools-paginated'));
  });
  it('a 1 MiB body with "jsonrpc" last decodes (unknown keys ignored, order free)', async () => {
    const r = await run('jsonrpc-last-large');
    is(r, 'live/ok');
    assert.equal(r.tools!.length, 3000);
  });
});

describe('what the app trips on: alive for a spec-correct client, review with the reason', () => {
  it('`data:` without the space: only lines starting with "data: " are read → "No valid JSON-RPC response found in SSE stream"', async () => {
    const r = await run('sse-data-without-space');
    is(r, 'review/app-sse-format');
    assert.equal(r.appError, 'No valid JSON-RPC response found in SSE stream');
    assert.deepEqual(r.diagnosis, {
      works: true,
      tools: ['search', 'fetch'],
      error: null,
      httpStatus: 200,
      protocolVersion: '2024-11-05',
      serverName: 'fleet',
      serverVersion: '1.0.0',
      quirks: ['sse-data-without-space'],
    });
    assert.deepEqual(r.quirks, [], "the top-level fields are the app's: its reader saw no data line at all");
  });
  it('JSON split over several data: lines: each line is decoded alone, none decodes', async () => {
    const r = await run('sse-crlf-multiline');
    is(r, 'review/app-sse-format');
    assert.equal(r.appError, 'No valid JSON-RPC response found in SSE stream');
  });
  it('a stream left open after the response: bodyAsText() waits for the end → request timeout', async () => {
    const r = await run('stream-left-open', { timeoutMs: 500 });
    is(r, 'review/app-stream-open');
    assert.match(r.appError ?? '', /^Request timeout has expired \[url=.*, request_timeout=500 ms\]$/);
    assert.equal(r.cutShort, true, "the 500 ms override is shorter than the app's 60 s");
  });
  it('a notification before the response is taken as the answer: initialize "succeeds", tools/list lists 0 tools', async () => {
    const r = await run('messages-before-response');
    is(r, 'review/app-wrong-message');
    assert.deepEqual(r.tools, []);
    assert.equal(r.appError, 'connected, but the app lists 0 tools');
  });
  it('Python SDK stateful: the notification with Accept: */* gets 406, then tools/list -32602 → "tools/list failed: Invalid request parameters"', async () => {
    const r = await run('python-stateful');
    is(r, 'review/app-notification-rejected');
    assert.equal(r.appError, 'tools/list failed: Invalid request parameters');
    assert.equal(r.diagnosis?.works, true);
  });
  it('a JSON array answer: decodeFromString<JsonRpcResponse> wants one object', async () => {
    const r = await run('batch');
    is(r, 'review/app-batch-response');
    assert.match(r.appError ?? '', /Expected start of the object '\{', but had '\[' instead/);
  });
  it('brotli unasked: the engine decodes gzip only', async () => is(await run('brotli'), 'review/app-encoding'));
  it('a tool without a name: McpToolDefinition.name is required, the whole list fails', async () => {
    const r = await run('tool-without-name');
    is(r, 'review/app-tool-list');
    assert.match(r.appError ?? '', /Field 'name' is required/);
  });
  it('an answer still valid JSON at the 4 MiB cap is review/oversize (the app has no cap)', async () => {
    const r = await run('oversize-valid', { maxBodyBytes: 256 * 1024 });
    is(r, 'review/oversize');
  });
  it('an edge that blocks "Ktor client" but not a browser: review/app-ua-blocked', async () =>
    is(await run('browser-ua-only'), 'review/app-ua-blocked'));
});

describe('protocol eras', () => {
  it('a 2026-07-28-only server (initialize is 404 with -32601) is alive: review/era-incompatible, matrix app ✗ · 2026-07-28 ✓', async () => {
    const r = await run('era-2026-only', { matrix: true });
    is(r, 'review/era-incompatible');
    assert.equal(r.matrix!['kai-9000']!.works, false);
    assert.equal(r.matrix!['mcp-2025-11-25']!.works, false);
    assert.deepEqual(r.matrix!['mcp-2026-07-28'], {
      works: true,
      verdict: 'live',
      reason: 'ok',
      tools: ['search', 'fetch'],
    });
    // The fork tries 2026-07-28 first, but its bare tools/list carries no `_meta` (McpClient.kt `connect()`),
    // which this server requires: every version fails.
    assert.equal(r.matrix!['kai-fallback']!.works, false);
  });
  it('without --matrix the diagnosis still tries the newer profiles to tell it from a 404 page', async () => {
    is(await run('era-2026-only'), 'review/era-incompatible');
    is(await run('http-404'), 'drop/http-404');
  });
  it('--profile mcp-2026-07-28 decides with the stateless client', async () => {
    const r = await run('era-2026-only', { profile: 'mcp-2026-07-28' });
    is(r, 'live/ok');
    assert.equal(r.profile, 'mcp-2026-07-28');
    assert.equal(r.serverName, 'modern');
  });
});

describe('payment and auth evidence', () => {
  it('HTTP 402 on initialize for a no-auth entry: drop/payment-required', async () =>
    is(await run('payment-402'), 'drop/payment-required'));
  it('401 with resource_metadata naming an authorization server: drop/auth-required, auth: oauth', async () => {
    const r = await run('oauth-401');
    is(r, 'drop/auth-required');
    assert.equal(r.auth, 'oauth');
  });
  it('401 asking for an API key: auth: api-key', async () => {
    const r = await run('init-401');
    is(r, 'drop/auth-required');
    assert.equal(r.auth, 'api-key');
  });
});
