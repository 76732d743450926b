/**
 * Canaries obey the address rule of every other request a job or a catalog causes: an https canary on a private
 * (10.0.0.5), a loopback (127.0.0.1, localhost) or an IPv6 unique-local (fd00::1) address is refused without any
 * connection attempt, by literal and by a name that resolves there, unless the loopback fixtures' permission opens
 * loopback. Listeners on those addresses count the connections: none without permission, one per canary with it (so the
 * test can fail). The refresh's canaries here; the worker's are refused by its job check (test/worker-trust.test.ts).
 * The census checks no canaries.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { catalogOf, runCli, workspace } from './helpers.js';
import { isReachable } from '../src/attest/reachable.js';

const DIST = new URL('../', import.meta.url).pathname;

function namespacesMissing(): string | null {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' });
    return null;
  } catch {
    return 'ip netns (iproute2) is not available';
  }
}

describe('canaries go through the address rule', () => {
  let connections = 0;
  let listener: Server;
  let port = 0;
  before(async () => {
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
  });
  after(() => new Promise((r) => listener.close(r)));

  it("isReachable: a loopback canary is refused without a connection; with the fixtures' permission it connects", async () => {
    connections = 0;
    const loopback = [`https://127.0.0.1:${port}/`, `https://localhost:${port}/`];
    assert.deepEqual(await Promise.all(loopback.map((u) => isReachable(u, 3_000))), [false, false]);
    assert.equal(connections, 0, 'nothing connected');
    await Promise.all(loopback.map((u) => isReachable(u, 3_000, { allowPrivate: true })));
    assert.equal(connections, 2, 'with the permission, each connects');
  });

  it("a refresh's canaries: refused without --allow-http (no connection, the outage guard), loopback ones checked with it", async () => {
    const canaries = [
      `https://127.0.0.1:${port}/`,
      `https://localhost:${port}/`,
      'https://10.0.0.5:8443/',
      'https://[fd00::1]/',
    ];
    const ws = await workspace(catalogOf([], { policy: { authOptionalHosts: [], sharedGatewayHosts: [], canaries } }));
    connections = 0;
    const strict = await runCli(['refresh', '--catalog', ws.catalogPath, '--json', '--timeout', '3000']);
    assert.equal(strict.code, 3, strict.stderr);
    assert.equal(connections, 0, 'no canary was contacted');
    const fixtures = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--json',
      '--timeout',
      '3000',
      '--allow-http',
    ]);
    assert.equal(fixtures.code, 3, fixtures.stderr);
    assert.equal(connections, 2, 'the loopback canaries were, under --allow-http (and nothing else opens)');
  });

  const missing = namespacesMissing();
  it('in a namespace where 10.0.0.5, fd00::1 and 127.0.0.1 answer: every canary refused before connecting, by literal and by name', {
    skip: missing ?? false,
  }, () => {
    const ns = `otc${process.pid}`;
    try {
      execFileSync('ip', ['netns', 'add', ns]);
      for (const args of [
        ['link', 'set', 'lo', 'up'],
        ['addr', 'add', '10.0.0.5/32', 'dev', 'lo'],
        ['addr', 'add', 'fd00::1/128', 'dev', 'lo', 'nodad'],
      ])
        execFileSync('ip', ['netns', 'exec', ns, 'ip', ...args]);
      // `ip netns exec` mounts /etc/netns/<ns>/hosts over /etc/hosts: names that resolve to each address.
      mkdirSync(`/etc/netns/${ns}`, { recursive: true });
      writeFileSync(
        `/etc/netns/${ns}/hosts`,
        '10.0.0.5 private.test\nfd00::1 ula.test\n127.0.0.1 loop.test localhost\n',
      );
      const urls = [
        'https://10.0.0.5:8443/',
        'https://[fd00::1]:8443/',
        'https://127.0.0.1:8443/',
        'https://localhost:8443/',
        'https://private.test:8443/',
        'https://ula.test:8443/',
        'https://loop.test:8443/',
      ];
      const out = JSON.parse(
        execFileSync('ip', ['netns', 'exec', ns, process.execPath, `${DIST}test/fleet/canary-reach.js`, ...urls], {
          encoding: 'utf8',
          timeout: 20_000,
        }),
      ) as { refused: boolean[]; before: number; allowed: boolean[]; after: number };
      assert.deepEqual(
        out.refused,
        urls.map(() => false),
      );
      assert.equal(out.before, 0, 'no connection was attempted to any of them');
      assert.equal(out.after, urls.length, 'with allowPrivate each connects: the listeners would have seen one');
    } finally {
      try {
        execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
      } catch {
        /* gone */
      }
      rmSync(`/etc/netns/${ns}`, { recursive: true, force: true });
    }
  });
});
