/**
 * Whole processes side by side (issue "Fast again"): `onetap probe --json` over N loopback handshakes at concurrency
 * C against a whole Node process running the official SDK 1.x client over the same N (`client.js sdk`, no warm-up),
 * the same server and concurrency, alternating, ROUNDS times. Each process's CPU is its own accounting as it exits
 * (`cpu-at-exit.ts`). `node dist/bench/whole-process.js <origin> [n=1500] [concurrency=32] [rounds=5]`; prints JSON.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const [origin, nText = '1500', concText = '32', roundsText = '5'] = process.argv.slice(2) as [string, ...string[]];
const [n, concurrency, rounds] = [Number(nText), Number(concText), Number(roundsText)];
const hook = pathToFileURL(here('./cpu-at-exit.js')).href;
const dir = mkdtempSync(join(tmpdir(), 'onetap-bench-whole-'));
const BIN = here('../../bin/onetap');

/** Runs `args` under node with the exit hook; its CPU, peak RSS and how many of the N it found live. */
function measure(args: string[], env: Record<string, string>, live: (stdout: string) => number) {
  const file = join(dir, 'cpu.json');
  rmSync(file, { force: true });
  const r = spawnSync(process.execPath, [`--import=${hook}`, ...args], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    env: { ...process.env, ...env, BENCH_CPU_FILE: file },
  });
  if (r.status !== 0) throw new Error(`${args.slice(0, 2).join(' ')} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
  return { ...(JSON.parse(readFileSync(file, 'utf8')) as { cpuMs: number; maxRssMb: number }), live: live(r.stdout) };
}

const urls = Array.from({ length: n }, (_, i) => `${origin}/mcp?n=${i}`);
const runs: Record<'onetap' | 'sdk', Array<{ cpuMs: number; maxRssMb: number; live: number }>> = {
  onetap: [],
  sdk: [],
};
const cache = join(dir, 'counts');
for (let round = 0; round < rounds; round++) {
  runs.sdk.push(
    measure([here('./client.js'), 'sdk', urls[0]!, String(n), String(concurrency), '0'], {}, (out) => {
      return (JSON.parse(out.trim().split('\n').pop()!) as { live: number }).live;
    }),
  );
  // As a maintainer runs it: the user's count cache kept between runs (the first round fills it).
  runs.onetap.push(
    measure(
      [BIN, 'probe', '--json', '--concurrency', String(concurrency), '--per-host', String(concurrency), ...urls],
      { ONETAP_CACHE_DIR: cache },
      (out) => (JSON.parse(out) as Array<{ verdict: string }>).filter((x) => x.verdict === 'live').length,
    ),
  );
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ n, concurrency, rounds, runs })}\n`);
