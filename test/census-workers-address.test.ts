/**
 * A census through the workers is a good guest by address, not by spelling, for real: a network namespace made by
 * this test (named after its process id; stale ones of dead processes removed at start) gives 192.0.0.9 to its
 * loopback device (an address the address rule lets a worker ask, on no interface of this machine: nothing leaves
 * the namespace) and `census-guest.test` to its hosts file. The registry fixture serves ten HTTPS ports of that one
 * address (a certificate made for the test, trusted by the workers through NODE_EXTRA_CA_CERTS): half by the name,
 * half by three spellings of the address each (`192.0.0.9`, `[::ffff:192.0.0.9]`, `[::ffff:c000:9]`). Two workers
 * started with --allow-http (which exempts loopback only) run in the namespace beside the census, reaching
 * PostgreSQL through its Unix socket. Over both workers, one request is in flight at a time on the address: one port
 * at a time, and the spellings of one listener never at once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN, runCli } from './helpers.js';
import { kindOf } from './fleet/registry.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';

const DIST = new URL('../', import.meta.url).pathname;
const SOCKET = 'postgresql://postgres@/test?host=/var/run/postgresql';
const ADDRESS = '192.0.0.9';
const NAME = 'census-guest.test';

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
if (missing) it('a census through the workers, by address', { skip: missing }, () => {});

const PREFIX = 'otaddr';
const ns = `${PREFIX}${process.pid}`;

/** Namespaces (and their hosts files) this test's earlier runs left behind: their process is gone. */
function removeStale(): void {
  const names = [
    ...execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n'),
    ...(existsSync('/etc/netns') ? readdirSync('/etc/netns') : []),
  ];
  for (const line of names) {
    const m = new RegExp(`^${PREFIX}(\\d+)\\b`).exec(line);
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      removeNamespace(`${PREFIX}${m[1]}`);
    }
  }
}

function removeNamespace(name: string): void {
  try {
    execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
  } catch {
    /* gone */
  }
  rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
}

describe('a census through the workers, by address', { skip: !!missing }, () => {
  const children: ChildProcess[] = [];
  let log = '';
  let url = '';
  let schema = '';
  let drop = async () => {};
  let dir = '';

  const inNamespace = (args: string[], env: Record<string, string> = {}): ChildProcess => {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (d) => (log += d));
    children.push(child);
    return child;
  };

  before(async () => {
    removeStale();
    const s = await freshSchema('census_addr', SOCKET);
    ({ url, schema, drop } = s);
    assert.equal((await runCli(['store', 'migrate', '--store', url])).code, 0);
    execFileSync('ip', ['netns', 'add', ns]);
    execFileSync('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    execFileSync('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `${ADDRESS}/32`, 'dev', 'lo']);
    // `ip netns exec` mounts /etc/netns/<name>/hosts over /etc/hosts for what it runs.
    mkdirSync(`/etc/netns/${ns}`, { recursive: true });
    writeFileSync(`/etc/netns/${ns}/hosts`, `127.0.0.1 localhost\n${ADDRESS} ${NAME}\n`);
    dir = mkdtempSync(join(tmpdir(), 'onetap-census-addr-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${NAME}`,
        '-addext',
        `subjectAltName=DNS:${NAME},IP:${ADDRESS},IP:::ffff:${ADDRESS}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
  });

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    removeNamespace(ns);
    rmSync(dir, { recursive: true, force: true });
    await drop();
  });

  it('ten ports of one address one at a time over two workers; three spellings of one listener never at once', {
    timeout: 60_000,
  }, async () => {
    // Ten hosts (ports of 192.0.0.9), three remotes each: even ones by the name, odd ones by a spelling each.
    const spellings = [
      [`${NAME}:{port}`],
      [`${ADDRESS}:{port}`, `[::ffff:${ADDRESS}]:{port}`, '[::ffff:c000:9]:{port}'],
    ];
    const fixture = inNamespace([
      join(DIST, 'test/fleet/registry-server.js'),
      '30',
      '10',
      ADDRESS,
      '20',
      JSON.stringify({ tls: { keyFile: join(dir, 'key.pem'), certFile: join(dir, 'cert.pem') }, spellings }),
    ]);
    const lines = createInterface({ input: fixture.stdout! })[Symbol.asyncIterator]();
    const first = await lines.next();
    if (first.done) assert.fail(`the registry fixture did not start: ${log}`);
    const registry = (JSON.parse(first.value as string) as { url: string }).url;
    const env = { NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'), ONETAP_QUEUE_LOCK_MS: '5000' };
    for (let i = 0; i < 2; i++)
      inNamespace([BIN, 'worker', '--vantage', 'a', '--store', url, '--concurrency', '4', '--allow-http'], env);

    const out = join(dir, 'census.json');
    const census = inNamespace([
      BIN,
      'census',
      '--registry',
      registry,
      '--publisher',
      'io.example',
      '--out',
      out,
      '--allow-private',
      '--allow-http',
      '--timeout',
      '3000',
      '--vantages',
      'a',
      '--store',
      url,
    ]);
    assert.equal(await new Promise((r) => census.once('exit', r)), 0, log);
    fixture.stdin!.write('stats\n');
    const stats = JSON.parse((await lines.next()).value as string) as {
      initializes: number;
      mostInFlight: number;
      mostInFlightOverall: number;
    };

    // Probed for real, over TLS: every live remote is live (a refused handshake would ask nothing and prove nothing).
    const doc = JSON.parse(await readFile(out, 'utf8')) as {
      servers: Array<{
        server: { name: string };
        _meta: Record<string, { remotes: Array<{ url: string; verdict: string; reason: string }> }>;
      }>;
    };
    const live = doc.servers
      .filter((x) => ['small', 'awkward', 'many', 'renamed'].includes(kindOf(Number(x.server.name.split('-').at(-1)))))
      .map((x) => x._meta['io.example/verification']!.remotes[0]!);
    assert.equal(live.length, 19);
    assert.deepEqual(
      live.filter((r) => r.verdict !== 'live'),
      [],
      log,
    );
    assert.ok(stats.initializes >= 24, JSON.stringify(stats));

    assert.equal(stats.mostInFlight, 1, 'three spellings of one listener: never two requests at once');
    assert.equal(
      stats.mostInFlightOverall,
      1,
      'ten ports of 192.0.0.9: one request at a time over all of them, over both workers',
    );
    // The leases and holds went by the normalised host (no `[::ffff:c000:9]` key) and were all released.
    const held = await sql<{ host: string }>(`SELECT host FROM "${schema}".host_not_before ORDER BY host`);
    assert.equal(held.length, 10, JSON.stringify(held));
    assert.ok(
      held.every((h) =>
        new RegExp(`^(${NAME.replace('.', '\\.')}|${ADDRESS.replace(/\./g, '\\.')}):\\d+$`).test(h.host),
      ),
      JSON.stringify(held),
    );
    assert.deepEqual(
      await sql(
        `SELECT (SELECT count(*)::int FROM "${schema}".host_leases) AS hosts, (SELECT count(*)::int FROM "${schema}".address_leases) AS addresses`,
      ),
      [{ hosts: 0, addresses: 0 }],
    );
  });
});
