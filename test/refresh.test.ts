/** Multi-run refresh scenarios with a real text history and scripted servers on 127.0.0.1. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCatalog, refresh, TextStore, type RefreshOptions } from '../src/index.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, snapshotDir, workspace } from './helpers.js';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet({
    // A server the test switches between up, flaky (503) and dead (404).
    switch: (c) => {
      const mode = c.state.mode ?? 'up';
      if (mode === 'flaky') {
        c.res.writeHead(503);
        c.res.end('busy');
        return;
      }
      if (mode === 'dead') {
        c.res.writeHead(404);
        c.res.end('gone');
        return;
      }
      answer(c);
    },
  });
});
after(async () => {
  await fleet.close();
});

const fast = { probe: { retryDelayMs: 10 }, timeoutMs: 2_000, allowHttp: true } satisfies Partial<RefreshOptions>;
const decisions = (r: Awaited<ReturnType<typeof refresh>>) =>
  Object.fromEntries(r.plan.rows.map((x) => [x.name, `${x.decision} ${x.verdict}/${x.reason}`]));

describe('refresh', () => {
  it('a flake never drops a live row, and recovery is recorded', async () => {
    const ws = await workspace(
      catalogOf([server('Switch', fleet.url('switch')), server('Steady', fleet.url('ok-json'))]),
    );
    const run = (write = true) => refresh({ ...fast, catalogPath: ws.catalogPath, statePath: ws.statePath, write });
    fleet.state('switch').mode = 'up';
    assert.deepEqual(decisions(await run()), { Switch: 'keep live/ok', Steady: 'keep live/ok' });
    fleet.state('switch').mode = 'flaky';
    const flaky = await run();
    assert.equal(decisions(flaky).Switch, 'keep-failed failed/retryable-5xx');
    assert.equal(flaky.plan.rows[0]!.attempts, 2);
    assert.deepEqual(flaky.plan.rows[0]!.previous && { ...flaky.plan.rows[0]!.previous, at: 'x' }, {
      verdict: 'live',
      reason: 'ok',
      at: 'x',
    });
    fleet.state('switch').mode = 'up';
    const back = await run();
    assert.equal(decisions(back).Switch, 'keep live/ok');
    assert.equal(back.plan.rows[0]!.changed, true);
    assert.equal((await loadCatalog(ws.catalogPath)).catalog.servers.length, 2, 'nothing was dropped');
    const runs = await new TextStore(ws.catalogPath).runs({});
    assert.equal(
      runs.reduce((n, r) => n + r.rows.length, 0),
      6,
    );
  });

  it('a dead host is dropped and moved to removed, with every output written', async () => {
    const ws = await workspace(
      catalogOf([
        server('Dead', fleet.url('http-410')),
        server('A', fleet.url('ok-json')),
        server('B', fleet.url('ok-sse')),
      ]),
    );
    const r = await refresh({ ...fast, catalogPath: ws.catalogPath, statePath: ws.statePath, write: true });
    assert.equal(decisions(r).Dead, 'drop drop/http-410');
    const { catalog } = await loadCatalog(ws.catalogPath);
    assert.deepEqual(
      catalog.servers.map((s) => s.name),
      ['A', 'B'],
    );
    const removed = catalog.removed.at(-1)!;
    assert.equal(removed.name, 'Dead');
    assert.equal(removed.reason, 'http-410');
    assert.match(removed.removedAt!, /^\d{4}-\d{2}-\d{2}$/);
    const dir = join(ws.dir, 'catalog');
    const runtime = JSON.parse(await readFile(join(dir, 'generated', 'popular-servers.json'), 'utf8'));
    assert.deepEqual(
      runtime.map((s: { name: string }) => s.name),
      ['A', 'B'],
    );
    const snapshot = await readFile(join(dir, 'servers.md'), 'utf8');
    assert.match(snapshot, /stale_after: \d{4}-\d{2}-\d{2}/);
    assert.match(snapshot, /## Dropped this run\n\n- Dead/);
    assert.match(await readFile(join(dir, 'log.md'), 'utf8'), /dropped Dead .*: http-410/);
    assert.ok(
      existsSync(join(dir, 'generated', 'PopularMcpServers.kt')) &&
        existsSync(join(dir, 'generated', 'popular-servers.ts')),
    );
  });

  it('without --write or --record a run leaves no trace anywhere (no history line, no store)', async () => {
    const ws = await workspace(catalogOf([server('Dead', fleet.url('http-410')), server('A', fleet.url('ok-json'))]));
    const before = await snapshotDir(ws.dir);
    const r = await refresh({ ...fast, catalogPath: ws.catalogPath, statePath: ws.statePath });
    assert.equal(r.plan.summary.drop, 1);
    assert.deepEqual(await snapshotDir(ws.dir), before);
    assert.deepEqual(r.written, []);
  });

  it('a network outage drops nothing, writes no file, exits 3', async () => {
    const ws = await workspace(
      catalogOf([
        server('A', 'http://127.0.0.1:9/mcp'),
        server('B', 'http://127.0.0.1:7/mcp'),
        server('C', fleet.url('ok-json')),
      ]),
    );
    const before = await snapshotDir(ws.dir);
    const r = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--state',
      ws.statePath,
      '--write',
      '--allow-http',
      '--json',
    ]);
    assert.equal(r.code, 3, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.match(out.aborted, /local network looks down: 2 of 3/);
    assert.ok(out.plan.every((p: { decision: string }) => p.decision !== 'drop'));
    // Nothing changed but the history: one line marked aborted (and its index, out of git).
    const after = await snapshotDir(ws.dir);
    const added = Object.keys(after)
      .filter((f) => !(f in before))
      .map((f) => f.slice(ws.dir.length + 1));
    const history = added.filter((f) => !f.startsWith('.onetap/'));
    assert.equal(history.length, 1);
    assert.match(history[0]!, /^catalog\/history\/\d{4}-\d{2}\.jsonl$/);
    for (const f of Object.keys(before)) assert.equal(after[f], before[f], `${f} unchanged`);
    const lines = (await readFile(join(ws.dir, history[0]!), 'utf8')).split('\n').filter(Boolean);
    assert.equal(lines.length, 1);
    assert.match(JSON.parse(lines[0]!).aborted, /local network looks down/);
  });

  it("the outage guard's boundary: exactly half the entries failing at the network level is an outage, one fewer is not", async () => {
    const refused = (n: number) =>
      Array.from({ length: n }, (_, i) => server(`Down${i}`, `http://127.0.0.1:9/mcp?i=${i}`));
    const live = (n: number) => Array.from({ length: n }, (_, i) => server(`Up${i}`, `${fleet.url('ok-json')}?i=${i}`));
    const half = await workspace(catalogOf([...refused(3), ...live(3)]));
    const atHalf = await refresh({ ...fast, catalogPath: half.catalogPath, statePath: half.statePath });
    assert.match(atHalf.plan.aborted ?? 'not aborted', /local network looks down: 3 of 6 entries/);
    assert.equal(atHalf.exitCode, 3);
    assert.deepEqual(
      atHalf.plan.rows.filter((r) => r.verdict === 'drop').map((r) => r.decision),
      ['keep-failed', 'keep-failed', 'keep-failed'],
      'nothing dropped',
    );
    const fewer = await workspace(catalogOf([...refused(2), ...live(4)]));
    const belowHalf = await refresh({ ...fast, catalogPath: fewer.catalogPath, statePath: fewer.statePath });
    assert.equal(belowHalf.plan.aborted, null);
    assert.equal(belowHalf.exitCode, 0);
    assert.deepEqual(
      belowHalf.plan.rows.filter((r) => r.verdict === 'drop').map((r) => `${r.name} ${r.decision}/${r.reason}`),
      ['Down0 drop/refused', 'Down1 drop/refused'],
    );
  });

  it('a configured canary that answers lets a mass failure through', async () => {
    const ws = await workspace(
      catalogOf([server('A', 'http://127.0.0.1:9/mcp'), server('B', fleet.url('ok-json'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [], canaries: [fleet.url('canary')] },
      }),
    );
    const r = await refresh({ ...fast, catalogPath: ws.catalogPath, statePath: ws.statePath });
    assert.equal(r.plan.aborted, null);
    assert.equal(decisions(r).A, 'drop drop/refused');
    const down = await workspace(
      catalogOf([server('B', fleet.url('ok-json'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [], canaries: ['http://127.0.0.1:9/'] },
      }),
    );
    assert.match(
      (await refresh({ ...fast, catalogPath: down.catalogPath, statePath: down.statePath })).plan.aborted!,
      /canary/,
    );
  });

  it('--confirm-drops 2 needs two consecutive drop-class runs', async () => {
    const ws = await workspace(
      catalogOf([
        server('Switch', fleet.url('switch')),
        server('A', fleet.url('ok-json')),
        server('B', fleet.url('ok-sse')),
      ]),
    );
    const run = () =>
      refresh({ ...fast, catalogPath: ws.catalogPath, statePath: ws.statePath, write: true, confirmDrops: 2 });
    fleet.state('switch').mode = 'dead';
    const first = await run();
    assert.equal(decisions(first).Switch, 'keep-failed drop/http-404');
    assert.match(first.plan.rows[0]!.note!, /1 of 2/);
    const second = await run();
    assert.equal(decisions(second).Switch, 'drop drop/http-404');
    assert.equal(second.plan.rows[0]!.dropStreak, 2);
    fleet.state('switch').mode = 'up';
  });

  it('--json prints {plan, summary, aborted} with the contract fields', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json')), server('Z', fleet.url('zero-tools'))]));
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--state', ws.statePath, '--allow-http', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.aborted, null);
    assert.deepEqual(out.summary, { total: 2, keep: 1, keepFailed: 0, review: 1, drop: 0, changed: 2 });
    for (const row of out.plan)
      for (const k of ['name', 'url', 'decision', 'verdict', 'reason', 'attempts', 'previous']) assert.ok(k in row, k);
    assert.equal(out.plan[1].decision, 'review');
  });

  it('refuses http:// entries without --allow-http (exit 1)', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json'))]));
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--state', ws.statePath]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /HTTPS only/);
  });

  it('a refresh killed mid-write leaves every file whole (old or new)', async () => {
    const servers = Array.from({ length: 40 }, (_, i) =>
      server(`S${i}`, fleet.url(i % 4 === 0 ? 'http-410' : 'ok-json') + `?i=${i}`),
    );
    const outcomes = new Set<string>();
    for (const delay of [60, 120, 180, 240, 300, 360, 420, 500, 700, 1500, 8000]) {
      const ws = await workspace(catalogOf(servers));
      const original = await readFile(ws.catalogPath, 'utf8');
      await runCli(['refresh', '--catalog', ws.catalogPath, '--state', ws.statePath, '--write', '--allow-http'], {
        killAfterMs: delay,
      });
      const after = await readFile(ws.catalogPath, 'utf8');
      const parsed = JSON.parse(after);
      assert.ok(after === original || parsed.servers.length === 30, `delay ${delay}: catalog is old or new`);
      outcomes.add(after === original ? 'old' : 'new');
      for (const [file, content] of Object.entries(await snapshotDir(join(ws.dir, 'catalog')))) {
        if (file.endsWith('.json')) JSON.parse(Buffer.from(content, 'base64').toString('utf8'));
      }
      // The history holds whole runs only: a line cut by the kill is not history (and no problem), a run is all or
      // nothing.
      const store = new TextStore(ws.catalogPath);
      assert.deepEqual(await store.problems(), { count: 0, first: [] }, `delay ${delay}: the history reads clean`);
      for (const { rows } of await store.runs({})) assert.equal(rows.length, 40);
    }
    assert.deepEqual([...outcomes].sort(), ['new', 'old'], 'kills landed both before and after the write');
  });

  it('two refreshes at once do not corrupt the catalog or the store', async () => {
    const ws = await workspace(
      catalogOf([
        server('Dead', fleet.url('http-410')),
        ...Array.from({ length: 10 }, (_, i) => server(`S${i}`, fleet.url('ok-json') + `?i=${i}`)),
      ]),
    );
    const args = ['refresh', '--catalog', ws.catalogPath, '--state', ws.statePath, '--write', '--allow-http'];
    const [a, b] = await Promise.all([runCli(args), runCli(args)]);
    const codes = [a.code, b.code].sort();
    assert.ok(codes[0] === 0, `one run applied: ${a.stderr} ${b.stderr}`);
    if (codes[1] !== 0) assert.match(a.stderr + b.stderr, /changed during the refresh|another refresh/);
    const { catalog } = await loadCatalog(ws.catalogPath);
    assert.deepEqual(catalog.servers.length, 10);
    assert.equal(catalog.removed.filter((r) => r.name === 'Dead').length, 1, 'dropped once, not twice');
    const store = new TextStore(ws.catalogPath);
    assert.deepEqual(await store.problems(), { count: 0, first: [] });
    assert.equal((await store.runs({})).length, 2);
  });
});
