/**
 * `node dist/bench/history.js <weekly|daily>`: the text history's index at 2 years x 100 servers x 12 tools, each
 * row with the evidence of a live server as the prober records it, written as `refresh` writes it. Measured:
 * - the files (MB, gzipped as git stores them, bytes per observation);
 * - cold: a new store's first query, which reads and validates every line (and, as the floor beside it, JSON.parse
 *   of every line alone: the ratio is the index's own cost);
 * - warm: a query when nothing changed (the files' sizes and times only), and after one more run was appended
 *   (that month's file is read again, alone);
 * - the status model of all 100 servers (90 days of verdicts, the last row of each), and the heap the index holds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { TextStore, type Evidence, type RecordedRun } from '../src/index.js';
import { historyDir } from '../src/store/lines.js';
import { appendRuns } from '../src/store/text-store.js';
import { buildStatus } from '../src/status/build.js';
import { catalogOf, recordedRow, recordedRun, server } from '../test/helpers.js';
import { FIXTURE } from '../test/fixtures/record-observations.js';

const cadence = process.argv[2] === 'daily' ? 'daily' : 'weekly';
const SERVERS = 100;
const TOOLS = 12;
const DAYS = 730;
const step = cadence === 'daily' ? 1 : 7;
const DAY = 86_400_000;
const START = Date.UTC(2025, 0, 6);

const evidence = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{ scenario: string; evidence: Evidence }>).find(
  (r) => r.scenario === 'ok-json',
)!.evidence;
const urls = Array.from({ length: SERVERS }, (_, i) => `https://mcp.server-number-${i}.example.com/mcp`);

function run(day: number): RecordedRun {
  const at = new Date(START + day * DAY).toISOString();
  return recordedRun(
    at,
    urls.map((url, i) =>
      recordedRow(
        `Server number ${i}`,
        {
          url,
          durationMs: 300 + ((i * day) % 500),
          serverName: `server-${i}`,
          serverVersion: '1.0.0',
          protocolVersion: '2024-11-05',
          sessionId: true,
          // One server in ten fails one day in twenty; tool lists change every quarter.
          ...(i % 10 === 0 && day % 20 === 0
            ? {
                verdict: 'failed' as const,
                reason: 'timeout' as const,
                reasons: ['timeout' as const],
                error: 'TIMEOUT on initialize',
              }
            : {}),
          tools: Array.from({ length: TOOLS }, (_, t) => `tool_${t}_of_server_${i}_v${Math.floor(day / 91)}`),
          toolsHash: (i.toString(16) + 'a'.repeat(16)).slice(0, 16),
          toolsDigest: 'b'.repeat(64),
          evidence,
          probe: {
            version: '0.2.0',
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

const dir = await mkdtemp(join(tmpdir(), `onetap-history-${cadence}-`));
const catalogPath = join(dir, 'servers.json');
const runs: RecordedRun[] = [];
for (let day = 0; day < DAYS; day += step) runs.push(run(day));
await appendRuns(historyDir(catalogPath), runs);

const files = readdirSync(historyDir(catalogPath))
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => join(historyDir(catalogPath), f));
const bytes = files.reduce((n, f) => n + readFileSync(f).length, 0);
// What git keeps of it is zlib-compressed per object (and delta-compressed in packs): gzip per file approximates it.
const gzipped = files.reduce((n, f) => n + gzipSync(readFileSync(f)).length, 0);
const observations = runs.length * SERVERS;

const time = async (fn: () => unknown) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// The floor: read every file and JSON.parse every line, nothing else.
const floorMs = median(
  await Promise.all(
    [0, 1, 2].map(() =>
      time(() => {
        for (const f of files) for (const line of readFileSync(f, 'utf8').split('\n')) if (line) JSON.parse(line);
      }),
    ),
  ),
);

global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const colds: number[] = [];
let store = new TextStore(catalogPath);
for (let i = 0; i < 3; i++) {
  store = new TextStore(catalogPath);
  colds.push(await time(() => store.recent(urls[0]!, 3)));
}
global.gc?.();
const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
const warmMs = median(await Promise.all([0, 1, 2, 3, 4].map(() => time(() => store.recent(urls[1]!, 3)))));
const catalog = catalogOf(urls.map((u, i) => server(`Server number ${i}`, u)));
const end = new Date(START + (DAYS - 1) * DAY + 12 * 3_600_000);
const statusMs = median([
  await time(() => buildStatus(catalog, store, end)),
  await time(() => buildStatus(catalog, store, end)),
  await time(() => buildStatus(catalog, store, end)),
]);
await appendRuns(historyDir(catalogPath), [run(DAYS)]);
const appendedMs = await time(() => store.recent(urls[2]!, 3));

process.stdout.write(
  JSON.stringify({
    cadence,
    servers: SERVERS,
    tools: TOOLS,
    runs: runs.length,
    observations,
    files: files.length,
    mb: bytes / 1e6,
    gzipMb: gzipped / 1e6,
    bytesPerObservation: Math.round(bytes / observations),
    floorMs,
    coldMs: median(colds),
    coldVsFloor: median(colds) / floorMs,
    warmMs,
    appendedMs,
    statusMs,
    heapMb,
  }) + '\n',
);
