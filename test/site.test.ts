/**
 * `onetap site`: a workspace with a week of recorded refreshes, written as a static site, then checked three
 * ways: the files are what `serve` answers, the cards validate, and Debian's Chromium opens index.html from
 * file:// with every request staying on file:// and every link landing on a page that exists.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { loadCatalog, refresh, TextStore, validateCard } from '../src/index.js';
import { siteFiles } from '../src/site/site.js';
import { startServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { CONTENT_SECURITY_POLICY } from '../src/status/page.js';
import { answer, json, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

const HOSTILE_NAME = 'Hostile <script>window.__xss=1</script>';
const HOSTILE_TOOL = '<img src=x onerror=alert(1)>';
const BASE = 'https://lists.example.org/onetap';
const DAY = 86_400_000;
const TODAY = new Date(Math.floor(Date.now() / DAY) * DAY + 6 * 3_600_000); // 06:00 UTC today

let fleet: Fleet;
let ws: Awaited<ReturnType<typeof workspace>>;
let out: string;
let browser: Browser | null = null;

/** Switch per simulated day (days ago): up, or failing with a 503. */
const SWITCH = ['flaky', 'up', 'up', 'flaky', 'up', 'up', 'up'];

before(async () => {
  fleet = await startFleet({
    switch: (c) => (c.state.mode === 'flaky' ? void c.res.writeHead(503).end('busy') : answer(c)),
    hostile: (c) => {
      if (c.msg?.method === 'tools/list')
        return json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result: { tools: [{ name: HOSTILE_TOOL }] } });
      answer(c);
    },
  });
  ws = await workspace(
    catalogOf(
      [
        server('Steady', fleet.url('ok-json')),
        server('Switch', fleet.url('switch')),
        server(HOSTILE_NAME, fleet.url('hostile'), { description: 'Description with <b>markup</b> & "quotes"' }),
      ],
      { policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] } },
    ),
  );
  for (let d = SWITCH.length - 1; d >= 0; d--) {
    fleet.state('switch').mode = SWITCH[d];
    const at = new Date(TODAY.getTime() - d * DAY);
    await refresh({
      catalogPath: ws.catalogPath,
      write: true,
      allowHttp: true,
      timeoutMs: 2_000,
      probe: { retryDelayMs: 10 },
      now: () => at,
    });
  }
  out = join(ws.dir, 'site');
  const r = await runCli([
    'site',
    '--out',
    out,
    '--catalog',
    ws.catalogPath,
    '--state',
    ws.statePath,
    '--base-url',
    BASE,
    '--allow-http',
  ]);
  assert.equal(r.code, 0, r.stderr);
  if (existsSync('/usr/bin/chromium')) {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  }
});
after(async () => {
  await browser?.close();
  await fleet.close();
});

const needBrowser = (t: { skip: (m: string) => void }) => {
  if (browser) return true;
  if (process.env.CI) assert.fail('Chromium is missing on CI: .ci/run installs the Debian package chromium');
  t.skip('no /usr/bin/chromium (apt-get install chromium)');
  return false;
};

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** A page that records every request it makes and every dialog a script opens. */
async function watchedPage(): Promise<{ page: Page; requests: string[]; dialogs: string[]; cspErrors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
  const requests: string[] = [];
  const dialogs: string[] = [];
  const cspErrors: string[] = [];
  page.on('request', (q) => requests.push(q.url()));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  return { page, requests, dialogs, cspErrors };
}

describe('onetap site: the files', () => {
  it('writes the status pages, discovery documents, cards and the JSON API with fixed windows', async () => {
    assert.deepEqual(await filesUnder(out), [
      '.nojekyll',
      '.well-known/ai-catalog.json',
      '.well-known/mcp/catalog.json',
      'api/refreshes/latest.json',
      'api/servers.json',
      'api/servers/hostile-script-window-xss-1-script/history-30.json',
      'api/servers/hostile-script-window-xss-1-script/history-90.json',
      'api/servers/steady/history-30.json',
      'api/servers/steady/history-90.json',
      'api/servers/switch/history-30.json',
      'api/servers/switch/history-90.json',
      'badge/hostile-script-window-xss-1-script.svg',
      'badge/list.svg',
      'badge/steady.svg',
      'badge/switch.svg',
      'cards/hostile-script-window-xss-1-script.json',
      'cards/steady.json',
      'cards/switch.json',
      'index.html',
      'servers/hostile-script-window-xss-1-script.html',
      'servers/steady.html',
      'servers/switch.html',
    ]);
    const history = JSON.parse(await readFile(join(out, 'api/servers/switch/history-30.json'), 'utf8')) as {
      days: number;
      observations: Array<{ verdict: string }>;
      daily: Array<{ verdict: string | null }>;
    };
    assert.equal(history.days, 30);
    assert.equal(history.daily.length, 30);
    assert.deepEqual(
      history.observations.map((o) => o.verdict),
      ['live', 'live', 'live', 'failed', 'live', 'live', 'failed'],
    );
    assert.deepEqual(
      history.daily.slice(-7).map((d) => d.verdict),
      ['live', 'live', 'live', 'failed', 'live', 'live', 'failed'],
    );
    const index = await readFile(join(out, 'index.html'), 'utf8');
    assert.ok(
      index.includes(
        `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY.replaceAll("'", '&#39;')}">`,
      ),
      'the same CSP as serve, as a meta tag',
    );
    assert.ok(!/(src|href)="(https?:)?\/\//.test(index), 'no external references');
    assert.ok(!/(src|href)="\//.test(index), 'no root-relative links (a project Pages site lives under /<repo>/)');
    assert.ok(index.includes('Hostile &lt;script&gt;window.__xss=1&lt;/script&gt;'));
  });

  it('each JSON document of the API is what its published JSON Schema (docs/reference/schemas/) says', async () => {
    const dir = new URL('../../docs/reference/schemas/', import.meta.url);
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    for (const name of await readdir(dir)) ajv.addSchema(JSON.parse(await readFile(new URL(name, dir), 'utf8')));
    const schemaOf = (path: string) =>
      path === 'api/servers.json'
        ? 'StatusModel'
        : path === 'api/refreshes/latest.json'
          ? 'RefreshView'
          : /^api\/servers\/[^/]+\/history-\d+\.json$/.test(path)
            ? 'HistoryAnswer'
            : null;
    const documents = (await filesUnder(out)).filter((path) => path.startsWith('api/'));
    assert.equal(documents.length, 8);
    for (const path of documents) {
      const validate = ajv.getSchema(`${schemaOf(path)}.schema.json`);
      assert.ok(validate, path);
      const valid = validate(JSON.parse(await readFile(join(out, path), 'utf8')));
      assert.ok(valid, `${path}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    }
    const servers = JSON.parse(await readFile(join(out, 'api/servers.json'), 'utf8'));
    servers.servers[0].uptime = 1;
    assert.equal(ajv.getSchema('StatusModel.schema.json')!(servers), false, 'a field the schema does not name fails');
  });

  it('the documents are byte for byte what serve answers for the same catalog, history and time', async () => {
    const now = new Date();
    const { catalog } = await loadCatalog(ws.catalogPath);
    const files = new Map(
      (await siteFiles(catalog, new TextStore(ws.catalogPath), { baseUrl: BASE, now })).map((f) => [f.path, f.content]),
    );
    const served = await startServer({
      catalogPath: ws.catalogPath,
      port: 0,
      baseUrl: BASE,
      routes: statusRoutes({ catalogPath: ws.catalogPath, now: () => now, clockStepMs: 1 }),
    });
    try {
      const pairs: Array<[string, string]> = [
        ['.well-known/ai-catalog.json', '/.well-known/ai-catalog.json'],
        ['.well-known/mcp/catalog.json', '/.well-known/mcp/catalog.json'],
        ['cards/switch.json', '/cards/switch.json'],
        ['api/servers.json', '/api/servers'],
        ['api/refreshes/latest.json', '/api/refreshes/latest'],
        ['api/servers/switch/history-30.json', '/api/servers/switch/history?days=30'],
        ['api/servers/steady/history-90.json', '/api/servers/steady/history?days=90'],
        ['badge/list.svg', '/badge/list.svg'],
        ['badge/switch.svg', '/badge/switch.svg'],
      ];
      for (const [file, route] of pairs) {
        const res = await fetch(served.url + route);
        assert.equal(res.status, 200, route);
        assert.equal(files.get(file), await res.text(), `${file} = GET ${route}`);
      }
    } finally {
      await served.close();
    }
  });

  it('every card validates, and every catalog entry points at a card the site holds', async () => {
    for (const name of await readdir(join(out, 'cards'))) {
      const card = JSON.parse(await readFile(join(out, 'cards', name), 'utf8'));
      const v = validateCard(card);
      assert.ok(v.valid, `${name}: ${JSON.stringify(v)}`);
    }
    for (const doc of ['.well-known/ai-catalog.json', '.well-known/mcp/catalog.json']) {
      const entries = (JSON.parse(await readFile(join(out, doc), 'utf8')) as { entries: Array<{ url: string }> })
        .entries;
      assert.equal(entries.length, 3);
      for (const e of entries) {
        assert.ok(e.url.startsWith(`${BASE}/cards/`), e.url);
        assert.ok(existsSync(join(out, e.url.slice(BASE.length + 1))), e.url);
      }
    }
  });

  it('usage errors exit 2 before any work; an unreadable catalog exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'onetap-site-'));
    const target = join(dir, 'never');
    const noOut = await runCli(['site', '--catalog', ws.catalogPath]);
    assert.equal(noOut.code, 2);
    assert.match(noOut.stderr, /--out/);
    const badBase = await runCli([
      'site',
      '--out',
      target,
      '--catalog',
      ws.catalogPath,
      '--base-url',
      'lists.example.org',
    ]);
    assert.equal(badBase.code, 2);
    assert.match(badBase.stderr, /--base-url/);
    const missing = await runCli(['site', '--out', target, '--catalog', join(dir, 'nope.json')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /nope\.json/);
    assert.ok(!existsSync(target), 'nothing written');
  });

  it("a server that left the catalog leaves the site; files that are not the site's stay", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'onetap-site-'));
    const siteDir = join(dir, 'site');
    assert.equal(
      (await runCli(['site', '--out', siteDir, '--catalog', ws.catalogPath, '--state', ws.statePath, '--allow-http']))
        .code,
      0,
    );
    await writeFile(join(siteDir, 'CNAME'), 'lists.example.org\n');
    const { catalog } = await loadCatalog(ws.catalogPath);
    const smaller = join(dir, 'servers.json');
    await writeFile(
      smaller,
      JSON.stringify({ ...catalog, servers: catalog.servers.filter((s) => s.name !== 'Switch') }),
    );
    const r = await runCli(['site', '--out', siteDir, '--catalog', smaller, '--state', ws.statePath, '--allow-http']);
    assert.equal(r.code, 0, r.stderr);
    const files = await filesUnder(siteDir);
    assert.ok(files.includes('CNAME'));
    assert.ok(files.includes('servers/steady.html'));
    assert.deepEqual(
      files.filter((f) => f.includes('switch')),
      [],
    );
    // Without --base-url the catalogs point root-relative, as `publish` does.
    const entries = (
      JSON.parse(await readFile(join(siteDir, '.well-known/ai-catalog.json'), 'utf8')) as {
        entries: Array<{ url: string }>;
      }
    ).entries;
    assert.deepEqual(
      entries.map((e) => e.url),
      ['/cards/steady.json', '/cards/hostile-script-window-xss-1-script.json'],
    );
  });
});

describe('onetap site in a real browser, from file://', () => {
  it('the overview opens with the data baked in; no request leaves file://; no script but its own', async (t) => {
    if (!needBrowser(t)) return;
    const { page, requests, dialogs, cspErrors } = await watchedPage();
    await page.goto(pathToFileURL(join(out, 'index.html')).href);
    assert.equal(await page.locator('.server').count(), 3);
    assert.equal(await page.locator('#server-steady .pill').innerText(), '✓ Kept');
    assert.equal(await page.locator('#server-switch .pill').innerText(), '! Kept, probe failed');
    const verdicts = await page
      .locator('#server-switch .bars:not(.thin) .bar')
      .evaluateAll((bars) => bars.map((b) => /\bv-(\w+)/.exec((b as HTMLElement).className)?.[1]));
    assert.equal(verdicts.length, 30);
    assert.deepEqual(verdicts.slice(-7), ['live', 'live', 'live', 'failed', 'live', 'live', 'failed']);
    const hostile = page.locator('.server', { hasText: 'Hostile' });
    assert.equal(await hostile.locator('a.name').innerText(), HOSTILE_NAME);
    await hostile.locator('details summary').click();
    assert.deepEqual(await hostile.locator('.tools li').allInnerTexts(), [HOSTILE_TOOL]);
    assert.equal(await page.locator('.server img, .server script, .server b').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.equal(
      await page.evaluate(() => document.documentElement.dataset.live),
      'false',
      'a static page does not poll',
    );
    await page.waitForTimeout(300);
    assert.deepEqual(dialogs, []);
    assert.deepEqual(cspErrors, [], "the page's own script is allowed by its CSP");
    assert.ok(requests.length >= 1 && requests.every((u) => u.startsWith('file://')), requests.join(' '));
    await page.close();
  });

  it('server links, the way back, and the JSON and discovery links all land on files of the site', async (t) => {
    if (!needBrowser(t)) return;
    const { page, requests } = await watchedPage();
    await page.goto(pathToFileURL(join(out, 'index.html')).href);
    for (const href of await page
      .locator('a[href]')
      .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href))) {
      assert.ok(href.startsWith('file://'), href);
      assert.ok(existsSync(decodeURIComponent(new URL(href).pathname)), `${href} exists`);
    }
    await page.locator('#server-switch a.name').click();
    await page.waitForURL(/\/servers\/switch\.html$/);
    assert.equal(await page.locator('h1').innerText(), 'Switch');
    assert.equal(await page.locator('#observations tbody tr').count(), SWITCH.length);
    assert.deepEqual(
      await page
        .locator('#observations tbody tr')
        .first()
        .locator('td')
        .allInnerTexts()
        .then((c) => c.slice(1, 4)),
      ['! probe failed', 'retryable-5xx', '2'],
    );
    for (const href of await page
      .locator('a[href], link[href]')
      .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href))) {
      assert.ok(existsSync(decodeURIComponent(new URL(href).pathname)), `${href} exists`);
    }
    await page.locator('a', { hasText: 'All servers' }).click();
    await page.waitForURL(/\/index\.html$/);
    assert.equal(await page.locator('.server').count(), 3);
    await page.goto(pathToFileURL(join(out, 'servers/hostile-script-window-xss-1-script.html')).href);
    assert.equal(await page.locator('h1').innerText(), HOSTILE_NAME);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.ok(
      requests.every((u) => u.startsWith('file://')),
      requests.join(' '),
    );
    await page.close();
  });
});
