/** Discovery and publishing against loopback fixtures serving the real documents in test/examples/. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discover } from '../src/discover/discover.js';
import { guardedGet, guardedLookup, type FetchRefused } from '../src/net/fetcher.js';
import { validateCard, validateDocument } from '../src/discover/card.js';
import { judgeCard } from '../src/discover/eligibility.js';
import { publication, writePublication } from '../src/publish/publish.js';
import { startServer } from '../src/serve/server.js';
import { loadCatalog, parseCatalog } from '../src/index.js';
import { catalogOf, runCli, server } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

const example = (name: string) => readFileSync(new URL(`../../test/examples/${name}`, import.meta.url), 'utf8');
const EMPTY = parseCatalog('{"servers":[]}');

type Route = (req: IncomingMessage, res: ServerResponse) => void;
let origin = '';
let fleet: Fleet;
const seen: Array<{ path: string; headers: IncomingMessage['headers'] }> = [];
const routes = new Map<string, Route>();
const doc =
  (type: string, body: string, extra: Record<string, string> = {}): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': type, ...extra });
    res.end(body);
  };
/** Example documents name example.com and acme.com: point them at the fixture. */
const localize = (text: string) =>
  text.replace(
    /https:\/\/(example|acme|skills\.example|agents\.acme|mcp\.snowdata)\.(com|ai)/g,
    (_m, host) => `${origin}/${host}`,
  );

let fixture: ReturnType<typeof createServer>;
before(async () => {
  fleet = await startFleet();
  fixture = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ path, headers: req.headers });
    const route = routes.get(path);
    if (route) return route(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((r) => fixture.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  const card = (file: string) => doc('application/mcp-server-card+json', example(file));
  const withRemote = (name: string, url: string) =>
    JSON.stringify({
      $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
      name,
      version: '1.0.0',
      description: 'A real job',
      remotes: [{ type: 'streamable-http', url }],
    });
  // AI Catalog shapes
  routes.set('/single/.well-known/ai-catalog.json', (q, s) =>
    doc('application/ai-catalog+json', localize(example('ai-catalog.single-server.json')))(q, s),
  );
  routes.set('/example/mcp/server-card', card('server-card.valid.minimal.json'));
  routes.set('/multi/.well-known/ai-catalog.json', (q, s) =>
    doc('application/ai-catalog+json', localize(example('ai-catalog.multiple-servers.json')))(q, s),
  );
  routes.set('/acme/code-review/server-card', (q, s) =>
    doc('application/mcp-server-card+json', withRemote('com.acme/code-review', `${fleet.url('ok-json')}`))(q, s),
  );
  routes.set('/acme/docs-search/server-card', card('server-card.valid.templated-remote.json'));
  routes.set('/acme/ci-cd/server-card', card('server-card.invalid.missing-name.json'));
  // The older MCP Catalog shapes, served only at /.well-known/mcp/catalog.json
  routes.set('/old/.well-known/mcp/catalog.json', (q, s) =>
    doc('application/json', localize(example('mcp-catalog.multiple-servers.3b2d974.json')))(q, s),
  );
  routes.set('/legacy/.well-known/mcp/catalog.json', (q, s) =>
    doc('application/json', localize(example('mcp-catalog.single-server.legacy-ffe58b0.json')))(q, s),
  );
  routes.set('/example/.well-known/mcp-server-card', card('server-card.valid.minimal.json'));
  // A real-world legacy catalog whose entry points at the MCP endpoint itself
  routes.set('/snow/.well-known/ai-catalog.json', (q, s) =>
    doc('application/ai-catalog+json', localize(example('ai-catalog.realworld.ards-snowdata-legacy.json')))(q, s),
  );
  routes.set('/mcp.snowdata/server-card', (q, s) =>
    doc('application/mcp-server-card+json', withRemote('ai.snowdata.mcp/live-snow', `${origin}/mcp.snowdata`))(q, s),
  );
  // Nesting
  routes.set('/nest/.well-known/ai-catalog.json', (q, s) =>
    doc(
      'application/ai-catalog+json',
      JSON.stringify({
        specVersion: '1.0',
        entries: [
          {
            identifier: 'urn:air:x:catalog:child',
            type: 'application/ai-catalog+json',
            url: `${origin}/nest/child.json`,
          },
          {
            identifier: 'urn:air:x:catalog:inline',
            type: 'application/ai-catalog+json',
            data: {
              specVersion: '1.0',
              entries: [
                {
                  identifier: 'urn:air:x:mcp:inline',
                  type: 'application/mcp-server-card+json',
                  data: JSON.parse(withRemote('x.inline/one', `${fleet.url('ok-sse')}`)),
                },
              ],
            },
          },
        ],
      }),
    )(q, s),
  );
  routes.set(
    '/nest/child.json',
    doc(
      'application/ai-catalog+json',
      JSON.stringify({
        specVersion: '1.0',
        entries: [
          {
            identifier: 'urn:air:x:mcp:child',
            type: 'application/mcp-server-card+json',
            url: '/example/mcp/server-card',
          },
          {
            identifier: 'urn:air:x:catalog:self',
            type: 'application/ai-catalog+json',
            url: '/nest/.well-known/ai-catalog.json',
          },
        ],
      }),
    ),
  );
  // Hostile documents
  routes.set('/huge-list/.well-known/ai-catalog.json', (_q, s) => {
    // A million entries (about 80 MB), written with backpressure so the fixture itself stays small.
    s.writeHead(200, { 'content-type': 'application/ai-catalog+json' });
    s.write('{"specVersion":"1.0","entries":[');
    let i = 0;
    const pump = () => {
      while (i < 1_000_000) {
        const batch = Array.from(
          { length: 1000 },
          (_, j) => `{"identifier":"urn:x:${i + j}","type":"application/mcp-server-card+json","url":"/c"}`,
        ).join(',');
        i += 1000;
        if (!s.write(batch + (i < 1_000_000 ? ',' : ']}'))) return;
      }
      s.end();
    };
    s.on('drain', pump);
    s.on('close', () => s.off('drain', pump));
    pump();
  });
  routes.set(
    '/many/.well-known/ai-catalog.json',
    doc(
      'application/ai-catalog+json',
      JSON.stringify({
        specVersion: '1.0',
        entries: Array.from({ length: 1001 }, (_, i) => ({ identifier: `u${i}`, type: 'x', url: '/c' })),
      }),
    ),
  );
  routes.set('/big-card/server-card', (_q, s) => {
    s.writeHead(200, { 'content-type': 'application/mcp-server-card+json' });
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < 100 && s.write(chunk)) sent++;
      if (sent >= 100) s.end();
    };
    s.on('drain', () => {
      sent++;
      pump();
    });
    s.on('close', () => s.removeAllListeners('drain'));
    pump();
  });
  routes.set(
    '/bigcat/.well-known/ai-catalog.json',
    doc(
      'application/ai-catalog+json',
      JSON.stringify({
        specVersion: '1.0',
        entries: [{ identifier: 'big', type: 'application/mcp-server-card+json', url: '/big-card/server-card' }],
      }),
    ),
  );
  routes.set('/to-metadata', (_q, s) =>
    s.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
  );
  routes.set('/to-v6-loopback', (_q, s) => s.writeHead(302, { location: 'http://[::1]:9/' }).end());
  for (let i = 0; i < 5; i++) routes.set(`/hop${i}`, (_q, s) => s.writeHead(302, { location: `/hop${i + 1}` }).end());
  routes.set('/hop5', doc('application/json', '{}'));
  routes.set('/loop', (_q, s) => s.writeHead(302, { location: '/loop' }).end());
  routes.set(
    '/cookie/.well-known/ai-catalog.json',
    doc(
      'application/ai-catalog+json',
      JSON.stringify({
        specVersion: '1.0',
        entries: [{ identifier: 'c', type: 'application/mcp-server-card+json', url: '/example/mcp/server-card' }],
      }),
      { 'set-cookie': 'session=abc; Path=/' },
    ),
  );
});
after(async () => {
  fixture.closeAllConnections();
  fixture.close();
  await fleet.close();
});

const run = (path: string, extra: object = {}) =>
  discover(`${origin}${path}`, { catalog: EMPTY, allowPrivate: true, ...extra });

describe('discover: every document shape found in the wild', () => {
  it('AI Catalog, single server (origin → /.well-known/ai-catalog.json)', async () => {
    // An origin is a URL without a path: serve the well-known document at the root for this one.
    routes.set('/.well-known/ai-catalog.json', routes.get('/single/.well-known/ai-catalog.json')!);
    const r = await discover(origin, { catalog: EMPTY, allowPrivate: true });
    assert.equal(r.catalogs[0]!.kind, 'ai-catalog');
    assert.equal(r.catalogs[0]!.specVersion, '1.0');
    assert.equal(r.candidates.length, 1);
    const c = r.candidates[0]!;
    assert.equal(c.name, 'example-org/minimal');
    assert.equal(c.valid, true);
    assert.equal(c.eligible, false, 'a card without a remote is not one-tap');
    assert.match(c.why, /no remote/);
    const accept = seen.find((s) => s.path === '/example/mcp/server-card')!.headers.accept;
    assert.equal(accept, 'application/mcp-server-card+json');
    routes.delete('/.well-known/ai-catalog.json');
  });

  it('AI Catalog, several servers: valid+eligible, templated (needs input), invalid card', async () => {
    const r = await run('/multi/.well-known/ai-catalog.json');
    const by = Object.fromEntries(r.candidates.map((c) => [c.identifier, c]));
    assert.deepEqual(
      [by['urn:air:acme.com:mcp:code-review']!.valid, by['urn:air:acme.com:mcp:code-review']!.eligible],
      [true, true],
    );
    assert.match(by['urn:air:acme.com:mcp:docs-search']!.why, /template variables \(\{tenant\}\)/);
    assert.equal(by['urn:air:acme.com:mcp:ci-cd']!.valid, false);
    assert.ok(by['urn:air:acme.com:mcp:ci-cd']!.errors.some((e: string) => /required property 'name'/.test(e)));
  });

  it('the older MCP Catalog (type field) as a URL', async () => {
    const r = await run('/old/.well-known/mcp/catalog.json');
    assert.equal(r.catalogs[0]!.specVersion, 'draft');
    assert.equal(r.candidates.length, 3);
  });

  it('the oldest MCP Catalog (mediaType, application/mcp-server+json, urn:mcp:server)', async () => {
    const r = await run('/legacy/.well-known/mcp/catalog.json');
    assert.equal(r.candidates.length, 1);
    assert.equal(r.candidates[0]!.identifier, 'urn:mcp:server:com.example/weather');
    assert.equal(r.candidates[0]!.title, 'Weather Service');
    assert.equal(r.candidates[0]!.valid, true);
  });

  it('a real-world legacy catalog whose entry is the MCP endpoint: the card is found at <url>/server-card', async () => {
    const r = await run('/snow/.well-known/ai-catalog.json');
    assert.equal(r.candidates.length, 1);
    assert.equal(r.candidates[0]!.cardUrl, `${origin}/mcp.snowdata/server-card`);
    assert.equal(r.candidates[0]!.valid, true);
  });

  it('an MCP endpoint URL: GET <url>/server-card', async () => {
    const r = await run('/mcp.snowdata');
    assert.equal(r.candidates[0]!.name, 'ai.snowdata.mcp/live-snow');
  });

  it('nested catalogs (by URL and inline), a self-reference is read once', async () => {
    const r = await run('/nest/.well-known/ai-catalog.json');
    assert.deepEqual(r.candidates.map((c) => c.name).sort(), ['example-org/minimal', 'x.inline/one']);
    assert.ok(
      r.catalogs.some((c) => /cycle/.test(c.error ?? '')),
      JSON.stringify(r.catalogs),
    );
    assert.ok(r.catalogs.length <= 4);
  });

  it('--probe attests each eligible remote', async () => {
    const r = await run('/multi/.well-known/ai-catalog.json', { probe: true });
    const ok = r.candidates.find((c) => c.identifier === 'urn:air:acme.com:mcp:code-review')!;
    assert.equal(`${ok.verdict}/${ok.reason}`, 'live/ok');
    assert.equal(
      r.candidates.find((c) => c.identifier === 'urn:air:acme.com:mcp:docs-search')!.verdict,
      null,
      'ineligible ones are not probed',
    );
  });

  it('CLI: --json has {source, catalogs, candidates} with the contract fields', async () => {
    const r = await runCli([
      'discover',
      `${origin}/multi/.well-known/ai-catalog.json`,
      '--json',
      '--allow-private',
      '--catalog',
      'catalog/servers.json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out), ['source', 'catalogs', 'candidates', 'unread', 'unreadCount']);
    for (const k of ['name', 'title', 'url', 'cardUrl', 'valid', 'errors', 'eligible', 'why', 'verdict', 'reason'])
      assert.ok(k in out.candidates[0], k);
  });
});

describe('validate', () => {
  // Upstream's verdicts under the current (card-only) schema: every `server-card.invalid.*` example is invalid,
  // `wrong-schema-name` (a v1 `server.schema.json` $schema) included.
  const expectations: Record<string, boolean> = {};
  for (const f of readdirSync(new URL('../../test/examples/', import.meta.url))) {
    if (f.startsWith('server-card.valid')) expectations[f] = true;
    else if (f.startsWith('server-card.invalid')) expectations[f] = false;
    else if (/^registry-server\.(remote|npm)/.test(f)) expectations[f] = true;
  }
  for (const [file, valid] of Object.entries(expectations)) {
    it(`${file} is ${valid ? 'valid' : 'invalid'} (exit ${valid ? 0 : 1})`, async () => {
      const r = await runCli(['validate', `test/examples/${file}`]);
      assert.equal(r.code, valid ? 0 : 1, r.stdout + r.stderr);
      if (!valid) assert.match(r.stdout, /^ {2}\/\S*: /m, 'each error with its JSON pointer');
      if (file.startsWith('registry')) assert.match(r.stdout, /registry server\.json/);
    });
  }
  it('a card only the earlier (seed-era) schema accepts: invalid by default, valid with a warning under the legacy reading', async () => {
    const card = JSON.parse(example('server-card.invalid.wrong-schema-name.json'));
    const strict = validateDocument(card);
    assert.deepEqual([strict.valid, strict.schema], [false, 'legacy']);
    assert.match(strict.errors[0]!.message, /must match pattern/);
    const lenient = validateDocument(card, { legacy: true });
    assert.deepEqual([lenient.valid, lenient.schema, lenient.errors], [true, 'legacy', []]);
    assert.match(
      lenient.warnings[0]!,
      /passes only the earlier \(seed-era\) Server Card schema.*\/\$schema: must match pattern/,
    );
    const cli = await runCli(['validate', 'test/examples/server-card.invalid.wrong-schema-name.json']);
    assert.equal(cli.code, 1);
    assert.match(
      cli.stdout,
      /invalid Server Card\n {2}\/\$schema: must match pattern[^\n]*\n {2}warning: passes only the earlier/,
    );
    const legacy = await runCli([
      'validate',
      'test/examples/server-card.invalid.wrong-schema-name.json',
      '--legacy',
      '--json',
    ]);
    assert.equal(legacy.code, 0, legacy.stdout);
    const out = JSON.parse(legacy.stdout);
    assert.deepEqual([out.valid, out.schema, out.errors, out.warnings.length], [true, 'legacy', [], 1]);
    // Neither schema accepts a card without a name: no legacy reading then.
    assert.equal(
      validateDocument(JSON.parse(example('server-card.invalid.missing-name.json')), { legacy: true }).schema,
      null,
    );
  });
  it('a URL, and a URL refused without --allow-private', async () => {
    assert.equal((await runCli(['validate', `${origin}/example/mcp/server-card`, '--allow-private'])).code, 0);
    const refused = await runCli(['validate', `${origin}/example/mcp/server-card`]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused: 127\.0\.0\.1 is a private or reserved address/);
  });
});

describe('safety: discovery reads untrusted input', () => {
  it('a loopback target is refused without --allow-private (http and https, by name and by address)', async () => {
    await assert.rejects(discover(origin, { catalog: EMPTY }), (e: FetchRefused) => e.code === 'private-address');
    await assert.rejects(
      discover(origin.replace('http:', 'https:'), { catalog: EMPTY }),
      /127\.0\.0\.1 is a private or reserved address/,
    );
    const cli = await runCli(['discover', origin]);
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /refused: 127\.0\.0\.1 is a private or reserved address/);
    await assert.rejects(guardedGet('https://localhost:9/x', 'application/json'), /private or reserved/);
    await assert.rejects(guardedGet('https://[::1]:9/x', 'application/json'), /private or reserved/);
    await assert.rejects(guardedGet('https://10.1.2.3/x', 'application/json'), /private or reserved/);
    await assert.rejects(guardedGet('https://100.64.0.1/x', 'application/json'), /private or reserved/);
    await assert.rejects(guardedGet('https://[::ffff:127.0.0.1]/x', 'application/json'), /private or reserved/);
  });
  it('the check runs after DNS resolution (a name that resolves to loopback)', async () => {
    const err = await new Promise<Error | null>((resolve) =>
      guardedLookup()('localhost', { all: true }, (e) => resolve(e)),
    );
    assert.match(String(err), /resolves to (127\.0\.0\.1|::1), a private or reserved address/);
  });
  it('a redirect to 169.254.169.254 (cloud metadata) is refused', async () => {
    await assert.rejects(
      guardedGet(`${origin}/to-metadata`, 'application/json', { trustedAddresses: ['127.0.0.1'] }),
      (e: FetchRefused) => e.code === 'private-address',
    );
    await assert.rejects(
      guardedGet(`${origin}/to-v6-loopback`, 'application/json', { trustedAddresses: ['127.0.0.1'] }),
      (e: FetchRefused) => e.code === 'private-address',
    );
  });
  it('at most 3 redirects, and no loops', async () => {
    await assert.rejects(
      guardedGet(`${origin}/hop0`, 'application/json', { allowPrivate: true }),
      /more than 3 redirects/,
    );
    assert.equal((await guardedGet(`${origin}/hop2`, 'application/json', { allowPrivate: true })).status, 200);
    await assert.rejects(guardedGet(`${origin}/loop`, 'application/json', { allowPrivate: true }), /redirect loop/);
  });
  it('a catalog of a million entries ends with a clear error, bounded memory', async () => {
    const before = process.memoryUsage.rss();
    const r = await run('/huge-list/.well-known/ai-catalog.json');
    assert.match(r.catalogs[0]!.error!, /over the 1048576-byte cap/);
    assert.equal(r.candidates.length, 0);
    assert.ok(process.memoryUsage.rss() - before < 64 * 1024 * 1024);
  });
  it('a catalog with more entries than are read is refused clearly', async () => {
    const r = await run('/many/.well-known/ai-catalog.json');
    assert.match(r.catalogs[0]!.error!, /too many entries: 1001/);
  });
  it('a 100 MB card is cut off at the card cap (256 KiB), memory bounded', { timeout: 60_000 }, async () => {
    const before = process.memoryUsage.rss();
    const r = await run('/bigcat/.well-known/ai-catalog.json');
    assert.equal(r.candidates.length, 1);
    assert.ok(
      r.candidates[0]!.errors.some((e) => /over the 262144-byte cap/.test(e)),
      JSON.stringify(r.candidates[0]),
    );
    assert.equal(r.candidates[0]!.errors.length, 1, 'an oversized card URL is not fetched a second time');
    assert.ok(process.memoryUsage.rss() - before < 64 * 1024 * 1024);
    const direct = await run('/big-card/server-card');
    assert.match(direct.catalogs[0]!.error!, /cap/);
  });
  it('no cookies are kept or sent, and no curated headers leave their entry', async () => {
    seen.length = 0;
    await run('/cookie/.well-known/ai-catalog.json');
    assert.ok(seen.length >= 2);
    for (const s of seen) {
      assert.equal(s.headers.cookie, undefined);
      assert.equal(s.headers.authorization, undefined);
    }
  });
});

describe('eligibility (pure)', () => {
  const curated = catalogOf(
    [server('Jina', 'https://mcp.jina.ai/v1', { requiresAuth: true }), server('Ctx', 'https://mcp.context7.com/mcp')],
    {
      policy: { authOptionalHosts: ['mcp.jina.ai'], sharedGatewayHosts: ['gateway.mcpservers.org'] },
      removed: [{ name: 'Fetch', url: 'https://remote.mcpservers.org/fetch/mcp', reason: 'dead' }],
    },
  );
  const remote = (url: string, extra: object = {}) => ({ remotes: [{ type: 'streamable-http', url, ...extra }] });
  const judge = (card: object) => judgeCard(card, curated);
  it('streamable-http on https is eligible; sse-only and http are not', () => {
    assert.equal(judge(remote('https://new.example/mcp')).eligible, true);
    assert.match(judge({ remotes: [{ type: 'sse', url: 'https://new.example/sse' }] }).why, /legacy SSE/);
    assert.match(judge(remote('http://new.example/mcp')).why, /not https/);
  });
  it('a required secret header needs user input, except on an allowed auth-optional host', () => {
    const key = { headers: [{ name: 'Authorization', isRequired: true, isSecret: true }] };
    assert.match(judge(remote('https://paid.example/mcp', key)).why, /required header needs user input: Authorization/);
    const jina = judge(remote('https://mcp.jina.ai/v2', key));
    assert.equal(jina.eligible, false, 'same host as a curated entry');
    const fresh = judgeCard(remote('https://mcp.jina.ai/v1', key), curated);
    assert.deepEqual([fresh.eligible, fresh.requiresAuth, fresh.curated], [true, true, true]);
    assert.equal(
      judge(remote('https://free.example/mcp', { headers: [{ name: 'X-Key', isSecret: true, isRequired: false }] }))
        .eligible,
      true,
    );
  });
  it('removed hosts and duplicate hosts are not eligible; shared gateways are', () => {
    assert.match(judge(remote('https://remote.mcpservers.org/other/mcp')).why, /removed list: Fetch/);
    assert.match(judge(remote('https://mcp.context7.com/v2')).why, /duplicate host of the curated Ctx/);
    assert.equal(judge(remote('https://gateway.mcpservers.org/weather/mcp')).eligible, true);
  });
});

describe('publish and serve', () => {
  it('every card written validates; both catalogs list every server', async () => {
    const out = await mkdtemp(join(tmpdir(), 'onetap-pub-'));
    const r = await runCli(['publish', '--out', out, '--base-url', 'https://lists.example.org']);
    assert.equal(r.code, 0, r.stderr);
    const ai = JSON.parse(await readFile(join(out, '.well-known', 'ai-catalog.json'), 'utf8'));
    const mcp = JSON.parse(await readFile(join(out, '.well-known', 'mcp', 'catalog.json'), 'utf8'));
    // Written out by hand, not derived from the code under test: the id of each curated server.
    const ids = [
      'context7',
      'mdn',
      'deepwiki',
      'parallel-search',
      'yahoo-finance',
      'coingecko',
      'jina-ai',
      'open-meteo-weather',
      'kiwi-com',
      'malwarebytes',
      'tldraw',
      'find-a-domain',
      'subwayinfo-nyc',
    ];
    const expected = ids.map((id) => ({
      identifier: `urn:air:lists.example.org:mcp:${id}`,
      type: 'application/mcp-server-card+json',
      url: `https://lists.example.org/cards/${id}.json`,
    }));
    assert.deepEqual(ai, {
      specVersion: '1.0',
      host: { displayName: 'One-tap remote MCP servers (curated, attested)', identifier: 'lists.example.org' },
      entries: expected,
    });
    assert.deepEqual(mcp, { specVersion: 'draft', entries: expected });
    for (const e of ai.entries) {
      assert.equal(e.type, 'application/mcp-server-card+json');
      assert.match(e.identifier, /^urn:air:lists\.example\.org:mcp:/);
      const card = JSON.parse(await readFile(join(out, new URL(e.url).pathname), 'utf8'));
      assert.deepEqual(validateCard(card).errors, []);
    }
  });

  it('serve: media types, CORS, Cache-Control, ETag and 304', async () => {
    const s = await startServer({ catalogPath: 'catalog/servers.json', port: 0 });
    try {
      const res = await fetch(`${s.url}/.well-known/ai-catalog.json`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/ai-catalog+json');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('cache-control'), 'public, max-age=3600');
      const etag = res.headers.get('etag')!;
      const body = (await res.json()) as { entries: Array<{ url: string }> };
      assert.ok(body.entries[0]!.url.startsWith(s.url), 'absolute URLs on this server');
      const again = await fetch(`${s.url}/.well-known/ai-catalog.json`, {
        headers: { 'if-none-match': `"other", ${etag}` },
      });
      assert.equal(again.status, 304);
      assert.equal(await again.text(), '');
      const card = await fetch(body.entries[0]!.url, { headers: { accept: 'application/mcp-server-card+json' } });
      assert.equal(card.headers.get('content-type'), 'application/mcp-server-card+json');
      assert.equal(
        (await fetch(`${s.url}/.well-known/mcp/catalog.json`)).headers.get('content-type'),
        'application/json',
      );
      assert.equal((await fetch(`${s.url}/nope`)).status, 404);
      assert.equal((await fetch(`${s.url}/.well-known/ai-catalog.json`, { method: 'POST' })).status, 405);
    } finally {
      await s.close();
    }
  });

  it('round trip: publish, serve, discover finds every curated server, valid and eligible', async () => {
    const s = await startServer({ catalogPath: 'catalog/servers.json', port: 0 });
    try {
      const { catalog } = await loadCatalog('catalog/servers.json');
      const r = await discover(s.url, { catalog, allowPrivate: true });
      assert.equal(r.candidates.length, catalog.servers.length);
      for (const c of r.candidates) {
        assert.deepEqual([c.valid, c.eligible, c.curated], [true, true, true], `${c.name}: ${c.why} ${c.errors}`);
      }
      assert.deepEqual(r.candidates.map((c) => c.url).sort(), catalog.servers.map((x) => x.url).sort());
      const jina = r.candidates.find((c) => c.url === 'https://mcp.jina.ai/v1')!;
      assert.equal(jina.requiresAuth, true);
      const fresh = await discover(s.url, { catalog: EMPTY, allowPrivate: true });
      assert.ok(fresh.candidates.every((c) => c.eligible && !c.curated));
    } finally {
      await s.close();
    }
  });

  it('publication gives exactly the documents written out here, every time', async () => {
    const small = catalogOf([
      server('Ctx 7', 'https://mcp.context7.com/mcp', {
        description: 'Up-to-date docs',
        headers: { 'X-Client': 'kai' },
      }),
      server('Jina', 'https://mcp.jina.ai/v1', {
        description: 'Search',
        requiresAuth: true,
        decision: { by: 't', at: '2026-01-05T10:00:00Z', why: 'w' },
      }),
    ]);
    const entry = (id: string) => ({
      identifier: `urn:air:pub.example:mcp:${id}`,
      type: 'application/mcp-server-card+json',
      url: `https://pub.example/base/cards/${id}.json`,
    });
    const schema = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
    const expected = {
      aiCatalog: {
        specVersion: '1.0',
        host: { displayName: 'One-tap remote MCP servers (curated, attested)', identifier: 'pub.example' },
        entries: [entry('ctx-7'), entry('jina')],
      },
      mcpCatalog: { specVersion: 'draft', entries: [entry('ctx-7'), entry('jina')] },
      cards: [
        {
          slug: 'ctx-7',
          path: '/cards/ctx-7.json',
          card: {
            $schema: schema,
            name: 'com.context7.mcp/ctx-7',
            version: '2026.11.30',
            title: 'Ctx 7',
            description: 'Up-to-date docs',
            remotes: [
              {
                type: 'streamable-http',
                url: 'https://mcp.context7.com/mcp',
                headers: [{ name: 'X-Client', value: 'kai' }],
              },
            ],
          },
        },
        {
          slug: 'jina',
          path: '/cards/jina.json',
          card: {
            $schema: schema,
            name: 'ai.jina.mcp/jina',
            version: '2026.1.5',
            title: 'Jina',
            description: 'Search',
            remotes: [
              {
                type: 'streamable-http',
                url: 'https://mcp.jina.ai/v1',
                headers: [
                  {
                    name: 'Authorization',
                    description: 'Optional free API key: initialize works without it, some tools need it.',
                    isRequired: false,
                    isSecret: true,
                    value: 'Bearer {api_key}',
                    variables: { api_key: { description: 'Your API key', isRequired: false, isSecret: true } },
                  },
                ],
              },
            ],
          },
        },
      ],
    };
    for (let i = 0; i < 2; i++)
      assert.deepEqual(
        publication(small, { baseUrl: 'https://pub.example/base/', publisher: 'pub.example' }),
        expected,
      );
    const { catalog } = await loadCatalog('catalog/servers.json');
    const out = await mkdtemp(join(tmpdir(), 'onetap-pub-'));
    assert.equal(
      (await writePublication(publication(catalog), out)).written.length,
      16,
      '13 cards, the manifest, 2 catalogs',
    );
  });
});
