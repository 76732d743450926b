/**
 * History that travels in git: simulated weeks in fresh clones of a real git repository (the `git` CLI, the
 * `onetap` CLI as a process, loopback servers), the text history's line format, its tolerance of torn
 * writes, the index built identically from it, and a history written by 0.1 read as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadCatalog, refresh, TextStore, type Evidence, type RecordedRun, type Store } from '../src/index.js';
import { appendRuns } from '../src/store/text-store.js';
import { parseHistory } from '../src/store/lines.js';
import { startServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { buildStatus } from '../src/status/build.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { FIXTURE } from './fixtures/record-observations.js';
import { catalogOf, recordedRow, recordedRun, runCli, server, workspace } from './helpers.js';

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.org',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.org',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();

let fleet: Fleet;
let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'onetap-history-'));
  fleet = await startFleet({
    dying: (c) => (c.state.dead ? void c.res.writeHead(404).end('gone') : answer(c)),
    flaky: (c) => (c.state.busy ? void c.res.writeHead(503).end('busy') : answer(c)),
  });
});
after(async () => {
  await fleet.close();
  await rm(tmp, { recursive: true, force: true });
});

const historyFiles = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /^\d{4}-\d{2}\.jsonl$/.test(f))
        .sort()
    : [];
const historyText = async (catalogDir: string) =>
  (
    await Promise.all(
      historyFiles(join(catalogDir, 'history')).map((f) => readFile(join(catalogDir, 'history', f), 'utf8')),
    )
  ).join('');
const lines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Everything the status page and the decisions ask of a store, for comparing two indexes. */
async function queries(store: Store, urls: string[]) {
  return {
    latest: await store.latestRun(),
    byUrl: await Promise.all(
      urls.map(async (u) => ({
        recent: await store.recent(u, 5),
        since: await store.since(u, '2000-01-01'),
        verdicts: await store.verdicts(u, '2000-01-01'),
      })),
    ),
  };
}

describe('simulated weeks in fresh clones', () => {
  it('drops a dead server the week its streak completes, across clones, and the committed history gives the bars and uptime', async () => {
    // The list's repository: a catalog on main, .onetap/ ignored.
    const remote = await mkdtemp(join(tmp, 'remote-'));
    git(remote, 'init', '--quiet', '--bare', '--initial-branch=main');
    const seed = await mkdtemp(join(tmp, 'seed-'));
    git(seed, 'init', '--quiet', '--initial-branch=main');
    await mkdir(join(seed, 'catalog'));
    const servers = [
      server('Steady', fleet.url('ok-json')),
      server('Dying', fleet.url('dying')),
      server('Flaky', fleet.url('flaky')),
    ];
    await writeFile(join(seed, 'catalog', 'servers.json'), JSON.stringify(catalogOf(servers), null, 2) + '\n');
    await writeFile(join(seed, '.gitignore'), '.onetap/\n');
    git(seed, 'add', '.');
    git(seed, 'commit', '--quiet', '-m', 'the list');
    git(seed, 'push', '--quiet', remote, 'main');

    /** One week: a fresh clone (nothing but git), a recorded refresh, commit everything, push. */
    const week = async (n: number) => {
      const clone = join(tmp, `week-${n}`);
      git(tmp, 'clone', '--quiet', remote, clone);
      assert.ok(!existsSync(join(clone, '.onetap')), 'no state but what git holds');
      const r = await runCli([
        'refresh',
        '--catalog',
        join(clone, 'catalog', 'servers.json'),
        '--state',
        join(clone, '.onetap', 'history.db'),
        '--write',
        '--json',
        '--allow-http',
        '--confirm-drops',
        '2',
        '--timeout',
        '2000',
      ]);
      assert.equal(r.code, 0, r.stderr);
      git(clone, 'add', '-A');
      git(clone, 'commit', '--quiet', '-m', `week ${n}`);
      git(clone, 'push', '--quiet', 'origin', 'main');
      const plan = JSON.parse(r.stdout) as { plan: Array<{ name: string; decision: string; verdict: string }> };
      return Object.fromEntries(plan.plan.map((p) => [p.name, `${p.decision} ${p.verdict}`]));
    };

    assert.deepEqual(await week(1), { Steady: 'keep live', Dying: 'keep live', Flaky: 'keep live' });
    fleet.state('dying').dead = true;
    fleet.state('flaky').busy = true;
    assert.deepEqual(await week(2), { Steady: 'keep live', Dying: 'keep-failed drop', Flaky: 'keep-failed failed' });
    fleet.state('flaky').busy = false;
    assert.deepEqual(
      await week(3),
      { Steady: 'keep live', Dying: 'drop drop', Flaky: 'keep live' },
      'the streak of two was read from the committed history',
    );
    assert.deepEqual(await week(4), { Steady: 'keep live', Flaky: 'keep live' });
    fleet.state('dying').dead = false;

    // What git holds: the catalog without Dying, the history of four runs, no index.
    const tree = git(remote, 'ls-tree', '-r', '--name-only', 'main').split('\n');
    assert.ok(!tree.some((f) => f.startsWith('.onetap')), tree.join('\n'));
    assert.ok(tree.some((f) => /^catalog\/history\/\d{4}-\d{2}\.jsonl$/.test(f)));
    const final = join(tmp, 'final');
    git(tmp, 'clone', '--quiet', remote, final);
    const catalogPath = join(final, 'catalog', 'servers.json');
    assert.deepEqual(
      (await loadCatalog(catalogPath)).catalog.removed.map((r) => r.name),
      ['Dying'],
    );
    const all = lines(await historyText(join(final, 'catalog')));
    assert.deepEqual(
      all.map((l) => l.type).join(' '),
      'run observation observation observation run observation observation observation run observation observation observation run observation observation',
    );
    assert.ok(all.every((l) => l.v === 2));

    // A fresh clone's report: uptime and today's bar from the committed history alone.
    const report = await runCli([
      'report',
      '--markdown',
      '--catalog',
      catalogPath,
      '--state',
      join(final, '.onetap', 'history.db'),
    ]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /\| Steady \| ✅ kept \| `live\/ok` \| 2 \| ⬜{29}🟩 \| 100\.0% \| 100\.0% \|/);
    assert.match(
      report.stdout,
      /\| Flaky \| ✅ kept \| `live\/ok` \| 2 \| ⬜{29}🟧 \| 75\.0% \| 75\.0% \|/,
      'three of four runs live; the worst of the day is the failed run',
    );
    assert.ok(
      !existsSync(join(final, '.onetap')),
      'the index is built in memory: nothing is written beside the history',
    );
    assert.equal(git(final, 'status', '--porcelain'), '', 'reading the history changes nothing git sees');
  });

  it("bars per day and month files follow the runs' clock", async () => {
    const ws = await workspace(catalogOf([server('Flaky', fleet.url('flaky'))]));
    const days = ['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02'];
    const busy = [false, true, false, false];
    for (const [i, day] of days.entries()) {
      fleet.state('flaky').busy = busy[i];
      await refresh({
        catalogPath: ws.catalogPath,
        write: true,
        allowHttp: true,
        timeoutMs: 2_000,
        probe: { retryDelayMs: 10 },
        now: () => new Date(`${day}T06:00:00Z`),
      });
    }
    fleet.state('flaky').busy = false;
    assert.deepEqual(historyFiles(join(ws.dir, 'catalog', 'history')), ['2026-10.jsonl', '2026-11.jsonl']);
    const model = await buildStatus(
      (await loadCatalog(ws.catalogPath)).catalog,
      new TextStore(ws.catalogPath),
      new Date('2026-11-02T12:00:00Z'),
    );
    assert.deepEqual(
      model.servers[0]!.days30.slice(-4).map((d) => d.verdict),
      ['live', 'failed', 'live', 'live'],
    );
    assert.equal(model.servers[0]!.uptime30, 0.75);
  });
});

describe('recording', () => {
  it('an aborted recorded run appends exactly one line; the status page and /api/refreshes/latest show it', async () => {
    const ws = await workspace(catalogOf([server('A', 'http://127.0.0.1:9/a'), server('B', 'http://127.0.0.1:9/b')]));
    const r = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--state',
      ws.statePath,
      '--record',
      '--allow-http',
      '--timeout',
      '2000',
    ]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /the aborted run is recorded in the history/);
    const text = await historyText(join(ws.dir, 'catalog'));
    assert.equal(text.split('\n').filter(Boolean).length, 1);
    const line = lines(text)[0]!;
    assert.deepEqual(Object.keys(line).slice(0, 11), [
      'v',
      'type',
      'id',
      'startedAt',
      'finishedAt',
      'catalog',
      'applied',
      'aborted',
      'observations',
      'summary',
      'warnings',
    ]);
    assert.equal(line.applied, false);
    assert.equal(line.observations, 0);
    assert.match(line.aborted as string, /local network looks down/);

    // serve as the CLI wires it: the index synced from the text history on each request.
    const site = await startServer({
      catalogPath: ws.catalogPath,
      port: 0,
      routes: statusRoutes({ catalogPath: ws.catalogPath }),
    });
    try {
      const latest = (await (await fetch(`${site.url}/api/refreshes/latest`)).json()) as {
        aborted: string;
        applied: boolean;
      };
      assert.match(latest.aborted, /local network looks down/);
      assert.match(
        await (await fetch(`${site.url}/`)).text(),
        /The last refresh was stopped by the outage guard: the local network looks down/,
      );
      const servers = (await (await fetch(`${site.url}/api/servers`)).json()) as {
        servers: Array<{ verdict: string | null; days30: Array<{ observations: number }> }>;
      };
      assert.ok(
        servers.servers.every((s) => s.verdict === null && s.days30.every((d) => d.observations === 0)),
        'an aborted run observes nothing',
      );
      // A run appended meanwhile (a pull, another process) is on the next request.
      fleet.state('flaky').busy = false;
      await writeFile(ws.catalogPath, JSON.stringify(catalogOf([server('F', fleet.url('flaky'))]), null, 2) + '\n');
      await refresh({ catalogPath: ws.catalogPath, record: true, allowHttp: true, timeoutMs: 2_000 });
      const after = (await (await fetch(`${site.url}/api/refreshes/latest`)).json()) as {
        aborted: string | null;
        applied: boolean;
      };
      assert.deepEqual([after.aborted, after.applied], [null, false]);
    } finally {
      await site.close();
    }
  });

  it('a plan-only run records only with --record, and then counts towards the streak', async () => {
    const ws = await workspace(
      catalogOf([
        server('Dying', fleet.url('dying')),
        server('A', fleet.url('ok-json')),
        server('B', fleet.url('ok-sse')),
      ]),
    );
    const run = (record?: boolean) =>
      refresh({ catalogPath: ws.catalogPath, record, allowHttp: true, timeoutMs: 2_000, confirmDrops: 2 });
    fleet.state('dying').dead = true;
    try {
      await run();
      await run();
      assert.ok(
        !existsSync(join(ws.dir, 'catalog', 'history')) && !existsSync(ws.statePath),
        'unrecorded runs leave no trace',
      );
      assert.equal((await run(true)).plan.rows[0]!.dropStreak, 1);
      assert.equal(
        (await run()).plan.rows[0]!.decision,
        'drop',
        'the recorded run counts; the unrecorded one reads it',
      );
      assert.equal(lines(await historyText(join(ws.dir, 'catalog'))).filter((l) => l.type === 'run').length, 1);
    } finally {
      fleet.state('dying').dead = false;
    }
  });
});

describe('the index', () => {
  it('builds identically from the same history, and follows it when it changes', async () => {
    const ws = await workspace(
      catalogOf([
        server('A', fleet.url('ok-json')),
        server('Z', fleet.url('zero-tools')),
        server('G', fleet.url('http-410')),
      ]),
    );
    for (let i = 0; i < 3; i++)
      await refresh({
        catalogPath: ws.catalogPath,
        write: i === 2,
        record: true,
        allowHttp: true,
        timeoutMs: 2_000,
        confirmDrops: 3,
      });
    const urls = [fleet.url('ok-json'), fleet.url('zero-tools'), fleet.url('http-410')];
    const store = new TextStore(ws.catalogPath);
    const first = await queries(store, urls);
    assert.equal(first.byUrl[0]!.since.length, 3);
    assert.equal(first.latest!.run.applied, true);
    assert.ok(
      first.byUrl[2]!.recent.every(
        (o) => o.reason === 'http-410' && o.reasons[0] === 'http-410' && o.profile === 'kai-9000',
      ),
    );
    assert.ok(
      first.byUrl[0]!.recent.every((o) => o.evidence !== null),
      'rows read back carry their evidence',
    );
    assert.deepEqual(
      await queries(new TextStore(ws.catalogPath), urls),
      first,
      'another index of the same files: the same answers',
    );

    // The history changes under the index (a git pull brings a run): the next query follows it.
    const dir = join(ws.dir, 'catalog', 'history');
    const file = join(dir, historyFiles(dir).at(-1)!);
    const later = '2099-01-01T00:00:00.000Z';
    const pulled = lines(await readFile(file, 'utf8'))
      .slice(0, 4)
      .map((l) =>
        l.type === 'run'
          ? { ...l, id: later, startedAt: later, finishedAt: '2099-01-01T00:00:01.000Z' }
          : { ...l, run: later, observedAt: later },
      );
    await appendFile(file, pulled.map((l) => JSON.stringify(l) + '\n').join(''));
    assert.equal((await store.latestRun())!.run.startedAt, later);
    assert.equal((await store.since(urls[0]!, '2000-01-01')).length, 4);
    assert.deepEqual(
      (await store.recent(urls[0]!, 1))[0]!.previous?.at,
      first.byUrl[0]!.recent[0]!.observedAt,
      'previous follows the runs before it',
    );
  });

  it('a torn last write (partial line, or a run missing its observations) is ignored, and the next append repairs it', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json')), server('B', fleet.url('ok-sse'))]));
    const record = () => refresh({ catalogPath: ws.catalogPath, record: true, allowHttp: true, timeoutMs: 2_000 });
    await record();
    const dir = join(ws.dir, 'catalog', 'history');
    const file = join(dir, historyFiles(dir)[0]!);
    const whole = await readFile(file, 'utf8');
    const [runLine, obsLine] = whole.split('\n');
    const urls = [fleet.url('ok-json'), fleet.url('ok-sse')];
    const before = await queries(new TextStore(ws.catalogPath), urls);
    const later = (line: string) =>
      line.replace(/"(id|run|startedAt|observedAt)":"[^"]+"/g, '"$1":"2099-01-01T00:00:00.000Z"');
    for (const torn of [runLine!.slice(0, 40), `${runLine}\n${obsLine}\n`, `${runLine}\n${obsLine!.slice(0, 30)}`]) {
      await writeFile(file, whole + later(torn));
      assert.deepEqual(
        await queries(new TextStore(ws.catalogPath), urls),
        before,
        `ignored: ${JSON.stringify(torn.slice(0, 50))}`,
      );
    }
    await record();
    const repaired = await readFile(file, 'utf8');
    assert.ok(repaired.startsWith(whole), 'what was whole stays byte for byte');
    assert.deepEqual(
      lines(repaired).map((l) => l.type),
      ['run', 'observation', 'observation', 'run', 'observation', 'observation'],
      'the torn tail was cut before the new lines',
    );
    assert.equal((await new TextStore(ws.catalogPath).since(urls[0]!, '2000-01-01')).length, 2);
  });

  it('a history written by onetap 0.1 (line version 1) reads as it was: rows, streaks and bars; no evidence to judge again', async () => {
    const ws = await workspace(
      catalogOf([server('Context7', 'https://mcp.context7.com/mcp'), server('Gone', 'https://gone.example/mcp')]),
    );
    const dir = join(ws.dir, 'catalog', 'history');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, '2026-11.jsonl'), await readFile(V1_FIXTURE, 'utf8'));
    const store = new TextStore(ws.catalogPath);
    assert.deepEqual(await store.problems(), { count: 0, first: [] });
    const runs = await store.runs({});
    assert.equal(runs.length, 3);
    const [first, , last] = runs.map((r) => r.rows.find((x) => x.name === 'Gone')!);
    assert.deepEqual(
      [first!.verdict, first!.reason, last!.verdict, last!.reason, last!.dropStreak, last!.decision],
      ['live', 'ok', 'drop', 'http-404', 2, 'drop'],
    );
    assert.equal(last!.evidence, null);
    assert.equal(last!.previous?.verdict, 'drop', 'previous recomputed from the runs before');
    const context7 = (await store.recent('https://mcp.context7.com/mcp', 1))[0]!;
    assert.deepEqual(context7.tools, ['resolve-library-id', 'query-docs'], 'a tool list written by reference resolves');
    assert.equal(context7.acceptedHash, context7.toolsHash, 'a v1 line without acceptedHash was the accepted list');
    const r = await runCli(['rejudge', '--catalog', ws.catalogPath, '--runs', '3', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { noEvidence: number; differences: number };
    assert.deepEqual([out.noEvidence, out.differences], [6, 0]);
  });
});

describe('size', () => {
  /** The evidence of a live server as the prober records it (the ok-json fleet behaviour). */
  const liveEvidence = (
    JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{ scenario: string; evidence: Evidence }>
  ).find((r) => r.scenario === 'ok-json')!.evidence;

  /** Weekly runs, each server with its own tool list that changes every quarter; written the way refresh writes. */
  async function measure(years: number, servers: number, toolsPerServer: number) {
    const dir = await mkdtemp(join(tmp, 'size-'));
    const runs = Array.from({ length: Math.round(years * 52) }, (_, week): RecordedRun => {
      const startedAt = new Date(Date.UTC(2026, 0, 5) + week * 7 * 86_400_000).toISOString();
      return recordedRun(
        startedAt,
        Array.from({ length: servers }, (_, i) =>
          recordedRow(
            `Server number ${i}`,
            {
              url: `https://mcp.server-number-${i}.example.com/mcp`,
              durationMs: 480 + ((i * week) % 300),
              serverName: `server-${i}`,
              serverVersion: '1.0.0',
              protocolVersion: '2024-11-05',
              sessionId: true,
              tools: Array.from(
                { length: toolsPerServer },
                (_, t) => `tool_${t}_of_server_${i}_v${Math.floor(week / 13)}`,
              ),
              toolsHash: 'a'.repeat(16),
              toolsDigest: 'b'.repeat(64),
              evidence: liveEvidence,
              probe: {
                version: '0.2.0',
                profileDigest: 'c'.repeat(16),
                requiresAuth: false,
                timeoutMs: null,
                matrix: false,
                headers: [],
              },
            },
            { acceptedHash: 'a'.repeat(16), snapshotSha256: 'd'.repeat(64) },
          ),
        ),
      );
    });
    await appendRuns(dir, runs);
    const files = historyFiles(dir).map((f) => readFileSync(join(dir, f)));
    const back = files.flatMap((f) => parseHistory(f).runs);
    assert.equal(back.length, runs.length);
    const { spans: _, line: __, bytes: ___, ...lastBack } = back.at(-1)!;
    assert.deepEqual(
      lastBack,
      { ...runs.at(-1)!, rows: runs.at(-1)!.rows.map((r) => ({ ...r, previous: null, changed: true })) },
      'every field reads back',
    );
    const text = Buffer.concat(files);
    return {
      bytes: text.length,
      gzipped: gzipSync(text).length,
      perObservation: Math.round(text.length / (runs.length * servers)),
    };
  }

  it("years of weekly runs with their evidence stay within the record's budget", async (t) => {
    // The budget: a live observation's line about 3 KB with its evidence (what is recorded of 3 exchanges);
    // 2 years x 100 servers x 12 tools weekly, about 30 MB of text in git (a few MB as git stores it).
    for (const [years, servers, tools, limit] of [
      [2, 30, 10, 10e6],
      [2, 100, 12, 32e6],
    ] as const) {
      const { bytes, gzipped, perObservation } = await measure(years, servers, tools);
      t.diagnostic(
        `${years} years x 52 weekly runs x ${servers} servers x ${tools} tools: ${(bytes / 1e6).toFixed(
          2,
        )} MB of text (${perObservation} bytes per observation), ${(gzipped / 1e3).toFixed(0)} kB gzipped`,
      );
      assert.ok(bytes < limit, `${bytes} bytes`);
    }
  });
});

/** Three weekly runs written by onetap 0.1 (commit f689012) against a loopback fleet, its URLs replaced by these. */
const V1_FIXTURE = new URL('../../test/fixtures/history-v1.jsonl', import.meta.url);
