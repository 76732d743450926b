/**
 * The chaos suite of runs across vantages (issue 34): real `onetap worker` processes, the machine's PostgreSQL reached
 * by the workers through a TCP proxy the test controls (`test/chaos/pg-proxy.ts`: cut, refuse, pause), MCP hosts on
 * loopback that count, server side, what reached them (`test/chaos/hosts.ts`), kill -9 and SIGSTOP, an injected clock
 * (`test/chaos/clock-offset.ts`), and as root a network namespace with nftables rules. Each case states what the issue
 * asks for, not what the code does today:
 *
 *   1. a worker's store cut for 10 s (every connection cut, new ones refused) during a run: every job's observation
 *      recorded once, no job failed, every row of the recorded run observed from that vantage;
 *   2. two stalls do not fail a job: the worker killed twice on the same jobs in flight, restarted: each recorded
 *      once, none failed;
 *   3. the store down 15 s while a run is enqueued: each worker says so in a few lines (one per kind per 10 s), not
 *      thousands, and then takes the run's jobs, losing none;
 *   4. a stale host lease is fenced: with --per-host 1, a worker stopped (SIGSTOP) past its 30 s lease and resumed
 *      never has a request in flight on the host beside another worker's;
 *   5. a worker's clock ahead by less than the lock duration takes no job another worker is probing;
 *   6. what held must keep holding: kill -9 of one of two workers mid-run (its jobs taken again by the other,
 *      recorded once); a vantage partitioned by nftables from 25% of the hosts (a split) and from 50% (left out),
 *      never a drop.
 *
 * One store schema for the file; each case has vantages of its own (so no worker takes another case's jobs), starts its
 * workers and kills them after. Lock durations are short (ONETAP_QUEUE_LOCK_MS) to fit the budget (4 minutes).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, catalogOf, runCli, server, workspace, type RunResult } from './helpers.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';
import { pgProxy } from './chaos/pg-proxy.js';
import { startMcpHosts, type McpHosts } from './chaos/hosts.js';
import { startWorker, type WorkerOptions, type WorkerProc } from './chaos/workers.js';

const DIST = new URL('../', import.meta.url).pathname;
const SOCKET = 'postgresql://postgres@/test?host=/var/run/postgresql';

const missing = await postgresMissing();
if (missing) it('chaos: a run across vantages under faults', { skip: missing }, () => {});

function namespacesMissing(): string | null {
  if (process.getuid?.() !== 0) return 'network namespaces and nftables need root';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
    execFileSync('nft', ['--version'], { stdio: 'pipe' });
    return null;
  } catch {
    return 'ip netns (iproute2) or nft (nftables) is not available';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `cond` holds (polled every 50 ms), failing with `what` after `ms`. */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

interface PlanRow {
  name: string;
  decision: string;
  verdict: string;
  reason: string;
  note: string | null;
  vantages?: Array<{ vantage: string; verdict: string | null; reason: string | null; left: string | null }>;
}

describe('chaos: a run across vantages under faults', { skip: !!missing }, () => {
  let store: { url: string; schema: string; drop: () => Promise<void> };
  const workers: WorkerProc[] = [];
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    store = await freshSchema('chaos');
    const m = await runCli(['store', 'migrate', '--store', store.url]);
    assert.equal(m.code, 0, m.stderr);
  });

  after(async () => {
    await killAll();
    for (const c of closers.splice(0)) await c().catch(() => {});
    await store.drop();
  });

  const worker = (o: Omit<WorkerOptions, 'store'> & { store?: string }): WorkerProc => {
    const w = startWorker({ store: store.url, ...o });
    workers.push(w);
    return w;
  };
  const ready = (w: WorkerProc) =>
    until(`worker ${w.label} to start`, () => w.log().includes('taking jobs from'), 30_000);
  /**
   * Deciding processes still running: a case that failed early kills its own rather than leave it waiting out its
   * deadline.
   */
  const deciders = new Set<ChildProcess>();
  const decider = (args: string[]): Promise<RunResult> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
      deciders.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code, signal) => {
        deciders.delete(child);
        resolve({ code, signal, stdout, stderr });
      });
    });
  const killAll = async () => {
    for (const d of deciders) d.kill('SIGKILL');
    for (const w of workers.splice(0)) await w.kill9();
  };

  /** `refresh --vantages … --record --json` on a catalog of these URLs (the store reached directly). */
  // biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
  const refresh = async (
    runId: string,
    urls: string[],
    hostsOf: string[],
    vantages: string[],
    quorum: number,
    extra: string[] = [],
  ): Promise<RunResult & { plan: PlanRow[] }> => {
    const ws = await workspace(
      catalogOf(
        urls.map((u, i) => server(`S${i}`, u)),
        { policy: { authOptionalHosts: [], sharedGatewayHosts: hostsOf } },
      ),
    );
    closers.push(() => rm(ws.dir, { recursive: true, force: true }));
    const r = await decider([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--record',
      '--json',
      '--vantages',
      vantages.join(','),
      '--quorum',
      String(quorum),
      '--run-id',
      runId,
      '--store',
      store.url,
      ...extra,
    ]);
    let plan: PlanRow[] = [];
    try {
      plan = (JSON.parse(r.stdout) as { plan: PlanRow[] }).plan;
    } catch {
      /* the assertion on the exit code says why */
    }
    return { ...r, plan };
  };
  /**
   * Observations recorded for the run, per vantage: how many URLs. (The key is run, URL, vantage: a row is there once
   * or not.)
   */
  const observed = async (runId: string): Promise<Record<string, number>> => {
    const rows = await sql<{ vantage: string; n: string }>(
      `SELECT vantage, count(*) AS n FROM "${store.schema}".vantage_observations WHERE run_id = $1 GROUP BY vantage ORDER BY vantage`,
      [runId],
    );
    return Object.fromEntries(rows.map((r) => [r.vantage, Number(r.n)]));
  };
  /** The run's jobs on the queue that failed, with why (BullMQ's PostgreSQL tables). */
  const failedJobs = async (runId: string): Promise<string[]> => {
    const rows = await sql<{
      queue: string;
      url: string;
      attempts_made: number;
      stalled_count: number;
      failed_reason: string | null;
    }>(
      `SELECT queue, data->>'url' AS url, attempts_made, stalled_count, failed_reason FROM ` +
        `"${store.schema}_queue".job WHERE data->'run'->>'id' = $1 AND state = 'failed' ORDER BY url`,
      [runId],
    );
    return rows.map(
      (r) => `${r.queue} ${r.url}: ${r.failed_reason} (attempts ${r.attempts_made}, stalls ${r.stalled_count})`,
    );
  };
  /**
   * Per vantage, how many rows of the decided plan it answered (a verdict, and not left out). A run of one vantage
   * prints no `vantages` entries: the row's own verdict is its answer, unless it had none (vantage-incomplete).
   */
  const answeredRows = (plan: PlanRow[], vantages: string[]) =>
    Object.fromEntries(
      vantages.map((v) => [
        v,
        plan.filter((r) =>
          r.vantages
            ? r.vantages.some((x) => x.vantage === v && x.verdict !== null && x.left === null)
            : vantages.length === 1 && r.reason !== 'vantage-incomplete',
        ).length,
      ]),
    );
  /**
   * What each case asserts of a run that must have lost nothing: exit 0, every job observed once per vantage, none
   * failed, every row answered by every vantage, all kept.
   */
  const intact = async (r: RunResult & { plan: PlanRow[] }, runId: string, vantages: string[], n: number) => {
    const failed = await failedJobs(runId);
    const got = {
      exit: r.code,
      observed: await observed(runId),
      failedJobs: failed.length,
      answered: answeredRows(r.plan, vantages),
      kept: r.plan.filter((p) => p.decision === 'keep').length,
    };
    const want = {
      exit: 0,
      observed: Object.fromEntries(vantages.map((v) => [v, n])),
      failedJobs: 0,
      answered: Object.fromEntries(vantages.map((v) => [v, n])),
      kept: n,
    };
    const incomplete = r.plan
      .filter((p) => p.decision !== 'keep')
      .slice(0, 3)
      .map((p) => `${p.name}: ${p.decision} ${p.verdict}/${p.reason}: ${p.note}`);
    assert.deepEqual(
      got,
      want,
      [...failed.slice(0, 5), ...incomplete, r.stderr.split('\n').slice(-6).join('\n')].join('\n'),
    );
  };

  it("1. a worker's store cut for 10 s (connections cut, new ones refused) during a run: every observation recorded " +
    'once, no job failed, every row observed from that vantage', {
    timeout: 150_000,
  }, async () => {
    const hosts = await startMcpHosts(3, { holdMs: (m) => (m === 'tools/list' ? 300 : 0) });
    const cutter = await pgProxy();
    closers.push(
      () => hosts.close(),
      () => cutter.close(),
    );
    try {
      const urls = Array.from({ length: 30 }, (_, i) => hosts.url(i % 3, `/mcp?n=${i}`));
      // c1a: its store through the proxy, its queue reached directly; c1b: both through the proxy.
      const a = worker({ vantage: 'c1a', store: cutter.through(store.url), queue: store.url });
      const b = worker({ vantage: 'c1b', store: cutter.through(store.url) });
      await Promise.all([ready(a), ready(b)]);
      const run = refresh('chaos-cut', urls, hosts.hosts, ['c1a', 'c1b'], 2, [
        '--timeout',
        '10000',
        '--deadline',
        '120000',
      ]);
      await until(
        'each worker to finish a few jobs before the cut',
        () => a.jobLines('chaos-cut').length >= 4 && b.jobLines('chaos-cut').length >= 4,
      );
      assert.ok(
        a.jobLines('chaos-cut').length < 30 && b.jobLines('chaos-cut').length < 30,
        'the run is still in flight when the store goes',
      );
      await cutter.outage(10_000);
      await intact(await run, 'chaos-cut', ['c1a', 'c1b'], 30);
    } finally {
      await killAll();
    }
  });

  it('2. two stalls do not fail a job: the worker killed (kill -9) twice on the same jobs in flight, restarted: every job recorded once, none failed', {
    timeout: 150_000,
  }, async () => {
    // One host per URL: the killed worker's host leases (30 s) never hold the next one back.
    const hosts = await startMcpHosts(4, { holdMs: (m) => (m === 'tools/list' ? 6_000 : 0) });
    closers.push(() => hosts.close());
    try {
      const urls = Array.from({ length: 4 }, (_, i) => hosts.url(i, `/mcp?stall=${i}`));
      let w = worker({ vantage: 'c2' });
      await ready(w);
      const run = refresh('chaos-stalls', urls, hosts.hosts, ['c2'], 1, ['--timeout', '30000', '--deadline', '120000']);
      for (const round of [1, 2]) {
        await until(
          `every job's tools/list in flight (round ${round})`,
          () => urls.every((u) => hosts.calls(u, 'tools/list') === round && hosts.inFlight(u, 'tools/list') === 1),
          60_000,
        );
        await w.kill9();
        w = worker({ vantage: 'c2' });
      }
      await intact(await run, 'chaos-stalls', ['c2'], 4);
    } finally {
      await killAll();
    }
  });

  it('3. the store down 15 s while jobs come in: each worker says so in a few lines (one per kind per 10 s, with a count), not thousands, and resumes', {
    timeout: 120_000,
  }, async () => {
    const hosts = await startMcpHosts(2);
    const cutter = await pgProxy();
    closers.push(
      () => hosts.close(),
      () => cutter.close(),
    );
    try {
      // c3a: its store through the proxy, its queue reached directly (it sees the jobs it cannot record); c3b: both
      // through the proxy.
      const a = worker({ vantage: 'c3a', store: cutter.through(store.url), queue: store.url });
      const b = worker({ vantage: 'c3b', store: cutter.through(store.url) });
      await Promise.all([ready(a), ready(b)]);
      const from = Date.now();
      const down = cutter.outage(15_000);
      await sleep(500);
      // The run is enqueued (the deciding job reaches the store) while the workers' store is down.
      const urls = Array.from({ length: 30 }, (_, i) => hosts.url(i % 2, `/mcp?down=${i}`));
      const run = refresh('chaos-down', urls, hosts.hosts, ['c3a', 'c3b'], 2, [
        '--timeout',
        '10000',
        '--deadline',
        '100000',
      ]);
      await down;
      const to = Date.now();
      // During the outage no observation can be recorded: whatever a worker wrote then is about the outage.
      for (const w of [a, b]) {
        const said = w
          .lines()
          .filter((l) => l.at >= from && l.at <= to && l.text.trim() !== '')
          .map((l) => l.text);
        const kinds = [...new Set(said.map((t) => t.replace(/\d+/g, 'N')))].slice(0, 6);
        assert.ok(said.length >= 1, `worker ${w.label} says its store is unreachable`);
        assert.ok(
          said.length <= 10,
          `worker ${w.label}: ${said.length} lines in the 15 s outage, of these kinds:\n${kinds.join('\n')}`,
        );
        assert.ok(w.alive(), `worker ${w.label} outlived the outage`);
      }
      // And they take the jobs again: nothing of the run lost.
      await intact(await run, 'chaos-down', ['c3a', 'c3b'], 30);
    } finally {
      await killAll();
    }
  });

  it('4. a stale host lease is fenced: with --per-host 1, a worker stopped past its 30 s lease and resumed never probes the host beside another worker', {
    timeout: 180_000,
  }, async () => {
    // Every JSON-RPC request held 1 s: a probe of one URL is about 2 s; 6 URLs of one host, one at a time.
    const hosts = await startMcpHosts(1, { holdMs: () => 1_000 });
    closers.push(() => hosts.close());
    try {
      const urls = Array.from({ length: 6 }, (_, i) => hosts.url(0, `/mcp?lease=${i}`));
      const first = worker({ vantage: 'c4' });
      await ready(first);
      const run = refresh('chaos-lease', urls, hosts.hosts, ['c4'], 1, [
        '--per-host',
        '1',
        '--timeout',
        '60000',
        '--deadline',
        '170000',
      ]);
      // The first worker holds the host's one slot once a request of it reached the host.
      await until(
        "the first worker's first request on the host",
        () => urls.some((u) => hosts.inFlight(u) > 0),
        60_000,
      );
      first.proc.kill('SIGSTOP');
      const second = worker({ vantage: 'c4' });
      // 36 s stopped: past the lease's 30 s, so the second worker takes the slot and probes; then the first resumes.
      await sleep(36_000);
      first.proc.kill('SIGCONT');
      const r = await run;
      assert.equal(hosts.mostInFlight(), 1, `two requests of the host in flight at once: ${hosts.firstOverlap()}`);
      assert.ok(second.jobLines('chaos-lease').length >= 1, 'the second worker probed while the first was stopped');
      await intact(r, 'chaos-lease', ['c4'], 6);
    } finally {
      await killAll();
    }
  });

  it('5. a worker whose clock is ahead by less than the lock duration takes no job another worker is probing: each URL probed once, nothing lost', {
    timeout: 150_000,
  }, async () => {
    const LOCK = 3_000;
    // Within the lock duration (docs/vantages.md: skew must stay under it), by a margin of 10%.
    const SKEW = 2_700;
    const hosts = await startMcpHosts(4, { holdMs: (m) => (m === 'tools/list' ? 18_000 : 0) });
    closers.push(() => hosts.close());
    try {
      const urls = Array.from({ length: 4 }, (_, i) => hosts.url(i, `/mcp?skew=${i}`));
      // Four normal workers of one job each, started a fifth of a second apart: their locks are renewed at different
      // moments, so whenever the worker ahead looks for stalled jobs, one lock or another is at every point of its
      // renewal cycle (one worker alone would make the outcome depend on the phase of two timers).
      const normal: WorkerProc[] = [];
      for (let i = 0; i < 4; i++) {
        normal.push(worker({ vantage: 'c5', lockMs: LOCK, concurrency: 1 }));
        await sleep(190);
      }
      await Promise.all(normal.map(ready));
      const run = refresh('chaos-skew', urls, hosts.hosts, ['c5'], 1, ['--timeout', '40000', '--deadline', '140000']);
      await until(
        'the normal workers probing every URL',
        () => urls.every((u) => hosts.inFlight(u, 'tools/list') === 1),
        60_000,
      );
      const ahead = worker({ vantage: 'c5', lockMs: LOCK, clockOffsetMs: SKEW });
      const r = await run;
      const probes = Object.fromEntries(urls.map((u) => [new URL(u).search, hosts.calls(u, 'tools/list')]));
      assert.deepEqual(
        probes,
        Object.fromEntries(urls.map((u) => [new URL(u).search, 1])),
        `a URL probed twice: the worker ${SKEW} ms ahead (lock ${LOCK} ms) took a job in flight\n${ahead.log().split('\n').slice(-5).join('\n')}`,
      );
      assert.deepEqual(
        ahead.jobLines('chaos-skew'),
        [],
        'the worker ahead finished none of the jobs the others were probing',
      );
      await intact(r, 'chaos-skew', ['c5'], 4);
    } finally {
      await killAll();
    }
  });

  it('6a. (held) kill -9 of one of two workers mid-run: its jobs are taken again by the other, each recorded once, none failed', {
    timeout: 120_000,
  }, async () => {
    const hosts = await startMcpHosts(4, { holdMs: (m) => (m === 'tools/list' ? 1_500 : 0) });
    closers.push(() => hosts.close());
    try {
      const urls = Array.from({ length: 16 }, (_, i) => hosts.url(i % 4, `/mcp?kill=${i}`));
      const doomed = worker({ vantage: 'c6' });
      const survivor = worker({ vantage: 'c6' });
      await Promise.all([ready(doomed), ready(survivor)]);
      const run = refresh('chaos-kill', urls, hosts.hosts, ['c6'], 1, ['--timeout', '10000', '--deadline', '100000']);
      // Killed mid-run: it has finished a job and requests are in flight (a loaded machine may never show six at once).
      await until(
        'both workers probing',
        () =>
          doomed.jobLines('chaos-kill').length >= 1 &&
          urls.filter((u) => hosts.inFlight(u, 'tools/list') > 0).length >= 2,
      );
      await doomed.kill9();
      const r = await run;
      await intact(r, 'chaos-kill', ['c6'], 16);
      const finished = new Set(
        [...doomed.jobLines('chaos-kill'), ...survivor.jobLines('chaos-kill')].map((l) => /\?kill=(\d+)/.exec(l)?.[1]),
      );
      assert.equal(finished.size, 16, 'every job finished by one worker or the other');
    } finally {
      await killAll();
    }
  });

  describe('6b. (held) a vantage partitioned by nftables from some hosts', {
    skip: namespacesMissing() ?? false,
  }, () => {
    const ns = `otchaos${process.pid}`;
    const children: ChildProcess[] = [];
    let hosts: McpHosts;

    before(async () => {
      // Namespaces of earlier runs of this file whose process is gone.
      for (const line of execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n')) {
        const m = /^otchaos(\d+)\b/.exec(line);
        if (!m) continue;
        try {
          process.kill(Number(m[1]), 0);
        } catch {
          execFileSync('ip', ['netns', 'del', line.split(' ')[0]!], { stdio: 'ignore' });
        }
      }
      hosts = await startMcpHosts(4);
      execFileSync('ip', ['netns', 'add', ns]);
      execFileSync('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
      // The same hosts as the partitioned vantage sees them: the same ports on its own loopback.
      const fleet = spawn(
        'ip',
        [
          'netns',
          'exec',
          ns,
          process.execPath,
          join(DIST, 'test/fleet/vantage-server.js'),
          ...hosts.ports.map((p) => `${p}=ok`),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(fleet);
      await new Promise<void>((resolve, reject) => {
        fleet.stdout!.once('data', () => resolve());
        fleet.once('exit', (c) => reject(new Error(`the fleet in ${ns} exited ${c}`)));
      });
      execFileSync('ip', ['netns', 'exec', ns, 'nft', 'add', 'table', 'inet', 'chaos']);
    });

    after(async () => {
      for (const c of children) c.kill('SIGKILL');
      await killAll();
      await hosts?.close();
      await sleep(200);
      try {
        execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
      } catch {
        /* gone */
      }
    });

    const partition = (rules: string[]) =>
      execFileSync('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], {
        input:
          `flush table inet chaos\ntable inet chaos {\n  chain out {\n    type filter hook output priority 0; ` +
          `policy accept;\n${rules.map((r) => `    ${r}\n`).join('')}  }\n}\n`,
        stdio: ['pipe', 'ignore', 'inherit'],
      });

    it('partitioned from 25% of the hosts (refused): those rows are vantage-split, the rest kept; from 50% (dropped ' +
      'packets): the vantage is left out; never a drop', {
      timeout: 120_000,
    }, async () => {
      const urls = hosts.origins.map((o) => `${o}/ok-json`);
      const socketStore = `${SOCKET}&schema=${store.schema}`;
      const [pa, pb, pc] = [
        worker({ vantage: 'pa' }),
        worker({ vantage: 'pb' }),
        worker({ vantage: 'pc', store: socketStore, netns: ns }),
      ];
      await Promise.all([ready(pa), ready(pb), ready(pc)]);

      partition([`tcp dport ${hosts.ports[0]} reject with tcp reset`]);
      const quarter = await refresh('chaos-part-25', urls, hosts.hosts, ['pa', 'pb', 'pc'], 2, [
        '--timeout',
        '1000',
        '--deadline',
        '60000',
      ]);
      assert.equal(quarter.code, 0, quarter.stderr);
      assert.deepEqual(
        quarter.plan.map((p) => [p.decision, p.reason]),
        [
          ['review', 'vantage-split'],
          ['keep', 'ok'],
          ['keep', 'ok'],
          ['keep', 'ok'],
        ],
        JSON.stringify(quarter.plan.map((p) => p.note)),
      );
      assert.deepEqual(
        quarter.plan[0]!.vantages!.map((v) => [v.vantage, v.verdict]),
        [
          ['pa', 'live'],
          ['pb', 'live'],
          ['pc', 'drop'],
        ],
      );

      partition([`tcp dport ${hosts.ports[0]} drop`, `tcp dport ${hosts.ports[1]} drop`]);
      const half = await refresh('chaos-part-50', urls, hosts.hosts, ['pa', 'pb', 'pc'], 2, [
        '--timeout',
        '1000',
        '--deadline',
        '60000',
      ]);
      assert.equal(half.code, 0, half.stderr);
      assert.deepEqual(
        half.plan.map((p) => p.decision),
        ['keep', 'keep', 'keep', 'keep'],
        JSON.stringify(half.plan.map((p) => p.note)),
      );
      assert.ok(
        half.plan.every((p) => p.vantages!.find((v) => v.vantage === 'pc')!.left !== null),
        'pc is left out of every row',
      );
      assert.match(half.stderr, /vantage pc left out of this run/);
      for (const r of [...quarter.plan, ...half.plan]) assert.notEqual(r.decision, 'drop');
    });
  });
});
