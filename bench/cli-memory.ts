/**
 * Peak RSS of a whole `onetap probe --json` process (what a maintainer runs), sampled from /proc every 10 ms:
 * `node dist/bench/cli-memory.js <fleet-origin> <mode>`.
 * mode `hostile`: 10,000 URLs at concurrency 256, the first 512 streaming endless bodies (every probe in flight
 * at the start reads one), then the scale mix (70% live, 30% faults).
 * mode `hostile-only`: those 512 endless bodies alone.
 * mode `matrix` / `plain`: 2,000 URLs of the scale mix with and without --matrix (what the matrix costs).
 * BENCH_NODE_FLAGS: node flags for the onetap process (`--no-optimize-for-size`: V8's default heap sizing).
 * cpuMs: the process's user + system CPU time, from its last sample.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [origin, mode] = process.argv.slice(2) as [string, string];
const BIN = fileURLToPath(new URL('../../bin/onetap', import.meta.url));
const faults = [
  'http-404',
  'http-410',
  'html-200',
  'edge-526',
  'non-retryable-5xx',
  'always-503',
  'hang',
  'init-401',
  'garbage-sse',
  'legacy-sse',
  'rate-limited',
  'reset',
];
const mix = (i: number) =>
  i % 10 < 7 ? `${origin}/${i % 2 ? 'ok-json' : 'ok-sse'}?n=${i}` : `${origin}/${faults[i % faults.length]}?n=${i}`;
const count = mode === 'hostile' ? 10_000 : mode === 'hostile-only' ? 512 : 2_000;
const urls = Array.from({ length: count }, (_, i) =>
  mode.startsWith('hostile') && i < 512 ? `${origin}/${i % 2 ? 'endless-json' : 'endless-sse'}?n=${i}` : mix(i),
);

const args = [
  BIN,
  'probe',
  '--json',
  '--concurrency',
  '256',
  '--per-host',
  '256',
  '--timeout',
  '2000',
  ...(mode === 'matrix' ? ['--matrix'] : []),
  ...urls,
];
const t0 = performance.now();
const child = spawn(
  process.execPath,
  [...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []), ...args],
  { stdio: ['ignore', 'pipe', 'ignore'] },
);
let peakKb = 0;
let cpuTicks = 0;
let bytes = 0;
const sample = () => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    if (m) peakKb = Math.max(peakKb, Number(m[1]));
    // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), counted after the command name's closing parenthesis.
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cpuTicks = Number(fields[11]) + Number(fields[12]);
  } catch {
    /* the process ended */
  }
};
const timer = setInterval(sample, 10);
child.stdout.on('data', (d: Buffer) => {
  bytes += d.length;
});
const code = await new Promise<number | null>((r) => child.on('close', r));
clearInterval(timer);
process.stdout.write(
  JSON.stringify({
    mode,
    urls: urls.length,
    code,
    wallMs: Math.round(performance.now() - t0),
    cpuMs: cpuTicks * 10,
    peakRssMb: Math.round(peakKb / 102.4) / 10,
    outputMb: Math.round(bytes / 104857.6) / 10,
  }) + '\n',
);
