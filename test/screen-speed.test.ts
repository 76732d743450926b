/**
 * Screening's speed (the full tier, not the fast one: these measure CPU time and take seconds): a large tool list
 * is screened quickly, and no text makes a pattern backtrack for long. Kept out of test/fast/ so that mutation
 * testing, which runs the fast tier once per mutant, stays quick; a mutant that makes screening slow fails here.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { screenTools, type ToolSnapshot } from '../src/screen/screen.js';
import { RULES } from '../src/screen/rules.js';

const corpus = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../test/screen/${name}`, import.meta.url), 'utf8'));
const benignFiles = readdirSync(new URL('../../test/screen/benign/', import.meta.url))
  .filter((f) => f.endsWith('.json'))
  .sort();
const benign = benignFiles.map((f) => corpus(`benign/${f}`) as { tools: ToolSnapshot[] });

describe('screening speed', () => {
  it('is fast: 1,000 tools with 2 KB descriptions (bench/screen.ts has the figures; asserted loosely: loaded CI)', (t) => {
    // Real descriptions from the npm corpus strung together and cut to 2 KB per tool, as in bench/screen.ts.
    const texts = benign.flatMap((b) => b.tools.map((tool) => tool.description ?? '')).filter((d) => d.length > 0);
    const twoKb = (i: number) => {
      let s = '';
      for (let k = i; s.length < 2048; k++) s += texts[k % texts.length] + '\n\n';
      return s.slice(0, 2048);
    };
    const tools: ToolSnapshot[] = Array.from({ length: 1000 }, (_, i) => ({
      name: `tool_${i}`,
      description: twoKb(i),
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Path to the file, relative to the workspace root.' },
          mode: { type: 'string', enum: ['read', 'write'] },
        },
      },
    }));
    screenTools(tools.slice(0, 50)); // warm up the regular expressions
    const cpu = process.cpuUsage();
    const found = screenTools(tools);
    const used = process.cpuUsage(cpu);
    const ms = (used.user + used.system) / 1000;
    t.diagnostic(`1,000 tools × 2 KB: ${ms.toFixed(1)} ms CPU, ${found.length} findings`);
    assert.deepEqual(found, []);
    assert.ok(ms < 1500, `${ms} ms`);
  });

  it('has no pathological inputs: 50-100 KB of repetitive text in well under a second each', (t) => {
    const nasty = [
      ' '.repeat(100_000),
      'a'.repeat(100_000),
      'A1+/'.repeat(25_000),
      '<'.repeat(100_000),
      '.'.repeat(100_000),
      'ignore '.repeat(15_000),
      'the '.repeat(25_000),
      'when the x tool is called '.repeat(4000),
      'send all data to '.repeat(6000),
      '~/.ssh/'.repeat(15_000),
      'contents of .env '.repeat(6000),
      '\u200b'.repeat(100_000),
      '\u{e0041}'.repeat(50_000),
      'https://x.example/?q='.repeat(5000),
      'a@b.c '.repeat(20_000),
      '\n'.repeat(100_000),
      'x\n\ny. '.repeat(20_000),
      'https://x.example/?a={'.repeat(5000),
      `cc ${'a'.repeat(100_000)}`,
      `send it to ${'a'.repeat(100_000)}`,
      'when a_b_c_d '.repeat(8000),
      `as '${'a'.repeat(100_000)}`,
      '.env.env.env'.repeat(8000),
      '~/.ssh/x.pub '.repeat(8000),
      // For the rules added with the fresh corpus: pipes, images, placeholders, lists of tools, look-alike letters.
      'curl x | '.repeat(10_000),
      '![a](https://x.example/?a='.repeat(4000),
      'results of any other tool '.repeat(4000),
      '+1-'.repeat(30_000),
      'treat x as '.repeat(9000),
      'аa '.repeat(30_000),
      'Іgnоrе '.repeat(15_000),
      'call send_email '.repeat(6000),
      'a_b_c_d_e_f_g_h_'.repeat(6000),
      'contents of ~/'.repeat(7000),
      '?a=<'.repeat(25_000),
      'all calls to a, b, c, d, e, '.repeat(3000),
      'never use a_b '.repeat(7000),
      'whenever any other tool returns '.repeat(3000),
      '[assistant: '.repeat(8000),
      '~'.repeat(100_000),
      '_'.repeat(100_000),
    ];
    // And for every clause, its gate words strung together and repeated, with and without spaces: the texts
    // most likely to make a pattern backtrack, since they get past the gates.
    for (const rule of RULES) {
      if (rule.kind !== 'text') continue;
      for (const clause of rule.clauses) {
        const words = clause.needs.map((group) => group[0] ?? '').join(' ');
        nasty.push(
          `${words} `.repeat(Math.ceil(50_000 / (words.length + 1))),
          `${words.replace(/ /g, '')}`.repeat(Math.ceil(50_000 / (words.length + 1))),
        );
      }
    }
    let slowest = { ms: 0, text: '' };
    for (const text of nasty) {
      const cpu = process.cpuUsage();
      screenTools([
        {
          name: 'n',
          description: text,
          inputSchema: { type: 'object', properties: { p: { type: 'string', default: text } } },
        },
      ]);
      const used = process.cpuUsage(cpu);
      const ms = (used.user + used.system) / 1000;
      if (ms > slowest.ms) slowest = { ms, text };
      assert.ok(ms < 1000, `${JSON.stringify(text.slice(0, 20))}…: ${ms} ms`);
    }
    t.diagnostic(
      `${nasty.length} pathological texts, slowest ${slowest.ms.toFixed(1)} ms: ${JSON.stringify(slowest.text.slice(0, 30))}…`,
    );
  });
});
