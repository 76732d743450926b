/**
 * `node dist/bench/census.js`: `onetap census` (a whole process, as a publisher runs it) over BENCH_CENSUS_N loopback
 * remotes (default 20,000) on BENCH_CENSUS_HOSTS hosts (default 2,000: ports of 127.0.0.1, 10 remotes each), the mix of
 * test/fleet/registry.ts, served by this process, among BENCH_CENSUS_PACKAGE_ONLY servers with a package and no remote
 * (default: the registry's proportion, 11,639 beside 20,000). Measured: wall time, peak RSS of the census process
 * (VmHWM), and from them the expected time of the official registry (25,805 remotes on 17,712 hosts; the largest host
 * serves about 2,365 of them, one gateway 1,716; every other host a few), with each probe taking `PROBE_S` (the
 * internet's round trips, not loopback's) and one probe in flight per host, 1 s apart. With BENCH_CENSUS_WORKERS=n (and
 * PostgreSQL, `ONETAP_BENCH_POSTGRES`), the census goes through n `onetap worker` processes of one vantage instead, and
 * their peak RSS is measured too. With BENCH_CENSUS_PAD_BYTES=n, each server.json as served is n bytes larger (a
 * registry of large items: the census keeps them on disk, not in memory). Prints one JSON line.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRegistry } from '../test/fleet/registry.js';

const N = Number(process.env.BENCH_CENSUS_N ?? 20_000);
const HOSTS = Number(process.env.BENCH_CENSUS_HOSTS ?? 2_000);
/** Servers with a package and no remote, in the registry's proportion (15,017 beside its 25,805 remotes). */
const PACKAGE_ONLY = Number(process.env.BENCH_CENSUS_PACKAGE_ONLY ?? Math.round((N * 15_017) / 25_805));
const BIN = fileURLToPath(new URL('../../bin/onetap', import.meta.url));
/** Assumed for the registry: three requests of ~200 ms each over the internet. */
const PROBE_S = 0.6;

const WORKERS = Number(process.env.BENCH_CENSUS_WORKERS ?? 0);
const PAD = Number(process.env.BENCH_CENSUS_PAD_BYTES ?? 0);
const BASE = process.env.ONETAP_BENCH_POSTGRES ?? 'postgresql://postgres@127.0.0.1:5432/test';
const schema = `bench_census_${process.pid}`;
const store = `${BASE}${BASE.includes('?') ? '&' : '?'}schema=${schema}`;

/** A process's peak resident MB so far (VmHWM), read every 100 ms. */
function peakOf(pid: number): { read: () => number; stop: () => void } {
  let peak = 0;
  const read = () => {
    try {
      peak = Math.max(
        peak,
        Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
      );
    } catch {
      /* gone */
    }
    return Math.round(peak * 10) / 10;
  };
  const timer = setInterval(read, 100);
  return { read, stop: () => clearInterval(timer) };
}

const reg = await startRegistry(N, HOSTS, PACKAGE_ONLY, { padBytes: PAD });
const dir = await mkdtemp(join(tmpdir(), 'onetap-census-bench-'));
const workers: Array<{ child: ReturnType<typeof spawn>; peak: ReturnType<typeof peakOf> }> = [];
try {
  if (WORKERS) {
    const { migrateStore } = await import('../src/store/pg-store.js');
    await migrateStore(store);
    for (let i = 0; i < WORKERS; i++) {
      const child = spawn(
        process.execPath,
        [BIN, 'worker', '--vantage', 'a', '--store', store, '--concurrency', '16', '--allow-http'],
        { stdio: 'ignore' },
      );
      workers.push({ child, peak: peakOf(child.pid!) });
    }
    await new Promise((r) => setTimeout(r, 3_000));
  }
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'census',
      '--registry',
      reg.url,
      '--publisher',
      'io.example',
      '--out',
      join(dir, 'census.json'),
      '--allow-private',
      '--allow-http',
      '--timeout',
      '3000',
      ...(WORKERS ? ['--vantages', 'a', '--store', store] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const censusPeak = peakOf(child.pid!);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const peak = censusPeak.read();
  censusPeak.stop();
  if (code !== 0) throw new Error(`census exited ${code}: ${stderr.slice(-2_000)}`);
  const wallMs = performance.now() - t0;
  const perHostChain = (remotes: number) => remotes * (PROBE_S + 1) - 1;
  const registryS = Math.max(perHostChain(2_365), (25_805 * PROBE_S) / 16);
  process.stdout.write(
    JSON.stringify({
      remotes: N,
      hosts: HOSTS,
      packageOnly: PACKAGE_ONLY,
      padBytes: PAD,
      workers: WORKERS,
      wallMs: Math.round(wallMs),
      peakRssMb: peak,
      workerPeakRssMb: workers.map((w) => w.peak.read()),
      probeS: PROBE_S,
      registryMinutes: Math.round(registryS / 60),
    }) + '\n',
  );
} finally {
  for (const w of workers) {
    w.peak.stop();
    w.child.kill('SIGKILL');
  }
  if (WORKERS) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: BASE });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
    await client.end();
  }
  await reg.close();
  await rm(dir, { recursive: true, force: true });
}
