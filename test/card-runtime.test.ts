/** Card vs runtime: a server's card checked against the live connection, in discover --probe and in refresh. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { discover, refresh } from '../src/index.js';
import { cardMismatches } from '../src/discover/consistency.js';
import { answer, json, startFleet, type Ctx, type Fleet } from './fleet/fleet.js';
import { catalogOf, server, workspace } from './helpers.js';

const CARD = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
const card = (url: string, extra: Record<string, unknown> = {}, remote: Record<string, unknown> = {}) => ({
  $schema: CARD,
  name: 'io.example/docs',
  description: 'Docs search',
  version: '1.0.0',
  remotes: [{ type: 'streamable-http', url, ...remote }],
  ...extra,
});

/** An MCP server (serverInfo version 1.0.0, protocol 2024-11-05) that serves the card the test gives it. */
const carded = (make: (url: string) => unknown) => (c: Ctx) => {
  if (c.req.method === 'GET')
    return json(c.res, 200, make(`http://${c.req.headers.host}/${(c.req.url ?? '').split('/')[1]}`), {
      'content-type': 'application/mcp-server-card+json',
    });
  answer(c);
};

let fleet: Fleet;
before(async () => {
  fleet = await startFleet({
    agrees: carded((url) => card(url, {}, { supportedProtocolVersions: ['2024-11-05', '2025-11-25'] })),
    disagrees: carded((url) => card(url, { version: '2.4.0' }, { supportedProtocolVersions: ['2025-11-25'] })),
    elsewhere: carded(() => card('https://other.example/mcp')),
  });
});
after(async () => {
  await fleet.close();
});

describe('card vs runtime', () => {
  it('the comparison: version, the remote that answered, supported protocol versions, eras', () => {
    const live = {
      url: 'https://a.example/mcp',
      serverVersion: '1.0.0',
      protocolVersion: '2024-11-05',
      eras: { '2026-07-28': false },
    };
    assert.deepEqual(
      cardMismatches(card('https://a.example/mcp/', {}, { supportedProtocolVersions: ['2024-11-05'] }), live),
      [],
      'a trailing slash is the same URL',
    );
    assert.deepEqual(
      cardMismatches(
        card(
          'https://a.example/mcp',
          { version: '1.1.0', name: 'io.example/other' },
          { supportedProtocolVersions: ['2024-11-05', '2026-07-28'] },
        ),
        live,
      ),
      [
        { field: 'version', card: '1.1.0', live: '1.0.0' },
        {
          field: 'remotes[0].supportedProtocolVersions',
          card: '2026-07-28',
          live: 'a 2026-07-28 client could not list tools',
        },
      ],
      'the name is an identifier, never compared',
    );
    assert.deepEqual(cardMismatches(card('https://b.example/mcp'), live), [
      { field: 'remotes[].url', card: ['https://b.example/mcp'], live: 'https://a.example/mcp' },
    ]);
  });

  it('discover --probe: mismatches per candidate, empty when the card agrees', async () => {
    const run = (s: string) =>
      discover(fleet.url(s), { catalog: catalogOf([]), probe: true, allowPrivate: true, timeoutMs: 5_000 });
    const ok = await run('agrees');
    assert.equal(ok.candidates[0]!.verdict, 'live');
    assert.deepEqual(ok.candidates[0]!.mismatches, []);
    const bad = await run('disagrees');
    assert.deepEqual(bad.candidates[0]!.mismatches, [
      { field: 'version', card: '2.4.0', live: '1.0.0' },
      { field: 'remotes[0].supportedProtocolVersions', card: ['2025-11-25'], live: '2024-11-05' },
    ]);
    assert.equal(bad.candidates[0]!.eligible, true, 'advisory: a mismatch is not a refusal');
  });

  it('refresh: curated servers with a card show the mismatches on the plan row (advisory, the row is kept)', async () => {
    const ws = await workspace(
      catalogOf([
        server('Agrees', fleet.url('agrees')),
        server('Disagrees', fleet.url('disagrees')),
        server('No card', fleet.url('ok-json')),
      ]),
    );
    const { plan } = await refresh({
      catalogPath: ws.catalogPath,
      statePath: ws.statePath,
      allowHttp: true,
      record: false,
      probe: { retryDelayMs: 10 },
    });
    const by = Object.fromEntries(plan.rows.map((r) => [r.name, r]));
    assert.deepEqual(by.Agrees!.cardMismatches, []);
    assert.equal(by.Disagrees!.cardMismatches![0]!.field, 'version');
    assert.equal(by.Disagrees!.decision, 'keep');
    assert.equal(by['No card']!.cardMismatches, null);
  });
});
