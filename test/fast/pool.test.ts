/** Scheduling and reading helpers (pure): a queue's items in turns by host; runs of a key across pages. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inTurns } from '../../src/util/pool.js';
import { runsOf } from '../../src/util/runs.js';

describe('inTurns', () => {
  const host = (s: string) => s.split('/')[0]!;
  const rows: Array<[string, string[], string[]]> = [
    ['empty', [], []],
    ['one host keeps its order', ['a/1', 'a/2', 'a/3'], ['a/1', 'a/2', 'a/3']],
    [
      'a big host back to back is spread between the others',
      ['big/1', 'big/2', 'big/3', 'x/1', 'y/1', 'x/2'],
      ['big/1', 'x/1', 'y/1', 'big/2', 'x/2', 'big/3'],
    ],
    ['already in turns stays as it is', ['a/1', 'b/1', 'a/2', 'b/2'], ['a/1', 'b/1', 'a/2', 'b/2']],
  ];
  for (const [label, input, want] of rows) it(label, () => assert.deepEqual(inTurns(input, host), want));

  it('20,000 items of one big host and 10,000 others: well under a second, no host twice in a row while others remain', () => {
    const items = [
      ...Array.from({ length: 20_000 }, (_, i) => `big/${i}`),
      ...Array.from({ length: 10_000 }, (_, i) => `h${i}/0`),
    ];
    const t0 = performance.now();
    const out = inTurns(items, host);
    assert.ok(performance.now() - t0 < 1_000);
    assert.equal(out.length, items.length);
    assert.deepEqual(out.slice(0, 3), ['big/0', 'h0/0', 'h1/0']);
    assert.equal(out[10_001], 'big/1');
  });
});

describe('runsOf', () => {
  async function* pages(...list: string[][]) {
    for (const p of list) yield p;
  }
  const collect = async (it: AsyncIterable<[string, string[]]>) => {
    const out: Array<[string, string[]]> = [];
    for await (const r of it) out.push(r);
    return out;
  };
  const key = (s: string) => s[0]!;
  it('a run cut by pages is carried over; empty pages and none at all', async () => {
    assert.deepEqual(await collect(runsOf(pages(['a1', 'a2'], ['a3', 'b1'], [], ['b2'], ['c1']), key)), [
      ['a', ['a1', 'a2', 'a3']],
      ['b', ['b1', 'b2']],
      ['c', ['c1']],
    ]);
    assert.deepEqual(await collect(runsOf(pages(), key)), []);
    assert.deepEqual(await collect(runsOf(pages([], []), key)), []);
  });
});
