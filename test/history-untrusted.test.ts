/**
 * The history is untrusted input (it arrives through pull requests): a history directory with one line of each
 * wrong type, a verdict and a reason that are markup, an over-long line, a line that is not JSON and a run line
 * of a wrong type. Every command that reads it (`report` in each format, `site`, `serve`, `accept`, `refresh`)
 * runs as a process and exits as it would without the bad lines; the rows that were decided and recorded are
 * the good ones; the pages, opened in Debian's Chromium, hold no injected element and say what was skipped.
 * Plus: a line is at most 128 KiB whatever the answer, and a bounded line reads back valid.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { refresh, rejudge, type Evidence } from '../src/index.js';
import { FIXTURE } from './fixtures/record-observations.js';
import { HISTORY_LIMITS, monthFileName, parseHistory, runLines } from '../src/store/lines.js';
import { appendRuns, TextStore } from '../src/store/text-store.js';
import { TextIndex } from '../src/store/text-index.js';
import type { PlanRow, RecordedRun } from '../src/model/plan.js';
import { overviewPage, serverPage } from '../src/status/page.js';
import type { StatusModel } from '../src/status/model.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { BIN, catalogOf, recordedRow, recordedRun, runCli, server, workspace } from './helpers.js';

const DAY = 86_400_000;
const META = '<meta http-equiv=refresh content=0;url=https://example.invalid>';
const MARKUP_REASON =
  '<img src=x onerror="window.__xss=1"><div id=overlay style="position:fixed;inset:0;background:red">pwned</div>';

let fleet: Fleet;
let browser: Browser | null = null;
const cleanup: string[] = [];

/** Debian's Chromium may still be installing when the suite starts: wait a little for it. */
async function launchChromium(): Promise<Browser | null> {
  for (let i = 0; i < 60 && !existsSync('/usr/bin/chromium'); i++) await new Promise((r) => setTimeout(r, 1_000));
  if (!existsSync('/usr/bin/chromium')) return null;
  return chromium.launch({
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

before(async () => {
  fleet = await startFleet();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await fleet.close();
  for (const d of cleanup) await rm(d, { recursive: true, force: true });
});

const needBrowser = (t: { skip: (m: string) => void }) => {
  if (browser) return true;
  if (process.env.CI) assert.fail('Chromium is missing on CI: .ci/run installs the Debian package chromium');
  t.skip('no /usr/bin/chromium (apt-get install chromium)');
  return false;
};

/** One tab for the whole file (a new one per page costs more than the page). */
let tab: import('playwright-core').Page | null = null;
const dialogs: string[] = [];

/** What a page shows in Chromium: injected elements, whether it navigated away, the notice and the rows. */
async function inBrowser(open: (page: import('playwright-core').Page) => Promise<unknown>) {
  if (!tab) {
    tab = await browser!.newPage();
    tab.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  }
  dialogs.length = 0;
  await open(tab);
  const url = tab.url();
  await tab.waitForTimeout(100); // a meta refresh with content=0 would have navigated by now
  const seen = await tab.evaluate(() => ({
    refreshMeta: document.querySelectorAll('meta[http-equiv="refresh" i]').length,
    injected: document.querySelectorAll(
      'img, iframe, object, embed, svg, #overlay, body script:not(:last-of-type), ' +
        'meta:not([charset]):not([name=viewport]):not([http-equiv="Content-Security-Policy"])',
    ).length,
    xss: (window as unknown as { __xss?: number }).__xss,
    notice: (document.getElementById('history-problems') as HTMLElement | null)?.innerText ?? null,
    rows: [...document.querySelectorAll('.server')].map(
      (r) => `${(r as HTMLElement).dataset.id}:${(r.querySelector('.pill') as HTMLElement).innerText}`,
    ),
    barClasses: [...new Set([...document.querySelectorAll('.bar')].map((b) => b.className))].sort(),
    text: document.body.innerText,
  }));
  return { ...seen, navigatedAway: tab.url() !== url, dialogs: [...dialogs] };
}

/** A workspace with one real recorded run, then the hostile lines a merged pull request could bring. */
async function hostileHistory() {
  const ws = await workspace(
    catalogOf([server('Steady', fleet.url('ok-json')), server('Other', fleet.url('ok-sse'))], {
      policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] },
    }),
  );
  cleanup.push(ws.dir);
  const today = new Date().toISOString().slice(0, 10);
  const at = (daysAgo: number, hour: number) =>
    new Date(Date.parse(`${today}T0${hour}:00:00.000Z`) - daysAgo * DAY).toISOString();
  const t1 = at(2, 1);
  const [t2, t3, t4] = [at(1, 1), at(1, 2), at(1, 3)];
  await refresh({
    catalogPath: ws.catalogPath,
    statePath: join(ws.dir, 'first.db'),
    record: true,
    allowHttp: true,
    timeoutMs: 2_000,
    now: () => new Date(t1),
  });
  const dir = join(ws.dir, 'catalog', 'history');
  const firstFile = join(dir, monthFileName(t1));
  const recorded = (await readFile(firstFile, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const steady = recorded.find((l) => l.type === 'observation' && l.name === 'Steady')!;
  const other = recorded.find((l) => l.type === 'observation' && l.name === 'Other')!;
  assert.match(String(steady.toolsHash), /^[0-9a-f]{16}$/, 'the first run recorded a tool snapshot');
  const file = join(dir, monthFileName(t2));
  const base = existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean).length : 0;
  const summary = { total: 2, keep: 2, keepFailed: 0, review: 0, drop: 0, changed: 0 };
  const run = (startedAt: string, observations: number, extra: Record<string, unknown> = {}) => ({
    v: 2,
    type: 'run',
    id: startedAt,
    startedAt,
    finishedAt: startedAt,
    catalog: 'servers.json',
    applied: false,
    aborted: null,
    observations,
    summary,
    warnings: [],
    ...extra,
  });
  const of = (startedAt: string) => ({ run: startedAt, observedAt: startedAt });
  const lines: string[] = [
    run(t2, 7),
    { ...other, ...of(t2), url: {} },
    { ...other, ...of(t2), verdict: null },
    { ...other, ...of(t2), findings: {}, findingsSeen: 1 },
    { ...other, ...of(t2), verdict: META },
    { ...other, ...of(t2), reason: MARKUP_REASON },
    { ...other, ...of(t2), error: 'x'.repeat(HISTORY_LIMITS.readLineBytes) },
    { ...steady, ...of(t2) }, // the one good observation of this run
    'this line is not JSON <script>window.__xss=1</script>',
    run(t3, 2, { applied: 'yes' }), // a bad run line: its whole run goes
    { ...steady, ...of(t3), verdict: 'drop', reason: 'http-404', decision: 'drop' },
    { ...other, ...of(t3), verdict: 'drop', reason: 'http-404', decision: 'drop' },
    run(t4, 1, { summary: { ...summary, total: 1, keep: 0, review: 1 } }),
    {
      ...other,
      ...of(t4),
      verdict: 'review',
      reason: 'zero-tools',
      reasons: ['zero-tools'],
      tools: [],
      toolCount: 0,
      decision: 'review',
    },
  ].map((l) => (typeof l === 'string' ? l : JSON.stringify(l)));
  await appendFile(file, lines.join('\n') + '\n');
  const expectedProblems = [
    [base + 2, /^observation line: url: expected a string/],
    [base + 3, /^observation line: verdict: expected one of live, review, drop, failed/],
    [base + 4, /^observation line: findings: expected a list/],
    [base + 5, /^observation line: verdict: expected one of/],
    [base + 6, /^observation line: reason: expected a known reason/],
    [base + 7, /^observation line: \d+ bytes, more than the \d+ a line may have \(not read\)/],
    [base + 9, /^not JSON$/],
    [base + 10, /^run line: applied: expected true or false \(its run is skipped\)$/],
  ] as const;
  return {
    ws,
    t2,
    t4,
    file: `history/${monthFileName(t2)}`,
    path: file,
    expectedProblems,
    toolsHash: String(steady.toolsHash),
  };
}

interface ReportJson {
  lastRefresh: { startedAt: string; plan: Array<{ name: string; decision: string }> } | null;
  servers: Array<{
    id: string;
    verdict: string | null;
    reason: string | null;
    lastProbeAt: string | null;
    days30: Array<{ verdict: string | null }>;
  }>;
  historyProblems: { count: number; first: Array<{ file: string; line: number; problem: string }> };
}

/** `onetap serve` as a process: its URL once it listens, and what it said on stderr. */
function serve(args: string[]): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m) resolve({ url: m[1]!, child, stderr: () => err });
    });
    child.on('close', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

const untilTrue = async (test: () => boolean, ms = 5_000) => {
  for (const end = Date.now() + ms; !test() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  return test();
};

describe('a hostile history, through every command that reads it', () => {
  it(
    'report (json, markdown, html), site, serve, accept and refresh exit as without the bad lines; only good rows ' +
      'count; the pages hold nothing injected',
    async (t) => {
      const h = await hostileHistory();
      const { catalogPath, statePath, dir } = h.ws;
      const before = await readFile(h.path, 'utf8');

      // report --json: exit 0, the problems counted and named, the good rows decided and recorded.
      const json = await runCli(['report', '--json', '--catalog', catalogPath, '--state', statePath]);
      assert.equal(json.code, 0, json.stderr);
      const report = JSON.parse(json.stdout) as ReportJson;
      assert.equal(
        report.historyProblems.count,
        h.expectedProblems.length,
        JSON.stringify(report.historyProblems, null, 1),
      );
      assert.deepEqual(
        report.historyProblems.first.map((p) => [p.file, p.line]),
        h.expectedProblems.map(([line]) => [h.file, line]),
      );
      h.expectedProblems.forEach(([, re], i) => assert.match(report.historyProblems.first[i]!.problem, re));
      assert.match(
        json.stderr,
        new RegExp(
          `^onetap: ${h.expectedProblems.length} history lines skipped.*${h.file.replace('.', '\\.')}:${h.expectedProblems[0][0]}: observation line: url`,
          'm',
        ),
      );
      const byId = Object.fromEntries(report.servers.map((s) => [s.id, s]));
      assert.deepEqual(
        [byId.steady!.verdict, byId.steady!.reason, byId.steady!.lastProbeAt],
        ['live', 'ok', h.t2],
        'the good observation of the run with bad lines is recorded',
      );
      assert.deepEqual(
        [byId.other!.verdict, byId.other!.reason, byId.other!.lastProbeAt],
        ['review', 'zero-tools', h.t4],
        'the run after the bad run is whole and read',
      );
      assert.equal(report.lastRefresh!.startedAt, h.t4, "the bad run line's run is not the latest");
      assert.deepEqual(
        report.lastRefresh!.plan.map((r) => [r.name, r.decision]),
        [['Other', 'review']],
      );
      assert.ok(
        report.servers.every((s) =>
          s.days30.every((d) => d.verdict === null || ['live', 'review', 'failed', 'drop'].includes(d.verdict)),
        ),
      );
      assert.ok(
        !json.stdout.includes('http-equiv') && !json.stdout.includes('onerror'),
        'nothing of the bad lines is in the status',
      );

      // The other readers, side by side (the index is built now).
      const out = join(dir, 'site');
      const htmlFile = join(dir, 'report.html');
      const serving = serve(['--allow-http', '--catalog', catalogPath, '--state', statePath]);
      const [markdown, site, accept] = await Promise.all([
        runCli(['report', '--markdown', '--html', htmlFile, '--catalog', catalogPath, '--state', statePath]),
        runCli(['site', '--out', out, '--catalog', catalogPath, '--state', statePath]),
        runCli([
          'accept',
          'Steady',
          '--decision',
          'test: reviewed the list',
          '--catalog',
          catalogPath,
          '--state',
          statePath,
        ]),
      ]);
      assert.equal(markdown.code, 0, markdown.stderr);
      assert.match(markdown.stdout, new RegExp(`> \\*\\*History:\\*\\* ${h.expectedProblems.length} lines skipped`));
      assert.ok(!/http-equiv|onerror|<script/i.test(markdown.stdout), 'no markup of the bad lines in the PR body');
      assert.match(markdown.stdout, /\| Steady \| .* \| `live\/ok` \|/);
      assert.match(
        markdown.stderr,
        new RegExp(
          `^onetap: ${h.expectedProblems.length} history lines skipped[^]*^wrote ${htmlFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
          'm',
        ),
      );
      assert.equal(site.code, 0, site.stderr);
      assert.match(site.stderr, new RegExp(`${h.expectedProblems.length} history lines skipped`));
      assert.equal(accept.code, 0, accept.stderr);
      assert.match(
        accept.stdout,
        new RegExp(`^accepted Steady \\(.*\\): tools ${h.toolsHash} by test: reviewed the list`),
      );
      const pages = [
        await readFile(htmlFile, 'utf8'),
        ...(await Promise.all(
          ['index.html', 'servers/steady.html', 'servers/other.html'].map((p) => readFile(join(out, p), 'utf8')),
        )),
      ];
      for (const page of pages)
        assert.ok(
          !/http-equiv=["']?refresh|onerror|example\.invalid|__xss/i.test(page),
          'no markup of the bad lines in a page',
        );

      // serve: a stderr line at start, the page and the API answer, the page shows the notice.
      const served = await serving;
      try {
        assert.ok(
          await untilTrue(() => served.stderr().includes('history lines skipped')),
          `serve says so at start: ${served.stderr()}`,
        );
        assert.match(
          served.stderr(),
          new RegExp(`^onetap serve: ${h.expectedProblems.length} history lines skipped`, 'm'),
        );
        const overview = await fetch(`${served.url}/`);
        assert.equal(overview.status, 200);
        const body = await overview.text();
        assert.ok(body.includes('id="history-problems"') && !/http-equiv=["']?refresh|onerror/i.test(body));
        assert.equal((await fetch(`${served.url}/servers/steady`)).status, 200);
        const api = (await (await fetch(`${served.url}/api/servers`)).json()) as ReportJson;
        assert.deepEqual(
          api.servers.map((s) => s.verdict),
          ['live', 'review'],
        );

        if (needBrowser(t)) {
          const views = {
            served: await inBrowser((p) => p.goto(`${served.url}/`)),
            servedServer: await inBrowser((p) => p.goto(`${served.url}/servers/other`)),
            report: await inBrowser((p) => p.goto(pathToFileURL(htmlFile).href)),
            site: await inBrowser((p) => p.goto(pathToFileURL(join(out, 'index.html')).href)),
          };
          for (const [name, v] of Object.entries(views)) {
            assert.equal(v.refreshMeta, 0, `${name}: no meta refresh`);
            assert.equal(v.injected, 0, `${name}: no injected element`);
            assert.equal(v.xss, undefined, `${name}: no script ran`);
            assert.equal(v.navigatedAway, false, `${name}: the page stayed`);
            assert.deepEqual(v.dialogs, []);
            assert.ok(
              v.barClasses.every((c) => /^(sw )?bar( v-(live|review|failed|drop|none))?$/.test(c)),
              `${name}: bar classes ${v.barClasses.join(', ')}`,
            );
            assert.ok(!v.text.includes('pwned'), `${name}: no overlay text`);
          }
          for (const v of [views.served, views.report, views.site]) {
            assert.match(v.notice ?? '', new RegExp(`^${h.expectedProblems.length} history lines skipped`));
            assert.match(
              v.notice ?? '',
              new RegExp(
                `${h.file.replace('.', '\\.')}:${h.expectedProblems[0][0]} observation line: url: expected a string`,
              ),
            );
            assert.ok(v.rows.includes('steady:✓ live'), v.rows.join(' | '));
            assert.ok(
              v.rows.some((r) => r.startsWith('other:') && /review/i.test(r)),
              v.rows.join(' | '),
            );
          }
          assert.match(views.servedServer.text, /zero-tools/);
        }
      } finally {
        served.child.kill('SIGTERM');
      }

      // refresh --record: probes, decides from the good history only (previous = the last good observation), records.
      const r = await runCli([
        'refresh',
        '--record',
        '--json',
        '--allow-http',
        '--timeout',
        '2000',
        '--catalog',
        catalogPath,
        '--state',
        statePath,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const plan = JSON.parse(r.stdout) as {
        plan: Array<{
          name: string;
          decision: string;
          previous: { verdict: string; reason: string; at: string } | null;
        }>;
      };
      assert.deepEqual(
        plan.plan.map((x) => [x.name, x.decision, x.previous?.verdict, x.previous?.reason, x.previous?.at]),
        [
          ['Steady', 'keep', 'live', 'ok', h.t2],
          ['Other', 'keep', 'review', 'zero-tools', h.t4],
        ],
      );
      const next = new TextStore(catalogPath);
      const last = (await next.latestRun())!;
      assert.ok(last.run.startedAt > h.t4, 'the new run is recorded and read');
      assert.deepEqual(
        last.rows.map((o) => [o.name, o.verdict]),
        [
          ['Steady', 'live'],
          ['Other', 'live'],
        ],
      );
      assert.equal((await next.problems()).count, h.expectedProblems.length, 'the bad lines are still counted');
      assert.ok(
        (await readFile(h.path, 'utf8')).startsWith(before),
        'an append never cuts the bad lines (they are whole lines, in git)',
      );
    },
  );
});

describe('the pages whatever a store holds', () => {
  it('verdicts, decisions and reasons that are markup reach the page as escaped text or a whitelisted word', async (t) => {
    const now = '2026-11-30T12:00:00.000Z';
    const days = Array.from({ length: 30 }, (_, i) => ({
      date: new Date(Date.parse(now) - (29 - i) * DAY).toISOString().slice(0, 10),
      verdict: i === 29 ? META : i === 28 ? 'live' : null,
      observations: 1,
    }));
    const status = {
      id: 'evil',
      name: 'Evil',
      url: 'https://evil.example/mcp',
      description: 'd',
      requiresAuth: false,
      decision: META,
      verdict: META,
      reason: MARKUP_REASON,
      reasonText: MARKUP_REASON,
      tools: null,
      toolCount: null,
      lastProbeAt: now,
      attempts: 1,
      durationMs: 1,
      httpStatus: 200,
      error: MARKUP_REASON,
      appError: MARKUP_REASON,
      location: null,
      matrix: null,
      uptime30: 0.5,
      uptime90: 0.5,
      days30: days,
    };
    const model = {
      generatedAt: now,
      lastRefresh: {
        startedAt: now,
        finishedAt: now,
        applied: false,
        summary: { total: 1, keep: 0, keepFailed: 0, review: 1, drop: 0, changed: 1 },
        aborted: null,
        plan: [
          {
            name: 'Evil',
            url: status.url,
            decision: 'review',
            verdict: META,
            reason: MARKUP_REASON,
            attempts: 1,
            previous: { verdict: META, reason: MARKUP_REASON, at: now },
            changed: true,
            findings: {},
            toolChanges: { added: {} },
          },
        ],
      },
      servers: [status],
    } as unknown as StatusModel;
    const observation = {
      url: status.url,
      name: 'Evil',
      observedAt: now,
      verdict: META,
      reason: MARKUP_REASON,
      attempts: 1,
      httpStatus: 200,
      durationMs: 1,
      tools: null,
      error: MARKUP_REASON,
    } as unknown as PlanRow;
    const pages = {
      overview: overviewPage(model, {
        standalone: true,
        historyProblems: { count: 1, first: [{ file: 'history/2026-11.jsonl', line: 3, problem: META }] },
      }),
      server: serverPage(status as never, [observation], now, { static: true }),
    };
    for (const [name, page] of Object.entries(pages)) {
      assert.ok(!page.includes(META) && !page.includes('<img'), `${name}: no markup of the store's values`);
      assert.ok(
        !/class="[^"]*[&<>=;:/][^"]*"|data-(verdict|decision|filter)="[^"]*[&<>=;:/]/.test(page),
        `${name}: no class or data attribute built from an unknown word`,
      );
    }
    if (!needBrowser(t)) return;
    for (const [name, page] of Object.entries(pages)) {
      const v = await inBrowser((p) => p.setContent(page));
      assert.equal(v.refreshMeta, 0, `${name}: no meta refresh`);
      assert.equal(v.injected, 0, `${name}: no injected element`);
      assert.equal(v.xss, undefined);
      assert.equal(v.navigatedAway, false);
      assert.ok(
        v.barClasses.every((c) => /^(sw )?bar( v-(live|review|failed|drop|none))?$/.test(c)),
        `${name}: bar classes ${v.barClasses.join(', ')}`,
      );
      assert.ok(v.text.includes(META), `${name}: the value shows as text`);
    }
  });
});

describe('a history line is bounded', () => {
  it('a 3 MB tool list, thousands of findings, a huge tool diff and error are written in at most 128 KiB and read back valid', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'onetap-bounded-'));
    cleanup.push(dir);
    const at = '2026-11-10T06:00:00.000Z';
    const tools = Array.from({ length: 100_000 }, (_, i) => `a_rather_long_tool_name_${String(i).padStart(6, '0')}`);
    assert.ok(Buffer.byteLength(JSON.stringify(tools)) > 3e6);
    const findings = Array.from({ length: 5_000 }, (_, i) => ({
      tool: tools[i]!,
      field: 'description',
      rule: 'hidden-instructions',
      excerpt: 'ignore previous instructions '.repeat(8),
    }));
    const base = {
      verdict: 'review' as const,
      reason: 'suspicious-tools' as const,
      reasons: ['suspicious-tools' as const],
      durationMs: 40,
    };
    const huge = recordedRow(
      'Huge',
      {
        ...base,
        url: 'https://huge.example/mcp',
        tools,
        error: 'e'.repeat(500_000),
        toolsHash: '0123456789abcdef',
        findings,
        findingsSeen: findings.length,
        matrix: { 'kai-9000': { works: true, verdict: 'live', reason: 'ok', tools } },
      },
      {
        note: 'n'.repeat(300_000),
        heldOut: true,
        toolChanges: { added: tools.slice(0, 50_000), removed: [], changed: tools.slice(50_000) },
      },
    );
    const hugeWithCards = {
      ...huge,
      cardMismatches: Array.from({ length: 500 }, () => ({ field: 'version', card: 'v'.repeat(5_000), live: null })),
    };
    const small = recordedRow('Small', {
      ...base,
      url: 'https://small.example/mcp',
      tools: ['one', 'two'],
      toolsHash: 'fedcba9876543210',
    });
    const run: RecordedRun = recordedRun(at, [hugeWithCards, small]);
    // An aborted run of a large catalog: its plan rows inline, each with the big list.
    const abortedAt = '2026-11-11T06:00:00.000Z';
    const listed = tools.slice(0, 200);
    const abortedRows = Array.from({ length: 3_000 }, (_, i) =>
      recordedRow('Small', { ...base, url: `https://s${i}.example/mcp`, tools: listed, error: 'e'.repeat(2_000) }),
    );
    const aborted: RecordedRun = recordedRun(abortedAt, abortedRows, {
      aborted: 'the local network looks down',
      applied: false,
    });
    await appendRuns(dir, [run, aborted]);

    const text = await readFile(join(dir, (await readdir(dir)).find((f) => f.endsWith('.jsonl'))!), 'utf8');
    const lines = text.split('\n').filter(Boolean);
    assert.equal(lines.length, 4);
    for (const l of lines)
      assert.ok(Buffer.byteLength(l) <= HISTORY_LIMITS.lineBytes, `a line of ${Buffer.byteLength(l)} bytes`);
    const [, hugeLine, smallLine, abortedLine] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      [
        hugeLine!.tools,
        hugeLine!.toolCount,
        hugeLine!.toolsHash,
        hugeLine!.findings,
        hugeLine!.findingsSeen,
        hugeLine!.bounded,
      ],
      [null, 100_000, '0123456789abcdef', [], 5_000, true],
    );
    assert.deepEqual(hugeLine!.toolChangesCount, { added: 50_000, removed: 0, changed: 50_000 });
    assert.equal(hugeLine!.toolChanges, null);
    assert.ok(
      String(hugeLine!.error).length <= HISTORY_LIMITS.textChars &&
        String(hugeLine!.note).length <= HISTORY_LIMITS.textChars,
    );
    assert.deepEqual(
      [smallLine!.tools, smallLine!.bounded],
      [['one', 'two'], undefined],
      'a line that fits is written as it is',
    );
    assert.equal(abortedLine!.bounded, true);
    assert.equal(abortedLine!.planRows, 3_000);
    assert.ok((abortedLine!.plan as unknown[]).length > 0 && (abortedLine!.plan as unknown[]).length < 3_000);

    const back = new TextIndex(dir);
    back.sync();
    assert.deepEqual(back.problems(), { count: 0, first: [] }, 'a bounded line fits the line format');
    const runs = back.runs({});
    assert.equal(runs.length, 2);
    const [h, s] = runs[0]!.rows;
    assert.deepEqual(
      [h!.url, h!.tools, h!.toolCount, h!.toolsHash, h!.findings, h!.findingsSeen, h!.matrix!['kai-9000']!.tools],
      [huge.url, null, 100_000, '0123456789abcdef', [], 5_000, null],
    );
    assert.deepEqual(s, { ...run.rows[1], previous: null, changed: true }, 'the small observation reads back whole');
    assert.equal(runs[1]!.run.aborted, 'the local network looks down');
    assert.equal(parseHistory(text).wholeBytes, Buffer.byteLength(text), 'every line is whole');
  });

  it('a line over the read limit is a problem, not parsed; the run it belongs to still counts it', () => {
    const at = '2026-11-10T06:00:00.000Z';
    const obs = (extra: object) =>
      JSON.stringify({
        v: 1,
        type: 'observation',
        at,
        name: 'A',
        url: 'https://a.example/mcp',
        verdict: 'live',
        reason: 'ok',
        reasons: ['ok'],
        attempts: 1,
        httpStatus: 200,
        durationMs: 1,
        tools: null,
        error: null,
        profile: 'kai-9000',
        appError: null,
        location: null,
        matrix: null,
        toolsHash: null,
        decision: 'keep',
        dropStreak: 0,
        note: null,
        ...extra,
      });
    const runLine = (n: number, startedAt = at) =>
      JSON.stringify({
        v: 1,
        type: 'run',
        startedAt,
        finishedAt: startedAt,
        catalog: 'servers.json',
        applied: true,
        aborted: null,
        observations: n,
        summary: { total: n, keep: n, keepFailed: 0, review: 0, drop: 0, changed: 0 },
      });
    const later = '2026-11-11T06:00:00.000Z';
    const text =
      [
        runLine(2),
        obs({ error: 'x'.repeat(HISTORY_LIMITS.readLineBytes + 1) }),
        obs({}),
        runLine(1, later),
        obs({ at: later }),
      ].join('\n') + '\n';
    const parsed = parseHistory(text);
    assert.deepEqual(
      parsed.problems.map((p) => p.line),
      [2],
    );
    assert.deepEqual(
      parsed.runs.map((r) => r.rows.length),
      [1, 1],
      'both runs are whole',
    );
    assert.equal(parsed.wholeBytes, Buffer.byteLength(text));
  });
});

describe('a bounded line never alters what can be judged again', () => {
  const fixtures = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{ scenario: string; evidence: Evidence }>;
  const evidenceOf = (scenario: string) => fixtures.find((r) => r.scenario === scenario)!.evidence;
  /** A run of many exchanges, each with the longest body snippet the record keeps. */
  const bigRun = (profile: string): Evidence['deciding'] => ({
    ...evidenceOf('ok-json').deciding,
    profile,
    steps: Array.from({ length: 80 }, () => ({
      ...evidenceOf('non-retryable-5xx').deciding.steps[0]!,
      bodySnippet: 'y'.repeat(2_048),
    })),
  });

  it('a line too long keeps its evidence whole (the matrix runs go first) or none: rejudge never differs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'onetap-judge-'));
    cleanup.push(dir);
    const base = evidenceOf('non-retryable-5xx');
    const withMatrix = recordedRow('Matrix', {
      url: 'https://m.example/mcp',
      verdict: 'drop',
      reason: 'non-retryable-5xx',
      reasons: ['non-retryable-5xx'],
      evidence: { ...base, matrix: { diagnosis: null, others: { 'mcp-2026-07-28': bigRun('mcp-2026-07-28') } } },
    });
    const huge = recordedRow('Huge', {
      url: 'https://h.example/mcp',
      verdict: 'drop',
      reason: 'non-retryable-5xx',
      reasons: ['non-retryable-5xx'],
      evidence: { ...base, others: { 'mcp-2025-11-25': bigRun('mcp-2025-11-25') } },
    });
    const manyExcluded = recordedRow('Excluded', {
      url: 'https://x.example/mcp',
      excludedTools: Array.from({ length: 400 }, (_, i) => ({
        name: `tool_${i}_${'n'.repeat(100)}`,
        reason: 'r'.repeat(500),
      })),
      evidence: evidenceOf('ok-json'),
    });
    const warnings = Array.from(
      { length: 1_100 },
      (_, i) =>
        `history/snapshots/${String(i).padStart(16, '0')}.json: does not match the SHA-256 recorded for it; treated as missing`,
    );
    await appendRuns(dir, [recordedRun('2026-11-20T06:00:00.000Z', [withMatrix, huge, manyExcluded], { warnings })]);
    const text = await readFile(join(dir, '2026-11.jsonl'), 'utf8');
    for (const l of text.split('\n').filter(Boolean))
      assert.ok(Buffer.byteLength(l) <= HISTORY_LIMITS.lineBytes, `a line of ${Buffer.byteLength(l)} bytes`);
    const index = new TextIndex(dir);
    index.sync();
    assert.deepEqual(index.problems(), { count: 0, first: [] });
    const [run] = index.runs({});
    assert.equal(run!.rows.length, 3, 'every row reads back');
    assert.equal(run!.run.warnings.length, HISTORY_LIMITS.listed + 1);
    assert.match(run!.run.warnings.at(-1)!, /and 1080 more warnings/);
    const [m, h, x] = run!.rows;
    assert.equal(m!.evidence!.matrix, null, 'the matrix runs go first');
    assert.deepEqual(m!.evidence!.deciding, base.deciding, 'the evidence that decided is whole');
    assert.equal(h!.evidence, null, 'evidence too long to keep whole is not kept at all');
    assert.equal(x!.excludedTools.length, HISTORY_LIMITS.listed);
    const judged = rejudge(index.runs({}), { profile: 'kai-9000', requiresAuth: () => false });
    assert.deepEqual([judged.differences, judged.noEvidence], [0, 1]);
  });

  it('a plan on a run that was not aborted, and an observation of another version, are problems', () => {
    const at = '2026-11-10T06:00:00.000Z';
    const row = recordedRow('A', { url: 'https://a.example/mcp' });
    const good = recordedRun(at, [row]);
    const lines = parseHistory(runLinesOf(good)).runs;
    assert.equal(lines.length, 1);
    const [runLine, obsLine] = runLinesOf(good).split('\n');
    const withPlan = JSON.stringify({ ...JSON.parse(runLine!), plan: [] });
    assert.match(
      parseHistory(`${withPlan}\n${obsLine}\n`).problems[0]!.problem,
      /plan: expected only on an aborted run/,
    );
    const v1 = JSON.stringify({
      v: 1,
      type: 'observation',
      at,
      run: at,
      name: 'A',
      url: 'https://a.example/mcp',
      verdict: 'live',
      reason: 'ok',
      reasons: ['ok'],
      attempts: 1,
      httpStatus: 200,
      durationMs: 1,
      tools: null,
      error: null,
      profile: 'kai-9000',
      appError: null,
      location: null,
      matrix: null,
      decision: 'keep',
      dropStreak: 0,
      note: null,
    });
    assert.match(parseHistory(`${runLine}\n${v1}\n`).problems[0]!.problem, /a line of version 1 in a run of version 2/);
  });

  it('a last line that is whole but lost its newline is kept by the next append', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'onetap-newline-'));
    cleanup.push(dir);
    await appendRuns(dir, [
      recordedRun('2026-11-10T06:00:00.000Z', [recordedRow('A', { url: 'https://a.example/mcp' })]),
    ]);
    const file = join(dir, '2026-11.jsonl');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/\n$/, ''));
    await appendRuns(dir, [
      recordedRun('2026-11-17T06:00:00.000Z', [recordedRow('A', { url: 'https://a.example/mcp' })]),
    ]);
    assert.equal(parseHistory(await readFile(file)).runs.length, 2);
  });
});

const runLinesOf = (r: RecordedRun) => runLines(r);
