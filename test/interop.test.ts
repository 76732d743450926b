/** Real MCP servers from npm, on 127.0.0.1: each must attest live with its real tool count. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../src/index.js';
import { fastmcp, mcpHandler, sdkLegacySse, sdkStreamable, serverEverything, type RealServer } from './interop/servers.js';

const cases: Array<[string, () => Promise<RealServer>]> = [
  ['@modelcontextprotocol/server-everything (streamableHttp, stateful SSE)', serverEverything],
  ['official SDK, SSE responses, stateful', () => sdkStreamable({ json: false, stateful: true })],
  ['official SDK, SSE responses, stateless', () => sdkStreamable({ json: false, stateful: false })],
  ['official SDK, JSON responses, stateful', () => sdkStreamable({ json: true, stateful: true })],
  ['official SDK, JSON responses, stateless', () => sdkStreamable({ json: true, stateful: false })],
  ['fastmcp stateful (about 1 s per initialize)', () => fastmcp({ stateless: false })],
  ['fastmcp stateless', () => fastmcp({ stateless: true })],
  ['mcp-handler (2026-07-28 with 2025-era fallback)', mcpHandler],
];

describe('interop with real servers', { concurrency: 4 }, () => {
  for (const [name, start] of cases) {
    it(`${name} attests live`, async () => {
      const server = await start();
      try {
        const r = await probe(server.url, { timeoutMs: 15_000 });
        assert.equal(`${r.verdict}/${r.reason}`, 'live/ok', r.error ?? '');
        assert.equal(r.tools?.length, server.tools);
        assert.equal(r.attempts, 1);
        assert.ok(r.protocolVersion, 'a negotiated protocol version');
      } finally {
        await server.close();
      }
    });
  }
  it('the official SDK\'s legacy HTTP+SSE server is dropped as not Streamable HTTP', async () => {
    const server = await sdkLegacySse();
    try {
      const r = await probe(server.url, { timeoutMs: 5_000 });
      assert.equal(`${r.verdict}/${r.reason}`, 'drop/not-streamable-http', r.error ?? '');
      assert.equal(r.observation.legacySse, true);
    } finally {
      await server.close();
    }
  });
});
