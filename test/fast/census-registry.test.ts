/**
 * Reading the registry for a census (pure): each item bounded (a server.json or its `_meta` over 64 KiB, more than
 * `REGISTRY_LIMITS.remotesPerServer` remotes: recorded as skipped with why, never cut), a URL over 2,048 characters
 * refused whole, and each server.json of the vendored schema validated against it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  assess,
  limited,
  registryItem,
  remotesOf,
  REGISTRY_LIMITS,
  stateItem,
  type RegistryItem,
} from '../../src/census/registry.js';
import { readPackageJson } from '../../src/util/package-file.js';

const VENDORED = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const OFFICIAL = {
  'io.modelcontextprotocol.registry/official': {
    status: 'active',
    publishedAt: '2026-10-02T00:00:00Z',
    isLatest: true,
  },
};
const item = (server: Record<string, unknown>, meta: Record<string, unknown> = OFFICIAL): RegistryItem => ({
  server: { $schema: VENDORED, name: 'io.example/a', description: 'A server', version: '1.0.0', ...server },
  _meta: meta,
});
const remote = (url: string) => ({ type: 'streamable-http', url });
/** As the census's state holds it: the item's JSON text as `limited` kept it, read back. */
const kept = (i: RegistryItem) => stateItem(JSON.parse(limited(i)))!;

describe('each server.json bounded: skipped with why, never cut', () => {
  it(`a server.json over ${REGISTRY_LIMITS.serverJsonBytes} bytes: kept as a record of why, its name and short fields only`, () => {
    const big = item({
      remotes: [remote('https://a.example/mcp')],
      websiteUrl: `https://a.example/${'x'.repeat(REGISTRY_LIMITS.serverJsonBytes)}`,
    });
    const k = kept(big);
    assert.match(k.census.skipped!, /^its server\.json is 65 KiB, over the limit of 64 KiB: not read$/);
    assert.deepEqual(k.server, { $schema: VENDORED, name: 'io.example/a', description: 'A server', version: '1.0.0' });
    assert.deepEqual(k._meta, OFFICIAL);
    assert.deepEqual(remotesOf(k), [], 'none of its remotes probed');
    assert.ok(limited(big).length < 1_000);
  });

  it('one just under the limit is kept whole', () => {
    const pad =
      REGISTRY_LIMITS.serverJsonBytes - JSON.stringify(item({ websiteUrl: 'https://a.example/' })).length - 100;
    const whole = item({
      websiteUrl: `https://a.example/${'x'.repeat(pad)}`,
      remotes: [remote('https://a.example/mcp')],
    });
    assert.equal(limited(whole), JSON.stringify(whole));
    assert.equal(kept(whole).census.skipped, null);
    assert.equal(remotesOf(kept(whole)).length, 1);
  });

  it("the registry's _meta for an item over its limit: skipped too", () => {
    const k = kept(
      item(
        { remotes: [remote('https://a.example/mcp')] },
        { ...OFFICIAL, 'io.example/big': 'x'.repeat(REGISTRY_LIMITS.metaBytes) },
      ),
    );
    assert.match(k.census.skipped!, /^the registry's _meta for it is 65 KiB, over the limit of 64 KiB: not read$/);
    assert.deepEqual(k._meta, OFFICIAL);
  });

  it(`more than ${REGISTRY_LIMITS.remotesPerServer} remotes: none probed, none cut (today's census kept the first 20)`, () => {
    const urls = Array.from({ length: REGISTRY_LIMITS.remotesPerServer + 1 }, (_, i) => `https://a.example/mcp/${i}`);
    const k = kept(item({ remotes: urls.map(remote) }));
    assert.equal(k.census.skipped, 'it lists 21 remotes, over the limit of 20: none probed');
    assert.deepEqual(remotesOf(k), []);
    assert.equal((k.server.remotes as unknown[]).length, 21, 'its server.json is kept whole');
    const twenty = kept(item({ remotes: urls.slice(0, 20).map(remote) }));
    assert.equal(twenty.census.skipped, null);
    assert.equal(remotesOf(twenty).length, 20);
  });

  it('a URL over 2,048 characters is refused whole, never cut (a {placeholder} past the cut stays seen)', () => {
    const long = `https://a.example/${'p'.repeat(2_100)}/{tenant}`;
    const [r] = remotesOf(kept(item({ remotes: [remote(long)] })));
    assert.equal(r!.url, long, 'recorded as listed');
    assert.equal(r!.kind, 'unusable');
    assert.match(r!.why!, /^the URL is 2,127 characters, over the limit of 2,048: not probed$/);
    const [edge] = remotesOf(kept(item({ remotes: [remote(`https://a.example/${'p'.repeat(2_048 - 18)}`)] })));
    assert.equal(edge!.url.length, 2_048);
    assert.equal(edge!.kind, 'streamable-http');
  });

  it('a name the schema would not allow (over 200 characters) is not an item', () => {
    assert.equal(registryItem({ server: { name: `io.example/${'n'.repeat(190)}` } }), null);
    assert.ok(registryItem({ server: { name: 'io.example/n' } }));
  });

  it('the registry cannot say what the census made of an item: a `census` field of its own is ignored', () => {
    const forged = {
      ...item({ remotes: Array.from({ length: 30 }, (_, i) => remote(`https://a.example/${i}`)) }),
      census: { skipped: null, serverJson: { schema: '2025-12-11', valid: true, why: null } },
    };
    assert.equal(kept(registryItem(forged)!).census.skipped, 'it lists 30 remotes, over the limit of 20: none probed');
  });
});

describe('each server.json of the vendored schema validated against it', () => {
  it('the vendored schema is the one the census names', () =>
    assert.equal(readPackageJson<{ $id: string }>('schemas/registry-server.schema.2025-12-11.json').$id, VENDORED));

  const rows: Array<
    [
      string,
      Record<string, unknown>,
      { schema: string | null; valid: boolean | null; why: RegExp | null },
      RegExp | null,
    ]
  > = [
    ['valid', { remotes: [remote('https://a.example/mcp')] }, { schema: '2025-12-11', valid: true, why: null }, null],
    [
      'invalid (a description over 100 characters): recorded, not probed',
      { description: 'd'.repeat(101) },
      { schema: '2025-12-11', valid: false, why: /^\/description: must NOT have more than 100 characters/ },
      /^its server\.json is invalid against the registry's schema 2025-12-11: none probed$/,
    ],
    [
      'invalid (a remote without a url)',
      { remotes: [{ type: 'streamable-http' }] },
      { schema: '2025-12-11', valid: false, why: /\/remotes\/0/ },
      /invalid/,
    ],
    [
      'another version: probed, not validated',
      {
        $schema: 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json',
        description: 'd'.repeat(101),
      },
      { schema: '2025-09-29', valid: null, why: /^not validated: schema 2025-09-29 not vendored$/ },
      null,
    ],
    [
      'no $schema: probed, not validated',
      { $schema: undefined },
      { schema: null, valid: null, why: /^not validated: no \$schema$/ },
      null,
    ],
    [
      'a $schema of something else',
      { $schema: 'https://evil.example/schemas/2025-12-11/server.schema.json' },
      { schema: null, valid: null, why: /^not validated: \$schema is not a registry server\.json schema$/ },
      null,
    ],
  ];
  for (const [label, server, want, skipped] of rows) {
    it(label, () => {
      const a = assess(item(server));
      assert.equal(a.serverJson.schema, want.schema);
      assert.equal(a.serverJson.valid, want.valid);
      if (want.why) assert.match(a.serverJson.why!, want.why);
      else assert.equal(a.serverJson.why, null);
      if (skipped) assert.match(a.skipped!, skipped);
      else assert.equal(a.skipped, null);
    });
  }

  it('bounded: a server.json at the size limit validates in well under a second', () => {
    const remotes = Array.from({ length: 20 }, (_, i) => ({
      type: 'streamable-http',
      url: `https://a.example/${i}`,
      headers: Array.from({ length: 60 }, (_, k) => ({ name: `H${k}`, description: 'x'.repeat(20) })),
    }));
    const big = item({ remotes });
    assert.ok(JSON.stringify(big.server).length < REGISTRY_LIMITS.serverJsonBytes);
    const start = performance.now();
    for (let i = 0; i < 20; i++) assess(big);
    assert.ok(performance.now() - start < 1_000);
  });
});
