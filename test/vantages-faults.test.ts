/**
 * A run across vantages under faults, on loopback with real workers and the machine's PostgreSQL:
 *   - the store's connection cut (a TCP proxy the test controls) as the deciding process records the run: exit 1,
 *     nothing recorded; the rerun with the same run id enqueues no job again, reuses the workers' observations and
 *     records the run once;
 *   - a 429 whose Retry-After is past what a probe waits: every worker leaves that host alone until then;
 *   - the Action with the catalog's policy.vantages: the workflow run's id, the workers' observations, a decision;
 *   - `probe --vantages`: the workers probe, one entry per vantage asked;
 *   - a census through the workers of two vantages: one request per host at a time over both, records that name them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, catalogOf, runCli, server, workspace } from './helpers.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { freshSchema, postgresMissing, proxy, sql } from './postgres.js';
import { git, runAction } from './action-run.js';
import { kindOf, startRegistry } from './fleet/registry.js';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const missing = await postgresMissing();
if (missing) it('a run across vantages under faults', { skip: missing }, () => {});

describe('a run across vantages under faults', { skip: !!missing }, () => {
  const workers: ChildProcess[] = [];
  const logs: string[] = [];
  const drops: Array<() => Promise<void>> = [];
  let fleet: Fleet;

  const schema = async (label: string) => {
    const s = await freshSchema(label);
    drops.push(async () => {
      await s.drop();
      await sql(`DROP SCHEMA IF EXISTS "${s.schema}_queue" CASCADE`);
    });
    assert.equal((await runCli(['store', 'migrate', '--store', s.url])).code, 0);
    return s;
  };
  const startWorkers = (vantages: string[], url: string) => {
    for (const v of vantages) {
      const w = spawn(
        process.execPath,
        [BIN, 'worker', '--vantage', v, '--store', url, '--concurrency', '4', '--allow-http'],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ONETAP_QUEUE_LOCK_MS: '5000' } },
      );
      w.stdout!.on('data', (d) => logs.push(String(d)));
      w.stderr!.on('data', (d) => logs.push(String(d)));
      workers.push(w);
    }
  };

  // Initialize requests per URL (`?n=`), with when they arrived; the first one the host sees is refused with a 429.
  const arrivals: Array<{ n: string; at: number; status: number }> = [];
  before(async () => {
    fleet = await startFleet(
      {
        limited: (c) => {
          if (c.msg?.method !== 'initialize') return answer(c);
          const n = new URL(c.req.url!, 'http://x').searchParams.get('n')!;
          const first = !c.state.limited;
          c.state.limited = true;
          arrivals.push({ n, at: Date.now(), status: first ? 429 : 200 });
          if (first) {
            c.res.writeHead(429, { 'retry-after': '6', 'content-type': 'text/plain' });
            c.res.end('slow down');
            return;
          }
          answer(c);
        },
      },
      0,
      '127.0.0.7',
    );
  });

  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fleet.close();
    for (const d of drops) await d();
  });

  it('the store cut as the run is recorded: exit 1, nothing recorded; the rerun with the same run id completes, nothing twice', async () => {
    const { url: direct, schema: name } = await schema('cut_across');
    startWorkers(['a', 'b'], direct);
    const cutter = await proxy();
    try {
      const through = direct.replace('127.0.0.1:5432', `127.0.0.1:${cutter.port}`);
      const ws = await workspace(
        catalogOf([server('One', fleet.url('ok-json')), server('Two', fleet.url('ok-sse'))], {
          policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] },
        }),
      );
      const args = [
        'refresh',
        '--catalog',
        ws.catalogPath,
        '--allow-http',
        '--record',
        '--json',
        '--vantages',
        'a,b',
        '--quorum',
        '2',
        '--run-id',
        'cut-1',
        '--deadline',
        '60000',
        '--store',
        through,
      ];
      cutter.arm('INSERT INTO observations');
      const cut = await runCli(args);
      assert.equal(cut.code, 1, cut.stdout + cut.stderr);
      assert.ok(cutter.cuts() >= 1, 'the connection was cut');
      assert.match(cut.stderr, /nothing of this run was recorded/);
      const count = async () =>
        (
          await sql<{ runs: string; rows: string; seen: string }>(`SELECT (SELECT count(*) FROM "${name}".runs) AS runs,
        (SELECT count(*) FROM "${name}".observations) AS rows, (SELECT count(*) FROM "${name}".vantage_observations) AS seen`)
        )[0];
      assert.deepEqual(
        await count(),
        { runs: '0', rows: '0', seen: '4' },
        'the workers recorded theirs; the run recorded nothing',
      );

      cutter.arm(null);
      const probesBefore = logs
        .join('')
        .split('\n')
        .filter((l) => l.includes('(run cut-1,')).length;
      const rerun = await runCli(args);
      assert.equal(rerun.code, 0, rerun.stderr);
      const plan = (JSON.parse(rerun.stdout) as { plan: Array<{ decision: string; vantages: unknown[] }> }).plan;
      assert.deepEqual(
        plan.map((r) => [r.decision, r.vantages.length]),
        [
          ['keep', 2],
          ['keep', 2],
        ],
      );
      assert.deepEqual(
        await count(),
        { runs: '1', rows: '2', seen: '4' },
        "one run, each row once, each vantage's observation once",
      );
      assert.equal(
        logs
          .join('')
          .split('\n')
          .filter((l) => l.includes('(run cut-1,')).length,
        probesBefore,
        'no job was enqueued or probed again',
      );
    } finally {
      await cutter.close();
      for (const w of workers.splice(0)) w.kill('SIGKILL');
    }
  });

  it('a 429 past what a probe waits holds its host for every worker until its Retry-After', async () => {
    const { url } = await schema('not_before');
    startWorkers(['a', 'a', 'a'], url);
    const ws = await workspace(
      catalogOf(
        [0, 1, 2, 3].map((n) => server(`Limited ${n}`, `${fleet.url('limited')}?n=${n}`)),
        { policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] } },
      ),
    );
    const r = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--record',
      '--json',
      '--vantages',
      'a',
      '--quorum',
      '1',
      '--per-host',
      '1',
      '--run-id',
      'limited-1',
      '--deadline',
      '90000',
      '--store',
      url,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const plan = (JSON.parse(r.stdout) as { plan: Array<{ reason: string }> }).plan;
    assert.deepEqual(plan.map((p) => p.reason).sort(), ['ok', 'ok', 'ok', 'rate-limited']);
    const refused = arrivals.find((a) => a.status === 429)!;
    const others = arrivals.filter((a) => a.n !== refused.n);
    assert.equal(new Set(others.map((a) => a.n)).size, 3, 'the other three were probed');
    // Retry-After: 6 s; the hold starts when the worker records the 429, a little after the fixture sent it.
    for (const o of others)
      assert.ok(
        o.at - refused.at >= 5_900,
        `${o.n} was asked ${o.at - refused.at} ms after the 429, before its Retry-After`,
      );
    for (const w of workers.splice(0)) w.kill('SIGKILL');
  });

  it("the Action with store-url and vantages enqueues under the workflow run's id, waits for the workers and decides", async () => {
    const { url, schema: name } = await schema('action_across');
    startWorkers(['a', 'b'], url);
    const tmp = await mkdtemp(join(tmpdir(), 'onetap-action-across-'));
    try {
      const remote = join(tmp, 'remote.git');
      git(tmp, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
      const seed = join(tmp, 'seed');
      git(tmp, 'init', '--quiet', '--initial-branch=main', seed);
      await mkdir(join(seed, 'catalog'));
      const catalog = catalogOf([server('One', fleet.url('ok-json')), server('Gone', 'http://127.0.0.1:9/mcp')], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host], vantages: ['a', 'b'] },
      });
      await writeFile(join(seed, 'catalog', 'servers.json'), JSON.stringify(catalog, null, 2) + '\n');
      git(seed, 'add', '.');
      git(seed, 'commit', '--quiet', '-m', 'the list');
      git(seed, 'push', '--quiet', remote, 'main');
      const dir = join(tmp, 'week');
      git(tmp, 'clone', '--quiet', remote, dir);
      // The vantages come from the catalog's policy; the run id from the workflow run.
      const r = await runAction(
        tmp,
        'run.sh',
        dir,
        { write: 'true', 'allow-http': 'true', 'store-url': url, deadline: '60000' },
        { GITHUB_RUN_ID: '4242' },
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual([r.outputs.keep, r.outputs.drop], ['1', '1']);
      const seen = await sql<{ run_id: string; n: string }>(
        `SELECT run_id, count(*) AS n FROM "${name}".vantage_observations GROUP BY run_id`,
      );
      assert.deepEqual(seen, [{ run_id: 'github-4242', n: '4' }]);
    } finally {
      await rm(tmp, { recursive: true, force: true });
      for (const w of workers.splice(0)) w.kill('SIGKILL');
    }
  });

  it('a census through the workers of two vantages: every remote recorded once, one request per host at a time over ' +
    "every worker, the census's User-Agent, the vantages in the records", {
    timeout: 120_000,
  }, async () => {
    const { url } = await schema('census_across');
    startWorkers(['a', 'b'], url);
    const reg = await startRegistry(200, 20);
    const dir = await mkdtemp(join(tmpdir(), 'onetap-census-across-'));
    try {
      const out = join(dir, 'census.json');
      const r = await runCli([
        'census',
        '--registry',
        reg.url,
        '--publisher',
        'io.example',
        '--out',
        out,
        '--allow-private',
        '--allow-http',
        '--timeout',
        '3000',
        '--vantages',
        'a,b',
        '--store',
        url,
        '--contact',
        'https://census.example/about',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(reg.mostInFlight(), 1, 'one request in flight per host over both workers');
      assert.deepEqual(
        [...reg.agents].map((x) => x.replace(/\/[\d.]+ /, '/<version> ')),
        ['onetap-census/<version> (+https://census.example/about)'],
      );
      assert.equal(reg.forbidden(), 0);
      const doc = JSON.parse(await readFile(out, 'utf8')) as {
        servers: Array<{
          _meta: Record<
            string,
            { method: { vantages: string[] }; remotes: Array<{ verdict: string; tokens: number | null }> }
          >;
        }>;
      };
      assert.equal(doc.servers.length, 200);
      const records = doc.servers.map((x) => x._meta['io.example/verification']!);
      assert.deepEqual(records[0]!.method.vantages, ['a', 'b']);
      assert.equal(
        records.filter((v) => v.remotes[0]!.verdict !== 'not probed').length,
        180,
        'every probeable remote recorded',
      );
      assert.equal(records[0]!.remotes[0]!.tokens, 92);
      // Each URL probed once per vantage: two initializes for a live remote (one per worker), never more.
      assert.ok(
        [...reg.initializes].filter(([i]) => kindOf(i) === 'small').every(([, n]) => n === 2),
        JSON.stringify([...reg.initializes].slice(0, 5)),
      );
    } finally {
      await reg.close();
      await rm(dir, { recursive: true, force: true });
      for (const w of workers.splice(0)) w.kill('SIGKILL');
    }
  });

  it('probe --json carries vantages: the local one alone, or one entry per vantage asked with --vantages (the workers probe)', async () => {
    const local = await runCli(['probe', '--json', fleet.url('ok-json')]);
    const [here] = JSON.parse(local.stdout) as Array<{
      vantages: Array<{ vantage: string; verdict: string; latencyMs: number }>;
      durationMs: number;
    }>;
    assert.deepEqual(
      here!.vantages.map((v) => [v.vantage, v.verdict, v.latencyMs]),
      [['local', 'live', here!.durationMs]],
    );

    const { url } = await schema('probe_across');
    startWorkers(['a', 'b'], url);
    const refused = 'http://127.0.0.1:9/mcp';
    const r = await runCli([
      'probe',
      '--json',
      '--vantages',
      'a,b',
      '--run-id',
      'probe-1',
      '--deadline',
      '60000',
      '--store',
      url,
      fleet.url('ok-json'),
      refused,
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /4 jobs for vantages a, b on the queue \(run probe-1\)/);
    const results = JSON.parse(r.stdout) as Array<{
      url: string;
      verdict: string;
      reason: string;
      vantages: Array<{ vantage: string; verdict: string; reason: string; observedAt: string }>;
    }>;
    assert.deepEqual(
      results.map((x) => [x.verdict, x.reason, x.vantages.map((v) => `${v.vantage}:${v.verdict}/${v.reason}`)]),
      [
        ['live', 'ok', ['a:live/ok', 'b:live/ok']],
        ['drop', 'refused', ['a:drop/refused', 'b:drop/refused']],
      ],
    );
    assert.ok(results.every((x) => x.vantages.every((v) => !Number.isNaN(Date.parse(v.observedAt)))));
    const jobs = logs
      .join('')
      .split('\n')
      .filter((l) => l.includes('(run probe-1,'));
    assert.equal(jobs.length, 4, 'each worker probed each URL');
  });
});
