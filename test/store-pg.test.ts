/**
 * The PostgreSQL store as the commands use it, against the machine's real server (each test in its own schema):
 * migrations (twice, at once, behind, ahead), refresh/report/rejudge/accept/serve with `--store` or
 * `ONETAP_STORE_URL` and no history beside the catalog, a text history imported and exported byte for byte,
 * a connection cut mid-run through a TCP proxy the test controls (nothing recorded, exit 1, the next run
 * records), two refreshes recording at once (both whole), and the URL's password in no output, file or table.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refresh } from '../src/index.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { git, runAction } from './action-run.js';
import { catalogOf, observation, runCli, server, snapshotDir, workspace } from './helpers.js';
import { migrateStore, openPgStore } from '../src/store/pg-store.js';
import { freshSchema, postgresMissing, proxy, sql } from './postgres.js';
import { SCHEMA_VERSION } from '../src/store/pg-migrations.js';

const missing = await postgresMissing();
if (missing) it('PostgreSQL store', { skip: missing }, () => {});

describe('the PostgreSQL store', { skip: !!missing }, () => {
  let fleet: Fleet;
  const drops: Array<() => Promise<void>> = [];
  before(async () => {
    fleet = await startFleet();
  });
  after(async () => {
    await fleet.close();
    for (const d of drops) await d();
  });

  const schema = async (label: string, base?: string) => {
    const s = await freshSchema(label, base);
    drops.push(s.drop);
    return s;
  };
  const fleetCatalog = (...scenarios: string[]) =>
    catalogOf(
      scenarios.map((s) => server(s, fleet.url(s))),
      { policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] } },
    );

  it('migrate applies once (exit 0 both times, also two at once); a store behind or ahead is refused at start naming what to do (exit 1)', async () => {
    const { url, schema: name } = await schema('migrate');
    const ws = await workspace(fleetCatalog('ok-json'));
    const behind = await runCli(['report', '--json', '--catalog', ws.catalogPath, '--store', url]);
    assert.equal(behind.code, 1);
    assert.match(
      behind.stderr,
      new RegExp(`schema version 0, this onetap needs ${SCHEMA_VERSION}: run \`onetap store migrate\``),
    );
    const [a, b] = await Promise.all([
      runCli(['store', 'migrate', '--store', url]),
      runCli(['store', 'migrate', '--store', url]),
    ]);
    assert.deepEqual([a.code, b.code], [0, 0], a.stderr + b.stderr);
    assert.equal(
      [a.stdout, b.stdout].filter((o) => o.includes(`from schema version 0 to ${SCHEMA_VERSION}`)).length,
      1,
      'one of them migrated',
    );
    const again = await runCli(['store', 'migrate'], { env: { ONETAP_STORE_URL: url } });
    assert.equal(again.code, 0, again.stderr);
    assert.ok(again.stdout.includes(`is up to date (schema version ${SCHEMA_VERSION})`), again.stdout);
    assert.deepEqual(
      await sql(`SELECT version FROM "${name}".schema_migrations ORDER BY version`),
      Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
    );
    const ok = await runCli(['report', '--json', '--catalog', ws.catalogPath, '--store', url]);
    assert.equal(ok.code, 0, ok.stderr);
    await sql(`INSERT INTO "${name}".schema_migrations (version, name) VALUES (99, 'from the future')`);
    const ahead = await runCli(['report', '--json', '--catalog', ws.catalogPath, '--store', url]);
    assert.equal(ahead.code, 1);
    assert.ok(
      ahead.stderr.includes(`schema version 99, newer than this onetap knows (${SCHEMA_VERSION})`),
      ahead.stderr,
    );
  });

  it('a URL that is not PostgreSQL, from the flag or the environment, is refused before any work (exit 2), its password not shown', async () => {
    const ws = await workspace(fleetCatalog('ok-json'));
    const flag = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--store',
      'mysql://me:hunter2@db/x',
    ]);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^onetap: --store: expected a PostgreSQL URL .*got "mysql:\/\/me:\*\*\*@db\/x"/m);
    const env = await runCli(['report', '--json', '--catalog', ws.catalogPath], {
      env: { ONETAP_STORE_URL: 'postgres://me:hunter2@db/x?schema=no-dash' },
    });
    assert.equal(env.code, 2);
    assert.match(env.stderr, /^onetap: ONETAP_STORE_URL: its schema parameter must be an SQL name/m);
    for (const r of [flag, env]) assert.doesNotMatch(r.stdout + r.stderr, /hunter2/);
    assert.equal(fleet.hits('ok-json').POST, 0, 'nothing probed');
    const none = await runCli(['store', 'migrate']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--store: a PostgreSQL URL is needed \(or set ONETAP_STORE_URL\)/);
  });

  it(
    'refresh --write records to the store, not beside the catalog; report, rejudge, accept and serve read it from ' +
      'another directory; the password appears nowhere',
    async () => {
      const { url: plain, schema: name } = await schema('fleetrun');
      const url = plain.replace('postgresql://postgres@', 'postgresql://postgres:pw-s3cret-77@');
      assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
      const ws = await workspace(fleetCatalog('ok-json', 'ok-sse', 'tools-error'));
      const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write', '--timeout', '2000'], {
        env: { ONETAP_STORE_URL: url },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!existsSync(join(ws.dir, 'catalog', 'history')), 'no text history beside the catalog');
      assert.ok(!existsSync(join(ws.dir, 'catalog', 'tools.lock.json')), 'acceptances are in the store');
      const runs = await sql<{ n: string; obs: string }>(
        `SELECT count(*) AS n, (SELECT count(*) FROM "${name}".observations) AS obs FROM "${name}".runs`,
      );
      assert.deepEqual(runs, [{ n: '1', obs: '3' }]);
      assert.equal(
        (await sql(`SELECT url FROM "${name}".acceptances`)).length,
        2,
        'first use accepted the two listing servers',
      );

      // Another machine: the same catalog file elsewhere, the store shared.
      const elsewhere = await workspace(fleetCatalog('ok-json', 'ok-sse', 'tools-error'));
      const report = await runCli(['report', '--json', '--catalog', elsewhere.catalogPath, '--store', url]);
      assert.equal(report.code, 0, report.stderr);
      const status = JSON.parse(report.stdout) as {
        lastRefresh: unknown;
        servers: Array<{ name: string; verdict: string | null }>;
      };
      assert.ok(status.lastRefresh, 'the run recorded elsewhere is the last refresh');
      assert.deepEqual(
        status.servers.map((s) => s.verdict),
        ['live', 'live', 'review'],
      );
      const rejudged = await runCli(['rejudge', '--catalog', elsewhere.catalogPath, '--store', url]);
      assert.equal(rejudged.code, 0, rejudged.stderr + rejudged.stdout);
      assert.match(rejudged.stdout, /0 differ/);

      const srv = await startServe(['--catalog', elsewhere.catalogPath, '--store', url, '--allow-http']);
      try {
        const api = (await (await fetch(`${srv.url}/api/servers`)).json()) as {
          servers: Array<{ verdict: string | null }>;
        };
        assert.deepEqual(
          api.servers.map((s) => s.verdict),
          ['live', 'live', 'review'],
        );
        const page = await (await fetch(`${srv.url}/`)).text();
        assert.match(page, /ok-sse/);
      } finally {
        await srv.close();
      }

      const everything =
        [r, report, rejudged].map((x) => x.stdout + x.stderr).join('') +
        srv.output() +
        JSON.stringify(await snapshotDir(ws.dir)) +
        JSON.stringify(await sql(`SELECT line FROM "${name}".runs UNION ALL SELECT line FROM "${name}".observations`));
      assert.doesNotMatch(everything, /pw-s3cret-77/);
    },
  );

  it('a text history imported and exported gives the same files, byte for byte; rejudge and report read both alike', async () => {
    const ws = await workspace(fleetCatalog('ok-json', 'ok-sse', 'tools-error', 'reset', 'zero-tools'));
    // Three runs over two months, the text store (the default) recording.
    for (const at of ['2026-10-30T09:00:00.000Z', '2026-11-06T09:00:00.000Z', '2026-11-13T09:00:00.000Z']) {
      const r = await refresh({
        catalogPath: ws.catalogPath,
        write: true,
        allowHttp: true,
        timeoutMs: 1_000,
        probe: { retryDelayMs: 10 },
        now: () => new Date(at),
        confirmDrops: 3,
      });
      assert.notEqual(r.exitCode, 2);
    }
    const history = join(ws.dir, 'catalog', 'history');
    const original = await snapshotDir(join(ws.dir, 'catalog'));
    assert.ok(
      Object.keys(original).some((p) => p.endsWith('2026-10.jsonl')) &&
        Object.keys(original).some((p) => p.endsWith('2026-11.jsonl')),
    );
    // A line the history cannot use is reported by the import, and stays a problem of the store.
    await writeFile(
      join(history, '2026-11.jsonl'),
      (await readFile(join(history, '2026-11.jsonl'), 'utf8')) + '{"v":2,"type":"nonsense"}\n',
    );

    const { url } = await schema('roundtrip');
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    const imported = await runCli(['store', 'import', '--from', history, '--store', url]);
    assert.equal(imported.code, 0, imported.stderr);
    const accepted = Object.keys(
      (JSON.parse(await readFile(join(ws.dir, 'catalog', 'tools.lock.json'), 'utf8')) as { servers: object }).servers,
    ).length;
    const snapshots = Object.keys(original).filter((p) => p.includes('/snapshots/')).length;
    assert.ok(accepted >= 2 && snapshots >= 2);
    assert.match(
      imported.stdout,
      new RegExp(
        `^imported 3 runs, ${snapshots} snapshots, ${accepted} acceptances into .*; 1 history lines could not be used`,
      ),
    );
    const twice = await runCli(['store', 'import', '--from', history, '--store', url]);
    assert.match(twice.stdout, /imported 0 runs, .*\(3 runs were there already\)/);

    const out = await mkdtemp(join(tmpdir(), 'onetap-export-'));
    const exported = await runCli(['store', 'export', '--to', join(out, 'history'), '--store', url]);
    assert.equal(exported.code, 0, exported.stderr);
    const back = await snapshotDir(out);
    const sent = await snapshotDir(join(ws.dir, 'catalog'));
    const historyFiles = (files: Record<string, string>, root: string) =>
      Object.fromEntries(
        Object.entries(files)
          .filter(([p]) => p.includes('/history/') || p.endsWith('tools.lock.json'))
          .map(([p, c]) => [p.slice(root.length), c]),
      );
    const expected = historyFiles(sent, join(ws.dir, 'catalog'));
    const bad = Buffer.from('{"v":2,"type":"nonsense"}\n').toString('base64');
    const november = Buffer.from(expected['/history/2026-11.jsonl']!, 'base64').toString('utf8');
    expected['/history/2026-11.jsonl'] = Buffer.from(
      november.replace(Buffer.from(bad, 'base64').toString(), ''),
    ).toString('base64');
    assert.deepEqual(historyFiles(back, out), expected);
    const refused = await runCli(['store', 'export', '--to', join(out, 'history'), '--store', url]);
    assert.equal(refused.code, 2, 'an export never writes over a history');

    for (const command of [
      ['rejudge', '--runs', '3', '--json'],
      ['report', '--json'],
    ]) {
      const text = await runCli([...command, '--catalog', ws.catalogPath]);
      const pg = await runCli([...command, '--catalog', ws.catalogPath, '--store', url]);
      assert.equal(pg.code, text.code, pg.stderr);
      const same = (s: string) =>
        s.replace(/"generatedAt": "[^"]+"/, '').replace(/history\/2026-11\.jsonl:\d+|store run \d+/g, '<where>');
      if (process.env.DUMP) {
        await writeFile(`/tmp/${command[0]}-pg.json`, same(pg.stdout));
        await writeFile(`/tmp/${command[0]}-text.json`, same(text.stdout));
      }
      assert.equal(same(pg.stdout), same(text.stdout), command[0]);
    }
    await rm(out, { recursive: true, force: true });
  });

  it('a connection cut mid-run records nothing of it and says so (exit 1); the next run records', async () => {
    const cutter = await proxy();
    try {
      const { url: direct, schema: name } = await schema('cut');
      assert.equal((await runCli(['store', 'migrate', '--store', direct])).code, 0);
      const url = direct.replace('127.0.0.1:5432', `127.0.0.1:${cutter.port}`);
      const ws = await workspace(fleetCatalog('ok-json', 'ok-sse'));
      const before = await snapshotDir(ws.dir);
      cutter.arm('INSERT INTO observations');
      const cut = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write', '--store', url]);
      assert.equal(cut.code, 1, cut.stdout + cut.stderr);
      assert.ok(cutter.cuts() >= 1);
      assert.match(cut.stderr, /nothing of this run was recorded/);
      assert.deepEqual(
        await sql(
          `SELECT (SELECT count(*) FROM "${name}".runs) AS runs, (SELECT count(*) FROM "${name}".acceptances) AS ` +
            `accepted, (SELECT count(*) FROM "${name}".snapshots) AS snapshots`,
        ),
        [{ runs: '0', accepted: '0', snapshots: '0' }],
        'the transaction was rolled back whole',
      );
      assert.deepEqual(await snapshotDir(ws.dir), before, 'no file written');
      cutter.arm(null);
      const next = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write', '--store', url]);
      assert.equal(next.code, 0, next.stderr);
      assert.deepEqual(await sql(`SELECT count(*) AS n FROM "${name}".runs`), [{ n: '1' }]);
    } finally {
      await cutter.close();
    }
  });

  it("the Action with store-url migrates, records to the store and commits no history; the streak is the store's; the password is masked", async () => {
    const { url: plain, schema: name } = await schema('action');
    const url = plain.replace('postgresql://postgres@', 'postgresql://postgres:act%2Fpw-91@');
    const tmp = await mkdtemp(join(tmpdir(), 'onetap-action-store-'));
    const remote = join(tmp, 'remote.git');
    git(tmp, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
    const seed = join(tmp, 'seed');
    git(tmp, 'init', '--quiet', '--initial-branch=main', seed);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(seed, 'catalog'));
    let dead = false;
    const fleet2 = await startFleet({ dying: (c) => (dead ? void c.res.writeHead(404).end('gone') : answer(c)) });
    try {
      const catalog = catalogOf([server('Steady', fleet2.url('ok-json')), server('Dying', fleet2.url('dying'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet2.origin).host] },
      });
      await writeFile(join(seed, 'catalog', 'servers.json'), JSON.stringify(catalog, null, 2) + '\n');
      git(seed, 'add', '.');
      git(seed, 'commit', '--quiet', '-m', 'the list');
      git(seed, 'push', '--quiet', remote, 'main');
      const mainBefore = git(remote, 'rev-parse', 'main');
      const inputs = { write: 'true', 'allow-http': 'true', timeout: '2000', 'confirm-drops': '2', 'store-url': url };
      const week = async () => {
        const dir = await mkdtemp(join(tmp, 'week-'));
        git(tmp, 'clone', '--quiet', remote, dir);
        const r = await runAction(tmp, 'run.sh', dir, inputs);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.equal(r.outputs['history-commit'], '', 'no history commit');
        assert.ok(!existsSync(join(dir, 'catalog', 'history')), 'no text history written');
        const printed = (r.stdout + r.stderr).split('\n');
        assert.ok(
          printed.includes('::add-mask::act%2Fpw-91') && printed.includes('::add-mask::act/pw-91'),
          'the password is masked before anything runs',
        );
        assert.deepEqual(
          printed.filter((l) => /act(%2F|\/)pw-91/.test(l) && !l.startsWith('::add-mask::')),
          [],
          'and printed nowhere else',
        );
        return r;
      };
      const r1 = await week();
      assert.ok((r1.stdout + r1.stderr).includes(`from schema version 0 to ${SCHEMA_VERSION}`));
      dead = true;
      const r2 = await week();
      assert.deepEqual([r2.outputs['keep-failed'], r2.outputs.drop], ['1', '0']);
      const r3 = await week();
      assert.equal(r3.outputs.drop, '1', 'the streak was read from the store');
      assert.equal(
        git(remote, 'rev-parse', 'main'),
        mainBefore,
        'nothing pushed: the pull request carries the catalog',
      );
      assert.deepEqual(await sql(`SELECT count(*) AS n FROM "${name}".runs`), [{ n: '3' }]);
    } finally {
      await fleet2.close();
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it("a worker's observation is recorded once and bounded as a history line, whatever the server listed", async () => {
    const { url, schema: name } = await schema('observed');
    await migrateStore(url);
    const store = await openPgStore(url);
    try {
      const tools = Array.from({ length: 100_000 }, (_, i) => `tool_number_${i}_with_a_long_enough_name`);
      const o = observation({
        url: 'https://many.example/mcp',
        run: 'run-big',
        vantage: 'eu',
        tools,
        toolCount: tools.length,
      });
      await store.registerRun({ id: 'run-big', startedAt: o.observedAt }, ['eu'], [{ url: o.url, vantage: 'eu' }]);
      assert.equal(await store.recordObservation(o, null), true);
      assert.equal(
        await store.recordObservation({ ...o, verdict: 'drop', reason: 'refused' }, null),
        false,
        'a job taken again records nothing new',
      );
      const [stored] = await sql<{ n: number }>(`SELECT octet_length(line) AS n FROM "${name}".vantage_observations`);
      assert.ok(stored!.n <= 131_072, `bounded: ${stored!.n} bytes`);
      const [back] = await store.observationsOf('run-big');
      assert.deepEqual(
        [back!.verdict, back!.tools, back!.toolCount, await store.observationCount('run-big', ['eu', 'us'])],
        ['live', null, 100_000, 1],
      );
    } finally {
      await store.close();
    }
  });

  it('two refreshes recording at once are both recorded whole', async () => {
    const { url, schema: name } = await schema('concurrent');
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    const a = await workspace(fleetCatalog('ok-json', 'ok-sse', 'zero-tools'));
    const b = await workspace(fleetCatalog('ok-sse', 'ok-json', 'tools-error', 'reset'));
    const [ra, rb] = await Promise.all(
      [a, b].map((ws) =>
        runCli([
          'refresh',
          '--catalog',
          ws.catalogPath,
          '--allow-http',
          '--record',
          '--store',
          url,
          '--timeout',
          '2000',
        ]),
      ),
    );
    assert.deepEqual([ra!.code, rb!.code], [0, 0], ra!.stderr + rb!.stderr);
    const counts = await sql<{ n: string }>(
      `SELECT count(o.*) AS n FROM "${name}".runs r LEFT JOIN "${name}".observations o ON o.run_seq = r.seq GROUP BY r.seq ORDER BY n`,
    );
    assert.deepEqual(
      counts.map((c) => c.n),
      ['3', '4'],
    );
    const rejudged = await runCli(['rejudge', '--catalog', b.catalogPath, '--runs', '2', '--json', '--store', url]);
    assert.equal(rejudged.code, 0, rejudged.stderr);
    assert.deepEqual(
      (JSON.parse(rejudged.stdout) as { runs: Array<{ rows: unknown[] }> }).runs.map((r) => r.rows.length).sort(),
      [3, 4],
    );
  });
});

/** `onetap serve` on a free port; its output kept. */
async function startServe(args: string[]): Promise<{ url: string; close: () => Promise<void>; output: () => string }> {
  const { spawn } = await import('node:child_process');
  const { BIN } = await import('./helpers.js');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (d) => {
    output += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      output += d;
      const m = /serving (http:\/\/\S+?)\/ /.exec(output);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
  });
  return {
    url,
    output: () => output,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
