/**
 * `node dist/bench/vantages-load.js`: a run across vantages under load, on this machine. BENCH_LOAD_N loopback
 * endpoints (default 20,000) over BENCH_LOAD_HOSTS hosts (default 100: ports of 127.0.0.1, served by
 * `bench/server.ts` in its own process) go through 3 `onetap worker` processes of one vantage (concurrency 32 each)
 * from `onetap refresh --vantages a --record`, which enqueues, waits and decides. Measured: the run's wall time, jobs
 * per second, peak RSS (VmHWM) of each worker and of the deciding process, and the database's size after the run
 * (store and queue schemas: tables, indexes, TOAST). The peer in the same run: the same catalog refreshed in one
 * process (`onetap refresh --record`, concurrency 96 = the workers' together, the text history). Needs PostgreSQL
 * (`ONETAP_BENCH_POSTGRES`, default the machine's); the schemas are dropped at the end. Prints one JSON line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrateStore } from '../src/store/pg-store.js';

const N = Number(process.env.BENCH_LOAD_N ?? 20_000);
const HOSTS = Number(process.env.BENCH_LOAD_HOSTS ?? 100);
const WORKERS = 3;
const CONCURRENCY = 32;
const BASE = process.env.ONETAP_BENCH_POSTGRES ?? 'postgresql://postgres@127.0.0.1:5432/test';
const BIN = fileURLToPath(new URL('../../bin/onetap', import.meta.url));
const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const schema = `bench_load_${process.pid}`;
const url = `${BASE}${BASE.includes('?') ? '&' : '?'}schema=${schema}`;

async function sql<R>(text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: BASE });
  await client.connect();
  try {
    return (await client.query(text)).rows as R[];
  } finally {
    await client.end();
  }
}

/** Peak resident memory of a process so far (VmHWM), MB; the last value read before it exits. */
function peakOf(child: ChildProcess): () => number {
  let peak = 0;
  const read = () => {
    // An exited process not yet reaped has no VmHWM line: the last value read stays.
    try {
      peak = Math.max(
        peak,
        Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
      );
    } catch {
      /* gone */
    }
  };
  const timer = setInterval(read, 100);
  child.once('exit', () => clearInterval(timer));
  return () => {
    read();
    return Math.round(peak * 10) / 10;
  };
}

function onetap(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; peak: () => number; done: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr = (stderr + d).slice(-4_000);
  });
  const peak = peakOf(child);
  return { child, peak, done: new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr }))) };
}

const server = spawn(process.execPath, [SERVER, 'fast', 'json', String(HOSTS)], {
  stdio: ['ignore', 'pipe', 'ignore'],
});
const origins = await new Promise<string[]>((resolve) =>
  server.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim().split(' '))),
);
const dir = await mkdtemp(join(tmpdir(), 'onetap-load-'));
const catalog = {
  policy: { authOptionalHosts: [], sharedGatewayHosts: origins.map((o) => new URL(o).host) },
  servers: Array.from({ length: N }, (_, i) => ({
    name: `Server ${i}`,
    url: `${origins[i % HOSTS]}/mcp?n=${i}`,
    description: 'A loopback endpoint',
    requiresAuth: false,
  })),
};
try {
  await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
  await migrateStore(url);
  const across = join(dir, 'across', 'servers.json');
  const here = join(dir, 'here', 'servers.json');
  for (const path of [across, here]) {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, JSON.stringify(catalog));
  }

  // The peer: the same endpoints in one process.
  const t0 = performance.now();
  const alone = onetap([
    'refresh',
    '--catalog',
    here,
    '--record',
    '--json',
    '--allow-http',
    '--concurrency',
    String(WORKERS * CONCURRENCY),
    '--outputs',
    '',
  ]);
  const aloneDone = await alone.done;
  const aloneMs = performance.now() - t0;
  if (aloneDone.code !== 0) throw new Error(`refresh in one process exited ${aloneDone.code}: ${aloneDone.stderr}`);

  const workers = Array.from({ length: WORKERS }, () =>
    onetap(['worker', '--vantage', 'a', '--store', url, '--concurrency', String(CONCURRENCY), '--allow-http']),
  );
  await new Promise((r) => setTimeout(r, 3_000)); // the workers connected and waiting
  const t1 = performance.now();
  const run = onetap([
    'refresh',
    '--catalog',
    across,
    '--record',
    '--json',
    '--allow-http',
    '--vantages',
    'a',
    '--quorum',
    '1',
    '--run-id',
    'load-1',
    '--deadline',
    '3600000',
    '--store',
    url,
    '--outputs',
    '',
  ]);
  const runDone = await run.done;
  const wallMs = performance.now() - t1;
  if (runDone.code !== 0) throw new Error(`refresh across vantages exited ${runDone.code}: ${runDone.stderr}`);
  const workerPeaks = workers.map((w) => w.peak());
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.done));

  const [size] = await sql<{
    bytes: string;
  }>(`SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname IN ('${schema}', '${schema}_queue') AND c.relkind = 'r'`);
  const [counts] = await sql<{ seen: string; rows: string }>(
    `SELECT (SELECT count(*) FROM "${schema}".vantage_observations) AS seen, (SELECT count(*) FROM "${schema}".observations) AS rows`,
  );
  process.stdout.write(
    JSON.stringify({
      endpoints: N,
      hosts: HOSTS,
      workers: WORKERS,
      concurrency: CONCURRENCY,
      wallMs: Math.round(wallMs),
      jobsPerSecond: Math.round(N / (wallMs / 1_000)),
      workerPeakRssMb: workerPeaks,
      decidingPeakRssMb: run.peak(),
      databaseMb: Math.round((Number(size!.bytes) / 1024 / 1024) * 10) / 10,
      observations: Number(counts!.seen),
      planRows: Number(counts!.rows),
      aloneWallMs: Math.round(aloneMs),
      alonePeakRssMb: alone.peak(),
    }) + '\n',
  );
} finally {
  server.kill();
  await rm(dir, { recursive: true, force: true });
  if (!process.env.BENCH_LOAD_KEEP)
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`).catch(
      () => {},
    );
}
