/**
 * `node dist/bench/refresh.js <fleet-origin>`: a refresh of 1,000 entries against the loopback fleet at full
 * concurrency (wall time vs the slowest single probe), and the history store's write cost per observation.
 */
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refresh, TextStore } from '../src/index.js';
import { appendRuns } from '../src/store/text-store.js';
import { historyDir } from '../src/store/lines.js';
import { recordedRow, recordedRun } from '../test/helpers.js';

const origin = process.argv[2]!;
const N = 1000;
const DELAY_MS = 250;
const dir = await mkdtemp(join(tmpdir(), 'onetap-bench-'));
const decision = { by: 'bench', at: '2026-11-30', why: 'bench' };

/** A catalog of the N slow entries in a folder of its own (no history yet: every run is a first run). */
async function catalog(round: number): Promise<string> {
  await mkdir(join(dir, `round-${round}`));
  const path = join(dir, `round-${round}`, 'servers.json');
  await writeFile(
    path,
    JSON.stringify({
      policy: { authOptionalHosts: [], sharedGatewayHosts: [] },
      servers: Array.from({ length: N }, (_, i) => ({
        name: `S${i}`,
        url: `${origin}/slow?delay=${DELAY_MS}&i=${i}`,
        description: 'bench',
        requiresAuth: false,
        headers: {},
        decision,
      })),
      removed: [],
    }),
  );
  return path;
}

/** One refresh of the whole catalog. */
async function measure(round: number) {
  const catalogPath = await catalog(round);
  const t0 = performance.now();
  const result = await refresh({ catalogPath, concurrency: N, perHost: N, allowHttp: true, write: true });
  const wallMs = performance.now() - t0;
  const slowestProbeMs = Math.max(...result.plan.rows.map((r) => r.durationMs));
  return {
    wallMs,
    slowestProbeMs,
    ratio: wallMs / slowestProbeMs,
    live: result.plan.rows.filter((r) => r.verdict === 'live').length,
  };
}
// The first run pays for a cold process (JIT); then five warm runs, reported as median and range.
const cold = await measure(0);
const warmRuns: Awaited<ReturnType<typeof measure>>[] = [];
for (let round = 1; round <= 5; round++) warmRuns.push(await measure(round));
warmRuns.sort((a, b) => a.ratio - b.ratio);
const warm = { ...warmRuns[2]!, minRatio: warmRuns[0]!.ratio, maxRatio: warmRuns[4]!.ratio };
const live = Math.min(cold.live, ...warmRuns.map((r) => r.live));

// Store write cost: 20 runs of 1,000 observations each appended to a fresh text history; then a lookup per URL.
const storeCatalog = join(dir, 'store-bench', 'servers.json');
const rows = Array.from({ length: N }, (_, i) =>
  recordedRow(`S${i}`, { url: `https://s${i}.example/mcp`, durationMs: 120, tools: ['search', 'fetch', 'read'] }),
);
const runs = 20;
const s0 = performance.now();
for (let r = 0; r < runs; r++)
  await appendRuns(historyDir(storeCatalog), [
    recordedRun(new Date(Date.UTC(2026, 10, 1) + r * 86_400_000).toISOString(), rows),
  ]);
const perObservationUs = ((performance.now() - s0) * 1000) / (runs * N);
const store = new TextStore(storeCatalog);
await store.recent('https://s0.example/mcp', 2); // builds the index
const r0 = performance.now();
for (let i = 0; i < N; i++) await store.recent(`https://s${i}.example/mcp`, 2);
const perLookupUs = ((performance.now() - r0) * 1000) / N;

process.stdout.write(
  JSON.stringify({ entries: N, delayMs: DELAY_MS, live, cold, warm, perObservationUs, perLookupUs }) + '\n',
);
