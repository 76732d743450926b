/**
 * The status page end to end: a store filled by real refresh runs over ten simulated days, `onetap serve`
 * on 127.0.0.1, and Debian's Chromium driven by playwright-core. Plus the JSON API shapes and the reports.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { refresh } from '../src/index.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { answer, json, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

const HOSTILE_TOOL = '<img src=x onerror=alert(1)>';
const HOSTILE_NAME = 'Hostile <script>window.__xss=1</script>';
const HOSTILE_ID = 'hostile-script-window-xss-1-script';
const DAY = 86_400_000;
const NOW = new Date('2026-11-30T12:00:00Z');
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);

let fleet: Fleet;
let ws: Awaited<ReturnType<typeof workspace>>;
let site: RunningServer;
let browser: Browser | null = null;
let clock = NOW;

/** Switch's state per simulated day (0 = today): up, flaky (503) or dead (404). */
const SWITCH_PLAN: Record<number, string> = {
  9: 'up',
  8: 'up',
  7: 'up',
  6: 'up',
  5: 'up',
  4: 'up',
  3: 'flaky',
  2: 'up',
  1: 'up',
  0: 'flaky',
};

async function runDay(daysAgo: number) {
  fleet.state('switch').mode = SWITCH_PLAN[daysAgo];
  clock = new Date(NOW.getTime() - daysAgo * DAY);
  return refresh({
    catalogPath: ws.catalogPath,
    write: true,
    allowHttp: true,
    timeoutMs: 2_000,
    probe: { retryDelayMs: 10 },
    now: () => clock,
  });
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
      if (c.msg?.method === 'tools/list')
        return json(c.res, 200, {
          jsonrpc: '2.0',
          id: c.msg.id,
          result: { tools: [{ name: HOSTILE_TOOL }, { name: '"><svg onload=alert(2)>' }] },
        });
      answer(c);
    },
  });
  ws = await workspace(
    catalogOf([
      server('Steady', fleet.url('ok-json')),
      server('Switch', fleet.url('switch')),
      server(HOSTILE_NAME, fleet.url('hostile'), { description: 'Description with <b>markup</b> & "quotes"' }),
      server('Quiet', fleet.url('zero-tools')),
    ]),
  );
  for (let d = 9; d >= 0; d--) await runDay(d);
  site = await startServer({
    catalogPath: ws.catalogPath,
    port: 0,
    routes: statusRoutes({ catalogPath: ws.catalogPath, now: () => clock, refreshMs: 300 }),
  });
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
  await site?.close();
  await fleet.close();
});

const needBrowser = (t: { skip: (m: string) => void }) => {
  if (browser) return true;
  if (process.env.CI) assert.fail('Chromium is missing on CI: .ci/run installs the Debian package chromium');
  t.skip('no /usr/bin/chromium (apt-get install chromium)');
  return false;
};

/** The page's in-place refresh stamp (`data-refreshed-at`), '' before the first. */
const refreshedAt = (page: Page) => page.evaluate(() => document.documentElement.dataset.refreshedAt ?? '');

/**
 * Makes the page refresh itself in place once more and waits until it has: the server's clock moves one
 * page-clock step (5 minutes, same day), so the next poll gets a new page (an unchanged one is a 304 and
 * swaps nothing), and the stamp must change. Returns the new stamp.
 */
async function nextRefresh(page: Page): Promise<string> {
  const before = await refreshedAt(page);
  clock = new Date(clock.getTime() + 5 * 60_000);
  await page.waitForFunction((b) => (document.documentElement.dataset.refreshedAt ?? '') !== b, before, {
    timeout: 10_000,
  });
  const after = await refreshedAt(page);
  assert.notEqual(after, before, 'the page refreshed itself');
  return after;
}

/**
 * Reads the page after an in-place refresh, in one evaluate: the page replaces `#live` when it refreshes,
 * and a read split over several locators could land on both sides of a swap. One evaluate runs between swaps.
 */
async function readAfterRefresh<T>(page: Page, read: () => T): Promise<T> {
  await nextRefresh(page);
  return page.evaluate(read);
}

describe('status page in a real browser', () => {
  it("shows each server's decision and verdict in words, history bars with the right count and colours", async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1000 } });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(site.url + '/');
    const seen = await readAfterRefresh(page, () => {
      const row = (id: string) => document.getElementById(`server-${id}`)!;
      const text = (id: string, sel: string) => (row(id).querySelector(sel) as HTMLElement).innerText;
      const bars = (id: string) =>
        [...row(id).querySelectorAll('.bars .bar')].map((b) => (b as HTMLElement).className.replace('bar v-', ''));
      const colour = (id: string, sel: string) => getComputedStyle(row(id).querySelector(sel)!).backgroundColor;
      return {
        pills: ['steady', 'switch', 'quiet'].map((id) => text(id, '.pill')),
        reason: text('switch', '.reason'),
        barCounts: ['steady', 'switch', 'quiet'].map((id) => bars(id).length),
        thinBars: document.querySelectorAll('.server .bars.thin').length,
        switchBars: bars('switch'),
        colours: ['.bar.v-live', '.bar.v-failed', '.bar.v-none'].map((sel) => colour('switch', sel)),
        steadyLabel: text('steady', '.barlabel'),
        plan: (document.getElementById('plan') as HTMLElement).innerText,
      };
    });
    assert.deepEqual(seen.pills, ['✓ Kept', '! Kept, probe failed', '? Review']);
    assert.match(seen.reason, /failed\/retryable-5xx: a server error, also on the retry/);
    assert.deepEqual(seen.barCounts, [30, 30, 30]);
    assert.equal(seen.thinBars, 0, 'the overview draws the 30-day bars only; the 90 days are a figure');
    // Switch: the last ten days read up,up,up,up,up,up,flaky,up,up,flaky; older days have no probe.
    assert.deepEqual(seen.switchBars.slice(20), [
      'live',
      'live',
      'live',
      'live',
      'live',
      'live',
      'failed',
      'live',
      'live',
      'failed',
    ]);
    assert.ok(seen.switchBars.slice(0, 20).every((v) => v === 'none'));
    assert.deepEqual(seen.colours, ['rgb(26, 127, 55)', 'rgb(188, 76, 0)', 'rgb(208, 215, 222)']);
    assert.match(seen.steadyLabel, /30 days: 100\.0% usable\s+90 days: 100\.0% usable/);
    assert.match(seen.plan, /Probe failed \(kept\) \(1\)\s+Switch: failed\/retryable-5xx/i);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('status.png', ARTIFACTS).pathname, fullPage: true });
    assert.deepEqual(dialogs, []);
    await page.close();
  });

  it('rows that need attention come first: review, probe failed, then kept, in catalog order within each', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    await page.goto(site.url + '/');
    const order = await readAfterRefresh(page, () =>
      [...document.querySelectorAll('.server')].map(
        (r) => `${(r as HTMLElement).dataset.id}:${(r as HTMLElement).dataset.filter}`,
      ),
    );
    assert.deepEqual(order, ['quiet:review', 'switch:keep-failed', 'steady:keep', HOSTILE_ID + ':keep']);
    await page.close();
  });

  it('filters by decision without a reload, and the filter holds across in-place refreshes', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    await page.goto(site.url + '/');
    const visible = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('.server')]
          .filter((r) => (r as HTMLElement).offsetParent !== null)
          .map((r) => (r as HTMLElement).dataset.id),
      );
    assert.deepEqual(await visible(), ['quiet', 'switch', 'steady', HOSTILE_ID]);
    await page.locator('label[data-show="review"]').click();
    assert.deepEqual(await visible(), ['quiet']);
    await nextRefresh(page);
    assert.deepEqual(await visible(), ['quiet'], 'after a refresh the filter still applies');
    await page.locator('label[data-show="attention"]').click();
    assert.deepEqual(await visible(), ['quiet', 'switch']);
    await page.locator('label[data-show="keep"]').click();
    assert.deepEqual(await visible(), ['steady', HOSTILE_ID]);
    await page.locator('label[data-show="all"]').click();
    assert.deepEqual(await visible(), ['quiet', 'switch', 'steady', HOSTILE_ID]);
    assert.deepEqual(await page.locator('.counts label').allInnerTexts(), [
      '4 all',
      '2 need attention',
      '1 review',
      '1 kept, probe failed',
      '2 kept',
    ]);
    await page.close();
  });

  it('hostile server and tool names render as text and run no script', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(site.url + '/');
    const row = page.locator('.server', { hasText: 'Hostile' });
    assert.equal(await row.locator('a.name').innerText(), HOSTILE_NAME);
    await row.locator('details summary').click();
    assert.deepEqual(await row.locator('.tools li').allInnerTexts(), [HOSTILE_TOOL, '"><svg onload=alert(2)>']);
    // Two in-place refreshes later (checked, not assumed), the list the reader opened is still open.
    await nextRefresh(page);
    await nextRefresh(page);
    const after = await page.evaluate(() => {
      const r = [...document.querySelectorAll('.server')].find((e) =>
        (e as HTMLElement).innerText.includes('Hostile'),
      )!;
      return {
        open: r.querySelector('details')!.open,
        tools: [...r.querySelectorAll('.tools li')].map((li) => (li as HTMLElement).innerText),
      };
    });
    assert.deepEqual(after, { open: true, tools: [HOSTILE_TOOL, '"><svg onload=alert(2)>'] });
    assert.equal(await page.locator('.server img, .server svg, .server script, .server b').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    assert.deepEqual(dialogs, []);
    await page.close();
  });

  it('the server page opens from the overview and lists every probe, with a title per day', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    await page.goto(site.url + '/');
    await page.locator('#server-switch a.name').click();
    await page.waitForURL(/\/servers\/switch$/);
    const seen = await readAfterRefresh(page, () => ({
      h1: (document.querySelector('h1') as HTMLElement).innerText,
      rows: document.querySelectorAll('#observations tbody tr').length,
      first: [...document.querySelectorAll('#observations tbody tr:first-child td')]
        .slice(0, 4)
        .map((c) => (c as HTMLElement).innerText),
      bars: [...document.querySelectorAll('.bars')].map((b) => b.querySelectorAll('.bar').length),
      title26: document.querySelectorAll('.bars:not(.thin) .bar')[26]!.getAttribute('title'),
    }));
    assert.deepEqual(seen, {
      h1: 'Switch',
      rows: 10,
      first: ['2026-11-30 12:00:00', '! probe failed', 'retryable-5xx', '2'],
      bars: [30, 90],
      title26: '2026-11-27: probe failed',
    });
    await page.screenshot({ path: new URL('server.png', ARTIFACTS).pathname, fullPage: true });
    await page.close();
  });
});

describe('JSON API', () => {
  it('GET /api/servers', async () => {
    const res = await fetch(`${site.url}/api/servers`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = (await res.json()) as {
      generatedAt: string;
      lastRefresh: { summary: object; plan: unknown[] };
      servers: Array<Record<string, unknown>>;
    };
    assert.deepEqual(Object.keys(body), ['generatedAt', 'lastRefresh', 'servers', 'cost']);
    assert.deepEqual(Object.keys(body.servers[0]!), [
      'id',
      'name',
      'url',
      'description',
      'requiresAuth',
      'decision',
      'verdict',
      'reason',
      'reasonText',
      'tools',
      'toolCount',
      'lastProbeAt',
      'attempts',
      'durationMs',
      'httpStatus',
      'error',
      'appError',
      'location',
      'matrix',
      'uptime30',
      'uptime90',
      'days30',
      'vantages',
      'tokens',
      'sameToolsAs',
    ]);
    assert.equal((body.servers[0]!.days30 as unknown[]).length, 30);
    const today = (body.servers[0]!.days30 as Array<{ date: string; verdict: string; observations: number }>)[29]!;
    assert.deepEqual([today.date, today.verdict], ['2026-11-30', 'live']);
    assert.ok(today.observations >= 1);
  });
  it('GET /api/servers/<id>/history?days=N', async () => {
    const body = (await (await fetch(`${site.url}/api/servers/switch/history?days=5`)).json()) as {
      observations: Array<Record<string, unknown>>;
      daily: unknown[];
    };
    assert.deepEqual(Object.keys(body), ['id', 'name', 'url', 'days', 'observations', 'daily']);
    assert.equal(body.daily.length, 5);
    assert.deepEqual(Object.keys(body.observations[0]!), [
      'url',
      'name',
      'at',
      'verdict',
      'reason',
      'attempts',
      'httpStatus',
      'durationMs',
      'tools',
      'error',
      'profile',
      'reasons',
      'appError',
      'location',
      'matrix',
      'toolsHash',
      'findings',
      'findingsSeen',
      'snapshotSha256',
      'toolCount',
      'decision',
      'run',
      'vantage',
      'tokens',
    ]);
    assert.equal((await fetch(`${site.url}/api/servers/switch/history?days=0`)).status, 400);
    assert.equal((await fetch(`${site.url}/api/servers/nope/history`)).status, 404);
  });
  it('GET /api/refreshes/latest', async () => {
    const body = (await (await fetch(`${site.url}/api/refreshes/latest`)).json()) as Record<string, unknown>;
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
    assert.ok(
      requests.every((u) => u.startsWith('file://')),
      requests.join(' '),
    );
    await page.close();
  });
  it('--markdown prints the PR body; no flag is a usage error', async () => {
    const r = await runCli(['report', '--markdown', '--catalog', ws.catalogPath, '--state', ws.statePath]);
    assert.equal(r.code, 0, r.stderr);
    // The in-place refresh test (last in this file) changes Switch; here it is still as the ten days left it.
    assert.match(r.stdout, /\| Switch \| ⚠️ kept, probe failed \| `failed\/retryable-5xx` \|/);
    assert.match(r.stdout, /🟩🟩🟩🟩🟩🟩🟧🟩🟩/);
    assert.match(r.stdout, /Hostile &lt;script&gt;/);
    assert.equal((await runCli(['report'])).code, 2);
  });
});

// Last: it records one more refresh (Switch comes back), so every test above sees the ten simulated days.
describe('status page refresh', () => {
  it('refreshes itself without a full reload', async (t) => {
    if (!needBrowser(t)) return;
    const page = await browser!.newPage();
    await page.goto(site.url + '/');
    await page.evaluate(() => {
      (window as unknown as { __marker: number }).__marker = 42;
    });
    assert.equal(await page.locator('#server-switch .pill').innerText(), '! Kept, probe failed');
    const before = await refreshedAt(page);
    fleet.state('switch').mode = 'up';
    clock = new Date(NOW.getTime() + 60_000);
    await refresh({ catalogPath: ws.catalogPath, write: true, allowHttp: true, timeoutMs: 2_000, now: () => clock });
    await page.waitForFunction(
      () => document.querySelector('#server-switch .pill')?.textContent === '✓ Kept',
      undefined,
      { timeout: 10_000 },
    );
    assert.notEqual(await refreshedAt(page), before, 'the new state came by an in-place refresh');
    assert.equal(
      await page.evaluate(() => (window as unknown as { __marker?: number }).__marker),
      42,
      'same document: no reload',
    );
    await page.close();
  });
});
