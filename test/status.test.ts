/**
 * The status page end to end: a store filled by real refresh runs over ten simulated days, `onetap serve`
 * on 127.0.0.1, and Debian's Chromium driven by playwright-core. Plus the JSON API shapes and the reports.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { refresh } from '../src/index.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/status/routes.js';
import { answer, json, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

const HOSTILE_TOOL = '<img src=x onerror=alert(1)>';
const HOSTILE_NAME = 'Hostile <script>window.__xss=1</script>';
const DAY = 86_400_000;
const NOW = new Date('2026-11-30T12:00:00Z');
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);

let fleet: Fleet;
let ws: Awaited<ReturnType<typeof workspace>>;
let site: RunningServer;
let browser: Browser | null = null;
let clock = NOW;

/** Switch's state per simulated day (0 = today): up, flaky (503) or dead (404). */
const SWITCH_PLAN: Record<number, string> = { 9: 'up', 8: 'up', 7: 'up', 6: 'up', 5: 'up', 4: 'up', 3: 'flaky', 2: 'up', 1: 'up', 0: 'flaky' };

async function runDay(daysAgo: number) {
  fleet.state('switch').mode = SWITCH_PLAN[daysAgo];
  clock = new Date(NOW.getTime() - daysAgo * DAY);
  return refresh({ catalogPath: ws.catalogPath, statePath: ws.statePath, write: true, allowHttp: true, timeoutMs: 2_000, probe: { retryDelayMs: 10 }, now: () => clock });
}

before(async () => {
  fleet = await startFleet({
    switch: (c) => {
      const mode = c.state.mode ?? 'up';
      if (mode === 'flaky') return void c.res.writeHead(503).end('busy');
      if (mode === 'dead') return void c.res.writeHead(404).end('gone');
      answer(c);
    },
    hostile: (c) => {
      if (c.msg?.method === 'tools/list') return json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result: { tools: [{ name: HOSTILE_TOOL }, { name: '"><svg onload=alert(2)>' }] } });
      answer(c);
    },
  });
  ws = await workspace(catalogOf([
    server('Steady', fleet.url('ok-json')),
    server('Switch', fleet.url('switch')),
    server(HOSTILE_NAME, fleet.url('hostile'), { description: 'Description with <b>markup</b> & "quotes"' }),
    server('Quiet', fleet.url('zero-tools')),
  ]));
  for (let d = 9; d >= 0; d--) await runDay(d);
  site = await startServer({ catalogPath: ws.catalogPath, port: 0, routes: statusRoutes({ statePath: ws.statePath, now: () => clock, refreshMs: 300 }) });
  if (existsSync('/usr/bin/chromium')) {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  }
});
after(async () => { await browser?.close(); await site?.close(); await fleet.close(); });

const needBrowser = (t: { skip: (m: string) => void }) => {
  if (browser) return true;
  if (process.env.CI) assert.fail('Chromium is missing on CI: .ci/run installs the Debian package chromium');
  t.skip('no /usr/bin/chromium (apt-get install chromium)');
  return false;
};

describe('status page in a real browser', () => {
  it('shows each server\'s decision and verdict in words, history bars with the right count and colours', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1000 } });
    const dialogs: string[] = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
    await page.goto(site.url + '/');
    const row = (id: string) => page.locator(`#server-${id}`);
    assert.equal(await row('steady').locator('.pill').innerText(), '✓ Kept');
    assert.equal(await row('switch').locator('.pill').innerText(), '! Kept, probe failed');
    assert.equal(await row('quiet').locator('.pill').innerText(), '? Review');
    assert.match(await row('switch').locator('.reason').innerText(), /failed\/retryable-5xx: a server error, also on the retry/);
    for (const id of ['steady', 'switch', 'quiet']) {
      assert.equal(await row(id).locator('.bars:not(.thin) .bar').count(), 30);
      assert.equal(await row(id).locator('.bars.thin .bar').count(), 90);
    }
    // Switch: the last ten days read up,up,up,up,up,up,flaky,up,up,flaky; older days have no probe.
    const verdicts = await row('switch').locator('.bars:not(.thin) .bar').evaluateAll((bars) => bars.map((b) => (b as HTMLElement).dataset.verdict));
    assert.deepEqual(verdicts.slice(20), ['live', 'live', 'live', 'live', 'live', 'live', 'failed', 'live', 'live', 'failed']);
    assert.ok(verdicts.slice(0, 20).every((v) => v === 'none'));
    const colour = (sel: string) => row('switch').locator(sel).first().evaluate((b) => getComputedStyle(b).backgroundColor);
    assert.equal(await colour('.bars:not(.thin) .bar.v-live'), 'rgb(26, 127, 55)');
    assert.equal(await colour('.bars:not(.thin) .bar.v-failed'), 'rgb(188, 76, 0)');
    assert.equal(await colour('.bars:not(.thin) .bar.v-none'), 'rgb(208, 215, 222)');
    assert.equal(await row('switch').locator('.bars:not(.thin) .bar').nth(26).getAttribute('title'), '2026-11-27: probe failed (1 probe)');
    assert.match(await row('steady').locator('.barlabel').first().innerText(), /100\.0% live/);
    assert.match(await page.locator('#plan').innerText(), /Probe failed \(kept\)\s+Switch: failed\/retryable-5xx/i);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('status.png', ARTIFACTS).pathname, fullPage: true });
    assert.deepEqual(dialogs, []);
    await page.close();
  });

  it('hostile server and tool names render as text and run no script', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
    await page.goto(site.url + '/');
    const row = page.locator('.server', { hasText: 'Hostile' });
    assert.equal(await row.locator('a.name').innerText(), HOSTILE_NAME);
    await row.locator('details summary').click();
    assert.deepEqual(await row.locator('.tools li').allInnerTexts(), [HOSTILE_TOOL, '"><svg onload=alert(2)>']);
    await page.waitForTimeout(700); // two in-place refreshes later, the list the reader opened is still open
    assert.equal(await row.locator('details').getAttribute('open'), '');
    assert.deepEqual(await row.locator('.tools li').allInnerTexts(), [HOSTILE_TOOL, '"><svg onload=alert(2)>']);
    assert.equal(await page.locator('.server img, .server svg, .server script, .server b').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    await page.waitForTimeout(200);
    assert.deepEqual(dialogs, []);
    await page.close();
  });

  it('the server page opens from the overview and lists every probe', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    await page.goto(site.url + '/');
    await page.locator('#server-switch a.name').click();
    await page.waitForURL(/\/servers\/switch$/);
    assert.equal(await page.locator('h1').innerText(), 'Switch');
    assert.equal(await page.locator('#observations tbody tr').count(), 10);
    assert.deepEqual(await page.locator('#observations tbody tr').first().locator('td').allInnerTexts().then((c) => c.slice(0, 4)), ['2026-11-30 12:00:00', '! probe failed', 'retryable-5xx', '2']);
    await page.screenshot({ path: new URL('server.png', ARTIFACTS).pathname, fullPage: true });
    await page.close();
  });

  it('refreshes itself without a full reload', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    await page.goto(site.url + '/');
    await page.evaluate(() => { (window as unknown as { __marker: number }).__marker = 42; });
    assert.equal(await page.locator('#server-switch .pill').innerText(), '! Kept, probe failed');
    fleet.state('switch').mode = 'up';
    clock = new Date(NOW.getTime() + 60_000);
    await refresh({ catalogPath: ws.catalogPath, statePath: ws.statePath, write: true, allowHttp: true, timeoutMs: 2_000, now: () => clock });
    await page.waitForFunction(() => document.querySelector('#server-switch .pill')?.textContent === '✓ Kept', undefined, { timeout: 5_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker), 42, 'same document: no reload');
    await page.close();
  });
});

describe('JSON API', () => {
  it('GET /api/servers', async () => {
    const res = await fetch(`${site.url}/api/servers`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = await res.json() as { generatedAt: string; lastRefresh: { summary: object; plan: unknown[] }; servers: Array<Record<string, unknown>> };
    assert.deepEqual(Object.keys(body), ['generatedAt', 'lastRefresh', 'servers']);
    assert.deepEqual(Object.keys(body.servers[0]!), ['id', 'name', 'url', 'description', 'requiresAuth', 'decision', 'verdict', 'reason', 'reasonText', 'tools', 'lastProbeAt', 'attempts', 'durationMs', 'httpStatus', 'error', 'appError', 'location', 'matrix', 'uptime30', 'uptime90', 'days30', 'days90']);
    assert.equal((body.servers[0]!.days30 as unknown[]).length, 30);
    assert.equal((body.servers[0]!.days90 as unknown[]).length, 90);
    const today = (body.servers[0]!.days30 as Array<{ date: string; verdict: string; observations: number }>)[29]!;
    assert.deepEqual([today.date, today.verdict], ['2026-11-30', 'live']);
    assert.ok(today.observations >= 1);
  });
  it('GET /api/servers/<id>/history?days=N', async () => {
    const body = await (await fetch(`${site.url}/api/servers/switch/history?days=5`)).json() as { observations: Array<Record<string, unknown>>; daily: unknown[] };
    assert.deepEqual(Object.keys(body), ['id', 'name', 'url', 'days', 'observations', 'daily']);
    assert.equal(body.daily.length, 5);
    assert.deepEqual(Object.keys(body.observations[0]!), ['url', 'name', 'at', 'verdict', 'reason', 'attempts', 'httpStatus', 'durationMs', 'tools', 'error', 'profile', 'reasons', 'appError', 'location', 'matrix', 'toolsHash', 'findings', 'findingsSeen']);
    assert.equal((await fetch(`${site.url}/api/servers/switch/history?days=0`)).status, 400);
    assert.equal((await fetch(`${site.url}/api/servers/nope/history`)).status, 404);
  });
  it('GET /api/refreshes/latest', async () => {
    const body = await (await fetch(`${site.url}/api/refreshes/latest`)).json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['startedAt', 'finishedAt', 'applied', 'summary', 'aborted', 'plan']);
    assert.equal((body.plan as unknown[]).length, 4);
  });
  it('pages carry a Content-Security-Policy that allows only their own script', async () => {
    const res = await fetch(`${site.url}/`);
    assert.match(res.headers.get('content-security-policy')!, /script-src 'sha256-[A-Za-z0-9+/=]+'/);
    assert.match(res.headers.get('content-type')!, /^text\/html/);
    assert.equal(res.headers.get('link'), '</.well-known/ai-catalog.json>; rel="ai-catalog"');
  });
});

describe('onetap report', () => {
  it('--html writes one self-contained file that opens without network', async (t) => {
    const file = join(ws.dir, 'report.html');
    const r = await runCli(['report', '--html', file, '--catalog', ws.catalogPath, '--state', ws.statePath]);
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(file, 'utf8');
    assert.ok(!/(src|href)="(https?:)?\/\//.test(text), 'no external references');
    assert.ok(text.includes('&lt;img src=x onerror=alert(1)&gt;'));
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    const requests: string[] = [];
    page.on('request', (q) => requests.push(q.url()));
    await page.goto(`file://${file}`);
    assert.equal(await page.locator('.server').count(), 4);
    assert.ok(requests.every((u) => u.startsWith('file://')), requests.join(' '));
    await page.close();
  });
  it('--markdown prints the PR body; no flag is a usage error', async () => {
    const r = await runCli(['report', '--markdown', '--catalog', ws.catalogPath, '--state', ws.statePath]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| Switch \| (✅ kept|⚠️ kept, probe failed) \| `(live\/ok|failed\/retryable-5xx)` \|/);
    assert.match(r.stdout, /🟩🟩🟩🟩🟩🟩🟧🟩🟩/);
    assert.match(r.stdout, /Hostile &lt;script&gt;/);
    assert.equal((await runCli(['report'])).code, 2);
  });
});
