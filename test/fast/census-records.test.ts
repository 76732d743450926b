/**
 * The census's verification records (pure): which checks an observation passed, the list document written one
 * item at a time, which must read as the whole document would have been written, and which version of a server is
 * its latest.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  censusEntry,
  checksOf,
  listText,
  printsOf,
  type CensusContext,
  type CensusEntry,
  type Observed,
} from '../../src/census/records.js';
import { LatestOnly, type CensusItem, type RegistryItem } from '../../src/census/registry.js';
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
      assert.equal(
        [c.reachable, c.mcp, c.tools, c.auth, c['one-tap']].join(' ').replaceAll('not run', 'not-run'),
        want,
      );
    });
  }
});

describe('the list document, one item at a time', () => {
  const item = (name: string, urls: string[], extra: Record<string, unknown> = {}): CensusItem => ({
    server: {
      name,
      description: 'a server\nwith "quotes", a tab\t, \u2028 and ✓',
      version: '1.0.0',
      remotes: urls.map((url) => ({ type: 'streamable-http', url })),
      ...extra,
    },
    _meta: {
      'io.modelcontextprotocol.registry/official': { isLatest: true, nested: { deep: [1, [2, { three: 3 }]] } },
    },
    census: { skipped: null, serverJson: { schema: null, valid: null, why: 'not validated: no $schema' } },
  });
  const kept = (evidence: string, toolsDigest: string | null): Observed => ({
    verdict: 'live',
    reason: 'ok',
    httpStatus: 200,
    toolCount: 2,
    toolsHash: `h-${toolsDigest}`,
    toolsDigest,
    nameBlindDigest: null,
    descriptionBlindDigest: null,
    tokens: 92,
    evidence,
  });
  const entries = (items: CensusItem[], observed: Map<string, Observed>): CensusEntry[] => {
    const context: CensusContext = {
      observed,
      skipped: new Map([['https://c.example/mcp', 'its host opted out']]),
      same: sameToolsIndex(items.flatMap((i) => printsOf(i, observed))),
      publisher: 'io.example',
      version: '9.9.9',
      verifiedAt: '2026-12-02T00:00:00.000Z',
      expiresAt: '2026-12-16T00:00:00.000Z',
      method: {
        profile: 'p',
        protocolVersion: '2025-11-25',
        steps: ['initialize'],
        vantages: ['local'],
        signed: false,
      },
    };
    return items.map((i) => censusEntry(i, context));
  };
  const text = async (list: CensusEntry[]) => {
    let out = '';
    for await (const part of listText(list, 'io.example')) out += part;
    return out;
  };
  const observed = () =>
    new Map([
      ['https://a.example/mcp', kept('e1', 'same')],
      ['https://b.example/mcp', kept('e2', 'same')],
    ]);

  for (const [label, items] of [
    ['no servers', []],
    ['one server with no remotes', [item('io.example/empty', [])]],
    [
      'three servers, two serving the same set, one opted out',
      [
        item('io.example/a', ['https://a.example/mcp']),
        item('io.example/b', ['https://b.example/mcp', 'https://c.example/mcp']),
        item('io.example/t', ['https://{tenant}.example/mcp']),
      ],
    ],
  ] as Array<[string, CensusItem[]]>) {
    it(`${label}: the text is JSON.stringify(document, null, 2) exactly`, async () => {
      const list = entries(items, observed());
      assert.equal(
        await text(list),
        `${JSON.stringify({ servers: list, metadata: { count: items.length, publisher: 'io.example' } }, null, 2)}\n`,
      );
    });
  }

  it('each remote is recorded once, by its own verdict; sameToolsAs names the other server', async () => {
    const items = [
      item('io.example/a', ['https://a.example/mcp']),
      item('io.example/b', ['https://b.example/mcp', 'https://c.example/mcp']),
    ];
    const doc = JSON.parse(await text(entries(items, observed())));
    const b = doc.servers[1]._meta['io.example/verification'].remotes;
    assert.deepEqual(
      b.map((r: { url: string; verdict: string; reason: string; evidence: string | null }) => [
        r.url,
        r.verdict,
        r.reason,
        r.evidence,
      ]),
      [
        ['https://b.example/mcp', 'live', 'ok', 'e2'],
        ['https://c.example/mcp', 'not probed', 'its host opted out', null],
      ],
    );
    assert.deepEqual(
      b[0].sameToolsAs.map((s: { name: string }) => s.name),
      ['io.example/a'],
    );
    assert.equal(doc.metadata.count, 2);
    assert.equal(doc.metadata.nextCursor, undefined);
  });
});

describe('censusEntry: what the census made of a server, and only its own record under its key', () => {
  const context: CensusContext = {
    observed: new Map(),
    skipped: new Map(),
    same: () => [],
    publisher: 'io.example',
    version: '9.9.9',
    verifiedAt: '2026-12-02T00:00:00.000Z',
    expiresAt: '2026-12-16T00:00:00.000Z',
    method: { profile: 'p', protocolVersion: '2025-11-25', steps: ['initialize'], vantages: ['local'], signed: false },
  };
  it('a skipped server: no remote recorded, why it was skipped, its schema check', () => {
    const serverJson = {
      schema: '2025-12-11',
      valid: false,
      why: '/description: must NOT have more than 100 characters',
    };
    const entry = censusEntry(
      {
        server: { name: 'io.example/x', remotes: [{ type: 'streamable-http', url: 'https://a.example/mcp' }] },
        _meta: {},
        census: { skipped: 'its server.json is invalid', serverJson },
      },
      context,
    );
    const v = entry._meta['io.example/verification'] as { remotes: unknown[]; skipped: string; serverJson: unknown };
    assert.deepEqual([v.remotes, v.skipped, v.serverJson], [[], 'its server.json is invalid', serverJson]);
  });
  it("a record the registry listed under the census's own key is replaced, one under another key kept as the registry's", () => {
    const forged = {
      verifiedAt: '2099-01-01T00:00:00.000Z',
      remotes: [{ url: 'https://a.example/mcp', verdict: 'live' }],
    };
    const entry = censusEntry(
      {
        server: { name: 'io.example/x', remotes: [{ type: 'sse', url: 'https://a.example/mcp' }] },
        _meta: { 'io.example/verification': forged, 'io.evil/verification': forged },
        census: { skipped: null, serverJson: { schema: null, valid: null, why: 'not validated: no $schema' } },
      },
      context,
    );
    const own = entry._meta['io.example/verification'] as { verifiedAt: string; remotes: Array<{ verdict: string }> };
    assert.deepEqual([own.verifiedAt, own.remotes[0]!.verdict], ['2026-12-02T00:00:00.000Z', 'not probed']);
    assert.equal(entry._meta['io.evil/verification'], forged);
  });
});

describe("LatestOnly: the latest version of each server, in the registry's order; publishedAt as an instant", () => {
  const v = (name: string, version: string, official: Record<string, unknown>): RegistryItem => ({
    server: { name, version },
    _meta: { 'io.modelcontextprotocol.registry/official': official },
  });
  const at = (publishedAt: string, more: Record<string, unknown> = {}) => ({ publishedAt, ...more });
  const kept = (items: RegistryItem[]) => {
    const latest = new LatestOnly<string>();
    items.forEach((i) => latest.add(i, () => `${i.server.name}@${i.server.version}`));
    return [...latest.kept()];
  };
  const rows: Array<[string, RegistryItem[], string[]]> = [
    [
      'isLatest wins over a later publishedAt',
      [
        v('a', '2', at('2026-01-01T00:00:00Z', { isLatest: true })),
        v('a', '3', at('2026-06-01T00:00:00Z', { isLatest: false })),
      ],
      ['a@2'],
    ],
    [
      'isLatest wins over one that does not parse',
      [v('a', '2', { isLatest: true, publishedAt: 'soon' }), v('a', '3', at('2026-06-01T00:00:00Z'))],
      ['a@2'],
    ],
    [
      'two marked isLatest: the one published last',
      [
        v('a', '2', at('2026-06-01T00:00:00Z', { isLatest: true })),
        v('a', '1', at('2026-01-01T00:00:00Z', { isLatest: true })),
      ],
      ['a@2'],
    ],
    [
      'without isLatest, the one published last',
      [v('a', '2', at('2026-06-01T00:00:00Z')), v('a', '1', at('2026-01-01T00:00:00Z'))],
      ['a@2'],
    ],
    [
      'a trimmed fraction: :56.5Z is after :56Z',
      [v('a', '1.0.1', at('2026-10-02T10:00:56.5Z')), v('a', '1.0.0', at('2026-10-02T10:00:56Z'))],
      ['a@1.0.1'],
    ],
    [
      'fractions of other lengths: .5 is after .45',
      [v('a', '2', at('2026-10-02T10:00:56.5Z')), v('a', '1', at('2026-10-02T10:00:56.45Z'))],
      ['a@2'],
    ],
    [
      'nanoseconds count: .000000002 is after .000000001',
      [v('a', '2', at('2026-10-02T10:00:56.000000002Z')), v('a', '1', at('2026-10-02T10:00:56.000000001Z'))],
      ['a@2'],
    ],
    [
      'an offset: 12:00+02:00 is before 11:00Z',
      [v('a', '1', at('2026-10-02T12:00:00+02:00')), v('a', '2', at('2026-10-02T11:00:00Z'))],
      ['a@2'],
    ],
    [
      'a negative offset: 09:00-02:00 is after 10:30Z',
      [v('a', '2', at('2026-10-02T09:00:00-02:00')), v('a', '1', at('2026-10-02T10:30:00Z'))],
      ['a@2'],
    ],
    [
      'an offset across midnight: 01:00+02:00 is the day before, 23:00Z',
      [v('a', '2', at('2026-10-02T00:30:00Z')), v('a', '1', at('2026-10-02T01:00:00+02:00'))],
      ['a@2'],
    ],
    [
      'a tie, one instant spelled two ways: the last one listed',
      [v('a', '1', at('2026-10-02T12:00:00+02:00')), v('a', '2', at('2026-10-02T10:00:00Z'))],
      ['a@2'],
    ],
    [
      'a tie, .5 and .500: the last one listed',
      [v('a', '1', at('2026-10-02T10:00:56.500Z')), v('a', '2', at('2026-10-02T10:00:56.5Z'))],
      ['a@2'],
    ],
    ['a tie, no publishedAt: the last one listed', [v('a', '1', {}), v('a', '2', {})], ['a@2']],
    [
      'one that does not parse is never the latest (listed last)',
      [v('a', '2', at('2026-10-02T10:00:00Z')), v('a', '3', at('tomorrow'))],
      ['a@2'],
    ],
    [
      'one that does not parse is never the latest (listed first)',
      [v('a', '3', at('9999')), v('a', '2', at('2026-10-02T10:00:00Z'))],
      ['a@2'],
    ],
    [
      'a date alone is not a date-time',
      [v('a', '2', at('2026-10-02T00:00:00Z')), v('a', '3', at('2026-10-03'))],
      ['a@2'],
    ],
    [
      'a day that does not exist does not parse',
      [v('a', '2', at('2026-02-01T00:00:00Z')), v('a', '3', at('2026-02-30T00:00:00Z'))],
      ['a@2'],
    ],
    [
      'an hour past 23 does not parse',
      [v('a', '2', at('2026-02-01T00:00:00Z')), v('a', '3', at('2026-02-01T24:00:00Z'))],
      ['a@2'],
    ],
    [
      'lower-case t and z are RFC 3339 too',
      [v('a', '2', at('2026-10-02t10:00:01z')), v('a', '1', at('2026-10-02T10:00:00Z'))],
      ['a@2'],
    ],
    [
      'each name where it first appears',
      [v('b', '1', {}), v('a', '1', {}), v('b', '2', { isLatest: true })],
      ['b@2', 'a@1'],
    ],
  ];
  for (const [label, items, want] of rows) it(label, () => assert.deepEqual(kept(items), want));
});
