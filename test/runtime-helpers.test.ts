import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyPopularDefaultHeaders,
  authorizationHeaderValue,
  matchesPopularUrl,
  mergeMissingHeaders,
} from '../src/index.js';

describe("runtime helpers (the app's Kotlin helpers, in TypeScript)", () => {
  it('matchesPopularUrl: trimmed, trailing slash and case ignored', () => {
    assert.ok(matchesPopularUrl(' https://MCP.context7.com/mcp/ ', 'https://mcp.context7.com/mcp'));
    assert.ok(!matchesPopularUrl('https://mcp.context7.com/other', 'https://mcp.context7.com/mcp'));
  });
  it('matchesPopularUrl: Jina /v1 and /sse are one host; other hosts match by URL only', () => {
    assert.ok(matchesPopularUrl('https://mcp.jina.ai/sse', 'https://mcp.jina.ai/v1'));
    assert.ok(!matchesPopularUrl('https://gateway.mcpservers.org/a/mcp', 'https://gateway.mcpservers.org/b/mcp'));
  });
  it('mergeMissingHeaders never overwrites a header the user set (case-insensitive)', () => {
    const existing = { authorization: 'Bearer mine' };
    assert.equal(mergeMissingHeaders(existing, { Authorization: 'Bearer default' }), existing);
    assert.deepEqual(mergeMissingHeaders(existing, { 'X-Client': 'kai' }), {
      authorization: 'Bearer mine',
      'X-Client': 'kai',
    });
  });
  it('applyPopularDefaultHeaders returns the same array when nothing changes', () => {
    const servers = [{ url: 'https://a.example/mcp', headers: { 'X-Client': 'mine' } }];
    const popular = [{ url: 'https://a.example/mcp', headers: { 'x-client': 'default' } }];
    assert.equal(applyPopularDefaultHeaders(servers, popular), servers);
    const changed = applyPopularDefaultHeaders([{ url: 'https://a.example/mcp/', headers: {} }], popular);
    assert.deepEqual(changed[0]!.headers, { 'x-client': 'default' });
  });
  it('authorizationHeaderValue normalises to Bearer once', () => {
    assert.equal(authorizationHeaderValue('  abc '), 'Bearer abc');
    assert.equal(authorizationHeaderValue('bearer abc'), 'bearer abc');
    assert.equal(authorizationHeaderValue('   '), '');
  });
});
