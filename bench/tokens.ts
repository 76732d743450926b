/**
 * `node --expose-gc dist/bench/tokens.js`: what counting a tool list's tokens costs (src/attest/tokens.ts), in a fresh
 * process: loading the tokenizer (wall ms, resident and heap MB it adds, once per process), then counting the three
 * golden lists and a list the size of the largest a registry census found (~518,000 tokens), each beside
 * `JSON.stringify` of the same list (the floor: the text has to be made either way). Prints one JSON line.
 */
import { contextText, countTokens, loadTokenizer } from '../src/attest/tokens.js';
import { AWKWARD, MANY, SMALL } from '../test/fixtures/tool-lists.js';

const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;
const gc = () => (globalThis as { gc?: () => void }).gc?.();
gc();
const before = process.memoryUsage();
const t0 = performance.now();
await loadTokenizer();
const loadMs = performance.now() - t0;
gc();
const after = process.memoryUsage();

const huge = Array.from({ length: 6_000 }, (_, i) => ({ ...MANY[i % MANY.length]!, name: `${MANY[i % MANY.length]!.name}_${i}` }));
const time = (f: () => unknown, rounds: number) => {
  f();
  const t = performance.now();
  for (let i = 0; i < rounds; i++) f();
  return (performance.now() - t) / rounds;
};
const lists = Object.entries({ SMALL, AWKWARD, MANY, huge }).map(([name, tools]) => {
  const rounds = name === 'huge' ? 3 : 200;
  const countMs = time(() => countTokens(tools), rounds);
  const stringifyMs = time(() => contextText(tools), rounds);
  return { name, tools: tools.length, tokens: countTokens(tools), countMs: Math.round(countMs * 1000) / 1000, vsStringify: Math.round((countMs / stringifyMs) * 10) / 10 };
});
process.stdout.write(JSON.stringify({ loadMs: Math.round(loadMs), rssMb: mb(after.rss - before.rss), heapMb: mb(after.heapUsed - before.heapUsed), lists }) + '\n');
