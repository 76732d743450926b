/**
 * A probe under a fence (the host lease a worker's probe runs under), against a real server on 127.0.0.1: lost while
 * tools/list is in flight, the request is ended and no other is sent, the card's read included; lost before the
 * probe starts, nothing is sent at all; held throughout, the probe is the probe it always was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { collect } from '../../src/collect/collect.js';
import { LeaseLost, type Fence } from '../../src/net/fence.js';
import { LeaseFence } from '../../src/worker/lease.js';
import { answer, startFleet, type Fleet } from '../fleet/fleet.js';

/** A fence the test loses by hand. */
function handFence(): Fence & { lose: () => void } {
  const c = new AbortController();
  return {
    signal: c.signal,
    check: () => c.signal.throwIfAborted(),
    lose: () => c.abort(new LeaseLost('the lease of the test host: lost')),
  };
}

describe('a probe under a fence', () => {
  let fleet: Fleet;
  /** Requests by method (JSON-RPC's, or GET for the card), in order, and whether each was answered or cut. */
  const seen: Array<{ what: string; ended: 'answered' | 'cut' | 'open' }> = [];
  let onToolsList: (() => void) | null = null;
  let onInitialize: (() => void) | null = null;
  before(async () => {
    fleet = await startFleet({
      slow: (c) => {
        const entry = { what: c.msg?.method ?? c.req.method!, ended: 'open' as 'answered' | 'cut' | 'open' };
        seen.push(entry);
        c.res.on('close', () => {
          if (entry.ended === 'open') entry.ended = c.res.writableFinished ? 'answered' : 'cut';
        });
        if (c.msg?.method === 'initialize') onInitialize?.();
        if (c.msg?.method === 'tools/list') {
          onToolsList?.();
          setTimeout(() => {
            if (!c.res.destroyed) answer(c);
          }, 3_000);
          return;
        }
        answer(c);
      },
    });
  });
  after(() => fleet.close());

  const probeUnder = (fence: Fence) =>
    collect([{ url: fleet.url('slow') }], {
      run: { id: 'fence-1', startedAt: '2026-12-01T00:00:00.000Z' },
      allowPrivate: true,
      allowPrivateCard: () => true,
      timeoutMs: 10_000,
      fence,
      concurrency: 1,
    });

  it('lost while tools/list is in flight: that request is cut, none follows', async () => {
    seen.length = 0;
    const fence = handFence();
    onToolsList = () => setTimeout(() => fence.lose(), 100);
    const { observations } = await probeUnder(fence);
    onToolsList = null;
    await new Promise((r) => setTimeout(r, 200));
    const at = seen.findIndex((s) => s.what === 'tools/list');
    assert.ok(at >= 0, `tools/list was asked: ${JSON.stringify(seen)}`);
    assert.equal(seen[at]!.ended, 'cut', `tools/list cut when the lease was lost: ${JSON.stringify(seen)}`);
    assert.deepEqual(
      seen.slice(at + 1).filter((s) => s.what !== 'GET'),
      [],
      'no request after the loss',
    );
    assert.ok(fence.signal.aborted);
    assert.notEqual(
      observations[0]!.reason,
      'ok',
      'what the probe saw is not a success (and the worker records none of it)',
    );
  });

  it('its time run out with no timer having run (a process resumed after a pause): the next request is not sent', async () => {
    seen.length = 0;
    const clock = { now: 0 };
    const fence = new LeaseFence('the lease of the test host', 30_000, 2_000, 0, () => clock.now);
    onInitialize = () => {
      clock.now = 40_000;
    };
    await probeUnder(fence);
    onInitialize = null;
    assert.deepEqual(
      seen.filter((s) => s.what !== 'GET').map((s) => s.what),
      ['initialize'],
      'nothing after the answer to initialize',
    );
    assert.ok(fence.signal.aborted, 'the check itself found the lease lost');
  });

  it('lost before the probe: nothing is sent', async () => {
    seen.length = 0;
    const fence = handFence();
    fence.lose();
    await probeUnder(fence);
    assert.deepEqual(seen, []);
  });

  it('held throughout: the probe as always (initialize, the notification, tools/list), the card read', async () => {
    seen.length = 0;
    const { observations } = await probeUnder(handFence());
    assert.equal(observations[0]!.reason, 'ok', JSON.stringify(observations[0]));
    assert.deepEqual(
      seen.filter((s) => s.what !== 'GET').map((s) => s.what),
      ['initialize', 'notifications/initialized', 'tools/list'],
    );
    assert.ok(seen.every((s) => s.ended === 'answered'));
  });
});
