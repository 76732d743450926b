/**
 * The per-address leases a census's workers share (`PgStore.acquireAddresses`), on the real PostgreSQL: at most the
 * limit of holders per address, all on one port; another port waits until every unexpired lease of the address is
 * gone; a lease that expired (by the database's clock) is taken over and never renewed back; several addresses are
 * taken all or none; and many takers at once, from several processes' pools, never hold one address on two ports.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { migrateStore, openPgStore, type PgStore } from '../src/store/pg-store.js';
import { freshSchema, postgresMissing, sql } from './postgres.js';

const missing = await postgresMissing();
if (missing) it('per-address leases', { skip: missing }, () => {});

describe('per-address leases', { skip: !!missing }, () => {
  const stores: PgStore[] = [];
  let name = '';
  let drop = async () => {};
  const LEASE = 30_000;

  before(async () => {
    const s = await freshSchema('addr_leases');
    ({ schema: name, drop } = s);
    await migrateStore(s.url);
    for (let i = 0; i < 4; i++) stores.push(await openPgStore(s.url));
  });
  after(async () => {
    for (const s of stores) await s.close();
    await drop();
  });

  const held = async (address: string) =>
    sql<{ port: number; holder: string }>(
      `SELECT port, holder FROM "${name}".address_leases WHERE address = $1 AND expires_at > now() ORDER BY holder`,
      [address],
    );

  it('at most the limit on one port; another port only once every lease of the address is gone', async () => {
    const [s] = stores;
    for (const h of ['a', 'b', 'c', 'd'])
      assert.equal(await s!.acquireAddresses(['192.0.2.1'], 443, 4, h, LEASE), true, h);
    assert.equal(await s!.acquireAddresses(['192.0.2.1'], 443, 4, 'e', LEASE), false, 'a fifth on the same port waits');
    assert.equal(await s!.acquireAddresses(['192.0.2.1'], 8443, 4, 'f', LEASE), false, 'another port waits');
    await s!.releaseAddresses(['192.0.2.1'], 'a');
    assert.equal(
      await s!.acquireAddresses(['192.0.2.1'], 8443, 4, 'f', LEASE),
      false,
      'another port waits while any is held',
    );
    assert.equal(
      await s!.acquireAddresses(['192.0.2.1'], 443, 4, 'e', LEASE),
      true,
      'the same port takes the freed slot',
    );
    for (const h of ['b', 'c', 'd', 'e']) await s!.releaseAddresses(['192.0.2.1'], h);
    assert.equal(await s!.acquireAddresses(['192.0.2.1'], 8443, 4, 'f', LEASE), true, 'free: any port');
    assert.deepEqual(await held('192.0.2.1'), [{ port: 8443, holder: 'f' }]);
    await s!.releaseAddresses(['192.0.2.1'], 'f');
  });

  it("an expired lease is taken over, and its holder's renewal does not take it back", async () => {
    const [s] = stores;
    assert.equal(await s!.acquireAddresses(['192.0.2.2'], 443, 1, 'dead', 1), true);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(
      await s!.acquireAddresses(['192.0.2.2'], 8443, 1, 'next', LEASE),
      true,
      "the dead worker's lease expired",
    );
    await s!.renewAddresses(['192.0.2.2'], 'dead', LEASE);
    assert.deepEqual(await held('192.0.2.2'), [{ port: 8443, holder: 'next' }]);
    await s!.renewAddresses(['192.0.2.2'], 'next', LEASE);
    assert.deepEqual(await held('192.0.2.2'), [{ port: 8443, holder: 'next' }], 'its own lease renewed');
    await s!.releaseAddresses(['192.0.2.2'], 'next');
  });

  it('several addresses: all or none', async () => {
    const [s] = stores;
    assert.equal(await s!.acquireAddresses(['192.0.2.4'], 443, 4, 'one', LEASE), true);
    assert.equal(await s!.acquireAddresses(['192.0.2.3', '192.0.2.4', '192.0.2.5'], 8443, 4, 'many', LEASE), false);
    assert.deepEqual([...(await held('192.0.2.3')), ...(await held('192.0.2.5'))], [], 'nothing of it taken');
    await s!.releaseAddresses(['192.0.2.4'], 'one');
    assert.equal(await s!.acquireAddresses(['192.0.2.5', '192.0.2.3', '192.0.2.4'], 8443, 4, 'many', LEASE), true);
    assert.deepEqual(
      await sql(`SELECT address, port FROM "${name}".address_leases WHERE holder = 'many' ORDER BY address`),
      ['192.0.2.3', '192.0.2.4', '192.0.2.5'].map((address) => ({ address, port: 8443 })),
    );
    await s!.releaseAddresses(['192.0.2.3', '192.0.2.4', '192.0.2.5'], 'many');
    assert.deepEqual(await sql(`SELECT count(*)::int AS n FROM "${name}".address_leases`), [{ n: 0 }], 'released');
  });

  it('many takers at once, over four pools: one port per address, at most the limit, never a deadlock', async () => {
    for (let round = 0; round < 5; round++) {
      // Ten ports of one address, and overlapping sets of addresses in either order.
      const sets = [
        ['198.51.100.1'],
        ['198.51.100.1', '198.51.100.2'],
        ['198.51.100.2', '198.51.100.1'],
        ['198.51.100.2'],
      ];
      const tries = Array.from({ length: 40 }, (_, i) => ({
        addresses: sets[i % sets.length]!,
        port: 1_000 + (i % 10),
        holder: `r${round}-${i}`,
      }));
      const taken = await Promise.all(
        tries.map((t, i) => stores[i % stores.length]!.acquireAddresses(t.addresses, t.port, 4, t.holder, LEASE)),
      );
      for (const address of ['198.51.100.1', '198.51.100.2']) {
        const rows = await held(address);
        assert.ok(rows.length >= 1 && rows.length <= 4, `${address}: ${rows.length} holders`);
        assert.equal(new Set(rows.map((r) => r.port)).size, 1, `${address} on one port: ${JSON.stringify(rows)}`);
      }
      const winners = tries.filter((_, i) => taken[i]);
      for (const w of winners) await stores[0]!.releaseAddresses(w.addresses, w.holder);
    }
    assert.deepEqual(await sql(`SELECT count(*)::int AS n FROM "${name}".address_leases`), [{ n: 0 }]);
  });
});
