/**
 * History that travels in git: simulated weeks in fresh clones of a real git repository (the `git` CLI, the
 * `onetap` CLI as a process, loopback servers), the text history's line format, its tolerance of torn
 * writes, the index rebuilt identically from it, and an old SQLite store carried into it once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { appendRuns, buildStatus, loadCatalog, openHistory, readHistory, refresh, SqliteHistoryStore, startServer, statusRoutes, type Catalog, type HistoryRun, type HistoryStore } from '../src/index.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.org', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.org', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();

let fleet: Fleet;
let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'onetap-history-'));
  fleet = await startFleet({
    dying: (c) => (c.state.dead ? void c.res.writeHead(404).end('gone') : answer(c)),
    flaky: (c) => (c.state.busy ? void c.res.writeHead(503).end('busy') : answer(c)),
  });
});
after(async () => { await fleet.close(); await rm(tmp, { recursive: true, force: true }); });

const historyFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => /^\d{4}-\d{2}\.jsonl$/.test(f)).sort() : []);
const historyText = async (catalogDir: string) => (await Promise.all(historyFiles(join(catalogDir, 'history')).map((f) => readFile(join(catalogDir, 'history', f), 'utf8')))).join('');
const lines = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

/** Everything the status page and the decisions ask of a store, for comparing two indexes. */
function queries(store: HistoryStore, urls: string[]) {
  return { latest: store.latestRun(), byUrl: urls.map((u) => ({ recent: store.recent(u, 5), since: store.since(u, '2000-01-01') })) };
}

describe('simulated weeks in fresh clones', () => {
  it('drops a dead server the week its streak completes, across clones, and the committed history gives the bars and uptime', async () => {
    // The list's repository: a catalog on main, .onetap/ ignored.
    const remote = await mkdtemp(join(tmp, 'remote-'));
    git(remote, 'init', '--quiet', '--bare', '--initial-branch=main');
    const seed = await mkdtemp(join(tmp, 'seed-'));
    git(seed, 'init', '--quiet', '--initial-branch=main');
    await mkdir(join(seed, 'catalog'));
    const servers = [server('Steady', fleet.url('ok-json')), server('Dying', fleet.url('dying')), server('Flaky', fleet.url('flaky'))];
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
      const r = await runCli(['refresh', '--catalog', join(clone, 'catalog', 'servers.json'), '--state', join(clone, '.onetap', 'history.db'),
        '--write', '--json', '--allow-http', '--confirm-drops', '2', '--timeout', '2000']);
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
    assert.deepEqual(await week(3), { Steady: 'keep live', Dying: 'drop drop', Flaky: 'keep live' }, 'the streak of two was read from the committed history');
    assert.deepEqual(await week(4), { Steady: 'keep live', Flaky: 'keep live' });
    fleet.state('dying').dead = false;

    // What git holds: the catalog without Dying, the history of four runs, no index.
    const tree = git(remote, 'ls-tree', '-r', '--name-only', 'main').split('\n');
    assert.ok(!tree.some((f) => f.startsWith('.onetap')), tree.join('\n'));
    assert.ok(tree.some((f) => /^catalog\/history\/\d{4}-\d{2}\.jsonl$/.test(f)));
    const final = join(tmp, 'final');
    git(tmp, 'clone', '--quiet', remote, final);
    const catalogPath = join(final, 'catalog', 'servers.json');
    assert.deepEqual((await loadCatalog(catalogPath)).catalog.removed.map((r) => r.name), ['Dying']);
    const all = lines(await historyText(join(final, 'catalog')));
    assert.deepEqual(all.map((l) => l.type).join(' '), 'run observation observation observation run observation observation observation run observation observation observation run observation observation');
    assert.ok(all.every((l) => l.v === 1));

    // A fresh clone's report: uptime and today's bar from the committed history alone.
    const report = await runCli(['report', '--markdown', '--catalog', catalogPath, '--state', join(final, '.onetap', 'history.db')]);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /\| Steady \| ✅ kept \| `live\/ok` \| 2 \| ⬜{29}🟩 \| 100\.0% \| 100\.0% \|/);
    assert.match(report.stdout, /\| Flaky \| ✅ kept \| `live\/ok` \| 2 \| ⬜{29}🟧 \| 75\.0% \| 75\.0% \|/, 'three of four runs live; the worst of the day is the failed run');
    assert.ok(existsSync(join(final, '.onetap', 'history.db')), 'the index was built from the history');
    assert.equal(git(final, 'status', '--porcelain'), '', 'reading the history changes nothing git sees');
  });

  it('bars per day and month files follow the runs\' clock', async () => {
    const ws = await workspace(catalogOf([server('Flaky', fleet.url('flaky'))]));
    const days = ['2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02'];
    const busy = [false, true, false, false];
    for (const [i, day] of days.entries()) {
      fleet.state('flaky').busy = busy[i];
      await refresh({ catalogPath: ws.catalogPath, statePath: ws.statePath, write: true, allowHttp: true, timeoutMs: 2_000, probe: { retryDelayMs: 10 }, now: () => new Date(`${day}T06:00:00Z`) });
    }
    fleet.state('flaky').busy = false;
    assert.deepEqual(historyFiles(join(ws.dir, 'catalog', 'history')), ['2026-10.jsonl', '2026-11.jsonl']);
    await rm(join(ws.dir, '.onetap'), { recursive: true });
    const store = (await openHistory(ws.catalogPath, ws.statePath))!;
    const model = buildStatus((await loadCatalog(ws.catalogPath)).catalog, store, new Date('2026-11-02T12:00:00Z'));
    store.close();
    assert.deepEqual(model.servers[0]!.days30.slice(-4).map((d) => d.verdict), ['live', 'failed', 'live', 'live']);
    assert.equal(model.servers[0]!.uptime30, 0.75);
  });
});

describe('recording', () => {
  it('an aborted recorded run appends exactly one line; the status page and /api/refreshes/latest show it', async () => {
    const ws = await workspace(catalogOf([server('A', 'http://127.0.0.1:9/a'), server('B', 'http://127.0.0.1:9/b')]));
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--state', ws.statePath, '--record', '--allow-http', '--timeout', '2000']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /the aborted run is recorded in the history/);
    const text = await historyText(join(ws.dir, 'catalog'));
    assert.equal(text.split('\n').filter(Boolean).length, 1);
    const line = lines(text)[0]!;
    assert.deepEqual(Object.keys(line).slice(0, 9), ['v', 'type', 'startedAt', 'finishedAt', 'catalog', 'applied', 'aborted', 'observations', 'summary']);
    assert.equal(line.applied, false);
    assert.equal(line.observations, 0);
    assert.match(line.aborted as string, /local network looks down/);

    // serve as the CLI wires it: the index synced from the text history on each request.
    await rm(join(ws.dir, '.onetap'), { recursive: true, force: true });
    const site = await startServer({ catalogPath: ws.catalogPath, port: 0, routes: statusRoutes({ statePath: ws.statePath, catalogPath: ws.catalogPath }) });
    try {
      const latest = await (await fetch(`${site.url}/api/refreshes/latest`)).json() as { aborted: string; applied: boolean };
      assert.match(latest.aborted, /local network looks down/);
      assert.match(await (await fetch(`${site.url}/`)).text(), /The last refresh was stopped by the outage guard: the local network looks down/);
      const servers = await (await fetch(`${site.url}/api/servers`)).json() as { servers: Array<{ verdict: string | null; days30: Array<{ observations: number }> }> };
      assert.ok(servers.servers.every((s) => s.verdict === null && s.days30.every((d) => d.observations === 0)), 'an aborted run observes nothing');
      // A run appended meanwhile (a pull, another process) is on the next request.
      fleet.state('flaky').busy = false;
      await writeFile(ws.catalogPath, JSON.stringify(catalogOf([server('F', fleet.url('flaky'))]), null, 2) + '\n');
      await refresh({ catalogPath: ws.catalogPath, statePath: join(ws.dir, 'elsewhere', 'index.db'), record: true, allowHttp: true, timeoutMs: 2_000 });
      const after = await (await fetch(`${site.url}/api/refreshes/latest`)).json() as { aborted: string | null; applied: boolean };
      assert.deepEqual([after.aborted, after.applied], [null, false]);
    } finally {
      await site.close();
    }
  });

  it('a plan-only run records only with --record, and then counts towards the streak', async () => {
    const ws = await workspace(catalogOf([server('Dying', fleet.url('dying')), server('A', fleet.url('ok-json')), server('B', fleet.url('ok-sse'))]));
    const run = (record?: boolean) => refresh({ catalogPath: ws.catalogPath, statePath: ws.statePath, record, allowHttp: true, timeoutMs: 2_000, confirmDrops: 2 });
    fleet.state('dying').dead = true;
    try {
      await run();
      await run();
      assert.ok(!existsSync(join(ws.dir, 'catalog', 'history')) && !existsSync(ws.statePath), 'unrecorded runs leave no trace');
      assert.equal((await run(true)).plan.rows[0]!.dropStreak, 1);
      assert.equal((await run()).plan.rows[0]!.decision, 'drop', 'the recorded run counts; the unrecorded one reads it');
      assert.equal(lines(await historyText(join(ws.dir, 'catalog'))).filter((l) => l.type === 'run').length, 1);
    } finally {
      fleet.state('dying').dead = false;
    }
  });
});

describe('the index', () => {
  it('rebuilds identically from the same history, and follows it when it changes', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json')), server('Z', fleet.url('zero-tools')), server('G', fleet.url('http-410'))]));
    for (let i = 0; i < 3; i++) await refresh({ catalogPath: ws.catalogPath, statePath: ws.statePath, write: i === 2, record: true, allowHttp: true, timeoutMs: 2_000, confirmDrops: 3 });
    const urls = [fleet.url('ok-json'), fleet.url('zero-tools'), fleet.url('http-410')];
    let store = (await openHistory(ws.catalogPath, ws.statePath))!;
    const first = queries(store, urls);
    store.close();
    assert.equal(first.byUrl[0]!.since.length, 3);
    assert.equal(first.latest!.applied, true);
    assert.ok(first.byUrl[2]!.recent.every((o) => o.reason === 'http-410' && o.reasons[0] === 'http-410' && o.profile === 'kai-9000'));

    for (const f of ['', '-wal', '-shm']) await rm(ws.statePath + f, { force: true });
    store = (await openHistory(ws.catalogPath, ws.statePath))!;
    assert.deepEqual(queries(store, urls), first, 'deleted and rebuilt: the same answers');
    store.close();
    const memory = (await openHistory(ws.catalogPath, ws.statePath, { readonly: true }))!;
    assert.deepEqual(queries(memory, urls), first, 'the in-memory index of an unrecorded run: the same answers');
    memory.close();

    // The history changes under the index (a git pull brings a run): the next open follows it.
    const dir = join(ws.dir, 'catalog', 'history');
    const file = join(dir, historyFiles(dir).at(-1)!);
    const pulled = lines(await readFile(file, 'utf8')).slice(0, 4).map((l) => (l.type === 'run' ? { ...l, startedAt: '2099-01-01T00:00:00.000Z', finishedAt: '2099-01-01T00:00:01.000Z' } : { ...l, at: '2099-01-01T00:00:00.000Z' }));
    await appendFile(file, pulled.map((l) => JSON.stringify(l) + '\n').join(''));
    store = (await openHistory(ws.catalogPath, ws.statePath))!;
    assert.equal(store.latestRun()!.startedAt, '2099-01-01T00:00:00.000Z');
    assert.equal(store.since(urls[0]!, '2000-01-01').length, 4);
    store.close();
  });

  it('a torn last write (partial line, or a run missing its observations) is ignored, and the next append repairs it', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json')), server('B', fleet.url('ok-sse'))]));
    const record = () => refresh({ catalogPath: ws.catalogPath, statePath: ws.statePath, record: true, allowHttp: true, timeoutMs: 2_000 });
    await record();
    const dir = join(ws.dir, 'catalog', 'history');
    const file = join(dir, historyFiles(dir)[0]!);
    const whole = await readFile(file, 'utf8');
    const [runLine, obsLine] = whole.split('\n');
    const urls = [fleet.url('ok-json'), fleet.url('ok-sse')];
    let store = (await openHistory(ws.catalogPath, ws.statePath))!;
    const before = queries(store, urls);
    store.close();

    for (const torn of [runLine!.slice(0, 40), `${runLine}\n${obsLine}\n`, `${runLine}\n${obsLine!.slice(0, 30)}`]) {
      await writeFile(file, whole + torn.replace(/"startedAt":"[^"]+"/, '"startedAt":"2099-01-01T00:00:00.000Z"').replace(/"at":"[^"]+"/, '"at":"2099-01-01T00:00:00.000Z"'));
      store = (await openHistory(ws.catalogPath, ws.statePath))!;
      assert.deepEqual(queries(store, urls), before, `ignored: ${JSON.stringify(torn.slice(0, 50))}`);
      store.close();
    }
    await record();
    const repaired = await readFile(file, 'utf8');
    assert.ok(repaired.startsWith(whole), 'what was whole stays byte for byte');
    assert.deepEqual(lines(repaired).map((l) => l.type), ['run', 'observation', 'observation', 'run', 'observation', 'observation'], 'the torn tail was cut before the new lines');
    store = (await openHistory(ws.catalogPath, ws.statePath))!;
    assert.equal(store.since(urls[0]!, '2000-01-01').length, 2);
    store.close();
  });

  it('an old store is carried into the text history once, then it is only an index', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json'))]));
    // A store as earlier versions left it: runs in SQLite, schema version 1, no text history.
    const old = new SqliteHistoryStore(ws.statePath);
    const at = '2026-09-01T06:00:00.000Z';
    const outcome = { url: fleet.url('ok-json'), name: 'A', verdict: 'live' as const, reason: 'ok' as const, attempts: 1, httpStatus: 200, durationMs: 12, tools: ['search', 'fetch'], error: null, profile: 'kai-9000', reasons: ['ok' as const], appError: null, location: null, matrix: null, toolsHash: null, findings: [], findingsSeen: 0 };
    const planRow = { name: 'A', url: outcome.url, decision: 'keep', verdict: 'live', reason: 'ok', attempts: 1, previous: null, changed: true, dropStreak: 0, note: null, httpStatus: 200, tools: ['search', 'fetch'], error: null, durationMs: 12, profile: 'kai-9000', reasons: ['ok'], appError: null, location: null };
    old.recordRun({ startedAt: at, finishedAt: at, catalog: ws.catalogPath, applied: false, plan: { plan: [planRow], summary: { total: 1, keep: 1, keepFailed: 0, review: 0, drop: 0, changed: 1 }, aborted: null } }, [{ ...outcome, at }]);
    old.recordRun({ startedAt: '2026-09-02T06:00:00.000Z', finishedAt: at, catalog: '/elsewhere/servers.json', applied: false, plan: { plan: [], summary: { total: 0, keep: 0, keepFailed: 0, review: 0, drop: 0, changed: 0 }, aborted: null } }, []);
    old.close();
    const db = new Database(ws.statePath);
    db.exec("DROP TABLE sources; DROP TABLE meta; PRAGMA user_version = 1;");
    db.close();

    const warnings: string[] = [];
    for (let i = 0; i < 2; i++) {
      const store = (await openHistory(ws.catalogPath, ws.statePath, { warn: (m) => warnings.push(m) }))!;
      assert.deepEqual(store.recent(outcome.url, 5), [{ ...outcome, at }]);
      store.close();
    }
    const text = await readFile(join(ws.dir, 'catalog', 'history', '2026-09.jsonl'), 'utf8');
    assert.deepEqual(lines(text).map((l) => l.type), ['run', 'observation'], 'carried once (the other catalog\'s run is not)');
    assert.equal(warnings.length, 2);
    assert.match(warnings.join('\n'), /1 run\(s\) .* belong to another catalog/);
    assert.ok(existsSync(`${ws.statePath}.pre-text-history`), 'the old store is kept beside');
    // The text alone gives the same: delete the store.
    await rm(ws.statePath);
    const rebuilt = (await openHistory(ws.catalogPath, ws.statePath))!;
    assert.deepEqual(rebuilt.recent(outcome.url, 5), [{ ...outcome, at }]);
    rebuilt.close();
  });
});

describe('size', () => {
  /** Weekly runs, each server with its own tool list that changes every quarter; written the way refresh writes. */
  async function measure(years: number, servers: number, toolsPerServer: number) {
    const dir = await mkdtemp(join(tmp, 'size-'));
    const runs = Array.from({ length: Math.round(years * 52) }, (_, week): HistoryRun => {
      const startedAt = new Date(Date.UTC(2026, 0, 5) + week * 7 * 86_400_000).toISOString();
      const observations = Array.from({ length: servers }, (_, i) => ({
        url: `https://mcp.server-number-${i}.example.com/mcp`, name: `Server number ${i}`, at: startedAt, verdict: 'live' as const, reason: 'ok' as const,
        attempts: 1, httpStatus: 200, durationMs: 480 + ((i * week) % 300), tools: Array.from({ length: toolsPerServer }, (_, t) => `tool_${t}_of_server_${i}_v${Math.floor(week / 13)}`),
        error: null, profile: 'kai-9000', reasons: ['ok' as const], appError: null, location: null, matrix: null, toolsHash: null, findings: [], findingsSeen: 0,
      }));
      const plan = observations.map(({ at: _, matrix: __, ...o }) => ({ ...o, decision: 'keep' as const, previous: null, changed: false, dropStreak: 0, note: null }));
      return { run: { startedAt, finishedAt: startedAt, catalog: 'servers.json', applied: true, plan: { plan, summary: { total: servers, keep: servers, keepFailed: 0, review: 0, drop: 0, changed: 0 }, aborted: null } }, observations };
    });
    await appendRuns(dir, runs);
    const text = (await Promise.all(historyFiles(dir).map((f) => readFile(join(dir, f), 'utf8')))).join('');
    const back = readHistory(dir);
    assert.equal(back.length, runs.length);
    assert.deepEqual(back.at(-1)!.observations, runs.at(-1)!.observations, 'every field reads back');
    return { bytes: Buffer.byteLength(text), gzipped: gzipSync(text).length };
  }

  it('years of weekly runs of a few dozen servers stay well under a few MB', async (t) => {
    for (const [years, servers, tools, limit] of [[2, 30, 10, 1.5e6], [3, 40, 12, 3e6]] as const) {
      const { bytes, gzipped } = await measure(years, servers, tools);
      t.diagnostic(`${years} years x 52 weekly runs x ${servers} servers x ${tools} tools: ${(bytes / 1e6).toFixed(2)} MB of text, ${(gzipped / 1e3).toFixed(0)} kB gzipped`);
      assert.ok(bytes < limit, `${bytes} bytes`);
    }
  });
});

export type { Catalog };
