/**
 * `node --expose-gc dist/bench/tokens.js`: what counting a tool list's tokens costs (src/attest/tokens.ts), in a fresh
 * process: loading the tokenizer (wall ms, resident and heap MB it adds, once per process), then counting the three
 * golden lists and a list the size of the largest a registry census found (~518,000 tokens), each beside
 * `JSON.stringify` of the same list (the floor: the text has to be made either way); then ms per MiB of text for
 * ordinary text and for the worst cases (long runs, whose pieces go to the byte-pair step in windows, and long pieces
 * of random text, where no window repeats), and the worker thread the probe counts in (its first count, which starts
 * it and loads the tokenizer there, and a warm one). Prints one JSON line.
 */
import { contextText, countTokens, loadCounter } from '../src/attest/tokens.js';
import { AWKWARD, MANY, SMALL } from '../test/fixtures/tool-lists.js';

const MiB = 1024 * 1024;
const mb = (b: number) => Math.round((b / MiB) * 10) / 10;
const gc = () => (globalThis as { gc?: () => void }).gc?.();
gc();
const before = process.memoryUsage();
const t0 = performance.now();
const count = await loadCounter();
const loadMs = performance.now() - t0;
gc();
const after = process.memoryUsage();

const huge = Array.from({ length: 6_000 }, (_, i) => ({
  ...MANY[i % MANY.length]!,
  name: `${MANY[i % MANY.length]!.name}_${i}`,
}));
const time = (f: () => unknown, rounds: number) => {
  f();
  const t = performance.now();
  for (let i = 0; i < rounds; i++) f();
  return (performance.now() - t) / rounds;
};
const lists = Object.entries({ SMALL, AWKWARD, MANY, huge }).map(([name, tools]) => {
  const rounds = name === 'huge' ? 3 : 200;
  const countMs = time(() => count(contextText(tools)), rounds);
  const stringifyMs = time(() => contextText(tools), rounds);
  return {
    name,
    tools: tools.length,
    tokens: count(contextText(tools)),
    countMs: Math.round(countMs * 1000) / 1000,
    vsStringify: Math.round((countMs / stringifyMs) * 10) / 10,
  };
});

/** `n` code points drawn from `[base, base + span)`, seeded (the same every run). */
function seeded(n: number, base: number, span: number): string {
  let x = 7;
  const out: string[] = [];
  for (let i = 0; i < n; i++)
    out.push(String.fromCodePoint(base + ((x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) % span)));
  return out.join('');
}
const texts: Record<string, string> = {
  'ordinary: the huge list': contextText(huge),
  'a run of one letter (4 MiB)': 'a'.repeat(4 * MiB),
  '`ab` repeated (4 MiB)': 'ab'.repeat(2 * MiB),
  'spaces (4 MiB)': ' '.repeat(4 * MiB),
  'random lower-case letters, one piece (1 MiB)': seeded(MiB, 97, 26),
  'random CJK, one piece (1 MiB)': seeded(MiB / 3, 0x4e00, 3_000),
  'random punctuation, one piece (1 MiB)': seeded(MiB, 33, 15),
};
const perMiB = Object.entries(texts).map(([name, text]) => {
  const mib = Buffer.byteLength(text) / MiB;
  const ms = time(() => count(text), 1);
  return { name, mib: Math.round(mib * 100) / 100, tokens: count(text), msPerMiB: Math.round(ms / mib) };
});

const w0 = performance.now();
await countTokens(SMALL);
const workerFirstMs = Math.round(performance.now() - w0);
const w1 = performance.now();
await countTokens(MANY);
const workerWarmMs = Math.round((performance.now() - w1) * 10) / 10;

process.stdout.write(
  JSON.stringify({
    loadMs: Math.round(loadMs),
    rssMb: mb(after.rss - before.rss),
    heapMb: mb(after.heapUsed - before.heapUsed),
    lists,
    perMiB,
    workerFirstMs,
    workerWarmMs,
  }) + '\n',
);
