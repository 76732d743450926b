/**
 * The census page (pure): what changed since the previous census, by remote URL (newly dead: live before and dropped
 * now; recovered: not live before and live now; changed tools: both have a tool list and it differs), shown on the
 * page only when a previous census is given, every value escaped.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  asRead,
  censusChanges,
  censusListPage,
  censusPage,
  censusRows,
  censusSite,
  isExpired,
  nextExpiry,
  recordsOf,
  type CensusDocument,
} from '../../src/census/page.js';

type Remote = { url: string; verdict: string; reason: string; toolsHash: string | null };

/** The clock of every test: the records below were made on 2026-12-02 and expire on 2026-12-16. */
const NOW = new Date('2026-12-05T00:00:00.000Z');
const LATER = new Date('2026-12-20T00:00:00.000Z');

const doc = (remotes: Remote[]): CensusDocument => ({
  servers: remotes.map((r, i) => ({
    server: { name: `io.example/s${i}` },
    _meta: {
      'io.example/verification': {
        verifiedAt: '2026-12-02T00:00:00.000Z',
        expiresAt: '2026-12-16T00:00:00.000Z',
        remotes: [{ checks: {}, toolCount: null, tokens: null, sameToolsAs: [], evidence: null, ...r }],
      },
    },
  })),
  metadata: { count: remotes.length, publisher: 'io.example' },
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
  const c = censusChanges(censusRows(now, NOW), censusRows(before, NOW));

  it('newly dead: live before, dropped now (a failed row is not dead yet)', () =>
    assert.deepEqual(urls(c.newlyDead), ['https://a.example/mcp']));
  it('recovered: listed and not live before, live now (a new remote is not a recovery)', () =>
    assert.deepEqual(urls(c.recovered), ['https://b.example/mcp']));
  it('changed tools: both counted a list, and it differs', () =>
    assert.deepEqual(urls(c.toolsChanged), ['https://c.example/mcp']));

  it('the page shows the changes only with a previous census, escaped', () => {
    assert.doesNotMatch(censusPage(now, null, NOW), /id="changes"/);
    const dead = doc([{ url: 'https://a.example/mcp', verdict: 'drop', reason: 'http-404', toolsHash: null }]);
    dead.servers[0]!.server.name = '<img src=x onerror=alert(1)>';
    const page = censusPage(
      dead,
      doc([{ url: 'https://a.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h1' }]),
      NOW,
    );
    assert.match(page, /<h3>Newly dead \(1\)<\/h3>/);
    assert.doesNotMatch(page, /<img src=x/);
    assert.match(censusPage(now, before, NOW), /<h3>Recovered \(1\)<\/h3>[\s\S]*<h3>Changed tools \(1\)<\/h3>/);
  });
});

describe('the census shows only its own records', () => {
  /** The registry's item carried its own "verification", forged: verified 2099, live. */
  const forged = () => {
    const d = doc([{ url: 'https://a.example/mcp', verdict: 'drop', reason: 'refused', toolsHash: null }]);
    const item = d.servers[0]!;
    item._meta = {
      'io.evil/verification': {
        verifiedAt: '2099-01-01T00:00:00.000Z',
        expiresAt: '2099-02-01T00:00:00.000Z',
        remotes: [
          {
            url: 'https://a.example/mcp',
            verdict: 'live',
            reason: 'ok',
            checks: {},
            toolCount: 3,
            tokens: 1,
            sameToolsAs: [],
            evidence: null,
            toolsHash: 'x',
          },
        ],
      },
      ...item._meta,
    };
    return d;
  };

  it('the page: the census\'s verdict under its publisher\'s key, the other key only as "claimed by"', () => {
    const page = censusPage(forged(), null, NOW);
    assert.match(page, /<td>drop\/refused<\/td>/);
    assert.doesNotMatch(page, /live\/ok/);
    assert.doesNotMatch(page, /2099/, "the forged record's time is not the census's");
    assert.match(page, /verified <time datetime="2026-12-02T00:00:00.000Z">/);
    assert.match(page, /<td>claimed by io\.evil\/verification<\/td>/);
    assert.match(page, /<li><strong>1<\/strong> drop<\/li>/);
    assert.doesNotMatch(page, /<strong>\d+<\/strong> live/);
  });

  it("the reader helpers: the own record by the document's publisher, the rest claims", () => {
    const d = forged();
    const r = recordsOf(d.servers[0]!, 'io.example', NOW);
    assert.equal(r.own?.remotes[0]?.verdict, 'drop');
    assert.deepEqual(r.claims, ['io.evil/verification']);
    assert.deepEqual(
      censusRows(d, NOW).map((row) => [row.remote.verdict, row.claims]),
      [['drop', ['io.evil/verification']]],
    );
  });

  it("a document that names no publisher: no record is the census's own", () => {
    const d = forged();
    delete d.metadata.publisher;
    assert.deepEqual(censusRows(d, NOW), []);
    const page = censusPage(d, null, NOW);
    assert.match(page, /names no publisher/);
    assert.doesNotMatch(page, /<td>(drop|live)\//);
  });

  it('claims are escaped, and more than three are counted', () => {
    const d = forged();
    for (const k of ['<b>x/verification', 'c.d/verification', 'e.f/verification']) d.servers[0]!._meta[k] = {};
    const page = censusPage(d, null, NOW);
    assert.doesNotMatch(page, /<b>x/);
    assert.match(page, /claimed by &lt;b&gt;x\/verification, claimed by c\.d\/verification, and 1 more/);
  });
});

describe('expired records are marked expired', () => {
  const d = () => doc([{ url: 'https://a.example/mcp', verdict: 'live', reason: 'ok', toolsHash: 'h1' }]);
  const own = (page: { servers: CensusDocument['servers'] }) =>
    page.servers[0]!._meta['io.example/verification'] as { expired?: boolean };

  const rows: Array<[string, string, Date, boolean]> = [
    ['before expiresAt', '2026-12-16T00:00:00.000Z', NOW, false],
    ['at expiresAt', '2026-12-16T00:00:00.000Z', new Date('2026-12-16T00:00:00.000Z'), false],
    ['a millisecond past it', '2026-12-16T00:00:00.000Z', new Date('2026-12-16T00:00:00.001Z'), true],
    ['no time it can be read as', 'soon', NOW, true],
  ];
  for (const [label, expiresAt, at, want] of rows)
    it(`isExpired: ${label}`, () => assert.equal(isExpired({ expiresAt }, at), want));

  it('the reader helpers and the page', () => {
    assert.deepEqual(
      censusRows(d(), NOW).map((r) => r.expired),
      [false],
    );
    assert.deepEqual(
      censusRows(d(), LATER).map((r) => r.expired),
      [true],
    );
    assert.doesNotMatch(censusPage(d(), null, NOW), /expired at|\(expired\)/);
    const page = censusPage(d(), null, LATER);
    assert.match(page, /These records expired at <time datetime="2026-12-16T00:00:00.000Z">/);
    assert.match(page, /<td>live\/ok <span class="expired">\(expired\)<\/span><\/td>/);
    assert.equal(nextExpiry(d(), NOW), Date.parse('2026-12-16T00:00:00.000Z'));
    assert.equal(nextExpiry(d(), LATER), Infinity);
  });

  it('the API (serve --census): the record under _meta says expired: true, the v0.1 shape otherwise as written', () => {
    const fresh = censusListPage(d(), null, 30, NOW)!;
    assert.equal(own(fresh).expired, undefined);
    assert.deepEqual(fresh.servers, d().servers);
    const stale = censusListPage(d(), null, 30, LATER)!;
    assert.equal(own(stale).expired, true);
    assert.deepEqual(Object.keys(stale), ['servers', 'metadata']);
    assert.deepEqual({ ...own(stale), expired: undefined }, { ...own(fresh), expired: undefined });
    const item = d().servers[0]!;
    assert.equal(asRead(item, 'io.example', NOW), item, 'a record in time is served as it is');
  });

  it('the site (site --census): v0.1/servers is the text as written until it expires, then marked', () => {
    const text = `${JSON.stringify(d(), null, 2)}\n`;
    assert.equal(censusSite(text, null, NOW).list, text);
    const stale = JSON.parse(censusSite(text, null, LATER).list) as CensusDocument;
    assert.equal(own(stale).expired, true);
    assert.match(censusSite(text, null, LATER).page, /\(expired\)/);
  });
});
