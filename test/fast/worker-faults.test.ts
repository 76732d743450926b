/**
 * Issue 34, a worker's faults, table by table on injected clocks: the backoff after a fault (capped, never shorter
 * than half its step); the log's rate limit (one line per kind per window, the rest counted); a host lease's fence
 * (lost when a renewal finds it another's, or when none succeeded in time; a renewal extends it; a paused process
 * finds it lost on its first check); which store failures are the store out of reach (handed back, no attempt used)
 * and which are a query's own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs } from '../../src/util/backoff.js';
import { RateLimitedLog, WORKER_BACKOFF } from '../../src/worker/faults.js';
import { LeaseFence } from '../../src/worker/lease.js';
import { LeaseLost } from '../../src/net/fence.js';
import { storeUnreachable } from '../../src/store/pg-store.js';

describe('the backoff after a fault', () => {
  const cases: Array<[number, number, number]> = [
    // attempt, random, ms
    [0, 0, 250],
    [0, 1, 500],
    [1, 0, 500],
    [1, 1, 1_000],
    [3, 0.5, 3_000],
    [6, 1, 30_000],
    [6, 0, 15_000],
    [40, 1, 30_000],
    [1_000, 0, 15_000],
    [-3, 1, 500],
  ];
  for (const [attempt, random, ms] of cases) {
    it(`try ${attempt}, random ${random}: ${ms} ms`, () =>
      assert.equal(backoffMs(attempt, random, WORKER_BACKOFF), ms));
  }
  it('grows until the cap and never passes it', () => {
    let last = 0;
    for (let a = 0; a < 50; a++) {
      const ms = backoffMs(a, 1, WORKER_BACKOFF);
      assert.ok(ms >= last && ms <= WORKER_BACKOFF.capMs, `try ${a}: ${ms}`);
      last = ms;
    }
  });
});

describe('the log, one line per kind per 10 s', () => {
  const logged = () => {
    let now = 0;
    const lines: string[] = [];
    const log = new RateLimitedLog(
      (l) => lines.push(l),
      10_000,
      () => now,
    );
    return {
      log,
      lines,
      at: (ms: number) => {
        now = ms;
      },
    };
  };

  it('3,000 lines of one kind in 15 s: two written, the second counting those held back', () => {
    const { log, lines, at } = logged();
    for (let i = 0; i < 3_000; i++) {
      at(i * 5);
      log.line('queue', `the queue: refused ${i}`);
    }
    assert.deepEqual(lines, ['the queue: refused 0', 'the queue: refused 2000 (1999 more like this in the last 10 s)']);
    log.flush();
    assert.equal(lines[2], 'the queue: refused 2999 (999 more like this)');
    assert.equal(lines.length, 3);
  });

  it('kinds are counted apart', () => {
    const { log, lines } = logged();
    log.line('queue', 'q1');
    log.line('store', 's1');
    log.line('queue', 'q2');
    log.line('store', 's2');
    assert.deepEqual(lines, ['q1', 's1']);
  });

  it('a line after a quiet window is written as it is', () => {
    const { log, lines, at } = logged();
    log.line('store', 'a');
    at(10_000);
    log.line('store', 'b');
    assert.deepEqual(lines, ['a', 'b']);
    log.flush();
    assert.equal(lines.length, 2, 'nothing held back: flush writes nothing');
  });
});

describe("a host lease's fence", () => {
  const fence = (sentAt = 0) => {
    const clock = { now: sentAt };
    return { clock, fence: new LeaseFence('the lease of h:443', 30_000, 2_000, sentAt, () => clock.now) };
  };
  const lost = (f: LeaseFence) => {
    try {
      f.check();
      return null;
    } catch (err) {
      return err;
    }
  };

  it('held until its lease less the margin, from when the statement that took it was sent', () => {
    const { clock, fence: f } = fence(1_000);
    clock.now = 28_999;
    assert.equal(lost(f), null);
    clock.now = 29_000;
    const err = lost(f);
    assert.ok(err instanceof LeaseLost, String(err));
    assert.match((err as Error).message, /the lease of h:443: not renewed within 30000 ms/);
    assert.ok(f.signal.aborted, 'what is in flight is ended too');
  });

  it('a renewal extends it from when the renewal was sent, never shortens it', () => {
    const { clock, fence: f } = fence(0);
    f.renewed(10_000);
    clock.now = 37_999;
    assert.equal(lost(f), null);
    f.renewed(5_000); // an older renewal answering late
    assert.equal(f.until, 38_000);
    clock.now = 38_000;
    assert.ok(lost(f) instanceof LeaseLost);
  });

  it('a process paused past its lease finds it lost on its first check, before any timer runs', () => {
    const { clock, fence: f } = fence(0);
    clock.now = 40_000; // resumed: no renewal ran meanwhile
    assert.ok(lost(f) instanceof LeaseLost);
  });

  it("a renewal that finds the lease another's loses it at once; a later renewal does not bring it back", () => {
    const { fence: f } = fence(0);
    f.lose('taken by another worker since (it expired)');
    assert.match(String((lost(f) as Error).message), /taken by another worker/);
    f.renewed(1_000);
    assert.ok(lost(f) instanceof LeaseLost);
  });
});

describe("the store out of reach, or a query's own failure", () => {
  const withCode = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
  const wrapped = (cause: Error) => new Error('the store postgresql://x@h/db: a query failed: …', { cause });
  const cases: Array<[string, unknown, boolean]> = [
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), true],
    ['connection reset, wrapped by the store', wrapped(withCode('read ECONNRESET', 'ECONNRESET')), true],
    ['the pool found no connection in time', wrapped(new Error('timeout exceeded when trying to connect')), true],
    ['the connection ended mid-query', wrapped(new Error('Connection terminated unexpectedly')), true],
    [
      'the server shutting down (57P01)',
      withCode('terminating connection due to administrator command', '57P01'),
      true,
    ],
    ['a connection exception (08006)', withCode('connection failure', '08006'), true],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300'), true],
    ['a unique violation (23505)', wrapped(withCode('duplicate key value violates unique constraint', '23505')), false],
    ['a syntax error (42601)', withCode('syntax error at or near', '42601'), false],
    ['a bug', new TypeError('cannot read properties of undefined'), false],
    ['not an error', 'ECONNREFUSED', false],
  ];
  for (const [what, err, unreachable] of cases)
    it(`${what}: ${unreachable ? 'out of reach' : "the query's"}`, () =>
      assert.equal(storeUnreachable(err), unreachable));
});
