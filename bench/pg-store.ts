/**
 * `node dist/bench/pg-store.js <write|status> [servers] [days]`: the PostgreSQL store beside the text history, on
 * the same records in the same run (ratios, not absolute times). Needs PostgreSQL (`ONETAP_BENCH_POSTGRES`, default
 * the machine's `postgresql://postgres@127.0.0.1:5432/test`); each run uses a schema of its own and drops it.
 * - write: 10 runs of 1,000 observations with their evidence, one transaction (PostgreSQL) or one append (text) per
 *   run: observations written per second, and the database's size per 1,000 observations (tables and indexes).
 * - status: `servers` x `days` daily runs loaded, then `onetap serve`'s status page (`/`) and `/api/servers`
 *   asked cold (a new store and server: the model computed) and warm (the same again: the model serve keeps until
 *   a run is recorded or its clock steps), each store. `compute` is the model alone (`buildStatus`), median of 3.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TextStore, type Evidence, type RecordedRun } from '../src/index.js';
import { migrateStore, openPgStore } from '../src/store/pg-store.js';
import type { Store } from '../src/store/store.js';
import { historyDir } from '../src/store/lines.js';
import { appendRuns } from '../src/store/text-store.js';
import { startServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { buildStatus } from '../src/status/build.js';
import { catalogOf, recordedRow, recordedRun, server } from '../test/helpers.js';
import { FIXTURE } from '../test/fixtures/record-observations.js';

const [mode = 'write', serversArg, daysArg] = process.argv.slice(2);
const BASE = process.env.ONETAP_BENCH_POSTGRES ?? 'postgresql://postgres@127.0.0.1:5432/test';
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 5);
const evidence = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{ scenario: string; evidence: Evidence }>).find(
  (r) => r.scenario === 'ok-json',
)!.evidence;

const urlOf = (i: number) => `https://mcp.server-number-${i}.example.com/mcp`;

/** One daily run of `servers` rows as the prober records a live server (one in ten fails one day in twenty). */
function run(day: number, servers: number): RecordedRun {
  const at = new Date(START + day * DAY).toISOString();
  return recordedRun(
    at,
    Array.from({ length: servers }, (_, i) =>
      recordedRow(
        `Server number ${i}`,
        {
          url: urlOf(i),
          durationMs: 300 + ((i * day) % 500),
          serverName: `server-${i}`,
          serverVersion: '1.0.0',
          protocolVersion: '2024-11-05',
          sessionId: true,
          ...(i % 10 === 0 && day % 20 === 0
            ? {
                verdict: 'failed' as const,
                reason: 'timeout' as const,
                reasons: ['timeout' as const],
                error: 'TIMEOUT on initialize',
              }
            : {}),
          tools: Array.from({ length: 12 }, (_, t) => `tool_${t}_of_server_${i}`),
          toolsHash: (i.toString(16) + 'a'.repeat(16)).slice(0, 16),
          toolsDigest: 'b'.repeat(64),
          evidence,
          probe: {
            version: '0.3.0',
            profileDigest: 'c'.repeat(16),
            requiresAuth: false,
            timeoutMs: null,
            matrix: false,
            headers: [],
          },
        },
        { acceptedHash: (i.toString(16) + 'a'.repeat(16)).slice(0, 16), snapshotSha256: 'd'.repeat(64) },
      ),
    ),
  );
}

const none = { snapshots: [], lock: null, files: [], rewriteSnapshots: false };
const time = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function admin<R>(text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: BASE });
  await c.connect();
  try {
    return (await c.query(text)).rows as R[];
  } finally {
    await c.end();
  }
}

const schema = `bench_${mode}_${process.pid}`;
const url = `${BASE}${BASE.includes('?') ? '&' : '?'}schema=${schema}`;
const dir = await mkdtemp(join(tmpdir(), `onetap-pg-bench-${mode}-`));
const catalogPath = join(dir, 'servers.json');
await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await migrateStore(url);
const pgStore = await openPgStore(url);
const text = new TextStore(catalogPath);
try {
  if (mode === 'write') {
    const runs = Array.from({ length: 10 }, (_, d) => run(d, 1_000));
    const pgMs = median(
      await Promise.all(
        [0].map(() =>
          time(async () => {
            for (const r of runs) await pgStore.record(r, none);
          }),
        ),
      ),
    );
    const textMs = await time(async () => {
      for (const r of runs) await text.record(r, none);
    });
    const [size] = await admin<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${schema}' AND c.relkind = 'r'`,
    );
    const observations = runs.length * 1_000;
    process.stdout.write(
      JSON.stringify({
        observations,
        pgPerSecond: observations / (pgMs / 1000),
        textPerSecond: observations / (textMs / 1000),
        pgVsText: pgMs / textMs,
        mbPer1000: Number(size!.bytes) / 1e6 / (observations / 1000),
      }) + '\n',
    );
  } else {
    const servers = Number(serversArg ?? 100);
    const days = Number(daysArg ?? 730);
    const catalog = catalogOf(Array.from({ length: servers }, (_, i) => server(`Server number ${i}`, urlOf(i))));
    await writeFile(catalogPath, JSON.stringify(catalog));
    const loadStart = performance.now();
    // Up to 2,000 servers, every run is recorded through the PostgreSQL store and the same runs appended to a text
    // history in one go. A fleet is loaded into PostgreSQL alone (a text history of 2 GB is not a fleet's store):
    // its first day recorded, the other days copied from it in SQL with their dates changed (the writer's lines).
    const fleet = servers > 2_000;
    const runs: RecordedRun[] = [];
    for (let d = 0; d < (fleet ? 1 : days); d++) {
      const r = run(d, servers);
      await pgStore.record(r, none);
      if (!fleet) runs.push(r);
    }
    await appendRuns(historyDir(catalogPath), runs);
    const day0 = new Date(START).toISOString().slice(0, 10);
    for (let d = 1; fleet && d < days; d++) {
      const dayN = new Date(START + d * DAY).toISOString().slice(0, 10);
      await admin(`WITH r AS (INSERT INTO ${schema}.runs (id, started_at, month, aborted, applied, observations, line)
          SELECT replace(id, '${day0}', '${dayN}'), replace(started_at, '${day0}', '${dayN}'), substr('${dayN}', 1, 7), aborted, applied, observations, replace(line, '${day0}', '${dayN}')
          FROM ${schema}.runs WHERE started_at LIKE '${day0}%' RETURNING seq)
        INSERT INTO ${schema}.observations SELECT (SELECT seq FROM r), replace(run_started_at, '${day0}', '${dayN}'), position, url, vantage, replace(observed_at, '${day0}', '${dayN}'), verdict, reason, tools_ref, replace(line, '${day0}', '${dayN}')
          FROM ${schema}.observations o WHERE run_seq = (SELECT min(seq) FROM ${schema}.runs)`);
      if (dayN.slice(0, 7) !== day0.slice(0, 7))
        await admin(
          `INSERT INTO ${schema}.tool_lists SELECT substr('${dayN}', 1, 7), ref, list FROM ${schema}.tool_lists WHERE month = substr('${day0}', 1, 7) ON CONFLICT DO NOTHING`,
        );
    }
    // Settled, as autovacuum leaves a table after inserts: the visibility map set, so a URL's points come from the
    // index alone.
    await admin(`VACUUM ANALYZE ${schema}.observations`);
    await admin(`VACUUM ANALYZE ${schema}.runs`);
    const loadS = (performance.now() - loadStart) / 1000;
    const now = () => new Date(START + (days - 1) * DAY + 12 * 3_600_000);
    /** Cold: a new store behind a new server; warm: the same again (the clock unchanged, so no ETag is sent). */
    const measure = async (open: () => Promise<Store>) => {
      const store = await open();
      const running = await startServer({
        catalogPath,
        port: 0,
        routes: statusRoutes({ catalogPath, store, now }),
        log: () => {},
      });
      const get = async (path: string) => {
        const res = await fetch(running.url + path);
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${path}: ${res.status}`);
      };
      try {
        const compute = median([
          await time(() => buildStatus(catalog, store, now())),
          await time(() => buildStatus(catalog, store, now())),
          await time(() => buildStatus(catalog, store, now())),
        ]);
        const coldPage = await time(() => get('/'));
        const warmPage = median([await time(() => get('/')), await time(() => get('/')), await time(() => get('/'))]);
        const api = median([
          await time(() => get('/api/servers')),
          await time(() => get('/api/servers')),
          await time(() => get('/api/servers')),
        ]);
        return { compute, coldPage, warmPage, api };
      } finally {
        await running.close();
        await store.close();
      }
    };
    const pgTimes = await measure(() => openPgStore(url, { days: 400, now }));
    const textTimes = fleet ? null : await measure(async () => new TextStore(catalogPath, { days: 400, now }));
    const [size] = await admin<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${schema}' AND c.relkind = 'r'`,
    );
    process.stdout.write(
      JSON.stringify({
        servers,
        days,
        observations: servers * days,
        loadS,
        pg: pgTimes,
        text: textTimes,
        dbMb: Number(size!.bytes) / 1e6,
      }) + '\n',
    );
  }
} finally {
  await pgStore.close();
  if (!process.env.BENCH_KEEP_SCHEMA) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await rm(dir, { recursive: true, force: true });
}
