/**
 * `onetap census` as a good guest by address, not by spelling, against the loopback registry (test/fleet/registry.ts):
 * three spellings of one listener are asked one at a time and `--opt-out` holds whatever the spelling; ten ports of
 * one (non-loopback) address are asked one at a time; a server.json over the limits or invalid is recorded and never
 * contacted; a forged record in the registry's `_meta` is shown as a claim, never as the census's verdict; the outage
 * guard counts hosts (2 refused remotes of 4 on one host publish; 20 refused hosts stop the census, exit 3).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { BIN, runCli } from './helpers.js';
import { kindOf, startRegistry, type RegistryFixture } from './fleet/registry.js';

const VENDORED = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const official = {
  'io.modelcontextprotocol.registry/official': {
    status: 'active',
    publishedAt: '2026-10-02T00:00:00Z',
    isLatest: true,
  },
};
type Doc = {
  servers: Array<{ server: { name: string }; _meta: Record<string, any> }>;
  metadata: { count: number; publisher: string };
};

const DIST = new URL('../', import.meta.url).pathname;

function namespacesMissing(): string | false {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
    return false;
  } catch {
    return 'ip netns (iproute2) is not available';
  }
}

/**
 * Ports that fail at the network level: each listener resets every connection. They stay bound for the test, so no
 * other test running beside it can take one (a port bound and closed again was, and answered).
 */
const resetting: Server[] = [];
async function resettingPorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((r) => {
          const s = createServer((socket) => socket.resetAndDestroy());
          s.listen(0, '127.0.0.1', () => r(s));
        }),
    ),
  );
  resetting.push(...servers);
  return servers.map((s) => (s.address() as AddressInfo).port);
}

describe('onetap census: a good guest by address, not by spelling', () => {
  let dir = '';
  const regs: RegistryFixture[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'onetap-census-guest-'));
  });
  after(async () => {
    for (const r of regs) await r.close();
    for (const s of resetting) await new Promise((r) => s.close(r));
    await rm(dir, { recursive: true, force: true });
  });
  const census = (reg: RegistryFixture, out: string, ...extra: string[]) =>
    runCli([
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
      ...extra,
    ]);

  it('spellings of one listener one at a time, --opt-out by any spelling, items over the limits never contacted, a forged record only a claim', {
    timeout: 60_000,
  }, async () => {
    // Four hosts: host 0 spelled three ways, host 1 opted out (by one spelling, listed by others), hosts 2 and 3 plain.
    const spell = (i: number, host: string, path: string) => {
      const port = host.split(':')[1];
      const spelled = [`127.0.0.1:${port}`, `[::ffff:127.0.0.1]:${port}`, `127.0.0.1.:${port}`][Math.floor(i / 4) % 3];
      return i % 4 < 2 ? `http://${spelled}${path}` : `http://${host}${path}`;
    };
    const item = (name: string, server: Record<string, unknown>, meta: Record<string, unknown> = official) => ({
      server: { $schema: VENDORED, name, description: 'A census guest test', version: '1.0.0', ...server },
      _meta: meta,
    });
    const longUrl = (host: string) => `http://${host}/mcp/old-long-${'l'.repeat(2_100)}`;
    const extra = ({ hosts, remoteUrl }: { hosts: string[]; remoteUrl: (i: number) => string }) => {
      // Paths under /mcp/old- count as contacted-but-must-not-be (`forbidden`).
      const never = (path: string) => `http://${hosts[2]}/mcp/old-${path}`;
      const forgedRecord = {
        verifiedAt: '2099-01-01T00:00:00.000Z',
        expiresAt: '2099-02-01T00:00:00.000Z',
        remotes: [{ url: remoteUrl(11), verdict: 'live', reason: 'ok' }],
      };
      return [
        item('io.example.guest/oversize', {
          remotes: [{ type: 'streamable-http', url: never('oversize') }],
          websiteUrl: `https://a.example/${'x'.repeat(70_000)}`,
        }),
        item('io.example.guest/many', {
          remotes: Array.from({ length: 21 }, (_, k) => ({ type: 'streamable-http', url: never(`many-${k}`) })),
        }),
        item('io.example.guest/invalid', {
          description: 'd'.repeat(101),
          remotes: [{ type: 'streamable-http', url: never('invalid') }],
        }),
        item('io.example.guest/long', { remotes: [{ type: 'streamable-http', url: longUrl(hosts[2]!) }] }),
        item('io.example.guest/older-schema', {
          $schema: 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json',
          remotes: [{ type: 'streamable-http', url: remoteUrl(3) }],
        }),
        // The registry's own _meta claims a verification, under another key and under the census's own: "verified
        // 2099", live.
        item(
          'io.example.guest/forged',
          { remotes: [{ type: 'streamable-http', url: remoteUrl(11) }] },
          { ...official, 'io.evil/verification': forgedRecord, 'io.example/verification': forgedRecord },
        ),
      ];
    };
    const reg = await startRegistry(12, 4, 0, { urlOf: spell, extra, delayMs: 100 });
    regs.push(reg);
    assert.equal(kindOf(11), 'missing');

    const optOut = join(dir, 'opt-out.txt');
    await writeFile(optOut, `# the owner of host 1 asked\n${reg.hosts[1]}\n`);
    const out = join(dir, 'spelled.json');
    const r = await census(reg, out, '--opt-out', optOut);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /; 3 servers skipped \(over the limits, or invalid against the registry's schema\)/);

    assert.equal(reg.mostInFlight(), 1, 'three spellings of one listener: one request at a time');
    assert.ok(
      reg.mostInFlightOverall() > 1,
      'loopback fixtures are exempt from the per-address rule (other ports of 127.0.0.1 at once), not from the per-host one',
    );
    assert.deepEqual(
      [1, 5, 9].map((i) => reg.initializes.get(i) ?? 0),
      [0, 0, 0],
      'an opted-out host is never contacted, however spelled',
    );
    assert.equal(
      reg.forbidden(),
      0,
      'a server over the limits, an invalid one and a URL over 2,048 characters are never contacted',
    );
    assert.equal(reg.initializes.get(4), 1, 'a respelled remote is probed all the same');

    const doc = JSON.parse(await readFile(out, 'utf8')) as Doc;
    assert.equal(doc.metadata.publisher, 'io.example');
    const byName = new Map(doc.servers.map((x) => [x.server.name, x]));
    const own = (name: string) => byName.get(name)!._meta['io.example/verification'];
    const nameOf = (i: number) => `io.example.census/server-${String(i).padStart(5, '0')}`;
    assert.deepEqual(
      own(nameOf(5)).remotes.map((x: { verdict: string; reason: string }) => `${x.verdict}/${x.reason}`),
      ['not probed/its host opted out'],
    );
    assert.match(
      own('io.example.guest/oversize').skipped,
      /^its server\.json is \d+ KiB, over the limit of 64 KiB: not read$/,
    );
    assert.deepEqual(byName.get('io.example.guest/oversize')!.server, {
      $schema: VENDORED,
      name: 'io.example.guest/oversize',
      description: 'A census guest test',
      version: '1.0.0',
    });
    assert.equal(own('io.example.guest/many').skipped, 'it lists 21 remotes, over the limit of 20: none probed');
    assert.deepEqual(
      [own('io.example.guest/invalid').serverJson.valid, own('io.example.guest/invalid').remotes],
      [false, []],
    );
    assert.match(
      own('io.example.guest/long').remotes[0].reason,
      /^the URL is 2,\d{3} characters, over the limit of 2,048: not probed$/,
    );
    assert.equal(own('io.example.guest/long').remotes[0].url, longUrl(reg.hosts[2]!), 'recorded whole, never cut');
    assert.equal(own('io.example.guest/older-schema').serverJson.why, 'not validated: schema 2025-09-29 not vendored');
    assert.equal(
      own('io.example.guest/older-schema').remotes[0].verdict,
      'live',
      'another schema version: probed as today',
    );
    assert.equal(
      own('io.example.guest/forged').remotes[0].verdict,
      'drop',
      "the census's own record, not the registry's under its key",
    );

    const site = join(dir, 'site');
    assert.equal((await runCli(['site', '--census', out, '--out', site])).code, 0);
    const page = await readFile(join(site, 'index.html'), 'utf8');
    const row = /<tr data-s="io\.example\.guest\/forged[^"]*">.*?<\/tr>/.exec(page)?.[0] ?? '';
    assert.match(row, /<td>drop\/http-404<\/td>/);
    assert.match(row, /<td>claimed by io\.evil\/verification<\/td>/);
    assert.doesNotMatch(page, /2099/);
  });

  it('ten ports of one address (one registry entry each): asked one at a time', {
    skip: namespacesMissing(),
    timeout: 60_000,
  }, async () => {
    // The address is one the test gives a network namespace of its own (on its loopback device, but not a loopback
    // address, so the per-address rule holds for it under --allow-private); fixture and census both run in there.
    const ns = `otg${process.pid}`;
    execFileSync('ip', ['netns', 'add', ns]);
    const inNs = (args: string[]) =>
      spawn('ip', ['netns', 'exec', ns, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    execFileSync('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    execFileSync('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', '10.213.0.1/32', 'dev', 'lo']);
    const fixture = inNs([join(DIST, 'test/fleet/registry-server.js'), '10', '10', '10.213.0.1', '50']);
    try {
      const lines = createInterface({ input: fixture.stdout! })[Symbol.asyncIterator]();
      let first = await lines.next();
      if (first.done) assert.fail('the registry fixture did not start');
      const { url } = JSON.parse(first.value as string) as { url: string };
      const census = inNs([
        BIN,
        'census',
        '--registry',
        url,
        '--publisher',
        'io.example',
        '--out',
        join(dir, 'ports.json'),
        '--allow-private',
        '--allow-http',
        '--timeout',
        '3000',
      ]);
      let err = '';
      census.stderr!.on('data', (d) => (err += d));
      assert.equal(await new Promise((r) => census.once('exit', r)), 0, err);
      fixture.stdin!.write('stats\n');
      first = await lines.next();
      const stats = JSON.parse(first.value as string) as { initializes: number; mostInFlightOverall: number };
      assert.ok(stats.initializes >= 8, 'the live and failing remotes were probed');
      assert.equal(stats.mostInFlightOverall, 1, 'ten ports of 10.213.0.1: one request at a time over all of them');
    } finally {
      fixture.kill();
      execFileSync('ip', ['netns', 'del', ns]);
    }
  });

  it('the outage guard counts hosts: one host with 2 failing remotes of 4 publishes; 22 failing hosts stop the census (exit 3)', {
    timeout: 60_000,
  }, async () => {
    const [closed] = await resettingPorts(1);
    const mixed = await startRegistry(4, 1, 0, {
      urlOf: (i, host, path) => `http://${i < 2 ? `127.0.0.1:${closed}` : host}${path}`,
    });
    regs.push(mixed);
    const ok = await census(mixed, join(dir, 'mixed.json'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(existsSync(join(dir, 'mixed.json')));

    // 24 remotes, each on a port of its own: 22 probed (an SSE-only and a templated one are not).
    const ports = await resettingPorts(24);
    const down = await startRegistry(24, 1, 0, { urlOf: (i, _host, path) => `http://127.0.0.1:${ports[i]}${path}` });
    regs.push(down);
    const out = join(dir, 'down.json');
    const stopped = await census(down, out);
    assert.equal(stopped.code, 3, stopped.stderr);
    assert.match(stopped.stderr, /outage guard: 22 of 22 hosts failed at the network level/);
    assert.ok(!existsSync(out), 'nothing published');
  });
});
