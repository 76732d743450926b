/**
 * `npm run bench`: onetap vs the official SDK client vs a bare undici floor, same server, same run;
 * then the 10,000-URL scale run and the 512 MiB stream. Prints Markdown (pasted into BENCHMARKS.md).
 * Env: BENCH_N (handshakes per client, default 1000), BENCH_ROUNDS (default 3).
 */
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const N = Number(process.env.BENCH_N ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 16;
const WARMUP = 200;

async function startServer(args: string[]): Promise<{ origin: string; stop: () => void }> {
  const child = spawn(process.execPath, [here('./server.js'), ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', () => reject(new Error('bench server exited')));
  });
  return { origin, stop: () => child.kill() };
}

function runNode(script: string, args: string[], env: Record<string, string> = {}): any {
  const out = execFileSync(process.execPath, ['--expose-gc', here(script), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split('\n').pop()!);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const get = async (url: string) =>
  (await request(url)).body.json() as Promise<{ requests: number; connections: number }>;

const lines: string[] = [];
const say = (s = '') => {
  lines.push(s);
  process.stdout.write(s + '\n');
};

say(
  `## Handshakes: ${N} per client after ${WARMUP} warm-up handshakes, concurrency ${CONCURRENCY}, median of ${ROUNDS} rounds (node ${process.version}, ${new Date().toISOString().slice(0, 10)})`,
);
for (const mode of ['json', 'sse']) {
  const server = await startServer(['fast', mode]);
  const url = `${server.origin}/mcp`;
  const stats: Record<string, { cpu: number[]; wall: number[]; requests: number; connections: number; live: number }> =
    {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const client of ['floor', 'onetap', 'sdk']) {
      const r = runNode('./client.js', [client, url, String(N), String(CONCURRENCY), String(WARMUP)], {
        BENCH_RESET_URL: `${server.origin}/__reset`,
      });
      const { requests, connections } = await get(`${server.origin}/__stats`);
      const s = (stats[client] ??= { cpu: [], wall: [], requests: 0, connections: 0, live: 0 });
      s.cpu.push(r.cpuMs);
      s.wall.push(r.wallMs);
      s.requests = requests;
      s.connections = Math.max(0, connections - 1);
      s.live = r.live;
    }
  }
  server.stop();
  const floorCpu = median(stats.floor!.cpu);
  const sdkCpu = median(stats.sdk!.cpu);
  say();
  say(`### server answering with ${mode === 'json' ? 'application/json' : 'text/event-stream'}`);
  say();
  say(
    '| client | live | client CPU ms / 1,000 | wall ms / 1,000 | requests / 1,000 | new TCP connections | CPU vs SDK | CPU vs floor |',
  );
  say('|---|---|---|---|---|---|---|---|');
  for (const [client, s] of Object.entries(stats)) {
    const per = 1000 / N;
    const cpu = median(s.cpu);
    say(
      `| ${client} | ${s.live}/${N} | ${Math.round(cpu * per)} | ${Math.round(median(s.wall) * per)} | ${Math.round(s.requests * per)} | ${s.connections} | ${(cpu / sdkCpu).toFixed(2)}x | ${(cpu / floorCpu).toFixed(2)}x |`,
    );
  }
}

{
  // Whole processes (issue "Fast again"): the CLI as a maintainer runs it against a whole Node process running the
  // official SDK 1.x client, same server and concurrency, each process's own CPU accounting.
  const server = await startServer(['fast', 'json']);
  const w = runNode('./whole-process.js', [server.origin, '1500', '32', '5']);
  server.stop();
  type Run = { cpuMs: number; maxRssMb: number; live: number };
  const runs = w.runs as { onetap: Run[]; sdk: Run[] };
  const ratios = runs.onetap.map((o, i) => o.cpuMs / runs.sdk[i]!.cpuMs);
  const range = (xs: number[], digits = 0) => `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;
  say();
  say(`## Whole processes: 1,500 loopback handshakes at concurrency 32, median of ${w.rounds} rounds (range)`);
  say();
  say('| process | live | CPU ms (user + system) | peak RSS MB |');
  say('|---|---|---|---|');
  for (const [name, rs] of Object.entries(runs))
    say(
      `| ${name === 'onetap' ? '`onetap probe --json --per-host 32`' : 'SDK 1.x `Client` in its own Node process'} | ` +
        `${rs[0]!.live}/1500 | ${Math.round(median(rs.map((r) => r.cpuMs)))} (${range(rs.map((r) => r.cpuMs))}) | ` +
        `${median(rs.map((r) => r.maxRssMb)).toFixed(1)} |`,
    );
  say();
  say(
    `onetap's CPU vs the SDK process's, round by round: median **${median(ratios).toFixed(2)}x** ` +
      `(${range(ratios, 2)}; target <= 0.40x); the first round fills the count cache, the rest load no tokenizer ` +
      `(first round ${ratios[0]!.toFixed(2)}x).`,
  );
}

const fleet = await startServer(['fleet']);
try {
  const many = runNode('./scale.js', [fleet.origin, 'many']);
  say();
  say('## 10,000 URLs at concurrency 256 (70% live, 30% faults incl. hangs; timeout 2 s, one retry)');
  say();
  say(`wall ${Math.round(many.wallMs)} ms, peak RSS ${many.peakRssMb} MB (target <= 200 MB)`);
  say();
  say('| verdict/reason | count |');
  say('|---|---|');
  for (const [k, v] of Object.entries(many.byVerdict as Record<string, number>).sort()) say(`| ${k} | ${v} |`);
  const r = runNode('./refresh.js', [fleet.origin]);
  say();
  say(
    `## refresh of ${r.entries.toLocaleString('en')} entries at full concurrency (each request answered after ${r.delayMs} ms)`,
  );
  say();
  const line = (label: string, m: { wallMs: number; slowestProbeMs: number; ratio: number }) =>
    say(
      `- ${label}: wall ${Math.round(m.wallMs)} ms vs the slowest single probe ${m.slowestProbeMs} ms: **${m.ratio.toFixed(2)}x**; fixed overhead ${Math.round(m.wallMs - m.slowestProbeMs)} ms`,
    );
  say(`${r.live}/${r.entries} live (target: wall <= 1.2x the slowest single probe)`);
  say();
  line('cold process (first refresh)', r.cold);
  line('warm process (median of 5 refreshes)', r.warm);
  say(`  (warm ratios ranged ${r.warm.minRatio.toFixed(2)}x to ${r.warm.maxRatio.toFixed(2)}x)`);
  say();
  say(
    `history store (text history, in-memory index): ${r.perObservationUs.toFixed(1)} µs per observation written (20 runs x 1,000, one append per run), ${r.perLookupUs.toFixed(1)} µs per history lookup`,
  );
  const profiled = runNode('./refresh-profile.js', [fleet.origin]);
  say();
  say(
    `### Where a warm refresh's time goes (one refresh of 1,000 entries under V8's profiler: ${profiled.totalMs} ms ` +
      `sampled, wall ${Math.round(profiled.warm.wallMs)} ms, slowest probe ${profiled.warm.slowestProbeMs} ms)`,
  );
  say();
  say('| where | ms | share |');
  say('|---|---|---|');
  for (const x of (profiled.shares as Array<{ where: string; ms: number; share: number }>).slice(0, 8))
    say(`| ${x.where} | ${x.ms} | ${(x.share * 100).toFixed(1)}% |`);
  say();
  say('The functions with the most samples:');
  say();
  say('| function | ms | share |');
  say('|---|---|---|');
  for (const x of (profiled.functions as Array<{ fn: string; ms: number; share: number }>).slice(0, 8))
    say(`| ${x.fn} | ${x.ms} | ${(x.share * 100).toFixed(1)}% |`);
  const huge = runNode('./scale.js', [fleet.origin, 'huge']);
  say();
  say('## A server streaming 512 MiB');
  say();
  say(
    `verdict ${huge.verdict} (${huge.problem}), probe ended in ${Math.round(huge.durationMs)} ms (target < 2,000), RSS rise ${huge.rssRiseMb} MB (target < 50)`,
  );
  say();
  say('## Peak RSS of a whole `onetap probe --json` process (concurrency 256, timeout 2 s)');
  say();
  say('| run | URLs | wall ms | CPU ms | peak RSS MB | output MB |');
  say('|---|---|---|---|---|---|');
  const labels: Record<string, string> = {
    hostile: '512 endless bodies first (every probe in flight reads one), then the scale mix (target <= 200 MB)',
    'hostile-only': 'the 512 endless bodies alone',
    plain: 'the scale mix',
    matrix: 'the scale mix with --matrix (every profile per URL)',
    'hostile --no-optimize-for-size':
      "the hostile run with V8's default heap sizing (`node --no-optimize-for-size bin/onetap`)",
  };
  for (const [run, label] of Object.entries(labels)) {
    const [mode, flags = ''] = run.split(' ');
    const m = runNode('./cli-memory.js', [fleet.origin, mode!], { BENCH_NODE_FLAGS: flags });
    say(`| ${label} | ${m.urls} | ${m.wallMs} | ${m.cpuMs} | ${m.peakRssMb} | ${m.outputMb} |`);
  }
} finally {
  fleet.stop();
}

say();
say('## The history index: 2 years x 100 servers x 12 tools, every row with its evidence');
say();
say(
  "Cold: a new store's first query reads and validates every line; the floor is JSON.parse of every line alone. Warm: a query when",
);
say(
  "nothing changed (file sizes and times only), and after one more run was appended (that month's file is read again).",
);
say();
say(
  '| runs | observations | text MB | gzip MB | bytes / observation | JSON.parse floor ms | cold ms | cold vs floor | warm ms | after an append ms | status model of 100 ms | index heap MB |',
);
say('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const cadence of ['weekly', 'daily']) {
  const h = runNode('./history.js', [cadence]);
  say(
    `| ${cadence}, ${h.runs} | ${h.observations.toLocaleString('en')} | ${h.mb.toFixed(1)} | ${h.gzipMb.toFixed(2)} | ${h.bytesPerObservation} | ${Math.round(h.floorMs)} | ${Math.round(h.coldMs)} | ${h.coldVsFloor.toFixed(2)}x | ${h.warmMs.toFixed(1)} | ${Math.round(h.appendedMs)} | ${Math.round(h.statusMs)} | ${h.heapMb.toFixed(1)} |`,
  );
}

say();
say('## The PostgreSQL store beside the text history');
say();
const pgMissing = await (await import('../test/postgres.js')).postgresMissing();
if (pgMissing) {
  say(`Skipped: ${pgMissing}.`);
} else {
  const w = runNode('./pg-store.js', ['write']);
  say(
    `Writing: ${w.observations.toLocaleString('en')} observations with their evidence in runs of 1,000, one transaction (PostgreSQL) or one append (text) per run:`,
  );
  say(
    `PostgreSQL ${Math.round(w.pgPerSecond).toLocaleString('en')} observations/s, the text history ${Math.round(w.textPerSecond).toLocaleString('en')}/s (PostgreSQL takes ${w.pgVsText.toFixed(2)}x the text history's time);`,
  );
  say(`the database holds ${w.mbPer1000.toFixed(2)} MB per 1,000 observations (tables, TOAST and indexes).`);
  say();
  say(
    'Reading, ms: the status model computed from each store (median of 3); then `onetap serve` over it, the status page (`/`) asked first (cold: the model',
  );
  say(
    'computed) and again (warm, median of 3: serve keeps the model until a run is recorded or its 5-minute clock steps), and `/api/servers` (median of 3).',
  );
  say(
    'PostgreSQL as autovacuum leaves it after the inserts (VACUUM ANALYZE). A fleet of 25,000 servers is measured on PostgreSQL alone.',
  );
  say();
  say(
    '| servers x daily runs | observations | database MB | PostgreSQL model | page cold | warm | /api/servers | text model | page cold | warm | /api/servers | model: PostgreSQL vs text |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [servers, days] of [
    ['100', '730'],
    ['2000', '30'],
    ['25000', '30'],
  ] as const) {
    const s = runNode('./pg-store.js', ['status', servers, days]);
    const cells = (x: { compute: number; coldPage: number; warmPage: number; api: number }) =>
      [x.compute, x.coldPage, x.warmPage, x.api]
        .map((n) => (n < 10 ? n.toFixed(1) : String(Math.round(n))))
        .join(' | ');
    say(
      `| ${Number(servers).toLocaleString('en')} x ${days} | ${s.observations.toLocaleString('en')} | ${Math.round(s.dbMb)} | ${cells(s.pg)} | ${s.text ? `${cells(s.text)} | ${(s.pg.compute / s.text.compute).toFixed(2)}x` : '- | - | - | - | -'} |`,
    );
  }
}

say();
say('## A run across vantages under load (issue 23)');
say();
if (pgMissing) {
  say(`Skipped: ${pgMissing}.`);
} else {
  const l = runNode('./vantages-load.js', []);
  say(
    `${l.endpoints.toLocaleString('en')} loopback endpoints over ${l.hosts} hosts, \`onetap refresh --vantages a --record\` enqueueing for ${l.workers} \`onetap worker\` processes`,
  );
  say(
    `(concurrency ${l.concurrency} each), the workers, PostgreSQL and the fixture sharing this machine's cores; the peer is the same catalog refreshed in one`,
  );
  say(`process (concurrency ${l.workers * l.concurrency}, the text history), in the same run.`);
  say();
  say('| | wall s | jobs/s | peak RSS MB | database MB |');
  say('|---|---|---|---|---|');
  say(
    `| through ${l.workers} workers | ${(l.wallMs / 1000).toFixed(1)} | ${l.jobsPerSecond} | workers ${l.workerPeakRssMb.join(', ')}; deciding ${l.decidingPeakRssMb} | ${l.databaseMb} |`,
  );
  say(
    `| one process | ${(l.aloneWallMs / 1000).toFixed(1)} | ${Math.round(l.endpoints / (l.aloneWallMs / 1000))} | ${l.alonePeakRssMb} | - |`,
  );
  say();
  say(
    `Through the workers takes ${(l.wallMs / l.aloneWallMs).toFixed(1)}x the time of one process here; ${l.observations.toLocaleString('en')} observations recorded, ${l.planRows.toLocaleString('en')} plan rows.`,
  );
}

say();
say("## Counting a tool list's tokens (issue 24)");
say();
{
  const t = runNode('./tokens.js', []);
  say(
    `Loading the o200k tokenizer (gpt-tokenizer, once per process, when a list is first counted): ${t.loadMs} ms, +${t.rssMb} MB resident, +${t.heapMb} MB heap.`,
  );
  say();
  say('| list | tools | tokens | ms per count | vs JSON.stringify of the list |');
  say('|---|---|---|---|---|');
  for (const l of t.lists)
    say(
      `| ${l.name} | ${l.tools.toLocaleString('en')} | ${l.tokens.toLocaleString('en')} | ${l.countMs} | ${l.vsStringify}x |`,
    );
  say();
  say(
    `In the worker thread a probe counts in (issue 32): the first count ${t.workerFirstMs} ms (starts the thread, loads the tokenizer there), then ${t.workerWarmMs} ms for MANY.`,
  );
  say();
  say('| text | MiB | tokens | ms per MiB |');
  say('|---|---|---|---|');
  for (const p of t.perMiB)
    say(`| ${p.name} | ${p.mib} | ${p.tokens.toLocaleString('en')} | ${p.msPerMiB.toLocaleString('en')} |`);
}

say();
say('## The registry census in one process (issue 25)');
say();
{
  const c = runNode('./census.js', []);
  say(
    `\`onetap census\` over ${c.remotes.toLocaleString('en')} loopback remotes on ${c.hosts.toLocaleString('en')} hosts, among ${c.packageOnly.toLocaleString('en')} servers with a package and no remote (the registry's proportion; the mix of test/fleet/registry.ts; one probe in flight per host, 1 s apart, concurrency 16): wall ${(c.wallMs / 1000).toFixed(1)} s, peak RSS ${c.peakRssMb} MB (goal: at most 300 MB).`,
  );
  say();
  if (!pgMissing) {
    const w = runNode('./census.js', [], { BENCH_CENSUS_WORKERS: '3' });
    say();
    say(
      `Through 3 \`onetap worker\` processes (one vantage, concurrency 16 each, PostgreSQL on the same 2 cores): wall ${(w.wallMs / 1000).toFixed(1)} s (${(w.wallMs / c.wallMs).toFixed(1)}x one process), peak RSS ${w.peakRssMb} MB for the census process, ${w.workerPeakRssMb.join(', ')} MB for the workers.`,
    );
  }
  say();
  say(
    `The official registry (25,805 remotes on 17,712 hosts), assuming ${c.probeS} s per probe over the internet: about ${c.registryMinutes} minutes, bound by its largest host (~2,365 remotes on one Workers subdomain, probed one at a time, 1 s apart); every other host adds little beside it (25,805 x ${c.probeS} s / 16 in flight is ${Math.round((25_805 * c.probeS) / 16 / 60)} minutes).`,
  );
}
