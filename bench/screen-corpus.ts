/**
 * Screening recall and false positives on the fresh corpus (test/screen/fresh/, written by someone who had not
 * read src/screen/), plus the other honest corpora, and the time per tool on an 8-tool and a 500-tool list.
 * A poisoned case is caught when screening returns at least one finding for its tool; any finding on an honest
 * tool is a false positive. Run: npx tsc -p . && node dist/bench/screen-corpus.js [--verbose]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { screenTools, type Finding, type ToolSnapshot } from '../src/screen/screen.js';

const dir = new URL('../../test/screen/', import.meta.url);
const read = (name: string) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
const verbose = process.argv.includes('--verbose');

interface FreshCase {
  family: string;
  why: string;
  tool: ToolSnapshot;
}
const poisoned: FreshCase[] = read('fresh/poisoned.json').cases;
const freshHonest: ToolSnapshot[] = read('fresh/honest.json').tools;
const honest: ToolSnapshot[] = read('honest.json').tools;
const benign: ToolSnapshot[] = readdirSync(new URL('benign/', dir))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => read(`benign/${f}`).tools as ToolSnapshot[]);
const oldPoisoned: ToolSnapshot[] = (read('poisoned.json').cases as Array<{ tool: ToolSnapshot }>).map((c) => c.tool);

const show = (fs: Finding[]) => fs.map((f) => `    ${f.field} ${f.rule}: ${f.excerpt}`).join('\n');

// Recall per family.
const families = new Map<string, { caught: number; total: number }>();
const missed: FreshCase[] = [];
for (const c of poisoned) {
  const found = screenTools([c.tool]);
  const f = families.get(c.family) ?? { caught: 0, total: 0 };
  families.set(c.family, f);
  f.total++;
  if (found.length > 0) f.caught++;
  else missed.push(c);
  if (verbose && found.length > 0) console.log(`  caught ${c.family} / ${c.tool.name}:\n${show(found)}`);
}
console.log('fresh poisoned corpus (test/screen/fresh/poisoned.json), caught = at least one finding:');
for (const [family, { caught, total }] of [...families].sort(([a], [b]) => (a < b ? -1 : 1)))
  console.log(`  ${family.padEnd(22)} ${caught}/${total}`);
const caught = poisoned.length - missed.length;
console.log(`  ${'total'.padEnd(22)} ${caught}/${poisoned.length} (${((100 * caught) / poisoned.length).toFixed(1)}%)`);
for (const c of missed) console.log(`  missed: ${c.family} / ${c.tool.name}: ${c.why}`);

// False positives.
for (const [label, tools] of [
  ['fresh honest (test/screen/fresh/honest.json)', freshHonest],
  ['honest (test/screen/honest.json)', honest],
  ['npm servers (test/screen/benign/)', benign],
] as const) {
  const found = screenTools(tools);
  const flagged = new Set(found.map((f) => f.tool)).size;
  console.log(`${label}: ${tools.length} tools, ${flagged} flagged, ${found.length} findings`);
  for (const f of found) console.log(`  FP ${f.tool} ${f.field} ${f.rule}: ${f.excerpt}`);
}
const oldMissed = oldPoisoned.filter((t) => screenTools([t]).length === 0);
console.log(
  `old poisoned corpus (test/screen/poisoned.json): ${oldPoisoned.length - oldMissed.length}/${oldPoisoned.length} caught`,
);

// Time per tool: an 8-tool honest list (the common probe) and a 500-tool list of real and honest tools. CPU time
// (process.cpuUsage) over batches of runs, median of the batches: on a shared machine wall time mostly measures
// the neighbours.
const pool = [...benign, ...honest, ...freshHonest];
const list = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ ...pool[i % pool.length]!, name: `${pool[i % pool.length]!.name}_${i}` }));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [label, tools, perBatch] of [
  ['8-tool honest list', list(8), 100],
  ['500-tool list', list(500), 2],
] as const) {
  for (let i = 0; i < 10; i++) screenTools(tools); // warm up
  const batches: number[] = [];
  for (let b = 0; b < 31; b++) {
    const c = process.cpuUsage();
    for (let r = 0; r < perBatch; r++) screenTools(tools);
    const u = process.cpuUsage(c);
    batches.push((u.user + u.system) / perBatch);
  }
  const us = median(batches);
  console.log(
    `time, ${label}: median ${us.toFixed(0)} µs CPU per list, ${(us / tools.length).toFixed(1)} µs per tool (31 batches of ${perBatch})`,
  );
}
