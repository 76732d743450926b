/** Real MCP servers from npm, on 127.0.0.1: each must attest live with its real tool count. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../src/index.js';
import {
  fastmcp,
  mcpHandler,
  sdkLegacySse,
  sdkStreamable,
  serverEverything,
  tmcpServer,
  type RealServer,
} from './interop/servers.js';

const cases: Array<[string, () => Promise<RealServer>]> = [
  ['@modelcontextprotocol/server-everything (streamableHttp, stateful SSE)', serverEverything],
  ['official SDK, SSE responses, stateful', () => sdkStreamable({ json: false, stateful: true })],
  ['official SDK, SSE responses, stateless', () => sdkStreamable({ json: false, stateful: false })],
  ['official SDK, JSON responses, stateful', () => sdkStreamable({ json: true, stateful: true })],
  ['official SDK, JSON responses, stateless', () => sdkStreamable({ json: true, stateful: false })],
  ['fastmcp stateful (about 1 s per initialize)', () => fastmcp({ stateless: false })],
  ['fastmcp stateless', () => fastmcp({ stateless: true })],
  ['mcp-handler (2026-07-28 with 2025-era fallback)', mcpHandler],
  ['tmcp + @tmcp/transport-http (2026-07-28 and the classic handshake)', tmcpServer],
];

describe('interop with real servers', { concurrency: 4 }, () => {
  for (const [name, start] of cases) {
    it(`${name} attests live`, async () => {
      const server = await start();
      try {
        const r = await probe(server.url, { timeoutMs: 15_000 });
        assert.equal(`${r.verdict}/${r.reason}`, 'live/ok', r.error ?? '');
        assert.equal(r.tools?.length, server.appTools ?? server.tools);
        assert.equal(r.attempts, 1);
        assert.ok(r.protocolVersion, 'a negotiated protocol version');
      } finally {
        await server.close();
      }
    });
  }
  it('the matrix: tmcp works under every profile, the SDK stateless server under the classic ones only', async () => {
    const servers = await Promise.all([tmcpServer(), sdkStreamable({ json: true, stateful: false })]);
    try {
      const [tmcp, sdk] = await Promise.all(servers.map((s) => probe(s.url, { matrix: true, timeoutMs: 15_000 })));
      const works = (r: typeof tmcp) => Object.fromEntries(Object.entries(r!.matrix!).map(([id, c]) => [id, c.works]));
      assert.deepEqual(works(tmcp), {
        'kai-9000': true,
        'kai-fallback': true,
        'mcp-2025-11-25': true,
        'mcp-2026-07-28': true,
      });
      // The SDK 1.32 server answers server/discover with an error: the stateless revision is not served.
      assert.deepEqual(works(sdk), {
        'kai-9000': true,
        'kai-fallback': true,
        'mcp-2025-11-25': true,
        'mcp-2026-07-28': false,
      });
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
  it("the official SDK's legacy HTTP+SSE server is dropped as not Streamable HTTP", async () => {
    const server = await sdkLegacySse();
    try {
      const r = await probe(server.url, { timeoutMs: 5_000 });
      assert.equal(`${r.verdict}/${r.reason}`, 'drop/not-streamable-http', r.error ?? '');
      assert.equal(r.evidence!.legacySse, true);
    } finally {
      await server.close();
    }
  });
});
