#!/usr/bin/env node
// Per-file mutation scores from Stryker's JSON report (reports/mutation/mutation.json), as BENCHMARKS.md gives them.
// Targeted runs (`npx stryker run --mutate <files>` in another checkout) can be laid over it, each for the files it
// mutated:   node scripts/mutation-score.mjs [<checkout>=<file>,<file> …]
// Score: (killed + timed out) / (killed + timed out + survived + no coverage), as Stryker counts it.
import { existsSync, readFileSync } from 'node:fs';

const report = (dir) => JSON.parse(readFileSync(`${dir}/reports/mutation/mutation.json`, 'utf8'));
const merged = report('.');
for (const arg of process.argv.slice(2)) {
  const [dir, list] = arg.split('=');
  if (!list || !existsSync(`${dir}/reports/mutation/mutation.json`)) throw new Error(`expected <checkout>=<file>,<file>, got ${arg}`);
  const files = report(dir).files;
  for (const file of list.split(',')) {
    if (!files[file]) throw new Error(`${dir}: no ${file} in its report`);
    merged.files[file] = files[file];
  }
}
const counted = ['Killed', 'Timeout', 'Survived', 'NoCoverage'];
let all = 0;
let detected = 0;
console.log('| file | score | killed + timeout / mutants | survived | no coverage |\n|---|---|---|---|---|');
for (const [file, f] of Object.entries(merged.files).sort(([a], [b]) => a.localeCompare(b))) {
  const n = (s) => f.mutants.filter((m) => m.status === s).length;
  const total = counted.reduce((t, s) => t + n(s), 0);
  const caught = n('Killed') + n('Timeout');
  all += total;
  detected += caught;
  console.log(`| ${file} | ${(100 * caught / total).toFixed(1)}% | ${caught}/${total} | ${n('Survived')} | ${n('NoCoverage')} |`);
}
console.log(`| **all files** | **${(100 * detected / all).toFixed(1)}%** | ${detected}/${all} | | |`);
