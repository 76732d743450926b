/**
 * A worker trusts no job, for real: jobs written to the queue (BullMQ on the machine's PostgreSQL) as anyone who can
 * write the store could, and two workers, one started with `--key-env JINA_API_KEY --allow-http` (and its store URL,
 * password and all, on the command line), one with neither.
 *   - a job naming ONETAP_STORE_URL, or an unrelated secret, or a probeHeaders of the wrong shape: refused once (never
 *     retried), no request reaches the server, the log names the URL and the variable but never a value;
 *   - the same worker probes a job naming the variable it was given, and the server gets that key (so it can fail);
 *   - a job with allowHttp: true to a loopback http server: refused by the worker started without --allow-http;
 *   - canaries jobs on a private, loopback and IPv6 unique-local address: refused before any connection (a listener on
 *     127.0.0.1 counts none), nothing reported;
 *   - a password given with --store on the command line is warned about, once;
 *   - what a worker is started with is checked before any work (exit 2, naming the flag or the variable).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { BIN, runCli } from './helpers.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';
import { enqueue, jobIdOf, type ProbeJob } from '../src/queue/queue.js';
import { KAI_9000 } from '../src/attest/profile.js';

const missing = await postgresMissing();
if (missing) it('a worker trusts no job', { skip: missing }, () => {});

describe('a worker trusts no job', { skip: !!missing }, () => {
  const STORE_PASSWORD = 'hunter2store';
  const JINA = 'jina-value-1234';
  const CLOUD = 'cloud-secret-5678';
  const workers: ChildProcess[] = [];
  const logs = new Map<string, string>();
  const seen: Array<{ n: string; authorization: string | undefined; key: string | undefined }> = [];
  let fleet: Fleet;
  let url = '';
  let queueSchema = '';
  let drop = async () => {};
  // Counts every TCP connection made to it: the canaries on loopback name its port.
  let connections = 0;
  let listener: Server;
  let port = 0;

  const start = (vantage: string, args: string[], env: Record<string, string>) => {
    const w = spawn(process.execPath, [BIN, 'worker', '--vantage', vantage, '--concurrency', '2', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...env },
    });
    logs.set(vantage, '');
    w.stderr!.on('data', (d) => logs.set(vantage, logs.get(vantage) + String(d)));
    workers.push(w);
  };
  const waitFor = async (what: () => boolean | Promise<boolean>, label: string) => {
    for (let i = 0; i < 300; i++) {
      if (await what()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`timed out waiting for ${label}`);
  };

  before(async () => {
    const s = await freshSchema('trust');
    url = s.url;
    queueSchema = `${s.schema}_queue`;
    drop = s.drop;
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    fleet = await startFleet({
      keyed: (c) => {
        if (c.msg?.method === 'initialize')
          seen.push({
            n: new URL(c.req.url!, 'http://x').searchParams.get('n')!,
            authorization: c.req.headers.authorization,
            key: c.req.headers['x-key'] as string | undefined,
          });
        answer(c);
      },
    });
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
    const withPassword = url.replace('postgres@', `postgres:${STORE_PASSWORD}@`);
    const env = { ONETAP_STORE_URL: withPassword, JINA_API_KEY: JINA, SECRET_CLOUD_KEY: CLOUD };
    start('keys', ['--store', withPassword, '--key-env', 'JINA_API_KEY', '--allow-http'], env);
    start('strict', [], env);
    await waitFor(() => [...logs.values()].every((l) => l.includes('taking jobs')), 'both workers to start');
  });

  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await fleet.close();
    await new Promise((r) => listener.close(r));
    await drop();
  });

  const job = (vantage: string, n: string, change: Partial<ProbeJob> = {}): ProbeJob => ({
    run: { id: 'forged-1', startedAt: '2026-12-01T00:00:00.000Z' },
    vantage,
    kind: 'probe',
    url: `${fleet.url('keyed')}?n=${n}`,
    name: n,
    requiresAuth: true,
    headers: {},
    profile: KAI_9000,
    matrix: false,
    allowHttp: true,
    perHost: 4,
    canaries: [],
    ...change,
  });
  /** The job's state in the queue once it finished, and how many attempts it used. */
  const finished = async (j: ProbeJob) => {
    const id = jobIdOf(j.run.id, j.url, j.vantage);
    let row: { state: string; attempts_made: number; max_attempts: number } | undefined;
    await waitFor(async () => {
      [row] = await sql<{ state: string; attempts_made: number; max_attempts: number }>(
        `SELECT state::text, attempts_made, max_attempts FROM "${queueSchema}".job WHERE id = $1`,
        [id],
      );
      return row?.state === 'completed' || row?.state === 'failed';
    }, `job ${j.url}`);
    return row!;
  };

  it(
    'a job naming a variable the worker was not started to read is refused once, before any request; the log names ' +
      'URL and variable, never a value',
    async () => {
      const control = job('keys', 'given', {
        probeHeaders: { Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer ' } },
      });
      const store = job('keys', 'store', { probeHeaders: { Authorization: { env: 'ONETAP_STORE_URL' } } });
      const cloud = job('keys', 'cloud', { probeHeaders: { 'X-Key': { env: 'SECRET_CLOUD_KEY' } } });
      const shape = job('keys', 'shape', { probeHeaders: { Authorization: 'JINA_API_KEY' } as never });
      await enqueue(url, [control, store, cloud, shape]);
      assert.deepEqual([(await finished(control)).state], ['completed']);
      assert.ok(
        seen.some((s) => s.n === 'given' && s.authorization === `Bearer ${JINA}`),
        'the variable it was given is read and sent',
      );
      for (const refused of [store, cloud, shape]) {
        assert.deepEqual(
          await finished(refused),
          { state: 'failed', attempts_made: 1, max_attempts: 3 },
          `${refused.name}: refused for good, never tried again`,
        );
        assert.equal(
          seen.filter((s) => s.n === refused.name).length,
          0,
          `${refused.name}: no request reached the server`,
        );
      }
      const log = logs.get('keys')!;
      assert.match(
        log,
        new RegExp(
          `for ${fleet.url('keyed')}\\?n=store refused: probeHeaders\\.Authorization reads ONETAP_STORE_URL, which this worker was not started to read`,
        ),
      );
      assert.match(log, /n=cloud refused: probeHeaders\.X-Key reads SECRET_CLOUD_KEY/);
      assert.match(log, /n=shape refused: probeHeaders\.Authorization: expected \{env, prefix\}/);
      for (const value of [STORE_PASSWORD, CLOUD, JINA])
        assert.ok(!log.includes(value), `the log never carries ${value}`);
      assert.equal(
        log.split('\n').filter((l) => l.includes('warning: --store carries a password')).length,
        1,
        'the password on the command line is warned about, once',
      );
    },
  );

  it("the variables a catalog's key rule refused travel as names only: never read, and the record says the row was probed without them", async () => {
    const j = job('keys', 'refused', {
      probeHeaders: { Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer ' } },
      refusedKeys: ['GITHUB_TOKEN'],
    });
    await enqueue(url, [j]);
    assert.equal((await finished(j)).state, 'completed');
    const [row] = await sql<{ line: string }>(
      `SELECT line FROM "${url.split('schema=')[1]}".vantage_observations WHERE url = $1`,
      [j.url],
    );
    assert.deepEqual((JSON.parse(row!.line) as { probe: { keys: { refused?: string[] } } }).probe.keys.refused, [
      'GITHUB_TOKEN',
    ]);
  });

  it('a job with allowHttp: true to a loopback http server is refused by a worker started without --allow-http', async () => {
    const http = job('strict', 'http', { requiresAuth: false });
    await enqueue(url, [http]);
    assert.deepEqual(await finished(http), { state: 'failed', attempts_made: 1, max_attempts: 3 });
    assert.equal(seen.filter((s) => s.n === 'http').length, 0, 'no request reached the server');
    assert.match(
      logs.get('strict')!,
      /n=http refused: url: a private, loopback or reserved address \(loopback only for a worker started with --allow-http\)/,
    );
    assert.doesNotMatch(logs.get('strict')!, /warning:/, 'the store from the environment: no warning');
  });

  it('canaries jobs on a private, a loopback and an IPv6 unique-local address: refused before any connection, nothing reported', async () => {
    const canaries = [
      `https://127.0.0.1:${port}/`,
      `https://localhost:${port}/`,
      'https://10.0.0.5:8443/',
      'https://[fd00::1]/',
    ];
    const jobs = canaries.map((c, i) =>
      job('strict', 'canaries', {
        run: { id: `forged-canary-${i}`, startedAt: '2026-12-01T00:00:00.000Z' },
        kind: 'canaries',
        url: '#canaries',
        requiresAuth: false,
        allowHttp: false,
        canaries: [c],
      }),
    );
    await enqueue(url, jobs);
    for (const j of jobs) assert.equal((await finished(j)).state, 'failed', j.canaries[0]);
    assert.equal(connections, 0, 'nothing connected to the loopback listener');
    assert.equal(
      logs
        .get('strict')!
        .split('\n')
        .filter((l) => /#canaries refused: canaries\[0\]: a private, loopback or reserved address/.test(l)).length,
      4,
      logs.get('strict'),
    );
    assert.deepEqual(await sql(`SELECT count(*)::int AS n FROM "${url.split('schema=')[1]}".vantage_canaries`), [
      { n: 0 },
    ]);
  });

  it("what a worker is started with is checked first: exit 2 naming the flag or the variable, never a key's value", async () => {
    const worker = (args: string[], env: Record<string, string> = {}) =>
      runCli(['worker', '--vantage', 'x', '--store', url, ...args], { env });
    const [own, bad, listed, short] = await Promise.all([
      worker(['--key-env', 'JINA_API_KEY,ONETAP_STORE_URL']),
      worker(['--key-env', 'A B']),
      worker([], { ONETAP_WORKER_KEY_ENV: 'JINA_API_KEY,1BAD' }),
      worker([], { ONETAP_VANTAGE_KEY: 'short-secret-value' }),
    ]);
    assert.deepEqual([own.code, bad.code, listed.code, short.code], [2, 2, 2, 2]);
    assert.match(own.stderr, /--key-env.*ONETAP_STORE_URL is onetap's own, never a probe key/);
    assert.match(bad.stderr, /--key-env.*a list of environment variable names/);
    assert.match(listed.stderr, /ONETAP_WORKER_KEY_ENV: a list of environment variable names .*got "1BAD"/);
    assert.match(short.stderr, /ONETAP_VANTAGE_KEY: a vantage key is 32 to 1024/);
    assert.doesNotMatch(short.stderr, /short-secret-value/);
  });
});
