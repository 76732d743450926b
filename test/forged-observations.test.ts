/**
 * Observations cannot be forged ahead of a run, on the machine's PostgreSQL with real workers:
 *   - a store writer pre-seeds every vantage's "drop" for a predictable run id (`github-<run>`): not counted (written
 *     before the run was registered), the workers' own observations are, and the live server is kept;
 *   - at the store: an observation for a job never enqueued (another URL, a vantage not asked, a run never
 *     registered) is not counted, nor one written before its job was enqueued (a re-run adding a URL discards it);
 *     with the vantages' keys, an unsigned, a badly signed or a tampered observation or canaries report is left out;
 *   - `policy.signedVantages`: the workers sign with ONETAP_VANTAGE_KEY, the decider verifies with
 *     ONETAP_VANTAGE_KEY_<NAME>; a vantage whose worker holds the wrong key is not counted (and pre-seeded rows of
 *     every vantage neither); a decider missing a key refuses before anything is enqueued.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, catalogOf, observation, runCli, server, workspace } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';
import { openPgStore, type PgStore } from '../src/store/pg-store.js';
import { signObservation } from '../src/store/signatures.js';

const missing = await postgresMissing();
if (missing) it('observations cannot be forged ahead of a run', { skip: missing }, () => {});

const KEYS = {
  a: 'a'.repeat(16) + '0123456789abcdef0123',
  b: 'b'.repeat(16) + '0123456789abcdef0123',
  c: 'c'.repeat(16) + '0123456789abcdef0123',
};

describe('observations cannot be forged ahead of a run', { skip: !!missing }, () => {
  const workers: ChildProcess[] = [];
  const drops: Array<() => Promise<void>> = [];
  let fleet: Fleet;

  before(async () => {
    fleet = await startFleet();
  });
  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fleet.close();
    for (const d of drops) await d();
  });

  const schema = async (label: string) => {
    const s = await freshSchema(label);
    drops.push(s.drop);
    assert.equal((await runCli(['store', 'migrate', '--store', s.url])).code, 0);
    return s;
  };
  const startWorkers = (url: string, keys: Record<string, string | undefined>) => {
    for (const [v, key] of Object.entries(keys)) {
      const env: Record<string, string | undefined> = {
        ...process.env,
        ONETAP_STORE_URL: url,
        ONETAP_QUEUE_LOCK_MS: '5000',
        ONETAP_VANTAGE_KEY: key,
      };
      if (key === undefined) delete env.ONETAP_VANTAGE_KEY;
      workers.push(
        spawn(process.execPath, [BIN, 'worker', '--vantage', v, '--allow-http', '--concurrency', '2'], {
          stdio: 'ignore',
          env,
        }),
      );
    }
  };
  /** What a store writer would write: every vantage's observation of `url` as dead, for a run not yet started. */
  const preSeed = async (store: PgStore, run: string, url: string, vantages: string[]) => {
    for (const vantage of vantages) {
      assert.equal(
        await store.recordObservation(
          observation({
            url,
            run,
            vantage,
            verdict: 'drop',
            reason: 'refused',
            reasons: ['refused'],
            httpStatus: null,
          }),
          null,
          null,
        ),
        true,
      );
    }
  };
  interface PlanJson {
    plan: Array<{
      decision: string;
      verdict: string;
      reason: string;
      vantages: Array<{ vantage: string; verdict: string | null }>;
    }>;
    warnings: string[];
  }

  it("pre-seeded drops for a predictable run id are not counted: the workers' observations are, and the live server is kept", async () => {
    const { url, schema: name } = await schema('forged_ahead');
    startWorkers(url, { a: undefined, b: undefined });
    const live = fleet.url('ok-json');
    const store = await openPgStore(url);
    try {
      await preSeed(store, 'github-7', live, ['a', 'b']);
    } finally {
      await store.close();
    }
    const ws = await workspace(
      catalogOf([server('Live', live)], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] },
      }),
    );
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
      'github-7',
      '--deadline',
      '60000',
      '--store',
      url,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const {
      plan: [row],
      warnings,
    } = JSON.parse(r.stdout) as PlanJson;
    assert.deepEqual(
      [row!.decision, row!.verdict, row!.vantages.map((v) => v.verdict)],
      ['keep', 'live', ['live', 'live']],
      "the live server is kept on its vantages' own observations",
    );
    assert.deepEqual(warnings, [
      '2 observation(s) or canaries report(s) of run github-7 were written before their jobs were enqueued: discarded, not counted',
    ]);
    const stored = await sql<{ vantage: string; verdict: string }>(
      `SELECT vantage, line::json->>'verdict' AS verdict FROM "${name}".vantage_observations ORDER BY vantage`,
    );
    assert.deepEqual(
      stored,
      [
        { vantage: 'a', verdict: 'live' },
        { vantage: 'b', verdict: 'live' },
      ],
      "the forged rows were discarded at registration, the workers' recorded",
    );
    for (const w of workers.splice(0)) w.kill('SIGKILL');
  });

  it('at the store: never enqueued, written before its job, unsigned, badly signed or tampered: left out and named', async () => {
    const { url, schema: name } = await schema('forged_store');
    const store = await openPgStore(url);
    try {
      const [u1, u2, u3] = ['https://one.example/mcp', 'https://two.example/mcp', 'https://three.example/mcp'];
      const run = { id: 'week-9', startedAt: '2026-12-07T00:00:00.000Z' };
      const o = (u: string, vantage: string, runId = run.id) =>
        observation({ url: u, run: runId, vantage, observedAt: run.startedAt });
      // Before the run exists: a drop for u1 from a (discarded when its job is registered) and one for u2 (kept aside
      // until a re-run enqueues u2).
      await preSeed(store, run.id, u1, ['a']);
      await preSeed(store, run.id, u2, ['a']);
      const first = await store.registerRun(
        run,
        ['a', 'b'],
        ['a', 'b'].flatMap((v) => [u1, u3, '#canaries'].map((u) => ({ url: u, vantage: v }))),
      );
      assert.equal(first.discarded, 1, 'the row written for u1 before its job was enqueued is deleted');
      assert.equal(first.registration.startedAt, run.startedAt);
      // The workers' own, and what others write for jobs never enqueued.
      await store.recordObservation(o(u1, 'a'), null, KEYS.a);
      await store.recordObservation(o(u1, 'b'), null, null); // unsigned
      await store.recordObservation(o(u3, 'a'), null, KEYS.a);
      await store.recordObservation(o(u3, 'b'), null, KEYS.c); // signed with another vantage's key
      await store.recordObservation(o(u1, 'c'), null, KEYS.c); // a vantage the run did not ask
      await store.recordObservation(o(u1, 'a', 'week-never'), null, KEYS.a); // a run never registered
      // A row the store writer altered after a's worker signed it.
      await sql(
        `UPDATE "${name}".vantage_observations SET line = replace(line, '"verdict":"live"', '"verdict":"drop"') ` +
          `WHERE run_id = $1 AND url = $2 AND vantage = 'a'`,
        [run.id, u3],
      );
      const pairs = (list: Array<{ url: string; vantage: string }>) =>
        list.map((x) => `${x.url.split('//')[1]!.split('.')[0]}/${x.vantage}`).sort();
      assert.deepEqual(
        pairs(await store.observationsOf(run.id)),
        ['one/a', 'one/b', 'three/a', 'three/b'],
        'only jobs the run enqueued',
      );
      assert.equal(await store.observationCount(run.id, ['a', 'b', 'c']), 4);
      assert.deepEqual(await store.observationsOf('week-never'), []);
      const keys = new Map([
        ['a', KEYS.a],
        ['b', KEYS.b],
      ]);
      assert.deepEqual(
        pairs(await store.observationsOf(run.id, keys)),
        ['one/a'],
        'unsigned, badly signed and tampered rows left out',
      );
      const problems = (await store.problems()).first.map((p) => p.problem);
      assert.ok(
        problems.some((p) => p.includes('https://two.example/mcp from a is not of a job this run enqueued')),
        problems.join('\n'),
      );
      assert.ok(
        problems.some((p) => p.includes("https://three.example/mcp from b does not carry b's signature")),
        problems.join('\n'),
      );
      // Canaries alike.
      await store.recordCanaries(run.id, 'a', { configured: 1, reachable: 1 }, KEYS.a);
      await store.recordCanaries(run.id, 'b', { configured: 1, reachable: 1 }, null);
      await store.recordCanaries('week-never', 'a', { configured: 1, reachable: 1 }, KEYS.a);
      assert.deepEqual([...(await store.canariesOf(run.id)).keys()].sort(), ['a', 'b']);
      assert.deepEqual([...(await store.canariesOf(run.id, keys)).keys()], ['a']);
      assert.equal((await store.canariesOf('week-never')).size, 0);
      // A re-run with the same id adding u2: the row written for u2 before that is discarded; the run keeps its first
      // start.
      const again = await store.registerRun(
        { id: run.id, startedAt: '2026-12-08T00:00:00.000Z' },
        ['a', 'b'],
        [{ url: u2, vantage: 'a' }],
      );
      assert.deepEqual(
        [again.discarded, again.registration.startedAt, again.registration.vantages],
        [1, run.startedAt, ['a', 'b']],
      );
      assert.deepEqual(await sql(`SELECT count(*)::int AS n FROM "${name}".run_registrations`), [{ n: 1 }]);
      // What a worker signs: the line as stored.
      const [stored] = await sql<{ line: string; signature: string }>(
        `SELECT line, signature FROM "${name}".vantage_observations WHERE run_id = $1 AND url = $2 AND vantage = 'a'`,
        [run.id, u1],
      );
      assert.equal(stored!.signature, signObservation(KEYS.a, stored!.line));
    } finally {
      await store.close();
    }
  });

  it('policy.signedVantages: only what each vantage signed with its key counts; pre-seeded rows neither; a missing key enqueues nothing', async () => {
    const { url, schema: name } = await schema('forged_signed');
    // c's worker holds a key that is not the one the decider knows for c.
    startWorkers(url, { a: KEYS.a, b: KEYS.b, c: KEYS.a });
    const live = fleet.url('ok-json');
    const store = await openPgStore(url);
    try {
      await preSeed(store, 'github-8', live, ['a', 'b', 'c']);
    } finally {
      await store.close();
    }
    const catalog = catalogOf([server('Live', live)], {
      policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host], signedVantages: true },
    });
    const ws = await workspace(catalog);
    const args = (run: string) => [
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--record',
      '--json',
      '--vantages',
      'a,b,c',
      '--quorum',
      '2',
      '--run-id',
      run,
      '--deadline',
      '60000',
      '--store',
      url,
    ];
    const env = { ONETAP_VANTAGE_KEY_A: KEYS.a, ONETAP_VANTAGE_KEY_B: KEYS.b, ONETAP_VANTAGE_KEY_C: KEYS.c };
    const r = await runCli(args('github-8'), { env });
    assert.equal(r.code, 0, r.stderr);
    const {
      plan: [row],
      warnings,
    } = JSON.parse(r.stdout) as PlanJson;
    assert.deepEqual(
      [row!.decision, row!.verdict, row!.vantages.map((v) => `${v.vantage}:${v.verdict}`)],
      ['keep', 'live', ['a:live', 'b:live', 'c:null']],
    );
    assert.deepEqual(warnings, [
      '3 observation(s) or canaries report(s) of run github-8 were written before their jobs were enqueued: discarded, not counted',
      "1 observation(s) or canaries report(s) of run github-8 were left out: not of a job it enqueued, or not signed with their vantage's key, or not readable",
    ]);
    assert.deepEqual(
      await sql(`SELECT count(*)::int AS n FROM "${name}".vantage_observations WHERE signature IS NOT NULL`),
      [{ n: 3 }],
      'every worker signed (c with the wrong key)',
    );

    const without = await runCli(args('github-9'), { env: { ...env, ONETAP_VANTAGE_KEY_C: '' } });
    assert.equal(without.code, 1);
    assert.match(without.stderr, /policy\.signedVantages: ONETAP_VANTAGE_KEY_C is not set/);
    assert.deepEqual(
      await sql(`SELECT count(*)::int AS n FROM "${name}".run_registrations WHERE id = 'github-9'`),
      [{ n: 0 }],
      'nothing registered or enqueued',
    );
    for (const w of workers.splice(0)) w.kill('SIGKILL');
  });
});
