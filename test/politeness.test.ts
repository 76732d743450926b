/**
 * Per-host politeness across every worker: 100 URLs over 6 hosts (loopback addresses 127.0.0.1 … 127.0.0.6), three
 * workers whose concurrency is well above the limit, each initialize held 200 ms by the fixture, which counts the
 * handshakes in flight per host. With `--per-host 2` no host ever sees more than 2 at once; the same run with a limit
 * above the workers' concurrency shows more (so the test can fail).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, catalogOf, runCli, server, workspace } from './helpers.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';

const missing = await postgresMissing();
if (missing) it('per-host politeness across workers', { skip: missing }, () => {});

describe('per-host politeness across workers', { skip: !!missing }, () => {
  const HOSTS = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();
  const fleets: Fleet[] = [];
  const workers: ChildProcess[] = [];
  let url = '';
  let drop = async () => {};

  before(async () => {
    const s = await freshSchema('polite');
    url = s.url;
    drop = async () => {
      await s.drop();
      await sql(`DROP SCHEMA IF EXISTS "${s.schema}_queue" CASCADE`);
    };
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    for (const host of HOSTS) {
      fleets.push(
        await startFleet(
          {
            held: (c) => {
              if (c.msg?.method !== 'initialize') return answer(c);
              inFlight.set(host, (inFlight.get(host) ?? 0) + 1);
              most.set(host, Math.max(most.get(host) ?? 0, inFlight.get(host)!));
              setTimeout(() => {
                inFlight.set(host, inFlight.get(host)! - 1);
                answer(c);
              }, 200);
            },
          },
          0,
          host,
        ),
      );
    }
    for (let i = 0; i < 3; i++) {
      const w = spawn(
        process.execPath,
        [BIN, 'worker', '--vantage', 'a', '--store', url, '--concurrency', '12', '--allow-http'],
        { stdio: 'ignore', env: { ...process.env, ONETAP_QUEUE_LOCK_MS: '5000' } },
      );
      workers.push(w);
    }
  });

  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    for (const f of fleets) await f.close();
    await drop();
  });

  const catalog = () =>
    catalogOf(
      Array.from({ length: 100 }, (_, i) => server(`Server ${i}`, `${fleets[i % HOSTS.length]!.url('held')}?n=${i}`)),
      {
        policy: { authOptionalHosts: [], sharedGatewayHosts: fleets.map((f) => new URL(f.origin).host) },
      },
    );

  const run = async (perHost: number, id: string) => {
    inFlight.clear();
    most.clear();
    const ws = await workspace(catalog());
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
      String(perHost),
      '--run-id',
      id,
      '--deadline',
      '120000',
      '--store',
      url,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const plan = (JSON.parse(r.stdout) as { plan: Array<{ decision: string }> }).plan;
    assert.equal(plan.filter((p) => p.decision === 'keep').length, 100, 'every server was probed and kept');
    return Math.max(...HOSTS.map((h) => most.get(h) ?? 0));
  };

  it('never more than --per-host handshakes in flight per host over three workers; without that limit, more', async () => {
    assert.equal(await run(2, 'polite'), 2, 'each host saw at most 2 at once (and the limit was reached)');
    assert.ok(
      (await run(36, 'rude')) > 2,
      "a limit above the workers' concurrency lets more through: the leases are what held it",
    );
  });
});
