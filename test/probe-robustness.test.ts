/** What real servers do on the wire (shared/notes/transport.md): each must still attest live. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../src/index.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

let fleet: Fleet;
before(async () => { fleet = await startFleet(); });
after(async () => { await fleet.close(); });

const live = async (scenario: string, timeoutMs = 2_000) => {
  const r = await probe(fleet.url(scenario), { timeoutMs, retryDelayMs: 10 });
  assert.equal(`${r.verdict}/${r.reason}`, 'live/ok', `${scenario}: ${r.error}`);
  return r;
};

describe('robustness', () => {
  it('SSE with CRLF framing, multi-line data:, comments, id:/event: fields and an empty priming event', async () => {
    const r = await live('sse-crlf-multiline');
    assert.deepEqual(r.tools, ['search', 'fetch']);
  });
  it('`data:` without a space is parsed, and flagged (the app\'s reader needs the space)', async () => {
    const r = await live('sse-data-without-space');
    assert.ok(r.quirks.includes('sse-data-without-space'));
  });
  it('notifications and server requests before the response: waits for the matching id', async () => {
    const r = await live('messages-before-response');
    assert.ok(r.quirks.includes('messages-before-response'));
  });
  it('a stream left open after the response: returns as soon as the response arrives', async () => {
    const r = await live('stream-left-open', 5_000);
    assert.ok(r.durationMs < 1_000, `took ${r.durationMs} ms`);
  });
  it('Mcp-Session-Id issued on initialize and required afterwards; DELETE at the end', async () => {
    const r = await live('session-required');
    assert.equal(r.sessionId, true);
    assert.equal(fleet.state('session-required').deleted, 's-1');
  });
  for (const s of ['notification-200-empty', 'notification-200-object', 'notification-204']) {
    it(`answer to notifications/initialized: ${s}`, async () => void (await live(s)));
  }
  it('a 4xx to the notification when tools/list then succeeds', async () => {
    const r = await live('notification-406');
    assert.ok(r.quirks.includes('notification-rejected'));
  });
  it('gzip-encoded bodies', async () => void (await live('gzip')));
  it('"jsonrpc" placed last in a large (1 MiB) body', async () => {
    const r = await live('jsonrpc-last-large');
    assert.equal(r.tools!.length, 3000);
  });
  it('follows nextCursor', async () => {
    const r = await live('paginated');
    assert.deepEqual(r.tools, ['t0', 't1', 't2']);
  });
  it('follows nextCursor for a bounded number of pages only', async () => {
    const r = await probe(fleet.url('endless-pages'), { maxToolPages: 5 });
    assert.equal(r.tools!.length, 5);
    assert.equal(r.observation.toolsTruncated, true);
  });
  it('a redirect is recorded, never followed (no loops)', async () => {
    await probe(fleet.url('redirect'));
    assert.equal(fleet.hits('ok-json').POST, 0);
  });
});
