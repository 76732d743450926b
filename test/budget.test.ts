/**
 * The memory budget of body reads (src/attest/budget.ts) and the app's SSE reading on bytes: large answers read
 * through a budget's slots arrive whole, byte for byte, however the network splits them; reads that wait leave
 * the queue when they end; endless bodies shared across many probes still end as `review/oversize`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { AppSseReader } from '../src/attest/app-reader.js';
import { BodyBudget, HeldBytes } from '../src/attest/budget.js';
import { Deadline } from '../src/attest/transport.js';
import { Throttle } from '../src/util/throttle.js';
import { probeMany } from '../src/attest/probe-many.js';
import { initResult, startFleet, type Ctx, type Fleet } from './fleet/fleet.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('HeldBytes within a BodyBudget', () => {
  it('keeps small reads as they are and copies a large one into a slot, bytes in order', () => {
    const budget = new BodyBudget(8, 1);
    const held = new HeldBytes(64, budget);
    assert.equal(held.add(bytes('abcd')), null);
    assert.equal(held.add(bytes('efgh')), null);
    assert.equal(held.add(bytes('ijklmnop')), null, 'the free slot is taken at once');
    assert.equal(held.bytes().toString(), 'abcdefghijklmnop');
    held.release();
    assert.equal(held.length, 0);
  });

  it('a read over its free bytes waits for a slot, and gets it when the holder releases', async () => {
    const budget = new BodyBudget(4, 1);
    let waits = 0;
    budget.onWait = () => {
      waits++;
    };
    const first = new HeldBytes(64, budget);
    const second = new HeldBytes(64, budget);
    assert.equal(first.add(bytes('0123456789')), null);
    const waiting = second.add(bytes('abcdefghij'));
    assert.ok(waiting instanceof Promise, 'no slot is free: the second read waits');
    assert.equal(waits, 1, 'the budget tells that a read waits (probeMany then lets fewer probes run)');
    first.release();
    await waiting;
    assert.equal(second.bytes().toString(), 'abcdefghij');
    second.release();
  });

  it('a read that ends while waiting leaves the queue; the slot goes to the next one', async () => {
    const budget = new BodyBudget(4, 1);
    const holder = new HeldBytes(64, budget);
    holder.add(bytes('0123456789'));
    const gaveUp = new HeldBytes(64, budget);
    const third = new HeldBytes(64, budget);
    let gaveUpWoke = false;
    gaveUp.add(bytes('xxxxxxxxxx'))!.then(() => {
      gaveUpWoke = true;
    });
    const thirdWaits = third.add(bytes('yyyyyyyyyy'))!;
    gaveUp.release(); // its time ran out
    holder.release();
    await thirdWaits;
    assert.equal(gaveUpWoke, false);
    assert.equal(third.bytes().toString(), 'yyyyyyyyyy');
    third.release();
    // The slot and its buffer are reused: the next large read needs no new memory and waits for nothing.
    const fourth = new HeldBytes(64, budget);
    assert.equal(fourth.add(bytes('zzzzzzzzzz')), null);
    fourth.release();
  });
});

describe("the time a read waits for memory is not the server's", () => {
  it('a read that must wait stops its clock, and starts it again with its slot', async () => {
    const budget = new BodyBudget(4, 1);
    const events: string[] = [];
    const clock = { pause: () => events.push('pause'), resume: () => events.push('resume') };
    const holder = new HeldBytes(64, budget, clock);
    holder.add(bytes('0123456789'));
    assert.deepEqual(events, [], 'a slot free at once: the clock runs on');
    const waiter = new HeldBytes(64, budget, clock);
    const waiting = waiter.add(bytes('abcdefghij'))!;
    assert.deepEqual(events, ['pause']);
    holder.release();
    await waiting;
    assert.deepEqual(events, ['pause', 'resume']);
    waiter.release();
  });

  it('a Deadline paused before it was due fires only once resumed, with the time it had left', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const fired: number[] = [];
    const deadline = new Deadline(100, () => fired.push(Date.now()), Date.now);
    t.mock.timers.tick(40);
    deadline.pause();
    t.mock.timers.tick(200);
    assert.deepEqual(fired, [], 'paused at 40 ms: not fired at 100 ms or since');
    deadline.resume();
    t.mock.timers.tick(59);
    assert.deepEqual(fired, [], 'resumed at 240 ms with 60 ms left: not yet at 299 ms');
    t.mock.timers.tick(1);
    assert.deepEqual(fired, [300]);
  });

  it('a cleared Deadline never fires, even when resumed', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    let fired = false;
    const deadline = new Deadline(
      20,
      () => {
        fired = true;
      },
      Date.now,
    );
    deadline.pause();
    deadline.clear();
    deadline.resume();
    t.mock.timers.tick(1_000);
    assert.equal(fired, false);
  });

  it('an unpaused Deadline fires when due', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const fired: number[] = [];
    new Deadline(100, () => fired.push(Date.now()), Date.now);
    t.mock.timers.tick(99);
    assert.deepEqual(fired, []);
    t.mock.timers.tick(1);
    assert.deepEqual(fired, [100]);
  });
});

describe('Throttle: fewer probes start while reads wait for memory', () => {
  it('halves to what runs on a squeeze, then grows back by one per task that ends', async () => {
    const t = new Throttle(4, 1);
    for (let i = 0; i < 4; i++) assert.equal(t.enter(), null);
    let fifthStarted = false;
    t.enter()!.then(() => {
      fifthStarted = true;
    });
    t.squeeze(); // 4 run: the limit becomes 2
    t.leave(); // 3 run, limit 3: still no room
    await Promise.resolve();
    assert.equal(fifthStarted, false);
    t.leave(); // 2 run, limit 4: the fifth starts
    await Promise.resolve();
    assert.equal(fifthStarted, true);
  });

  it('never allows more than its maximum, whatever its floor', () => {
    const t = new Throttle(2, 8);
    assert.equal(t.enter(), null);
    assert.equal(t.enter(), null);
    t.squeeze();
    assert.ok(t.enter() instanceof Promise, 'a third task waits: the floor of 8 is clipped to the maximum of 2');
  });
});

describe("the app's SSE reading, fed bytes as the network splits them", () => {
  const body = [
    ': comment\r\n',
    'event: message\r\n',
    'data:{"jsonrpc":"2.0","method":"spaceless"}\r\n',
    '\r\n',
    `data: {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"wörld ✓ 𝄞"}]}}\r\n`,
    '\r\n',
  ].join('');

  it('gives the same winner at every split point, multi-byte characters and CRLF included', () => {
    const all = bytes(body);
    for (let cut = 0; cut <= all.length; cut++) {
      const reader = new AppSseReader();
      reader.feed(all.subarray(0, cut));
      reader.feed(all.subarray(cut));
      reader.end();
      assert.deepEqual(reader.winner?.result, { tools: [{ name: 'wörld ✓ 𝄞' }] }, `split at byte ${cut}`);
      assert.equal(reader.spacelessDataLines, 1, `split at byte ${cut}`);
    }
  });

  it('one byte at a time through a budget of 16 free bytes (the line goes to a slot)', async () => {
    const budget = new BodyBudget(16, 1);
    const reader = new AppSseReader(new HeldBytes(1024, budget));
    for (const b of bytes(body)) await reader.feed(Buffer.of(b));
    reader.end();
    assert.equal(reader.winner?.id, 1);
  });

  it('keeps nothing of lines that are not data lines, however long', () => {
    const reader = new AppSseReader();
    reader.feed(`: ${'x'.repeat(100_000)}`);
    assert.equal(reader.buffered, 0);
    reader.feed('\n');
    reader.feed(`data: {"jsonrpc":"2.0","id":3,`);
    assert.ok(reader.buffered > 0);
    assert.equal(reader.pendingData(100), '{"jsonrpc":"2.0","id":3,');
  });

  it("a byte-order mark stays, as Java's UTF-8 decoder keeps it: the first line is not a data line", () => {
    const reader = new AppSseReader();
    reader.feed(Buffer.concat([Buffer.of(0xef, 0xbb, 0xbf), bytes('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')]));
    reader.end();
    assert.equal(reader.winner, null);
  });
});

describe('probeMany: many large answers and endless bodies through one budget', () => {
  let fleet: Fleet;
  const tools = Array.from({ length: 1500 }, (_, i) => ({
    name: `tool_${i}`,
    description: `Finds things ✓ number ${i}: ${'déjà vu '.repeat(20)}`,
    inputSchema: { type: 'object' },
  }));

  // Written in 1,000-byte pieces, a turn of the event loop apart, so each read arrives in many chunks.
  const trickle = (res: ServerResponse, type: string, text: string) => {
    res.writeHead(200, { 'content-type': type });
    const all = bytes(text);
    let at = 0;
    const next = () => {
      if (res.destroyed) return;
      if (at >= all.length) {
        res.end();
        return;
      }
      res.write(all.subarray(at, (at += 1000)));
      setImmediate(next);
    };
    next();
  };
  const big = (mode: 'json' | 'sse') => (c: Ctx) => {
    if (!c.msg || c.msg.id === undefined) {
      c.res.writeHead(202);
      c.res.end();
      return;
    }
    const result = c.msg.method === 'initialize' ? initResult() : { tools };
    const text = JSON.stringify({ jsonrpc: '2.0', id: c.msg.id, result });
    trickle(
      c.res,
      mode === 'json' ? 'application/json' : 'text/event-stream',
      mode === 'json' ? text : `event: message\r\ndata: ${text}\r\n\r\n`,
    );
  };
  const endless = (c: Ctx) => {
    c.res.writeHead(200, { 'content-type': 'application/json' });
    c.res.write('{"jsonrpc":"2.0","id":1,"result":{"padding":"');
    const chunk = Buffer.alloc(16 * 1024, 'a');
    const pump = () => {
      while (!c.res.destroyed && c.res.write(chunk));
    };
    c.res.on('drain', pump);
    pump();
  };

  before(async () => {
    fleet = await startFleet({ 'big-json': big('json'), 'big-sse': big('sse'), endless });
  });
  after(() => fleet.close());

  it('every large answer arrives whole (more reads than slots, so reads wait their turn)', async () => {
    const urls = Array.from({ length: 12 }, (_, i) => `${fleet.origin}/${i % 2 ? 'big-json' : 'big-sse'}?n=${i}`);
    const results = await probeMany(
      urls.map((url) => ({ url })),
      { concurrency: 12, perHost: 12, timeoutMs: 20_000 },
    );
    for (const r of results) {
      assert.equal(`${r.verdict}/${r.reason}`, 'live/ok', r.url);
      assert.equal(r.tools?.length, 1500);
      assert.equal(r.tools?.[1499], 'tool_1499');
      // Definitions are kept for 500 tools (clipped for storage); each one's text arrived intact.
      assert.equal(r.snapshot?.tools.length, 500);
      for (const t of r.snapshot!.tools) assert.equal(t.description, tools[Number(t.name.slice(5))]!.description);
    }
  });

  it('endless bodies end as review/oversize, and the probes after them still run', async () => {
    const urls = [...Array.from({ length: 10 }, (_, i) => `${fleet.origin}/endless?n=${i}`), `${fleet.origin}/ok-json`];
    const results = await probeMany(
      urls.map((url) => ({ url })),
      { concurrency: 10, perHost: 10, timeoutMs: 20_000, maxBodyBytes: 256 * 1024 },
    );
    assert.deepEqual(
      results.map((r) => `${r.verdict}/${r.reason}`),
      [...Array(10).fill('review/oversize'), 'live/ok'],
    );
  });
});
