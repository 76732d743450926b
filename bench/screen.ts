/**
 * Screening speed: 1,000 tools with 2 KB descriptions (and a small schema each), median of 7 runs after a warm-up, wall
 * and CPU time. Two texts: real descriptions from the npm corpus (test/screen/benign/) and the hand-written honest
 * corpus, which is dense with the words the rules look for (the slow case). Run: npx tsc -p . && node
 * dist/bench/screen.js
 */
import { readdirSync, readFileSync } from 'node:fs';
import { screenTools, type ToolSnapshot } from '../src/screen/screen.js';

const dir = new URL('../../test/screen/', import.meta.url);
const read = (name: string) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
const npm: string[] = readdirSync(new URL('benign/', dir))
  .flatMap((f) => (read(`benign/${f}`).tools as ToolSnapshot[]).map((t) => t.description ?? ''))
  .filter(Boolean);
const honest: string[] = (read('honest.json').tools as ToolSnapshot[])
  .map((t) => t.description ?? '')
  .filter((d) => d && !d.startsWith('\ufeff'));

function toolsFrom(texts: string[]): ToolSnapshot[] {
  return Array.from({ length: 1000 }, (_, i) => {
    let description = '';
    for (let k = i; description.length < 2048; k++) description += texts[k % texts.length] + '\n\n';
    description = description.slice(0, 2048); // exactly 2 KB (a cut may leave half a sentence; speed is the point)
    return {
      name: `tool_${i}`,
      description,
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Path to the file, relative to the workspace root.' },
          mode: { type: 'string', enum: ['read', 'write'] },
        },
      },
    };
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const [label, texts] of [
  ['npm descriptions', npm],
  ['alarming honest descriptions', honest],
] as const) {
  const tools = toolsFrom(texts);
  const kb = tools.reduce((n, t) => n + (t.description?.length ?? 0), 0) / 1024;
  screenTools(tools);
  const wall: number[] = [];
  const cpu: number[] = [];
  let findings = 0;
  for (let r = 0; r < 7; r++) {
    const c = process.cpuUsage();
    const start = performance.now();
    findings = screenTools(tools).length;
    wall.push(performance.now() - start);
    const u = process.cpuUsage(c);
    cpu.push((u.user + u.system) / 1000);
  }
  console.log(
    `${label}: 1,000 tools, ${kb.toFixed(0)} KB: median ${median(wall).toFixed(1)} ms wall, ${median(cpu).toFixed(1)} ms CPU, ${findings} findings`,
  );
}
