/**
 * The census's verification records (pure): which checks an observation passed, the list document written one
 * item at a time, which must read as the whole document would have been written, and which version of a server is
 * its latest.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { censusEntry, checksOf, listText, printsOf, type CensusContext, type CensusEntry, type Observed } from '../../src/census/records.js';
import { LatestOnly, type RegistryItem } from '../../src/census/registry.js';
import { sameToolsIndex } from '../../src/policy/same-tools.js';

describe('checksOf', () => {
  // [verdict, reason, httpStatus, toolCount] → reachable, mcp, tools, auth, one-tap
  const rows: Array<[string, string, number | null, number | null, string]> = [
    ['live', 'ok', 200, 3, 'passed passed passed passed passed'],
    ['live', 'auth-optional', 200, 0, 'passed passed passed passed passed'],
    ['failed', 'no-tools', 200, 0, 'passed passed failed passed failed'],
    ['failed', 'refused', null, null, 'failed not-run not-run not-run failed'],
    ['failed', 'timeout', null, null, 'failed not-run not-run not-run failed'],
    ['failed', 'timeout', 200, null, 'passed passed failed passed failed'],
    ['failed', 'auth-required', 401, null, 'passed not-run not-run failed failed'],
    ['failed', 'payment-required', 402, null, 'passed not-run not-run failed failed'],
    ['failed', 'http-404', 404, null, 'passed failed not-run passed failed'],
    ['failed', 'not-mcp', 200, null, 'passed failed not-run passed failed'],
    ['failed', 'rate-limited', 429, null, 'passed failed not-run passed failed'],
  ];
  for (const [verdict, reason, httpStatus, toolCount, want] of rows) {
    it(`${verdict}/${reason} (HTTP ${httpStatus}, ${toolCount} tools): ${want}`, () => {
      const c = checksOf({ verdict, reason, httpStatus, toolCount } as Parameters<typeof checksOf>[0]);
      assert.equal([c.reachable, c.mcp, c.tools, c.auth, c['one-tap']].join(' ').replaceAll('not run', 'not-run'), want);
    });
  }
});

describe('the list document, one item at a time', () => {
  const item = (name: string, urls: string[], extra: Record<string, unknown> = {}): RegistryItem => ({
    server: { name, description: 'a server\nwith "quotes", a tab\t, \u2028 and ✓', version: '1.0.0', remotes: urls.map((url) => ({ type: 'streamable-http', url })), ...extra },
    _meta: { 'io.modelcontextprotocol.registry/official': { isLatest: true, nested: { deep: [1, [2, { three: 3 }]] } } },
  });
  const kept = (evidence: string, toolsDigest: string | null): Observed => ({
    verdict: 'live', reason: 'ok', httpStatus: 200, toolCount: 2, toolsHash: `h-${toolsDigest}`, toolsDigest, nameBlindDigest: null, descriptionBlindDigest: null, tokens: 92, evidence,
  });
  const entries = (items: RegistryItem[], observed: Map<string, Observed>): CensusEntry[] => {
    const context: CensusContext = {
      observed, skipped: new Map([['https://c.example/mcp', 'its host opted out']]), same: sameToolsIndex(items.flatMap((i) => printsOf(i, observed))), publisher: 'io.example', version: '9.9.9',
      verifiedAt: '2026-12-02T00:00:00.000Z', expiresAt: '2026-12-16T00:00:00.000Z', method: { profile: 'p', protocolVersion: '2025-11-25', steps: ['initialize'], vantages: ['local'], signed: false },
    };
    return items.map((i) => censusEntry(i, context));
  };
  const text = async (list: CensusEntry[]) => {
    let out = '';
    for await (const part of listText(list)) out += part;
    return out;
  };
  const observed = () => new Map([['https://a.example/mcp', kept('e1', 'same')], ['https://b.example/mcp', kept('e2', 'same')]]);

  for (const [label, items] of [
    ['no servers', []],
    ['one server with no remotes', [item('io.example/empty', [])]],
    ['three servers, two serving the same set, one opted out', [item('io.example/a', ['https://a.example/mcp']), item('io.example/b', ['https://b.example/mcp', 'https://c.example/mcp']), item('io.example/t', ['https://{tenant}.example/mcp'])]],
  ] as Array<[string, RegistryItem[]]>) {
    it(`${label}: the text is JSON.stringify(document, null, 2) exactly`, async () => {
      const list = entries(items, observed());
      assert.equal(await text(list), `${JSON.stringify({ servers: list, metadata: { count: items.length } }, null, 2)}\n`);
    });
  }

  it('each remote is recorded once, by its own verdict; sameToolsAs names the other server', async () => {
    const items = [item('io.example/a', ['https://a.example/mcp']), item('io.example/b', ['https://b.example/mcp', 'https://c.example/mcp'])];
    const doc = JSON.parse(await text(entries(items, observed())));
    const b = doc.servers[1]._meta['io.example/verification'].remotes;
    assert.deepEqual(b.map((r: { url: string; verdict: string; reason: string; evidence: string | null }) => [r.url, r.verdict, r.reason, r.evidence]),
      [['https://b.example/mcp', 'live', 'ok', 'e2'], ['https://c.example/mcp', 'not probed', 'its host opted out', null]]);
    assert.deepEqual(b[0].sameToolsAs.map((s: { name: string }) => s.name), ['io.example/a']);
    assert.equal(doc.metadata.count, 2);
    assert.equal(doc.metadata.nextCursor, undefined);
  });
});

describe('LatestOnly: the latest version of each server, in the registry\'s order', () => {
  const v = (name: string, version: string, official: Record<string, unknown>): RegistryItem => ({ server: { name, version }, _meta: { 'io.modelcontextprotocol.registry/official': official } });
  const kept = (items: RegistryItem[]) => {
    const latest = new LatestOnly();
    items.forEach((i) => latest.add(i));
    return [...latest.texts()].map((t) => { const i = JSON.parse(t) as RegistryItem; return `${i.server.name}@${i.server.version}`; });
  };
  const rows: Array<[string, RegistryItem[], string[]]> = [
    ['isLatest wins over a later publishedAt', [v('a', '2', { isLatest: true, publishedAt: '2026-01-01' }), v('a', '3', { isLatest: false, publishedAt: '2026-06-01' })], ['a@2']],
    ['without isLatest, the one published last', [v('a', '2', { publishedAt: '2026-06-01' }), v('a', '1', { publishedAt: '2026-01-01' })], ['a@2']],
    ['a tie: the last one listed', [v('a', '1', {}), v('a', '2', {})], ['a@2']],
    ['each name where it first appears', [v('b', '1', {}), v('a', '1', {}), v('b', '2', { isLatest: true })], ['b@2', 'a@1']],
  ];
  for (const [label, items, want] of rows) it(label, () => assert.deepEqual(kept(items), want));
});
