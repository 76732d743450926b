/** The curation guard: lint rules one by one, and `add` refusing what lint or the probe rejects. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { addServer, type AddRefused } from '../src/curate/add.js';
import { lintCatalog, loadCatalog, parseCatalog } from '../src/index.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

const messages = (c: ReturnType<typeof catalogOf>, allowHttp = false) =>
  lintCatalog(c, { allowHttp }).map((p) => `${p.where}: ${p.message}`);
const one = (c: ReturnType<typeof catalogOf>, pattern: RegExp, allowHttp = false) => {
  const m = messages(c, allowHttp);
  assert.ok(
    m.some((x) => pattern.test(x)),
    `expected ${pattern} in ${JSON.stringify(m)}`,
  );
};

describe('lint', () => {
  it('the shipped catalog passes', async () => {
    const { catalog } = await loadCatalog('catalog/servers.json');
    assert.deepEqual(messages(catalog), []);
    assert.equal(catalog.servers.length, 13);
    assert.equal(catalog.removed.length, 3);
  });
  it('HTTPS only; http on loopback only with --allow-http', () => {
    one(catalogOf([server('A', 'http://a.example/mcp')]), /servers\[0\] \(A\): HTTPS only/);
    assert.deepEqual(messages(catalogOf([server('A', 'http://127.0.0.1:9/mcp')]), true), []);
    one(catalogOf([server('A', 'http://a.example/mcp')]), /HTTPS only/, true);
  });
  it('Streamable HTTP only: stdio, legacy /sse and other transports', () => {
    one(catalogOf([{ ...server('S', 'https://s.example/mcp'), command: 'npx' } as never]), /stdio/);
    one(catalogOf([server('S', 'https://s.example/sse')]), /legacy HTTP\+SSE/);
    one(catalogOf([server('S', 'https://s.example/mcp', { transport: 'sse' })]), /Streamable HTTP only/);
  });
  it('no OAuth-only, no paid-only', () => {
    one(catalogOf([server('O', 'https://o.example/mcp', { oauth: true })]), /OAuth-only/);
    one(catalogOf([server('P', 'https://p.example/mcp', { paid: true })]), /paid-only/);
  });
  it('no duplicate host unless a declared shared gateway; Jina /v1 and /sse are one host', () => {
    one(
      catalogOf([server('J1', 'https://mcp.jina.ai/v1'), server('J2', 'https://mcp.jina.ai/sse')]),
      /servers\[1\] \(J2\): duplicate host mcp\.jina\.ai/,
    );
    const gw = catalogOf(
      [
        server('Y', 'https://gateway.mcpservers.org/yahoo/mcp'),
        server('Z', 'https://gateway.mcpservers.org/other/mcp'),
      ],
      { policy: { authOptionalHosts: [], sharedGatewayHosts: ['gateway.mcpservers.org'] } },
    );
    assert.deepEqual(messages(gw), []);
    one(
      catalogOf(
        [server('Y', 'https://gateway.mcpservers.org/y/mcp'), server('Y2', 'https://gateway.mcpservers.org/y/mcp/')],
        { policy: { authOptionalHosts: [], sharedGatewayHosts: ['gateway.mcpservers.org'] } },
      ),
      /same URL/,
    );
  });
  it('nothing from the removed list (same URL, or same host off a gateway)', () => {
    const removed = [{ name: 'Fetch', url: 'https://remote.mcpservers.org/fetch/mcp', reason: 'dead' }];
    one(
      catalogOf([server('F', 'https://remote.mcpservers.org/fetch/mcp')], { removed }),
      /previously removed: removed\[0\] \(Fetch, dead\)/,
    );
    one(catalogOf([server('F2', 'https://remote.mcpservers.org/other/mcp')], { removed }), /previously removed/);
  });
  it('requiresAuth only on allowed hosts', () => {
    one(catalogOf([server('K', 'https://k.example/mcp', { requiresAuth: true })]), /requiresAuth is only allowed/);
    assert.deepEqual(
      messages(
        catalogOf([server('Jina', 'https://mcp.jina.ai/v1', { requiresAuth: true })], {
          policy: { authOptionalHosts: ['mcp.jina.ai'], sharedGatewayHosts: [] },
        }),
      ),
      [],
    );
  });
  it('no default header that looks secret; non-secret defaults are fine', () => {
    one(
      catalogOf([server('H', 'https://h.example/mcp', { headers: { Authorization: 'Bearer sk-123' } })]),
      /default header "Authorization" looks secret/,
    );
    one(catalogOf([server('H', 'https://h.example/mcp', { headers: { 'X-Api-Key': 'k' } })]), /looks secret/);
    assert.deepEqual(
      messages(catalogOf([server('H', 'https://h.example/mcp', { headers: { 'X-Client': 'kai' } })])),
      [],
    );
  });
  it("probe keys: never the store's or the CI's variables; a credential's name only listed in full; with policy.keyEnv only what it lists", () => {
    const keyed = (env: string, keyEnv?: string[]) =>
      catalogOf(
        [
          server('Jina', 'https://mcp.jina.ai/v1', {
            requiresAuth: true,
            probeHeaders: { Authorization: { env, prefix: 'Bearer ' } },
          }),
        ],
        { policy: { authOptionalHosts: ['mcp.jina.ai'], sharedGatewayHosts: [], ...(keyEnv ? { keyEnv } : {}) } },
      );
    assert.deepEqual(messages(keyed('JINA_API_KEY')), []);
    assert.deepEqual(messages(keyed('JINA_API_KEY', ['JINA_*'])), []);
    assert.deepEqual(messages(keyed('JINA_TOKEN', ['JINA_TOKEN'])), []);
    one(
      keyed('ONETAP_STORE_URL'),
      /^servers\[0\] \(Jina\): probeHeaders\.Authorization: ONETAP_STORE_URL is one of the store's or the CI's own variables \(ONETAP_…\): never a probe key/,
    );
    one(keyed('GITHUB_TOKEN', ['GITHUB_TOKEN']), /GITHUB_TOKEN is one of the store's or the CI's own variables/);
    one(
      keyed('GITHUB_TOKEN', ['GITHUB_TOKEN']),
      /^policy\.keyEnv\[0\]: GITHUB_TOKEN names the store's or the CI's own variables \(GITHUB_…\), refused always/,
    );
    one(
      keyed('JINA_TOKEN', ['JINA_*']),
      /JINA_TOKEN ends in _TOKEN: a probe key only when policy\.keyEnv lists it by its full name/,
    );
    one(keyed('OTHER_KEY', ['JINA_API_KEY']), /OTHER_KEY is not in policy\.keyEnv/);
    one(keyed('JINA_API_KEY', ['JINA*']), /^policy\.keyEnv\[0\]: must match pattern/);
  });
  it('every entry has a decision record', () => {
    one(catalogOf([server('D', 'https://d.example/mcp', { decision: undefined })]), /no decision record/);
  });
  it('template variables and credentials in URLs', () => {
    one(catalogOf([server('T', 'https://t.example/{TENANT}/mcp')]), /template variable/);
    one(catalogOf([server('T', 'https://t.example/mcp?api_key=x')]), /looks secret/);
  });
  it('CLI: each problem as "file: servers[i] (name): message", exit 1; clean exit 0', async () => {
    const { catalogPath } = await workspace(
      catalogOf([server('A', 'http://a.example/mcp'), server('B', 'https://a.example/mcp')]),
    );
    const bad = await runCli(['lint', '--catalog', catalogPath]);
    assert.equal(bad.code, 1);
    assert.match(
      bad.stdout,
      new RegExp(`^${catalogPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: servers\\[0\\] \\(A\\): HTTPS only`, 'm'),
    );
    const good = await runCli(['lint']);
    assert.equal(good.code, 0, good.stdout + good.stderr);
  });
  it('a catalog that is not JSON, or lacks required fields, is a clear error (exit 1)', async () => {
    assert.throws(() => parseCatalog('{"servers":[{"name":"x"}]}'), /servers\[0\] \(x\)\.url: is required/);
    const { catalogPath } = await workspace(catalogOf([]));
    await writeFile(catalogPath, '{ nope');
    const r = await runCli(['lint', '--catalog', catalogPath]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not JSON/);
  });
});

describe('add', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet();
  });
  after(async () => {
    await fleet.close();
  });
  const base = () =>
    catalogOf([server('Existing', 'https://existing.example/mcp')], {
      removed: [{ name: 'Dead', url: 'https://dead.example/mcp', reason: 'dead' }],
    });

  it('refuses a duplicate host', async () => {
    const { catalogPath } = await workspace(base());
    await assert.rejects(
      addServer({
        catalogPath,
        url: 'https://existing.example/other',
        name: 'N',
        description: 'd',
        decision: 'me: why',
      }),
      (e: AddRefused) => /duplicate host/.test(e.message),
    );
  });
  it('refuses a removed host', async () => {
    const { catalogPath } = await workspace(base());
    const r = await runCli([
      'add',
      'https://dead.example/mcp',
      '--name',
      'Dead again',
      '--description',
      'd',
      '--decision',
      'me: it is back',
      '--catalog',
      catalogPath,
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /previously removed/);
  });
  it('refuses without a "who: why" decision', async () => {
    const { catalogPath } = await workspace(base());
    await assert.rejects(
      addServer({
        catalogPath,
        url: fleet.url('ok-json'),
        name: 'N',
        description: 'd',
        decision: 'because',
        allowHttp: true,
      }),
      /who: why/,
    );
  });
  it('refuses a server that is not live, and says why', async () => {
    const { catalogPath } = await workspace(base());
    const before = await readFile(catalogPath, 'utf8');
    await assert.rejects(
      addServer({
        catalogPath,
        url: fleet.url('http-404'),
        name: 'N',
        description: 'd',
        decision: 'me: why',
        allowHttp: true,
      }),
      /not attested live: drop\/http-404/,
    );
    assert.equal(await readFile(catalogPath, 'utf8'), before);
  });
  it('refuses a probe key the key rule refuses: the own variables at the flag (exit 2), the rest as lint does (exit 1), nothing probed', async () => {
    const catalog = base();
    catalog.policy.authOptionalHosts = ['127.0.0.1'];
    const { catalogPath } = await workspace(catalog);
    const hits = () => fleet.hits('ok-json').POST;
    const before = hits();
    const own = await runCli([
      'add',
      fleet.url('ok-json'),
      '--name',
      'K',
      '--description',
      'd',
      '--decision',
      'me: why',
      '--requires-auth',
      '--probe-header',
      'Authorization: Bearer ${GITHUB_TOKEN}',
      '--catalog',
      catalogPath,
      '--allow-http',
    ]);
    assert.equal(own.code, 2);
    assert.match(own.stderr, /--probe-header: GITHUB_TOKEN is one of the store's or the CI's own variables/);
    const credential = await runCli(
      [
        'add',
        fleet.url('ok-json'),
        '--name',
        'K',
        '--description',
        'd',
        '--decision',
        'me: why',
        '--requires-auth',
        '--probe-header',
        'Authorization: Bearer ${DB_PASSWORD}',
        '--catalog',
        catalogPath,
        '--allow-http',
      ],
      { env: { DB_PASSWORD: 'hunter2-hunter2' } },
    );
    assert.equal(credential.code, 1);
    assert.match(credential.stderr, /DB_PASSWORD ends in _PASSWORD/);
    assert.equal(hits(), before, 'no request was made');
  });
  it('adds a live server with its decision record (CLI, exit 0)', async () => {
    const { catalogPath } = await workspace(base());
    const r = await runCli([
      'add',
      fleet.url('ok-json'),
      '--name',
      'Search',
      '--description',
      'Searches',
      '--decision',
      'Ada: users asked for search',
      '--catalog',
      catalogPath,
      '--allow-http',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const { catalog } = await loadCatalog(catalogPath);
    const added = catalog.servers.at(-1)!;
    assert.equal(added.url, fleet.url('ok-json'));
    assert.deepEqual(
      { by: added.decision!.by, why: added.decision!.why },
      { by: 'Ada', why: 'users asked for search' },
    );
    assert.deepEqual(lintCatalog(catalog, { allowHttp: true }), []);
  });
});
