/**
 * Scale and hostile-body runs, in their own process: `node dist/bench/scale.js <fleet-origin> <mode>`.
 * mode `many`: 10,000 URLs (70% live, 30% spread over fault kinds, hangs included) at concurrency 256.
 * mode `huge`: one server streaming 512 MiB; reports the RSS rise and the probe's duration.
 */
import { probe, probeMany } from '../src/index.js';

const [origin, mode] = process.argv.slice(2) as [string, string];

let peak = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 5);
const mb = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;

if (mode === 'many') {
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
  const refused = 'http://127.0.0.1:9';
  const urls = Array.from({ length: 10_000 }, (_, i) => {
    if (i % 10 < 7) return `${origin}/${i % 2 ? 'ok-json' : 'ok-sse'}?n=${i}`;
    const fault = faults[i % faults.length]!;
    return i % 31 === 0 ? `${refused}/mcp?n=${i}` : `${origin}/${fault}?n=${i}`;
  });
  const t0 = performance.now();
  const results = await probeMany(
    urls.map((url) => ({ url })),
    { concurrency: 256, perHost: 256, timeoutMs: 2_000, retryDelayMs: 100 },
  );
  const wallMs = performance.now() - t0;
  const byVerdict: Record<string, number> = {};
  for (const r of results) byVerdict[`${r.verdict}/${r.reason}`] = (byVerdict[`${r.verdict}/${r.reason}`] ?? 0) + 1;
  clearInterval(sampler);
  process.stdout.write(
    JSON.stringify({
      urls: urls.length,
      wallMs,
      peakRssMb: mb(Math.max(peak, process.resourceUsage().maxRSS * 1024)),
      byVerdict,
    }) + '\n',
  );
} else {
  // Warm up the code paths once so the baseline includes loaded modules.
  await probe(`${origin}/ok-json`);
  global.gc?.();
  const base = process.memoryUsage.rss();
  peak = base;
  const t0 = performance.now();
  const r = await probe(`${origin}/huge-stream`);
  const durationMs = performance.now() - t0;
  clearInterval(sampler);
  process.stdout.write(
    JSON.stringify({
      verdict: `${r.verdict}/${r.reason}`,
      problem: r.evidence?.deciding.steps[0]?.problem,
      durationMs,
      rssRiseMb: mb(peak - base),
    }) + '\n',
  );
}
