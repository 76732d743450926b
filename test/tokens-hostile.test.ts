/**
 * A tool list cannot stall a run through its token count (issue 32): loopback servers whose one tool carries a
 * description as long as a body may be (4 MiB) of one repeated character, of `ab` repeated, of random letters (the
 * slowest text to count), or a special token's name; probed beside an ordinary server. Each probe finishes within its
 * timeout with its count (or, past the count's budget, `tokens: null` and why), the ordinary probe keeps its latency,
 * the count's wait is not in `durationMs`, and a list counted once in the process is not counted again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { observationSchema, probe, probeJson, probeMany, PROBE_DEFAULTS } from '../src/index.js';
import { contextText, countsSent, countTokens, loadCounter, type Counter } from '../src/attest/tokens.js';
import { initResult, json, startFleet, type Ctx, type Fleet } from './fleet/fleet.js';

interface Tool {
  name: string;
  description: string;
  inputSchema: unknown;
}

/** One tool whose description fills a body up to PROBE_DEFAULTS.maxBodyBytes (less room for the envelope). */
const filling = (text: (chars: number) => string): Tool[] => [
  { name: 'run', description: text(PROBE_DEFAULTS.maxBodyBytes - 256), inputSchema: { type: 'object' } },
];
const repeated = (unit: string) => filling((n) => unit.repeat(Math.floor(n / unit.length)));
/** Seeded random lower-case letters: one pre-tokenizer piece no window of which repeats. */
const randomLetters = (n: number) => {
  let x = 11;
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = 97 + ((x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) % 26);
  return out.toString('latin1');
};

const LISTS: Record<string, Tool[]> = {
  'run-a': repeated('a'),
  'run-ab': repeated('ab'),
  random: filling(randomLetters),
  special: [
    {
      name: 'strip',
      description: 'Removes <|endoftext|> and <|im_start|> markers from a transcript.',
      inputSchema: { type: 'object' },
    },
  ],
  same: [
    {
      name: 'lookup',
      description: 'Looks a word up in the dictionary.',
      inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
    },
  ],
  slow: [
    {
      name: 'search',
      description: 'Search the docs.',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    },
  ],
};
/**
 * The ordinary server answers tools/list this long after it was asked (so it is in flight while the others are
 * counted).
 */
const HOLD_MS = 500;
/** Hostile tool lists sent so far, and how many had been sent when the ordinary server answered. */
const sent = { hostile: 0, beforeSlowAnswered: [] as number[] };

const serve =
  (scenario: string) =>
  (c: Ctx): void => {
    if (!c.msg || c.msg.id === undefined) {
      c.res.writeHead(202);
      c.res.end();
      return;
    }
    if (c.msg.method === 'initialize') {
      json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result: initResult(scenario) });
      return;
    }
    const answer = () => json(c.res, 200, { jsonrpc: '2.0', id: c.msg!.id, result: { tools: LISTS[scenario] } });
    if (scenario !== 'slow') {
      if (scenario.startsWith('run-')) sent.hostile++;
      answer();
      return;
    }
    setTimeout(() => {
      sent.beforeSlowAnswered.push(sent.hostile);
      answer();
    }, HOLD_MS);
  };

let fleet: Fleet;
let count: Counter;
before(async () => {
  fleet = await startFleet(Object.fromEntries(Object.keys(LISTS).map((s) => [s, serve(s)])));
  count = await loadCounter();
});
after(async () => {
  await fleet.close();
});

describe('a tool list cannot stall a run through its token count', () => {
  it('4 MiB of one character and of `ab`: both probes finish within their timeout, counted; an ordinary probe in flight meanwhile keeps its latency', {
    timeout: 120_000,
  }, async () => {
    const timeoutMs = 10_000;
    const alone = await probe(fleet.url('slow'), { timeoutMs });
    assert.equal(alone.verdict, 'live');
    const started = performance.now();
    const [a, ab, slow] = await probeMany(
      ['run-a', 'run-ab', 'slow'].map((s) => ({ url: fleet.url(s) })),
      { timeoutMs, concurrency: 3 },
    );
    const wallMs = performance.now() - started;

    assert.ok(wallMs < timeoutMs, `the run took ${Math.round(wallMs)} ms`);
    for (const [r, scenario] of [
      [a!, 'run-a'],
      [ab!, 'run-ab'],
    ] as const) {
      assert.equal(`${r.verdict}/${r.reason}`, 'live/ok', scenario);
      assert.equal(
        r.tokens,
        count(contextText(LISTS[scenario]!)),
        `${scenario}: its count (test/fast/tokens.test.ts holds it to the uncapped one)`,
      );
      assert.equal(r.tokensError, null);
    }
    // Both hostile lists reached the prober while the ordinary server held its answer: counting them (hours each,
    // on the event loop, before issue 32) happened while it was in flight.
    assert.deepEqual(sent.beforeSlowAnswered.slice(-1), [2]);
    assert.equal(slow!.verdict, 'live');
    assert.ok(
      slow!.durationMs < alone.durationMs + 3_000,
      `the ordinary probe took ${slow!.durationMs} ms beside them, ${alone.durationMs} ms alone`,
    );
  });

  it("4 MiB of random letters past the count's budget (the probe's own timeout): live, `tokens: null` with why; the " +
    'wait is not in durationMs; the next count works', {
    timeout: 60_000,
  }, async () => {
    const timeoutMs = 1_000;
    const started = performance.now();
    const r = await probe(fleet.url('random'), { timeoutMs });
    const wallMs = performance.now() - started;
    assert.equal(`${r.verdict}/${r.reason}`, 'live/ok');
    assert.equal(r.tokens, null);
    assert.equal(r.tokensError, 'not counted: counting took longer than its 1000 ms budget');
    // The count starts once the timed part is over and waited its whole budget: none of that is the server's latency.
    assert.ok(wallMs - r.durationMs >= timeoutMs - 5, `durationMs ${r.durationMs} of ${Math.round(wallMs)} ms`);
    const { snapshot: _snapshot, ...record } = r;
    assert.equal(observationSchema.parse(record).tokensError, r.tokensError);
    assert.equal(probeJson(r).tokensError, r.tokensError, 'probe --json says why');
    // The worker that overran was ended; the next count starts another.
    const fresh = [{ name: 'after_the_overrun', description: 'Counted by a new worker.', inputSchema: {} }];
    assert.deepEqual(await countTokens(fresh), { tokens: count(contextText(fresh)), tokensError: null });
  });

  it('a description naming a special token (<|endoftext|>) is counted as text: screened as any other, not unprocessable', async () => {
    const r = await probe(fleet.url('special'), { timeoutMs: 10_000 });
    assert.equal(
      `${r.verdict}/${r.reason}`,
      'review/suspicious-tools',
      "chat-template tokens are the screener's business",
    );
    assert.equal(r.tokens, count(contextText(LISTS.special!)));
  });

  it('a list counted once in the process is not counted again (probed twice, at once and after)', async () => {
    const before = countsSent();
    const [first, second] = await Promise.all([probe(fleet.url('same')), probe(fleet.url('same'))]);
    const third = await probe(fleet.url('same'));
    assert.equal(countsSent() - before, 1);
    assert.deepEqual([first.tokens, second.tokens, third.tokens], Array(3).fill(count(contextText(LISTS.same!))));
  });
});
