/**
 * What a server costs and whether it is a copy (pure): the golden o200k counts of three fixed tool lists (written
 * down once from the tokenizer, outside onetap's code), the bounded count of long pieces (a run of one character, of
 * `ab`, of spaces) against the package's own uncapped count, the shared per-list cache, the fingerprints that survive
 * a rename or a rewording, the matching of entries that serve the same set, and the context budget's rule.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens as packageCount, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { contextText, loadCounter, TOKEN_LIMITS, type Counter } from '../../src/attest/tokens.js';
import { LIST_CACHE_ENTRIES, remembered } from '../../src/attest/list-cache.js';
import { toolListSnapshot, toolSetDigests } from '../../src/model/snapshot-hash.js';
import { sameToolsIndex, refuses, type ToolSetPrint } from '../../src/policy/same-tools.js';
import { reviewBudget } from '../../src/decide/drift.js';
import { AWKWARD, MANY, SMALL } from '../fixtures/tool-lists.js';
import type { ToolDefinition } from '../../src/model/snapshot.js';

const MiB = 1024 * 1024;
let count: Counter;
before(async () => {
  count = await loadCounter();
});

/** Counts `text`, and the longest input and the total characters the byte-pair step was given for it. */
function counted(text: string): { tokens: number; longest: number; fed: number } {
  let longest = 0;
  let fed = 0;
  const tokens = count(text, (input) => {
    longest = Math.max(longest, input.length);
    fed += input.length;
  });
  return { tokens, longest, fed };
}

/** A seeded string of `n` code points drawn from `[base, base + span)` (the same every run). */
function seeded(n: number, base: number, span: number, seed = 7): string {
  let x = seed;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    s += String.fromCodePoint(base + (x % span));
  }
  return s;
}

describe('context cost', () => {
  it("golden counts: o200k tokens of the compact list, exactly the issue's expression", () => {
    assert.deepEqual(
      [SMALL, AWKWARD, MANY].map((tools) => count(contextText(tools))),
      [92, 126, 3002],
    );
  });

  it("the counted text: name, description ('' when absent), input_schema ({} when absent); title and annotations are not counted", () => {
    assert.equal(contextText(AWKWARD.slice(1, 2)), '[{"name":"ping","description":"","input_schema":{}}]');
    assert.equal(
      contextText([{ ...SMALL[0]!, title: 'ignored', annotations: { readOnlyHint: true } } as ToolDefinition]),
      contextText([SMALL[0]!]),
    );
  });

  it("text that names a special token (<|endoftext|>) is counted as the text it is; the package's own count throws on it", () => {
    const text = contextText([
      { name: 'strip', description: 'Removes <|endoftext|> and <|im_start|> markers from a transcript.' },
    ]);
    assert.throws(() => packageCount(text), /Disallowed special token/);
    assert.equal(count(text), packageCount(text, { disallowedSpecial: new Set() }));
  });
});

describe('counting is bounded: no piece longer than TOKEN_LIMITS.pieceChars reaches the byte-pair step whole', () => {
  const N = TOKEN_LIMITS.pieceChars;
  // Each against the package's uncapped count (affordable at these lengths): under the cap the same bytes go to the
  // same core; over it, the windows keep only tokens their end cannot have changed (docs/context-cost.md).
  const cases: Array<[string, string]> = [
    ['ordinary text (the large fixture list)', contextText(MANY)],
    ['a piece of exactly the cap', 'x'.repeat(N)],
    ['one character over the cap', 'x'.repeat(N + 1)],
    ['a run of one letter', 'a'.repeat(5 * N + 3)],
    ['a run of spaces before a word', `${' '.repeat(4 * N + 1)}end`],
    ['`ab` repeated', 'ab'.repeat(3 * N + 1)],
    ['`-+` repeated (cut at a fixed length, it counts 4 more per cut)', '-+'.repeat(N + 1)],
    ['a run of a 3-byte character', '字'.repeat(3 * N + 2)],
    ['a run of emoji (surrogate pairs: a window never ends inside one)', '😀'.repeat(2 * N + 1)],
    ['random lower-case letters (one long word)', seeded(4 * N, 97, 26)],
    ['random CJK', seeded(3 * N, 0x4e00, 3000)],
    ['random punctuation', seeded(3 * N, 33, 15)],
  ];
  for (const [label, text] of cases) {
    it(`${label}: the uncapped count`, () => {
      const { tokens, longest } = counted(text);
      assert.equal(tokens, packageCount(text));
      assert.ok(longest <= N, `the byte-pair step was given ${longest} characters at once`);
    });
  }

  // 4 MiB (a body's limit) cannot be counted uncapped (hours), so the reference is derived: when a block's encoding
  // twice over is its encoding twice (checked here, uncapped), any run of blocks encodes as the block's tokens repeated
  // (github/rust-gems crates/bpe, corollaries II and IIIa), so 4 MiB of it has 4 MiB / block as many tokens.
  for (const unit of ['a', 'ab', ' ']) {
    it(`4 MiB of ${JSON.stringify(unit)} repeated: the derived uncapped count, every byte-pair input at most the cap`, () => {
      const block = unit.repeat(2048 / unit.length);
      const once = encode(block);
      assert.deepEqual(encode(block + block), [...once, ...once], 'the block joins itself unchanged');
      const { tokens, longest } = counted(block.repeat((4 * MiB) / block.length));
      assert.equal(tokens, ((4 * MiB) / block.length) * once.length);
      assert.ok(longest <= N);
    });
  }

  it('linear: a long random word (no window repeats) gives the byte-pair step windows of the cap, at most twice its length in all', () => {
    const text = seeded(64 * 1024, 97, 26);
    const { longest, fed } = counted(text);
    assert.ok(longest <= N);
    // A window advances by at least pieceChars - 2 x marginBytes characters (its kept tokens end within one token of
    // its margin): the byte-pair step, quadratic in its input, does at most a fixed amount of work per character.
    assert.ok(
      fed <= (text.length * N) / (N - 2 * TOKEN_LIMITS.marginBytes) + N,
      `fed ${fed} characters for ${text.length}`,
    );
  });
});

describe('the per-list cache (one for every fact worked out from a list)', () => {
  it('works a fact out once per digest, and forgets the least recently used past its bound', () => {
    let worked = 0;
    const work = () => ++worked;
    assert.equal(remembered('test', 'd0', work), 1);
    assert.equal(remembered('test', 'd0', work), 1);
    assert.equal(remembered('other fact', 'd0', work), 2, 'keyed by the fact too');
    for (let i = 1; i <= LIST_CACHE_ENTRIES; i++) remembered('test', `d${i}`, work);
    assert.equal(remembered('test', 'd0', work), worked, 'd0 was the least recently used: worked out again');
    assert.equal(remembered('test', `d${LIST_CACHE_ENTRIES}`, work), LIST_CACHE_ENTRIES + 2, 'the newest is kept');
  });
});

describe('fingerprints of a tool set', () => {
  const digests = (tools: ToolDefinition[]) => toolSetDigests(toolListSnapshot(null, tools).tools);
  const base = digests(SMALL)!;

  it('a renamed copy keeps the name-blind digest; a reworded one keeps only the description-blind digest', () => {
    const renamed = digests(SMALL.map((t, i) => ({ ...t, name: `tool_${i}`, title: `Tool ${i}` })))!;
    assert.equal(renamed.nameBlind, base.nameBlind);
    assert.notEqual(renamed.descriptionBlind, base.descriptionBlind, 'names are part of the interface');
    const reworded = digests(
      SMALL.map((t) => ({
        ...t,
        description: `${t.description} Reworded.`,
        inputSchema: JSON.parse(JSON.stringify(t.inputSchema).replace('What to look for', 'The query')),
      })),
    )!;
    assert.notEqual(reworded.nameBlind, base.nameBlind);
    assert.equal(reworded.descriptionBlind, base.descriptionBlind);
  });

  it('order does not matter; a changed schema changes both; a property named "description" is part of the interface; no tools, no digests', () => {
    assert.deepEqual(digests([...SMALL].reverse()), base);
    const changed = digests([
      SMALL[0]!,
      { ...SMALL[1]!, inputSchema: { type: 'object', properties: { url: { type: 'string' } } } },
    ])!;
    assert.ok(changed.nameBlind !== base.nameBlind && changed.descriptionBlind !== base.descriptionBlind);
    const withParam = (name: string) =>
      digests([
        {
          name: 'note',
          inputSchema: { type: 'object', properties: { [name]: { type: 'string', description: 'free text' } } },
        },
      ])!;
    assert.notEqual(withParam('description').descriptionBlind, withParam('body').descriptionBlind);
    assert.equal(digests([]), null);
  });
});

describe('entries serving the same set', () => {
  const print = (
    name: string,
    url: string,
    d: { tools?: string; names?: string; descriptions?: string },
    toolCount = 2,
  ): ToolSetPrint => ({
    name,
    url,
    toolCount,
    toolsDigest: d.tools ?? null,
    nameBlindDigest: d.names ?? null,
    descriptionBlindDigest: d.descriptions ?? null,
  });
  const known = [
    print('Exact', 'https://a.example/mcp', { tools: 'T1', names: 'N1', descriptions: 'D1' }),
    print('Renamed', 'https://b.example/mcp', { tools: 'T2', names: 'N1', descriptions: 'D2' }),
    print('Reworded', 'https://c.example/mcp', { tools: 'T3', names: 'N3', descriptions: 'D1' }),
    print('Empty', 'https://d.example/mcp', { tools: 'T0', names: 'N0', descriptions: 'D0' }, 0),
    print('Old record', 'https://e.example/mcp', { tools: 'T1' }),
  ];
  const same = sameToolsIndex(known);
  it('each entry once, strongest first, never itself; an empty set matches nothing', () => {
    assert.deepEqual(
      same(print('Candidate', 'https://x.example/mcp', { tools: 'T1', names: 'N1', descriptions: 'D1' })).map((m) => [
        m.name,
        m.digest,
      ]),
      [
        ['Exact', 'tools'],
        ['Old record', 'tools'],
        ['Renamed', 'name-blind'],
        ['Reworded', 'description-blind'],
      ],
    );
    assert.deepEqual(
      same(known[0]!).map((m) => m.name),
      ['Old record', 'Renamed', 'Reworded'],
    );
    assert.deepEqual(
      same(print('Also empty', 'https://y.example/mcp', { tools: 'T0', names: 'N0', descriptions: 'D0' }, 0)),
      [],
    );
  });
  it('a set served under thousands of URLs names at most ten per entry, in one pass', () => {
    const fleet = Array.from({ length: 20_000 }, (_, i) =>
      print(`Copy ${i}`, `https://gw.example/${i}`, { tools: 'T', names: 'N', descriptions: 'D' }),
    );
    const started = performance.now();
    const index = sameToolsIndex(fleet);
    const found = fleet.map((p) => index(p));
    assert.ok(found.every((f) => f.length === 10 && f.every((m) => m.digest === 'tools')));
    assert.ok(performance.now() - started < 2_000, 'linear, not quadratic');
  });
  it('a match refuses an addition unless it is on the description-blind digest alone', () => {
    assert.deepEqual((['tools', 'name-blind', 'description-blind'] as const).map(refuses), [true, true, false]);
  });
});

describe('the context budget (policy.maxToolTokens)', () => {
  const row = (verdict: 'live' | 'review' | 'failed', tokens: number | null | undefined, tokensError?: string) => ({
    verdict,
    reason:
      verdict === 'live' ? ('ok' as const) : verdict === 'review' ? ('tools-changed' as const) : ('timeout' as const),
    reasons: [],
    tokens,
    ...(tokensError ? { tokensError } : {}),
  });
  const cases: Array<[string, ReturnType<typeof row>, number | undefined, string]> = [
    ['live, above the budget', row('live', 5_001), 5_000, 'review/context-budget'],
    ['live, at the budget', row('live', 5_000), 5_000, 'live/ok'],
    ['live, no budget set', row('live', 99_999), undefined, 'live/ok'],
    ['live, recorded before tokens were counted', row('live', undefined), 10, 'live/ok'],
    ['live, no tool list', row('live', null), 10, 'live/ok'],
    [
      'live, too costly to count within its time',
      row('live', null, 'not counted: counting took longer than its 10000 ms budget'),
      10,
      'review/context-budget',
    ],
    [
      'live, too costly to count, no budget set',
      row('live', null, 'not counted: counting took longer than its 10000 ms budget'),
      undefined,
      'live/ok',
    ],
    ['already in review for its tools', row('review', 99_999), 10, 'review/tools-changed'],
    ['failed', row('failed', 99_999), 10, 'failed/timeout'],
  ];
  for (const [label, o, max, expected] of cases) {
    it(label, () => {
      const r = reviewBudget(o, max);
      assert.equal(`${r.verdict}/${r.reason}`, expected);
    });
  }
});
