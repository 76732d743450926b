/**
 * The census page (pure): what changed since the previous census, by remote URL (newly dead: live before and dropped
 * now; recovered: not live before and live now; changed tools: both have a tool list and it differs), shown on the
 * page only when a previous census is given, every value escaped.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { censusChanges, censusPage, censusRows, type CensusDocument } from '../../src/census/page.js';

type Remote = { url: string; verdict: string; reason: string; toolsHash: string | null };

const doc = (remotes: Remote[]): CensusDocument => ({
  servers: remotes.map((r, i) => ({
    server: { name: `io.example/s${i}` },
    _meta: { 'io.example/verification': { verifiedAt: '2026-12-02T00:00:00.000Z', remotes: [{ checks: {}, toolCount: null, tokens: null, sameToolsAs: [], evidence: null, ...r }] } },
  })),
  metadata: { count: remotes.length },
});

describe('censusChanges', () => {
  const before = doc([
    { url: 'https://a.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h1' },
    { url: 'https://b.example/mcp', verdict: 'failed', reason: 'timeout', toolsHash: null },
    { url: 'https://c.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h3' },
    { url: 'https://d.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h4' },
    { url: 'https://e.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h5' },
  ]);
  const now = doc([
    { url: 'https://a.example/mcp', verdict: 'drop', reason: 'http-404', toolsHash: null },
    { url: 'https://b.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h2' },
    { url: 'https://c.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h3-changed' },
    { url: 'https://d.example/mcp', verdict: 'failed', reason: 'timeout', toolsHash: null },
    { url: 'https://e.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h5' },
    { url: 'https://new.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h6' },
  ]);
  const urls = (rows: Array<{ remote: { url: string } }>) => rows.map((r) => r.remote.url);
  const c = censusChanges(censusRows(now), censusRows(before));

  it('newly dead: live before, dropped now (a failed row is not dead yet)', () => assert.deepEqual(urls(c.newlyDead), ['https://a.example/mcp']));
  it('recovered: listed and not live before, live now (a new remote is not a recovery)', () => assert.deepEqual(urls(c.recovered), ['https://b.example/mcp']));
  it('changed tools: both counted a list, and it differs', () => assert.deepEqual(urls(c.toolsChanged), ['https://c.example/mcp']));

  it('the page shows the changes only with a previous census, escaped', () => {
    assert.doesNotMatch(censusPage(now), /id="changes"/);
    const dead = doc([{ url: 'https://a.example/mcp', verdict: 'drop', reason: 'http-404', toolsHash: null }]);
    dead.servers[0]!.server.name = '<img src=x onerror=alert(1)>';
    const page = censusPage(dead, doc([{ url: 'https://a.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h1' }]));
    assert.match(page, /<h3>Newly dead \(1\)<\/h3>/);
    assert.doesNotMatch(page, /<img src=x/);
    assert.match(censusPage(now, before), /<h3>Recovered \(1\)<\/h3>[\s\S]*<h3>Changed tools \(1\)<\/h3>/);
  });
});
