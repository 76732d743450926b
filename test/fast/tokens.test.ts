/**
 * What a server costs and whether it is a copy (pure): the golden o200k counts of three fixed tool lists (written
 * down once from the tokenizer, outside onetap's code), the fingerprints that survive a rename or a rewording, the
 * matching of entries that serve the same set, and the context budget's rule.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { contextText, countTokens, loadTokenizer } from '../../src/attest/tokens.js';
import { toolListSnapshot, toolSetDigests } from '../../src/attest/snapshot.js';
import { sameToolsIndex, refuses, type ToolSetPrint } from '../../src/policy/same-tools.js';
import { reviewBudget } from '../../src/decide/drift.js';
import { AWKWARD, MANY, SMALL } from '../fixtures/tool-lists.js';
import type { ToolDefinition } from '../../src/model/snapshot.js';

describe('context cost', () => {
  it('golden counts: o200k tokens of the compact list, exactly the issue\'s expression', async () => {
    await loadTokenizer();
    assert.deepEqual([SMALL, AWKWARD, MANY].map((tools) => countTokens(tools)), [92, 126, 3002]);
  });

  it('the counted text: name, description (\'\' when absent), input_schema ({} when absent); title and annotations are not counted', () => {
    assert.equal(contextText(AWKWARD.slice(1, 2)), '[{"name":"ping","description":"","input_schema":{}}]');
    assert.equal(contextText([{ ...SMALL[0]!, title: 'ignored', annotations: { readOnlyHint: true } } as ToolDefinition]), contextText([SMALL[0]!]));
  });
});

describe('fingerprints of a tool set', () => {
  const digests = (tools: ToolDefinition[]) => toolSetDigests(toolListSnapshot(null, tools).tools);
  const base = digests(SMALL)!;

  it('a renamed copy keeps the name-blind digest; a reworded one keeps only the description-blind digest', () => {
    const renamed = digests(SMALL.map((t, i) => ({ ...t, name: `tool_${i}`, title: `Tool ${i}` })))!;
    assert.equal(renamed.nameBlind, base.nameBlind);
    assert.notEqual(renamed.descriptionBlind, base.descriptionBlind, 'names are part of the interface');
    const reworded = digests(SMALL.map((t) => ({ ...t, description: `${t.description} Reworded.`, inputSchema: JSON.parse(JSON.stringify(t.inputSchema).replace('What to look for', 'The query')) })))!;
    assert.notEqual(reworded.nameBlind, base.nameBlind);
    assert.equal(reworded.descriptionBlind, base.descriptionBlind);
  });

  it('order does not matter; a changed schema changes both; a property named "description" is part of the interface; no tools, no digests', () => {
    assert.deepEqual(digests([...SMALL].reverse()), base);
    const changed = digests([SMALL[0]!, { ...SMALL[1]!, inputSchema: { type: 'object', properties: { url: { type: 'string' } } } }])!;
    assert.ok(changed.nameBlind !== base.nameBlind && changed.descriptionBlind !== base.descriptionBlind);
    const withParam = (name: string) => digests([{ name: 'note', inputSchema: { type: 'object', properties: { [name]: { type: 'string', description: 'free text' } } } }])!;
    assert.notEqual(withParam('description').descriptionBlind, withParam('body').descriptionBlind);
    assert.equal(digests([]), null);
  });
});

describe('entries serving the same set', () => {
  const print = (name: string, url: string, d: { tools?: string; names?: string; descriptions?: string }, toolCount = 2): ToolSetPrint => ({
    name, url, toolCount, toolsDigest: d.tools ?? null, nameBlindDigest: d.names ?? null, descriptionBlindDigest: d.descriptions ?? null,
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
    assert.deepEqual(same(print('Candidate', 'https://x.example/mcp', { tools: 'T1', names: 'N1', descriptions: 'D1' })).map((m) => [m.name, m.digest]),
      [['Exact', 'tools'], ['Old record', 'tools'], ['Renamed', 'name-blind'], ['Reworded', 'description-blind']]);
    assert.deepEqual(same(known[0]!).map((m) => m.name), ['Old record', 'Renamed', 'Reworded']);
    assert.deepEqual(same(print('Also empty', 'https://y.example/mcp', { tools: 'T0', names: 'N0', descriptions: 'D0' }, 0)), []);
  });
  it('a set served under thousands of URLs names at most ten per entry, in one pass', () => {
    const fleet = Array.from({ length: 20_000 }, (_, i) => print(`Copy ${i}`, `https://gw.example/${i}`, { tools: 'T', names: 'N', descriptions: 'D' }));
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
  const row = (verdict: 'live' | 'review' | 'failed', tokens: number | null | undefined) => ({ verdict, reason: verdict === 'live' ? 'ok' as const : verdict === 'review' ? 'tools-changed' as const : 'timeout' as const, reasons: [], tokens });
  const cases: Array<[string, ReturnType<typeof row>, number | undefined, string]> = [
    ['live, above the budget', row('live', 5_001), 5_000, 'review/context-budget'],
    ['live, at the budget', row('live', 5_000), 5_000, 'live/ok'],
    ['live, no budget set', row('live', 99_999), undefined, 'live/ok'],
    ['live, recorded before tokens were counted', row('live', undefined), 10, 'live/ok'],
    ['live, no tool list', row('live', null), 10, 'live/ok'],
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
