/**
 * What a worker leases for a job, through `work` itself with a store that records the calls: the host by its
 * normalised name and port whatever the spelling (refresh and census jobs alike, the 429 hold and the census's rest
 * too), and for a census's job each address the host resolved to, on the host's port; loopback left out only for a
 * worker started with --allow-http. Every probe meets a closed loopback port (`work` is called as a worker calls it
 * once the job's check passed; the check is not what is tested here): nothing leaves the machine.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { work } from '../../src/worker/worker.js';
import { KAI_9000 } from '../../src/attest/profile.js';
import type { PgStore } from '../../src/store/pg-store.js';
import type { Coordination, HostLeases } from '../../src/queue/coordination.js';
import type { ProbeJob } from '../../src/queue/queue.js';

interface Calls {
  hosts: string[];
  holds: string[];
  addresses: Array<{ addresses: string[]; port: number; limit: number }>;
  released: string[][];
}

/** A store that grants every lease at once and records what was asked. */
function recordingStore(): { store: Coordination; calls: Calls } {
  const calls: Calls = { hosts: [], holds: [], addresses: [], released: [] };
  const store = {
    acquireHost: async (host: string) => {
      calls.hosts.push(host);
      return 0;
    },
    renewHost: async () => true,
    releaseHost: async () => {},
    holdHost: async (host: string) => {
      calls.holds.push(host);
    },
    acquireAddresses: async (addresses: readonly string[], port: number, limit: number) => {
      calls.addresses.push({ addresses: [...addresses], port, limit });
      return true;
    },
    renewAddresses: async () => true,
    releaseAddresses: async (addresses: readonly string[]) => {
      calls.released.push([...addresses]);
    },
    recordObservation: async () => true,
  };
  return { store: store as unknown as Coordination, calls };
}

it("the PostgreSQL store is the queue's Coordination, structurally (a type-level check: it compiles)", () => {
  // The store is below the queue: PgStore imports nothing of src/queue/, and still satisfies its interfaces.
  const coordination = (store: PgStore): Coordination => store;
  const leases = (store: PgStore): HostLeases => store;
  assert.deepEqual([typeof coordination, typeof leases], ['function', 'function']);
});

const jobOf = (url: string, census: boolean, allowHttp = false): ProbeJob => ({
  run: { id: 'leases-1', startedAt: '2026-12-01T00:00:00.000Z' },
  vantage: 'a',
  kind: 'probe',
  url,
  name: 'x',
  requiresAuth: false,
  headers: {},
  profile: KAI_9000,
  timeoutMs: 1_000,
  matrix: false,
  allowHttp,
  perHost: 1,
  canaries: [],
  ...(census ? { census: { identity: 'onetap-census/test', gapMs: 5 } } : {}),
});

async function leases(
  url: string,
  census: boolean,
  permits = { keyEnv: new Set<string>(), allowHttp: false },
  jobAllowsHttp = false,
) {
  const { store, calls } = recordingStore();
  await work(jobOf(url, census, jobAllowsHttp), { vantage: 'a', store, permits, signingKey: null }, 'test');
  return calls;
}

/** A loopback port nothing listens on (bound, then closed): every probe here is refused at once, on this machine. */
const closedPort = await new Promise<number>((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address() as AddressInfo;
    s.close(() => resolve(port));
  });
});

describe("a worker's leases: by normalised host, and for a census by address", () => {
  const P = closedPort;
  const spellings: Array<[string, string]> = [
    [`http://127.0.0.1:${P}/mcp`, `127.0.0.1:${P}`],
    [`http://[::ffff:127.0.0.1]:${P}/mcp`, `127.0.0.1:${P}`],
    [`http://[::FFFF:7F00:1]:${P}/mcp`, `127.0.0.1:${P}`],
    [`http://127.0.0.1.:${P}/mcp`, `127.0.0.1:${P}`],
    [`http://LOCALHOST.:${P}/mcp`, `localhost:${P}`],
    [`http://[0:0::1]:${P}/mcp`, `[::1]:${P}`],
  ];
  for (const census of [false, true]) {
    for (const [url, key] of spellings) {
      it(`${census ? 'census' : 'refresh'} job ${url}: host lease ${key}`, async () => {
        const calls = await leases(url, census);
        assert.deepEqual(calls.hosts, [key]);
        if (census) assert.deepEqual(calls.holds, [key], "the census's rest is held under the same key");
      });
    }
  }

  it('a census job leases its address, canonical, on its port, at most 4 per address, and releases it', async () => {
    const calls = await leases(`http://[::ffff:7f00:1]:${P}/mcp`, true);
    assert.deepEqual(calls.addresses, [{ addresses: ['127.0.0.1'], port: P, limit: 4 }]);
    assert.deepEqual(calls.released, [['127.0.0.1']]);
  });

  it("a refresh job leases no address (its per-host limit is the run's)", async () => {
    const calls = await leases(`http://127.0.0.1:${P}/mcp`, false);
    assert.deepEqual(
      calls.addresses.map((a) => a.addresses),
      [[]],
    );
  });

  it('loopback is left out for a worker started with --allow-http, counted for one without', async () => {
    const open = await leases(`http://127.0.0.1:${P}/mcp`, true, { keyEnv: new Set(), allowHttp: true }, true);
    assert.deepEqual(
      open.addresses.map((a) => a.addresses),
      [[]],
    );
    const closed = await leases(`http://127.0.0.1:${P}/mcp`, true, { keyEnv: new Set(), allowHttp: false }, true);
    assert.deepEqual(closed.addresses, [{ addresses: ['127.0.0.1'], port: P, limit: 4 }]);
  });
});
