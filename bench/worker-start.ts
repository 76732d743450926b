/**
 * What a worker's code costs a process to load: `node dist/bench/worker-start.js [<checkout> …]` (default: this
 * one; a checkout is a directory with `dist/src/worker/worker.js` built). For each: BENCH_RUNS (default 15) fresh
 * processes each import the worker's module (what `onetap worker` loads before it takes a job, the queue engine
 * itself being loaded when a queue is opened) and read a job as the queue holds it; the median time from spawn to
 * exit, the median RSS at that point, and whether zod was loaded (every ESM resolve recorded). The first checkout is
 * the baseline the others' times are ratios to. Prints Markdown.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const OWN = fileURLToPath(new URL('../..', import.meta.url));
const checkouts = process.argv.slice(2).length ? process.argv.slice(2) : [OWN];
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** The child: records every resolve, imports the worker's module, reads one job (readJob or jobProblem), reports. */
const child = (worker: string, queue: string) => `
import { register } from 'node:module';
let zod = false;
const { port1, port2 } = new MessageChannel();
port1.on('message', (u) => { if (u.includes('/node_modules/zod/')) zod = true; });
port1.unref();
register('data:text/javascript,' + encodeURIComponent(
  'let p; export function initialize(d) { p = d.port; }' +
  'export async function resolve(s, c, n) { const r = await n(s, c); p.postMessage(r.url); return r; }'),
  { data: { port: port2 }, transferList: [port2] });
await import(${JSON.stringify(worker)});
const q = await import(${JSON.stringify(queue)});
const job = { run: { id: 'w', startedAt: '2026-12-01T00:00:00.000Z' }, vantage: 'eu', kind: 'probe',
  url: 'https://mcp.example.com/mcp', name: 'x', requiresAuth: false, headers: {},
  profile: (await import(${JSON.stringify(worker.replace(/worker\/worker\.js$/, 'attest/profile.js'))})).KAI_9000,
  matrix: false, allowHttp: false, perHost: 4, canaries: [] };
const permits = { keyEnv: new Set(), allowHttp: false };
const problem = q.readJob ? q.readJob(job, 'eu', permits).problem : q.jobProblem(job, 'eu', permits);
if (problem) throw new Error(problem);
await new Promise((r) => setImmediate(r));
process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss, zod }));
`;

console.log('| checkout | start to exit (median) | ratio | RSS (median) | zod loaded |');
console.log('|---|---|---|---|---|');
let base: number | undefined;
for (const dir of checkouts) {
  const worker = join(dir, 'dist/src/worker/worker.js');
  if (!existsSync(worker)) throw new Error(`${worker}: not built`);
  const times: number[] = [];
  const rss: number[] = [];
  let zod = false;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const out = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        child(pathToFileURL(worker).href, pathToFileURL(join(dir, 'dist/src/queue/queue.js')).href),
      ],
      { encoding: 'utf8' },
    );
    times.push(performance.now() - started);
    if (out.status !== 0) throw new Error(out.stderr);
    const said = JSON.parse(out.stdout) as { rss: number; zod: boolean };
    rss.push(said.rss / 1024 / 1024);
    zod ||= said.zod;
  }
  const t = median(times);
  base ??= t;
  console.log(
    `| ${dir} | ${t.toFixed(0)} ms | ${(t / base).toFixed(2)} | ${median(rss).toFixed(1)} MB | ${zod ? 'yes' : 'no'} |`,
  );
}
