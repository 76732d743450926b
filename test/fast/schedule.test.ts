/**
 * The one scheduler of probes (`src/net/schedule.ts`). Its choice of host (pure): one address asked on one port at a
 * time, by at most four probes at once, first come first served per address, exempt addresses not counted; and, over
 * a seeded random run of thousands of events, never a rule broken, never a host left waiting when nothing is in
 * flight. Its driver, `eachInTurn`: input order,
 * per-host slots, a host's rest and a 429's hold (fake timers), the largest host first, the address rule, the first
 * error.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eachInTurn, type InTurnOptions, PER_ADDRESS, Schedule, type ScheduledHost } from '../../src/net/schedule.js';

const host = (key: string, port: number, ...addresses: string[]): ScheduledHost => ({ key, port, addresses });
/** Every host `next` gives now, by key. */
const drain = (s: Schedule<ScheduledHost>) => {
  const started: string[] = [];
  for (let h = s.next(); h; h = s.next()) started.push(h.key);
  return started;
};

describe('Schedule: good guests by address', () => {
  it('ten ports of one address (one registry entry): one at a time', () => {
    const s = new Schedule<ScheduledHost>(16);
    const hosts = Array.from({ length: 10 }, (_, i) => host(`203.0.113.9:${8000 + i}`, 8000 + i, '203.0.113.9'));
    hosts.forEach((h) => s.offer(h));
    for (let i = 0; i < 10; i++) {
      assert.deepEqual(drain(s), [hosts[i]!.key], `port ${8000 + i} alone`);
      s.ended(hosts[i]!);
    }
    assert.equal(s.idle, true);
  });

  it(`one CDN address, one port, many names: ${PER_ADDRESS} at once, the next as one ends`, () => {
    const s = new Schedule<ScheduledHost>(16);
    const hosts = Array.from({ length: 6 }, (_, i) => host(`s${i}.example:443`, 443, '198.51.100.1'));
    hosts.forEach((h) => s.offer(h));
    assert.deepEqual(
      drain(s),
      hosts.slice(0, PER_ADDRESS).map((h) => h.key),
    );
    s.ended(hosts[1]!);
    assert.deepEqual(drain(s), [hosts[4]!.key]);
    assert.deepEqual(drain(s), []);
  });

  it('another port waits for the address to drain, and hosts arriving after it wait behind it', () => {
    const s = new Schedule<ScheduledHost>(16);
    const [a, b, other, late] = [
      host('a:443', 443, 'x'),
      host('b:443', 443, 'x'),
      host('c:8443', 8443, 'x'),
      host('d:443', 443, 'x'),
    ];
    [a, b, other].forEach((h) => s.offer(h));
    assert.deepEqual(drain(s), ['a:443', 'b:443']);
    s.offer(late);
    assert.deepEqual(drain(s), [], 'd:443 would fit, but c:8443 came first');
    s.ended(a);
    assert.deepEqual(drain(s), []);
    s.ended(b);
    assert.deepEqual(drain(s), ['c:8443']);
    s.ended(other);
    assert.deepEqual(drain(s), ['d:443']);
  });

  it('a name with several addresses holds each of them', () => {
    const s = new Schedule<ScheduledHost>(16);
    const both = host('both:443', 443, 'x', 'y');
    const onY = host('y:8443', 8443, 'y');
    s.offer(both);
    s.offer(onY);
    assert.deepEqual(drain(s), ['both:443']);
    s.ended(both);
    assert.deepEqual(drain(s), ['y:8443']);
  });

  it('no address (the name did not resolve): only the host rule and the concurrency hold', () => {
    const s = new Schedule<ScheduledHost>(2);
    ['a', 'b', 'c'].forEach((k) => s.offer(host(k, 443)));
    assert.deepEqual(drain(s), ['a', 'b']);
  });

  it('exempt addresses (loopback fixtures) are not counted: many ports of 127.0.0.1 at once, up to the concurrency', () => {
    const s = new Schedule<ScheduledHost>(16, { exempt: (a) => a === '127.0.0.1' });
    for (let i = 0; i < 20; i++) s.offer(host(`127.0.0.1:${9000 + i}`, 9000 + i, '127.0.0.1'));
    assert.equal(drain(s).length, 16);
  });

  it('the concurrency holds, and a freed line goes first when a slot opens', () => {
    const s = new Schedule<ScheduledHost>(1);
    const [a, b, c] = [host('a:1', 1, 'x'), host('b:2', 2, 'x'), host('c:3', 3, 'z')];
    [a, b, c].forEach((h) => s.offer(h));
    assert.deepEqual(drain(s), ['a:1']);
    s.ended(a);
    assert.deepEqual(drain(s), ['b:2'], 'b waited for x before c was looked at');
    s.ended(b);
    assert.deepEqual(drain(s), ['c:3']);
  });
});

describe('Schedule: a seeded random run keeps every rule and never stalls', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}`, () => {
      let state = seed;
      const random = () => {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        return state / 2 ** 31;
      };
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
      const addresses = ['a', 'b', 'c', 'd', 'lo'];
      const ports = [443, 8443, 80];
      const concurrency = 1 + Math.floor(random() * 8);
      const s = new Schedule<ScheduledHost>(concurrency, { exempt: (a) => a === 'lo' });
      const hosts = Array.from({ length: 60 }, (_, i) => {
        const own = [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => pick(addresses)))];
        return { ...host(`h${i}`, pick(ports), ...own), left: 1 + Math.floor(random() * 5) };
      });
      const probes = hosts.reduce((n, h) => n + h.left, 0);
      const running = new Set<(typeof hosts)[number]>();
      const offered = new Set(hosts);
      hosts.forEach((h) => s.offer(h));
      let ends = 0;
      for (let step = 0; step < 10_000 && (running.size || offered.size); step++) {
        for (let h = s.next(); h; h = s.next()) {
          const t = h as (typeof hosts)[number];
          assert.ok(offered.delete(t) && !running.has(t), `${t.key} started once per offer`);
          running.add(t);
        }
        assert.ok(running.size <= concurrency);
        for (const a of addresses.filter((x) => x !== 'lo')) {
          const on = [...running].filter((h) => h.addresses.includes(a));
          assert.ok(on.length <= PER_ADDRESS, `${a}: at most ${PER_ADDRESS}`);
          assert.ok(new Set(on.map((h) => h.port)).size <= 1, `${a}: one port at a time`);
        }
        assert.ok(running.size > 0 || offered.size === 0, 'nothing in flight, yet hosts wait: stalled');
        // A random probe ends; its host is offered again while it has targets left.
        const done = pick([...running]);
        running.delete(done);
        s.ended(done);
        ends++;
        if (--done.left > 0) {
          s.offer(done);
          offered.add(done);
        }
      }
      assert.equal(ends, probes, 'every probe ran');
      assert.equal(s.idle, true);
    });
  }
});

describe('eachInTurn: the one scheduler of probes', () => {
  /** Runs `eachInTurn` over items named `host/n`; each start waits until the test ends it. */
  const harness = (items: string[], options: Partial<InTurnOptions<string>> = {}) => {
    const started: string[] = [];
    const running = new Map<string, (hold?: number) => void>();
    const failing = new Map<string, (err: Error) => void>();
    let peak = 0;
    const perHostPeak = new Map<string, number>();
    const host = (item: string) => item.split('/')[0]!;
    const done = eachInTurn(
      items,
      {
        concurrency: 16,
        hostOf: (item) => ({ key: host(item), port: 443, name: host(item) }),
        ...options,
      },
      (item) =>
        new Promise<number | undefined>((resolve, reject) => {
          started.push(item);
          running.set(item, (hold) => {
            running.delete(item);
            resolve(hold);
          });
          failing.set(item, reject);
          peak = Math.max(peak, running.size);
          const onHost = [...running.keys()].filter((k) => host(k) === host(item)).length;
          perHostPeak.set(host(item), Math.max(perHostPeak.get(host(item)) ?? 0, onHost));
        }),
    );
    const settle = () => new Promise((r) => setImmediate(r));
    return {
      started,
      done,
      settle,
      peak: () => peak,
      perHostPeak,
      end: async (item: string, hold?: number) => {
        running.get(item)!(hold);
        await settle();
      },
      fail: async (item: string) => {
        failing.get(item)!(new Error(`${item} failed`));
        await settle();
      },
    };
  };

  it('concurrency 1 keeps input order, whatever the hosts', async () => {
    const items = ['a/1', 'a/2', 'b/1', 'a/3', 'c/1'];
    const h = harness(items, { concurrency: 1, perHost: 4 });
    await h.settle();
    for (const item of items) await h.end(item);
    await h.done;
    assert.deepEqual(h.started, items);
  });

  it('perHost holds per host, and a busy host does not hold up the next item of another', async () => {
    const h = harness(['a/1', 'a/2', 'a/3', 'b/1'], { concurrency: 3, perHost: 1 });
    await h.settle();
    assert.deepEqual(h.started, ['a/1', 'b/1'], 'a/2 waits for a/1; b/1 goes ahead');
    await h.end('b/1');
    assert.deepEqual(h.started, ['a/1', 'b/1']);
    await h.end('a/1');
    assert.deepEqual(h.started, ['a/1', 'b/1', 'a/2']);
    await h.end('a/2');
    await h.end('a/3');
    await h.done;
    assert.equal(h.perHostPeak.get('a'), 1);
  });

  it('perHost 4 over 40 items of one host and 40 others at concurrency 8: never over either limit', async () => {
    const items = [
      ...Array.from({ length: 40 }, (_, i) => `big/${i}`),
      ...Array.from({ length: 40 }, (_, i) => `h${i}/0`),
    ];
    const h = harness(items, { concurrency: 8, perHost: 4 });
    await h.settle();
    for (let i = 0; i < items.length; i++) await h.end(h.started[i]!);
    await h.done;
    assert.equal(h.started.length, 80);
    assert.equal(new Set(h.started).size, 80, 'each item once');
    assert.equal(h.peak(), 8);
    assert.equal(h.perHostPeak.get('big'), 4);
  });

  it("a host rests restMs between its probes, or the hold its probe returned (a 429's Retry-After) when longer", async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const h = harness(['a/1', 'a/2', 'a/3', 'b/1'], { concurrency: 4, restMs: 1_000, order: 'most-left' });
    await h.settle();
    assert.deepEqual(h.started, ['a/1', 'b/1']);
    await h.end('a/1');
    t.mock.timers.tick(999);
    await h.settle();
    assert.deepEqual(h.started, ['a/1', 'b/1'], 'still resting');
    t.mock.timers.tick(1);
    await h.settle();
    assert.deepEqual(h.started, ['a/1', 'b/1', 'a/2']);
    await h.end('a/2', 5_000);
    t.mock.timers.tick(4_999);
    await h.settle();
    assert.equal(h.started.length, 3, 'the hold is longer than the rest');
    t.mock.timers.tick(1);
    await h.settle();
    assert.deepEqual(h.started, ['a/1', 'b/1', 'a/2', 'a/3']);
    await h.end('a/3');
    await h.end('b/1');
    await h.done;
  });

  it('with addresses looked up, the address rule holds: two hosts on one address and two ports, one at a time', async () => {
    const h = harness(['x/1', 'y/1'], {
      hostOf: (item) => {
        const name = item.split('/')[0]!;
        return { key: name, port: name === 'x' ? 443 : 8443, name };
      },
      addressesOf: async () => ['198.51.100.7'],
    });
    await h.settle();
    assert.deepEqual(h.started, ['x/1']);
    await h.end('x/1');
    assert.deepEqual(h.started, ['x/1', 'y/1']);
    await h.end('y/1');
    await h.done;
  });

  it('the first error is thrown and nothing more starts', async () => {
    const h = harness(['a/1', 'a/2', 'b/1'], { concurrency: 2 });
    await h.settle();
    assert.deepEqual(h.started, ['a/1', 'b/1']);
    const outcome = h.done.then(
      () => null,
      (err: Error) => err.message,
    );
    await h.fail('a/1');
    assert.equal(await outcome, 'a/1 failed');
    await h.end('b/1');
    assert.deepEqual(h.started, ['a/1', 'b/1']);
  });

  it("'most-left': the host with the most items left starts first, also after its rest (a census's largest host)", async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const items = ['s1/1', 's2/1', 's3/1', 'big/1', 'big/2', 'big/3', 'big/4', 's4/1', 's5/1'];
    const h = harness(items, { concurrency: 1, restMs: 10, order: 'most-left' });
    const endLast = () => h.end(h.started.at(-1)!);
    await h.settle();
    assert.deepEqual(h.started, ['big/1']);
    await endLast();
    assert.match(h.started[1]!, /^s/, 'resting: a host of one item takes the slot');
    t.mock.timers.tick(10);
    await endLast();
    assert.equal(h.started[2], 'big/2', 'its rest over, it goes before the four that waited');
    await endLast();
    t.mock.timers.tick(10);
    await h.settle();
    while (h.started.length < items.length) {
      await endLast();
      t.mock.timers.tick(10);
      await h.settle();
    }
    await endLast();
    await h.done;
    assert.equal(new Set(h.started).size, items.length);
    assert.ok(h.started.indexOf('big/3') <= 4, `big/3 as soon as its rest allowed: ${h.started.join(' ')}`);
  });

  it('no items: done at once', async () => {
    await eachInTurn([], { concurrency: 4, hostOf: () => ({ key: '', port: 0, name: '' }) }, async () => 0);
  });
});
