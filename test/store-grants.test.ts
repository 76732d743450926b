/**
 * `onetap store grant-vantage <name>`, for real: the printed SQL run (twice: it is idempotent) by the store's owner on
 * a fresh schema, a worker connected as the role it creates, and the role tried by hand:
 *   - it does a worker's job: takes its queue's jobs, holds host leases (and a census's address leases), records its
 *     observations and canaries;
 *   - it cannot write another vantage's observations or canaries (row-level security), set when a row was recorded,
 *     touch the runs, their rows or the run registrations, or see, take or add another vantage's jobs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { BIN, catalogOf, runCli, server, workspace } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { freshSchema, POSTGRES, postgresMissing, sql } from './postgres.js';
import { enqueue } from '../src/queue/queue.js';
import { openPgStore } from '../src/store/pg-store.js';
import { KAI_9000 } from '../src/attest/profile.js';

const missing = await postgresMissing();
if (missing) it("a vantage's own PostgreSQL role", { skip: missing }, () => {});

describe("a vantage's own PostgreSQL role", { skip: !!missing }, () => {
  let fleet: Fleet;
  let worker: ChildProcess | null = null;
  let url = '';
  let name = '';
  let role = '';
  let asRole = '';
  let drop = async () => {};

  before(async () => {
    fleet = await startFleet();
    const s = await freshSchema('grants');
    ({ url, schema: name } = s);
    role = `${name}_vantage_eu`;
    drop = async () => {
      await s.drop();
      await sql(`DROP ROLE IF EXISTS "${role}"`);
    };
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    const printed = await runCli(['store', 'grant-vantage', 'eu', '--store', url]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`CREATE ROLE "${role}" LOGIN`));
    assert.doesNotMatch(printed.stdout, /PASSWORD '/, 'no password is made up and printed');
    await sql(printed.stdout);
    await sql(printed.stdout);
    asRole = `${POSTGRES.replace('postgres@', `${role}@`)}?schema=${name}`;
  });

  after(async () => {
    worker?.kill('SIGKILL');
    await fleet.close();
    await drop();
  });

  it("a worker connected as the role does a worker's job: jobs, leases, observations, canaries", async () => {
    let log = '';
    worker = spawn(process.execPath, [BIN, 'worker', '--vantage', 'eu', '--allow-http', '--concurrency', '2'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ONETAP_STORE_URL: asRole },
    });
    worker.stderr!.on('data', (d) => (log += d));
    const ws = await workspace(
      catalogOf([server('One', fleet.url('ok-json')), server('Two', fleet.url('ok-sse'))], {
        policy: {
          authOptionalHosts: [],
          sharedGatewayHosts: [new URL(fleet.origin).host],
          canaries: [fleet.url('canary')],
        },
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
      'eu',
      '--quorum',
      '1',
      '--run-id',
      'granted-1',
      '--deadline',
      '30000',
      '--store',
      url,
    ]);
    assert.equal(r.code, 0, r.stderr + log);
    const plan = (JSON.parse(r.stdout) as { plan: Array<{ decision: string; verdict: string }> }).plan;
    assert.deepEqual(
      plan.map((p) => [p.decision, p.verdict]),
      [
        ['keep', 'live'],
        ['keep', 'live'],
      ],
      log,
    );
    assert.deepEqual(
      await sql(`SELECT vantage, count(*)::int AS n FROM "${name}".vantage_observations GROUP BY vantage`),
      [{ vantage: 'eu', n: 2 }],
    );
    assert.deepEqual(await sql(`SELECT vantage, configured FROM "${name}".vantage_canaries`), [
      { vantage: 'eu', configured: 1 },
    ]);
    assert.deepEqual(
      await sql(`SELECT count(*)::int AS n FROM "${name}".host_leases`),
      [{ n: 0 }],
      'leases taken and released',
    );
  });

  it("the role takes, renews and releases a census's address leases", async () => {
    const store = await openPgStore(asRole);
    try {
      assert.equal(await store.acquireAddresses(['192.0.2.9', '192.0.2.8'], 443, 4, 'eu-1', 30_000), true);
      await store.renewAddresses(['192.0.2.9', '192.0.2.8'], 'eu-1', 30_000);
      assert.equal(
        await store.acquireAddresses(['192.0.2.9'], 8443, 4, 'eu-2', 30_000),
        false,
        'another port of a held address waits',
      );
      assert.deepEqual(await sql(`SELECT address, port, holder FROM "${name}".address_leases ORDER BY address`), [
        { address: '192.0.2.8', port: 443, holder: 'eu-1' },
        { address: '192.0.2.9', port: 443, holder: 'eu-1' },
      ]);
      await store.releaseAddresses(['192.0.2.9', '192.0.2.8'], 'eu-1');
    } finally {
      await store.close();
    }
    assert.deepEqual(await sql(`SELECT count(*)::int AS n FROM "${name}".address_leases`), [{ n: 0 }]);
  });

  it("the role cannot write another vantage's rows, the runs or the registrations, nor see or touch another vantage's jobs", async () => {
    // Another vantage's job on the queue, as the enqueuing side puts it there.
    await enqueue(url, [
      {
        run: { id: 'granted-2', startedAt: '2026-12-01T00:00:00.000Z' },
        vantage: 'us',
        kind: 'probe',
        url: 'https://mcp.example.com/mcp',
        name: 'x',
        requiresAuth: false,
        headers: {},
        profile: KAI_9000,
        matrix: false,
        allowHttp: false,
        perHost: 4,
        canaries: [],
      },
    ]);
    const client = new pg.Client({
      connectionString: asRole.split('?')[0],
      options: `-c search_path=${name},${name}_queue`,
    });
    await client.connect();
    const refused = async (text: string, problem: RegExp) => {
      await assert.rejects(client.query(text), (err: Error) => problem.test(err.message), text);
    };
    try {
      const row = (vantage: string) =>
        `INSERT INTO vantage_observations (run_id, url, vantage, observed_at, line) VALUES ('granted-1', 'https://x.example/', '${vantage}', 't', '{}')`;
      await client.query(row('eu'));
      await refused(row('us'), /row-level security policy/);
      await refused(
        `INSERT INTO vantage_canaries (run_id, vantage, configured, reachable) VALUES ('granted-1', 'us', 1, 1)`,
        /row-level security policy/,
      );
      await refused(
        `INSERT INTO vantage_observations (run_id, url, vantage, observed_at, line, recorded_at) VALUES ('r', 'u', 'eu', 't', '{}', now() + interval '1 day')`,
        /permission denied/,
      );
      await refused(`UPDATE vantage_observations SET line = '{}'`, /permission denied/);
      await refused(`DELETE FROM vantage_observations`, /permission denied/);
      await refused(
        `INSERT INTO run_registrations (id, started_at, vantages) VALUES ('granted-9', 'x', '{eu}')`,
        /permission denied/,
      );
      await refused(
        `INSERT INTO run_jobs (run_id, url, vantage) VALUES ('granted-1', 'https://x.example/', 'eu')`,
        /permission denied/,
      );
      await refused(
        `INSERT INTO runs (id, started_at, month, aborted, applied, observations, line) VALUES ('x', 'x', 'x', false, true, 0, 'x')`,
        /permission denied/,
      );
      await refused(`SELECT * FROM observations`, /permission denied/);
      await refused(`UPDATE acceptances SET entry = '{}'`, /permission denied/);
      // The queue: another vantage's job is not there for this role, cannot be taken, and none can be added.
      assert.deepEqual(
        await sql(`SELECT count(*)::int AS n FROM "${name}_queue".job WHERE queue = 'onetap-probe-us'`),
        [{ n: 1 }],
        'the owner sees it',
      );
      assert.deepEqual(
        (await client.query(`SELECT count(*)::int AS n FROM job WHERE queue = 'onetap-probe-us'`)).rows,
        [{ n: 0 }],
      );
      assert.equal((await client.query(`UPDATE job SET state = 'failed' WHERE queue = 'onetap-probe-us'`)).rowCount, 0);
      await refused(
        `INSERT INTO job (queue, id, seq, name, state, added_at_ms) VALUES ('onetap-probe-us', 'forged', 1, 'probe', 'waiting', 0)`,
        /row-level security policy/,
      );
      assert.ok(
        (await client.query(`SELECT count(*)::int AS n FROM job WHERE queue = 'onetap-probe-eu'`)).rows[0].n >= 3,
        'its own jobs it sees',
      );
    } finally {
      await client.end();
    }
  });
});
