/**
 * Many vantages, for real: three Linux network namespaces made by this test (named after its process id; stale ones
 * removed at start, all removed at the end), each with its own loopback where the fixture fleet listens as that
 * vantage sees it, and one `onetap worker` beside it reaching PostgreSQL through its Unix socket. The same URL then
 * answers in one namespace, is refused in another (nothing listens there) and hangs in a third. The host runs
 * `onetap refresh --vantages a,b,c --quorum 2`, which enqueues, waits and decides. Expected, from the rules:
 * refused in one of three → review/vantage-split; timing out in one → keep with a note; dead in two of three → drop;
 * all up → keep; the same run enqueued twice → one set of jobs; a vantage whose canaries fail → left out of the run;
 * workers stopped → vantage-incomplete at the deadline.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BIN, catalogOf, runCli, server, workspace } from './helpers.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';

const DIST = new URL('../', import.meta.url).pathname;
const SOCKET = 'postgresql://postgres@/test?host=/var/run/postgresql';

function namespacesMissing(): string | null {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
    return null;
  } catch {
    return 'ip netns (iproute2) is not available';
  }
}

const missing = (await postgresMissing()) ?? namespacesMissing();
if (missing) it('many vantages in network namespaces', { skip: missing }, () => {});

const ns = (v: string) => `ot${process.pid}${v}`;
const VANTAGES = ['a', 'b', 'c'];

/** Namespaces this test's earlier runs left behind (their process is gone). */
function removeStale(): void {
  for (const line of execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n')) {
    const m = /^ot(\d+)[a-z]\b/.exec(line);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      execFileSync('ip', ['netns', 'del', line.split(' ')[0]!], { stdio: 'ignore' });
    }
  }
}

describe('many vantages in network namespaces', { skip: !!missing }, () => {
  const children: ChildProcess[] = [];
  const logs = new Map<string, string>();
  let url = '';
  let drop = async () => {};
  const base = 47_000 + (process.pid % 1_000) * 4;
  const [UP, REFUSED_IN_C, HANGS_IN_B, DEAD_IN_AB, SLOW, CANARY] = [
    base,
    base + 1,
    base + 2,
    base + 3,
    base + 4,
    base + 5,
  ];
  // What listens in each vantage: nothing on a port there means refused.
  const listening: Record<string, string[]> = {
    a: [`${UP}=ok`, `${REFUSED_IN_C}=ok`, `${HANGS_IN_B}=ok`, `${SLOW}=slow`, `${CANARY}=ok`],
    b: [`${UP}=ok`, `${REFUSED_IN_C}=ok`, `${HANGS_IN_B}=hang`, `${CANARY}=ok`],
    c: [`${UP}=ok`, `${HANGS_IN_B}=ok`, `${DEAD_IN_AB}=hang`],
  };

  const inNamespace = (v: string, args: string[], env: Record<string, string> = {}): ChildProcess => {
    const child = spawn('ip', ['netns', 'exec', ns(v), process.execPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const key = `${v}:${args[0]!.split('/').pop()}:${children.length}`;
    logs.set(key, '');
    child.stdout!.on('data', (d) => logs.set(key, logs.get(key) + d));
    child.stderr!.on('data', (d) => logs.set(key, logs.get(key) + d));
    children.push(child);
    return child;
  };
  const workerLog = (v: string) =>
    [...logs]
      .filter(([k]) => k.startsWith(`${v}:onetap`))
      .map(([, l]) => l)
      .join('');
  const workers = new Map<string, ChildProcess>();
  const startWorker = (v: string) =>
    workers.set(
      v,
      inNamespace(v, [BIN, 'worker', '--vantage', v, '--store', url, '--concurrency', '4', '--allow-http'], {
        ONETAP_QUEUE_LOCK_MS: '3000',
      }),
    );

  before(async () => {
    removeStale();
    const s = await freshSchema('vantages', SOCKET);
    url = s.url;
    drop = async () => {
      await s.drop();
      await sql(`DROP SCHEMA IF EXISTS "${s.schema}_queue" CASCADE`);
    };
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    for (const v of VANTAGES) {
      execFileSync('ip', ['netns', 'add', ns(v)]);
      execFileSync('ip', ['netns', 'exec', ns(v), 'ip', 'link', 'set', 'lo', 'up']);
      const fleet = inNamespace(v, [join(DIST, 'test/fleet/vantage-server.js'), ...listening[v]!]);
      await new Promise<void>((resolve, reject) => {
        fleet.stdout!.once('data', () => resolve());
        fleet.once('exit', (c) => reject(new Error(`fleet in ${v} exited ${c}`)));
      });
      startWorker(v);
    }
  });

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    for (const v of VANTAGES)
      try {
        execFileSync('ip', ['netns', 'del', ns(v)], { stdio: 'ignore' });
      } catch {
        /* gone */
      }
    await drop();
  });

  const catalog = () =>
    catalogOf(
      [
        server('Up everywhere', `http://127.0.0.1:${UP}/ok-json`),
        server('Refused in c', `http://127.0.0.1:${REFUSED_IN_C}/ok-json`),
        server('Hangs in b', `http://127.0.0.1:${HANGS_IN_B}/ok-json`),
        server('Dead in a and b', `http://127.0.0.1:${DEAD_IN_AB}/ok-json`),
      ],
      {
        policy: {
          authOptionalHosts: [],
          sharedGatewayHosts: [
            `127.0.0.1:${UP}`,
            `127.0.0.1:${REFUSED_IN_C}`,
            `127.0.0.1:${HANGS_IN_B}`,
            `127.0.0.1:${DEAD_IN_AB}`,
          ],
        },
      },
    );

  interface PlanJson {
    plan: Array<{
      name: string;
      decision: string;
      verdict: string;
      reason: string;
      note: string | null;
      vantages?: Array<{ vantage: string; verdict: string | null; reason: string | null; left: string | null }>;
    }>;
  }
  const refresh = async (catalogPath: string, extra: string[]) => {
    const r = await runCli([
      'refresh',
      '--catalog',
      catalogPath,
      '--allow-http',
      '--record',
      '--json',
      '--timeout',
      '800',
      '--vantages',
      'a,b,c',
      '--quorum',
      '2',
      '--store',
      url,
      ...extra,
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    return { plan: { rows: (JSON.parse(r.stdout) as PlanJson).plan }, stderr: r.stderr };
  };

  it('refused in one of three is a split, timing out in one is kept with a note, dead in two is dropped, up everywhere is kept', async () => {
    const ws = await workspace(catalog());
    const { plan, stderr } = await refresh(ws.catalogPath, ['--run-id', 'week-1', '--deadline', '60000']);
    assert.match(stderr, /16 jobs|12 jobs/);
    const by = Object.fromEntries(plan.rows.map((r) => [r.name, r]));
    assert.deepEqual(
      [by['Up everywhere']!.decision, by['Up everywhere']!.verdict, by['Up everywhere']!.note],
      ['keep', 'live', null],
    );
    assert.deepEqual([by['Refused in c']!.decision, by['Refused in c']!.reason], ['review', 'vantage-split']);
    assert.match(by['Refused in c']!.note!, /drop-class from c \(drop\/refused\)/);
    assert.deepEqual([by['Hangs in b']!.decision, by['Hangs in b']!.verdict], ['keep', 'live']);
    assert.match(by['Hangs in b']!.note!, /failed from b \(failed\/timeout\)/);
    assert.deepEqual([by['Dead in a and b']!.decision, by['Dead in a and b']!.reason], ['drop', 'refused']);
    assert.deepEqual(
      by['Refused in c']!.vantages!.map((v) => [v.vantage, v.verdict]),
      [
        ['a', 'live'],
        ['b', 'live'],
        ['c', 'drop'],
      ],
    );

    // The same run again: no new job, no new observation; the plan is the same.
    const again = await refresh(ws.catalogPath, ['--run-id', 'week-1', '--deadline', '60000']);
    assert.deepEqual(
      again.plan.rows.map((r) => [r.name, r.decision, r.reason]),
      plan.rows.map((r) => [r.name, r.decision, r.reason]),
    );
    const observed = await sql<{ n: string }>(
      `SELECT count(*) AS n FROM "${url.split('schema=')[1]}".vantage_observations WHERE run_id = 'week-1'`,
    );
    assert.deepEqual(observed, [{ n: '12' }], 'one observation per URL and vantage');
    for (const v of VANTAGES) {
      const lines = workerLog(v)
        .split('\n')
        .filter((l) => l.includes('(run week-1,'));
      assert.equal(lines.length, 4, `${v} probed each URL once:\n${workerLog(v)}`);
    }
  });

  it('a worker killed (SIGKILL) during a slow tools/list loses nothing: another takes the job, one observation is recorded', async () => {
    const ws = await workspace(
      catalogOf([server('Slow', `http://127.0.0.1:${SLOW}/ok-json`)], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [] },
      }),
    );
    const run = runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--record',
      '--json',
      '--timeout',
      '10000',
      '--vantages',
      'a',
      '--quorum',
      '1',
      '--run-id',
      'week-kill',
      '--deadline',
      '60000',
      '--store',
      url,
    ]);
    const fleetA = () =>
      [...logs]
        .filter(([k]) => k.startsWith('a:vantage-server'))
        .map(([, l]) => l)
        .join('');
    for (let i = 0; i < 200 && !fleetA().includes('slow tools/list'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(fleetA().includes('slow tools/list'), 'the worker reached the slow tools/list');
    const killed = new Promise((r) => workers.get('a')!.once('exit', r));
    workers.get('a')!.kill('SIGKILL');
    await killed;
    const killedAt = Date.now();
    startWorker('a');
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    const row = (JSON.parse(r.stdout) as PlanJson).plan[0]!;
    assert.deepEqual([row.decision, row.verdict], ['keep', 'live']);
    assert.ok(Date.now() - killedAt < 20_000, 'taken again within the lock time and the probe');
    assert.deepEqual(
      await sql(`SELECT vantage FROM "${url.split('schema=')[1]}".vantage_observations WHERE run_id = 'week-kill'`),
      [{ vantage: 'a' }],
      'exactly one observation',
    );
  });

  it('each worker runs its canaries once per run: a vantage whose canaries fail is left out, and the plan says so', async () => {
    const withCanary = catalog();
    withCanary.policy.canaries = [`http://127.0.0.1:${CANARY}/ok-json`];
    const ws = await workspace(withCanary);
    const { plan, stderr } = await refresh(ws.catalogPath, ['--run-id', 'week-canaries', '--deadline', '60000']);
    assert.match(stderr, /15 jobs/, 'four rows and one canary job per vantage');
    assert.match(stderr, /vantage c left out of this run: none of its 1 canary URL\(s\) answered/);
    const by = Object.fromEntries(plan.rows.map((r) => [r.name, r]));
    // Without c, "Refused in c" is live from a and b: no split.
    assert.deepEqual([by['Refused in c']!.decision, by['Refused in c']!.verdict], ['keep', 'live']);
    assert.deepEqual(
      by['Up everywhere']!.vantages!.map((v) => [v.vantage, v.left === null]),
      [
        ['a', true],
        ['b', true],
        ['c', false],
      ],
    );
    const reported = await sql(
      `SELECT vantage, configured, reachable FROM "${url.split('schema=')[1]}".vantage_canaries WHERE run_id = 'week-canaries' ORDER BY vantage`,
    );
    assert.deepEqual(reported, [
      { vantage: 'a', configured: 1, reachable: 1 },
      { vantage: 'b', configured: 1, reachable: 1 },
      { vantage: 'c', configured: 1, reachable: 0 },
    ]);
  });

  it('with the workers of two vantages stopped, the run decides at its deadline: vantage-incomplete, nothing dropped', async () => {
    for (const c of ['b', 'c'].map((v) => workers.get(v)!)) {
      // A worker that ended already (it failed) says so here instead of leaving this wait open.
      const exited =
        c.exitCode !== null || c.signalCode !== null
          ? Promise.resolve(c.exitCode)
          : new Promise<number | null>((r) => c.once('exit', r));
      c.kill('SIGTERM');
      assert.equal(await exited, 0, 'a worker stops on SIGTERM with exit 0');
    }
    const ws = await workspace(catalog());
    const started = Date.now();
    const { plan } = await refresh(ws.catalogPath, ['--run-id', 'week-2', '--deadline', '6000']);
    assert.ok(Date.now() - started >= 5_000, 'it waited for the deadline');
    assert.deepEqual(
      plan.rows.map((r) => [r.decision, r.reason]),
      plan.rows.map(() => ['keep-failed', 'vantage-incomplete']),
    );
    const row = plan.rows.find((r) => r.name === 'Dead in a and b')!;
    assert.deepEqual(
      row.vantages!.map((v) => v.verdict),
      ['drop', null, null],
    );
    assert.match(row.note ?? '', /no answer from b, c/);
  });
});
