/**
 * The deciding side of a run across vantages under faults and re-runs (issue 34), with real workers, the machine's
 * PostgreSQL and its real BullMQ queue, and a TCP proxy to PostgreSQL the test controls:
 *   - a run recorded once: a re-run with the same --run-id records nothing, probes nothing, drops nothing, and its
 *     start is the registered run's (the registration outlives the jobs);
 *   - two deciders of one run id at once: one records, the other waits and shows it;
 *   - jobs that failed for good: the wait ends once every job is accounted for, the vantage counted as not answering,
 *     why in the note; a failed job retried is failed no more;
 *   - a failed poll is tried again with backoff; polls failing until the deadline stop the run naming the store;
 *   - migration 6: the duplicates a store already holds are kept aside, named in the migrate output.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { BIN, catalogOf, recordedRow, recordedRun, runCli, server, workspace } from './helpers.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { freshSchema, POSTGRES, postgresMissing, proxy, sql } from './postgres.js';
import { MIGRATIONS } from '../src/store/pg-migrations.js';
import { runLineList, runLines } from '../src/store/lines.js';
import { importHistory } from '../src/store/transfer.js';
import { openPgStore } from '../src/store/pg-store.js';
import { enqueue, jobIdOf, queueConnection, queueNameOf, type ProbeJob } from '../src/queue/queue.js';
import { openFailedJobs } from '../src/queue/states.js';
import { profileById } from '../src/attest/profile.js';

const missing = await postgresMissing();
if (missing) it('the decider of a run across vantages under faults and re-runs', { skip: missing }, () => {});

/** The plan as `refresh --json` prints it, the fields these tests read. */
interface Printed {
  plan: Array<{
    name: string;
    decision: string;
    verdict: string;
    reason: string;
    note: string | null;
    dropStreak: number;
  }>;
  summary: Record<string, number>;
  alreadyRecorded?: true;
  written: string[];
}

describe('the decider of a run across vantages under faults and re-runs', { skip: !!missing }, () => {
  const workers: ChildProcess[] = [];
  const logs: string[] = [];
  let fleet: Fleet;
  let store: { url: string; schema: string; drop: () => Promise<void> };
  /** The store through the proxy, with a password (trust auth ignores it; every message must hide it). */
  let cutter: Awaited<ReturnType<typeof proxy>>;
  let through: string;
  /** How long an initialize of `slow` takes (ms). */
  const slowMs = 2_500;

  before(async () => {
    fleet = await startFleet(
      { slow: (c) => (c.msg?.method === 'initialize' ? void setTimeout(() => answer(c), slowMs) : answer(c)) },
      0,
      '127.0.0.8',
    );
    store = await freshSchema('decider');
    assert.equal((await runCli(['store', 'migrate', '--store', store.url])).code, 0);
    // a and b probe loopback fixtures; c was not started with --allow-http, so it refuses every job of theirs for good.
    for (const [v, open] of [
      ['a', true],
      ['b', true],
      ['c', false],
    ] as const) {
      const w = spawn(
        process.execPath,
        [BIN, 'worker', '--vantage', v, '--store', store.url, '--concurrency', '4', ...(open ? ['--allow-http'] : [])],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ONETAP_QUEUE_LOCK_MS: '5000' } },
      );
      w.stdout!.on('data', (d) => logs.push(String(d)));
      w.stderr!.on('data', (d) => logs.push(String(d)));
      workers.push(w);
    }
    cutter = await proxy();
    through = store.url.replace('postgres@127.0.0.1:5432', `postgres:sekrit@127.0.0.1:${cutter.port}`);
  });

  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await cutter.close();
    await fleet.close();
    await store.drop();
  });

  const policy = () => ({ authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] });
  const probesOf = (runId: string) =>
    logs
      .join('')
      .split('\n')
      .filter((l) => l.includes(`(run ${runId},`)).length;
  const runsOf = async (runId: string) =>
    sql<{ started_at: string; applied: boolean }>(
      `SELECT started_at, applied FROM "${store.schema}".runs WHERE id = $1`,
      [runId],
    );

  it("a re-run of a recorded run records nothing, probes nothing and drops nothing; its start is the registered run's, after its jobs are gone", async () => {
    const ws = await workspace(
      catalogOf(
        [
          server('One', `${fleet.url('ok-json')}?t=rerun`),
          server('Two', `${fleet.url('ok-sse')}?t=rerun`),
          server('Dead', 'http://127.0.0.1:9/mcp?t=rerun'),
        ],
        { policy: { ...policy(), confirmDrops: 2 } },
      ),
    );
    const args = (url: string) => [
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--write',
      '--json',
      '--vantages',
      'a,b',
      '--quorum',
      '2',
      '--run-id',
      'github-4711',
      '--deadline',
      '60000',
      '--store',
      url,
    ];
    // The first attempt: the store is cut as it records; nothing recorded, the run registered.
    cutter.arm('INSERT INTO observations');
    assert.equal((await runCli(args(through))).code, 1);
    cutter.arm(null);
    const [registered] = await sql<{ started_at: string }>(
      `SELECT started_at FROM "${store.schema}".run_registrations WHERE id = 'github-4711'`,
    );
    assert.ok(registered);
    // A day later the queue has removed the run's jobs; the registration stays.
    await sql(`DELETE FROM "${store.schema}_queue".job WHERE data->'run'->>'id' = 'github-4711'`);

    const rerun = await runCli(args(store.url));
    assert.equal(rerun.code, 0, rerun.stderr);
    const decided = JSON.parse(rerun.stdout) as Printed;
    assert.deepEqual(
      decided.plan.map((r) => [r.name, r.decision, r.dropStreak]),
      [
        ['One', 'keep', 0],
        ['Two', 'keep', 0],
        ['Dead', 'keep-failed', 1],
      ],
    );
    assert.deepEqual(
      await runsOf('github-4711'),
      [{ started_at: registered.started_at, applied: true }],
      'recorded once, started when the run was first enqueued',
    );
    assert.equal(decided.alreadyRecorded, undefined, 'decided, not shown');
    const catalog = await readFile(ws.catalogPath, 'utf8');

    // GitHub's "Re-run jobs": the same id again, confirmDrops 2, no new observation.
    const probes = probesOf('github-4711');
    const again = await runCli(args(store.url));
    assert.equal(again.code, 0, again.stderr);
    const shown = JSON.parse(again.stdout) as Printed;
    assert.deepEqual(
      shown.plan.map((r) => [r.name, r.decision, r.dropStreak]),
      decided.plan.map((r) => [r.name, r.decision, r.dropStreak]),
      'its plan as recorded',
    );
    assert.deepEqual((await runsOf('github-4711')).length, 1, 'no second runs row');
    assert.equal(await readFile(ws.catalogPath, 'utf8'), catalog, 'Dead is not dropped');
    assert.equal(probesOf('github-4711'), probes, 'nothing enqueued or probed again');
    assert.deepEqual([shown.alreadyRecorded, shown.summary, shown.written], [true, decided.summary, []]);
    assert.doesNotMatch(again.stderr, /jobs for vantages/);
  });

  it('two deciders of one run id at once: one records, the other waits for it and shows its plan', async () => {
    const ws = await workspace(
      catalogOf([server('Slow', `${fleet.url('slow')}?t=twins`), server('One', `${fleet.url('ok-json')}?t=twins`)], {
        policy: policy(),
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
      'twins-1',
      '--deadline',
      '60000',
      '--store',
      store.url,
    ];
    const both = await Promise.all([runCli(args), runCli(args)]);
    assert.deepEqual(
      both.map((r) => r.code),
      [0, 0],
      both.map((r) => r.stderr).join('\n'),
    );
    assert.equal((await runsOf('twins-1')).length, 1, 'recorded once');
    const printed = both.map((r) => JSON.parse(r.stdout) as Printed);
    assert.deepEqual(printed.map((p) => p.alreadyRecorded ?? false).sort(), [false, true]);
    const waited = both[printed.findIndex((p) => p.alreadyRecorded)]!;
    assert.match(waited.stderr, /run twins-1 is being decided by another process: waiting for it to end/);
    assert.deepEqual(
      printed[0]!.plan.map((r) => [r.name, r.decision]),
      printed[1]!.plan.map((r) => [r.name, r.decision]),
    );
  });

  it(
    'a vantage whose jobs failed for good: the wait ends once every job is accounted for, that vantage counted as ' +
      'not answering, why in the note',
    async () => {
      const ws = await workspace(
        catalogOf(
          [server('One', `${fleet.url('ok-json')}?t=failed`), server('Two', `${fleet.url('ok-sse')}?t=failed`)],
          {
            policy: policy(),
          },
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
        'a,c',
        '--quorum',
        '2',
        '--run-id',
        'failed-1',
        '--deadline',
        '60000',
        '--store',
        store.url,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /every job accounted for \(2 of 4 jobs answered, 2 failed for good\): deciding now/);
      // Decided because every job was accounted for (the line above), not at the deadline (60 s).
      const plan = (JSON.parse(r.stdout) as Printed).plan;
      assert.deepEqual(
        plan.map((p) => `${p.verdict}/${p.reason}`),
        ['failed/vantage-incomplete', 'failed/vantage-incomplete'],
      );
      for (const p of plan)
        assert.match(
          p.note!,
          /^1 of 2 vantages answered, the quorum is 2: no answer from c \(its job failed: refused: url: a private, loopback or reserved address/,
        );
    },
  );

  it('a job failed for good is read from the queue with why; the run enqueued again, it is tried again, its attempts afresh', async () => {
    const { Worker, UnrecoverableError, createPostgresBackend } = await import('bullmq');
    const job: ProbeJob = {
      run: { id: 'retry-1', startedAt: '2026-11-01T00:00:00.000Z' },
      vantage: 'z',
      kind: 'probe',
      url: 'https://retry.example/mcp',
      name: 'Retry',
      requiresAuth: false,
      headers: {},
      profile: profileById('kai-9000')!,
      matrix: false,
      allowHttp: false,
      perHost: 1,
      canaries: [],
    };
    await enqueue(store.url, [job]);
    const id = jobIdOf('retry-1', job.url, 'z');
    const w = new Worker(
      queueNameOf('z'),
      async () => {
        throw new UnrecoverableError('refused: \u001b[31mred\nand two lines');
      },
      { connection: queueConnection(store.url, false) },
      createPostgresBackend,
    );
    const queue = await openFailedJobs(store.url);
    try {
      let failed = new Map<string, string>();
      for (let i = 0; i < 100 && !failed.size; i++) {
        failed = await queue.failedOf('z', new Set([id]));
        if (!failed.size) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual([...failed], [[id, 'refused: \u001b[31mred and two lines']], 'its reason, one line');
      await w.close();
      // Enqueueing the run again tries its failed job again, its attempts counted afresh.
      await enqueue(store.url, [job]);
      assert.deepEqual(
        [...(await queue.failedOf('z', new Set([id])))],
        [],
        'retried: waiting again, no longer failed for good',
      );
      const { Queue } = await import('bullmq');
      const q = new Queue(queueNameOf('z'), { connection: queueConnection(store.url, false) }, createPostgresBackend);
      const again = (await q.getJob(id))!;
      const state = await again.getState();
      await q.close();
      assert.equal(state, 'waiting');
      assert.equal(again.attemptsMade, 0);
    } finally {
      await w.close();
      await queue.close();
    }
  });

  it('a failed poll is tried again with backoff: the store cut for a while as the decider waits, the run completes', async () => {
    const ws = await workspace(
      catalogOf([server('One', `${fleet.url('ok-json')}?t=poll`), server('Two', `${fleet.url('ok-sse')}?t=poll`)], {
        policy: policy(),
      }),
    );
    cutter.arm('count(*) AS n FROM vantage_observations');
    const cuts = cutter.cuts();
    const heal = setTimeout(() => cutter.arm(null), 3_000);
    try {
      const r = await runCli([
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
        'poll-1',
        '--deadline',
        '60000',
        '--store',
        through,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(cutter.cuts() - cuts >= 2, `${cutter.cuts() - cuts} polls cut`);
      assert.match(
        r.stderr,
        /a poll failed: the store postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/test\?schema=\w+: a query failed: .*; trying again in \d+ ms/,
      );
      assert.doesNotMatch(r.stdout + r.stderr, /sekrit/);
      assert.deepEqual(
        (JSON.parse(r.stdout) as Printed).plan.map((p) => p.decision),
        ['keep', 'keep'],
      );
      assert.equal((await runsOf('poll-1')).length, 1);
    } finally {
      clearTimeout(heal);
      cutter.arm(null);
    }
  });

  it('polls failing until the deadline: exit 1, the message naming the store without its password; nothing recorded', async () => {
    const ws = await workspace(catalogOf([server('Slow', `${fleet.url('slow')}?t=down`)], { policy: policy() }));
    cutter.arm('count(*) AS n FROM vantage_observations');
    try {
      const r = await runCli([
        'refresh',
        '--catalog',
        ws.catalogPath,
        '--allow-http',
        '--record',
        '--vantages',
        'a,b',
        '--quorum',
        '2',
        '--run-id',
        'down-1',
        '--deadline',
        '3000',
        '--store',
        through,
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          String.raw`the store postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/test\?schema=\w+: a query failed: .*` +
            String.raw` \(the wait's polls failed until the deadline, \d+ in a row, each tried again with backoff\)`,
        ),
      );
      assert.ok((r.stderr.match(/a poll failed/g) ?? []).length >= 2, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /sekrit/);
      assert.equal((await runsOf('down-1')).length, 0);
    } finally {
      cutter.arm(null);
    }
  });

  it('migration 6: a store holding a run id twice keeps the first, the later one kept aside whole and named; the id is then recorded once', async () => {
    const old = await freshSchema('dup_runs');
    const client = new pg.Client({ connectionString: POSTGRES, options: `-c search_path=${old.schema}` });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${old.schema}"`);
      await client.query(
        'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const m of MIGRATIONS.filter((x) => x.version <= 5)) {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      }
      // As a re-run recorded before this fix: the same id, a later start by the decider's clock.
      const A = 'https://alpha.example/mcp';
      const runs = [
        recordedRun(
          '2026-11-01T06:00:00.000Z',
          [recordedRow('Alpha', { url: A, verdict: 'drop', reason: 'refused' })],
          { id: 'github-9' },
        ),
        recordedRun(
          '2026-11-01T06:40:00.000Z',
          [recordedRow('Alpha', { url: A, verdict: 'drop', reason: 'refused' })],
          { id: 'github-9' },
        ),
        recordedRun('2026-11-08T06:00:00.000Z', [recordedRow('Alpha', { url: A, verdict: 'live', reason: 'ok' })], {
          id: 'github-10',
        }),
      ];
      for (const r of runs) {
        const [runLine, ...lines] = runLineList(r);
        const { rows } = await client.query(
          `INSERT INTO runs (id, started_at, month, aborted, applied, observations, line) VALUES ($1, $2, '2026-11', false, true, $3, $4) RETURNING seq`,
          [r.run.id, r.run.startedAt, lines.length, runLine],
        );
        for (const [i, line] of lines.entries()) {
          await client.query(
            `INSERT INTO observations (run_seq, run_started_at, position, url, vantage, observed_at, verdict, ` +
              `reason, line) VALUES ($1, $2, $3, $4, 'local', $2, $5, $6, $7)`,
            [rows[0].seq, r.run.startedAt, i, A, r.rows[i]!.verdict, r.rows[i]!.reason, line],
          );
        }
      }
    } finally {
      await client.end();
    }
    try {
      const m = await runCli(['store', 'migrate', '--store', old.url]);
      assert.equal(m.code, 0, m.stderr);
      assert.match(
        m.stdout,
        /from schema version 5 to 6:\n {2}6 a run id is recorded once; runs recorded again under an id before this are kept aside\n/,
      );
      assert.match(
        m.stdout,
        new RegExp(
          String.raw`\n {2}- run github-9 \(started 2026-11-01T06:40:00\.000Z, recorded \d{4}-\d\d-\d\dT\d\d:\d\d:\d` +
            String.raw`\dZ\): recorded again after its first record; kept aside in runs_set_aside \(seq 2\)\n`,
        ),
      );
      assert.equal((m.stdout.match(/kept aside in runs_set_aside/g) ?? []).length, 1);
      assert.deepEqual(await sql(`SELECT id, started_at FROM "${old.schema}".runs ORDER BY seq`), [
        { id: 'github-9', started_at: '2026-11-01T06:00:00.000Z' },
        { id: 'github-10', started_at: '2026-11-08T06:00:00.000Z' },
      ]);
      const [aside] = await sql<{ id: string; lines: string[] }>(
        `SELECT id, lines FROM "${old.schema}".runs_set_aside`,
      );
      assert.deepEqual(
        [aside!.id, aside!.lines.length, JSON.parse(aside!.lines[0]!).run],
        ['github-9', 1, 'github-9'],
        'kept whole',
      );
      await assert.rejects(
        sql(
          `INSERT INTO "${old.schema}".runs (id, started_at, month, aborted, applied, observations, line) VALUES ` +
            `('github-9', 'x', '2026-11', false, false, 0, '{}')`,
        ),
        /runs_id_once/,
      );
      const s = await openPgStore(old.url);
      try {
        assert.deepEqual(
          (await s.recent('https://alpha.example/mcp', 10)).map((r) => r.run),
          ['github-10', 'github-9'],
          'each run once',
        );
        // A text history with github-10 as the store holds it, and another record of github-9: the one imported before
        // is present, the other a history problem; neither is a second run.
        const dir = await mkdtemp(join(tmpdir(), 'onetap-import-'));
        const again = recordedRun(
          '2026-11-01T07:00:00.000Z',
          [recordedRow('Alpha', { url: 'https://alpha.example/mcp', verdict: 'drop', reason: 'refused' })],
          { id: 'github-9' },
        );
        await writeFile(
          join(dir, '2026-11.jsonl'),
          runLines(again) +
            (await sql<{ line: string }>(`SELECT line FROM "${old.schema}".runs WHERE id = 'github-10'`))[0]!.line +
            '\n' +
            (
              await sql<{ line: string }>(
                `SELECT o.line FROM "${old.schema}".observations o JOIN "${old.schema}".runs r ON r.seq = o.run_seq WHERE r.id = 'github-10'`,
              )
            )[0]!.line +
            '\n',
        );
        const imported = await importHistory(s, dir);
        assert.deepEqual([imported.runs, imported.present, imported.problems], [0, 1, 1]);
        assert.match(
          (await s.problems()).first.map((p) => `${p.file}:${p.line}: ${p.problem}`).join('\n'),
          /history\/2026-11\.jsonl:1: run line: its run id is recorded in the store already \(a run id is recorded once\)/,
        );
        await rm(dir, { recursive: true, force: true });
      } finally {
        await s.close();
      }
      assert.match(
        (await runCli(['store', 'migrate', '--store', old.url])).stdout,
        /is up to date \(schema version 6\)\n$/,
      );
    } finally {
      await old.drop();
    }
  });
});
