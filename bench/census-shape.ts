/**
 * A census of the registry's shape (issue "Fast again"): most hosts with one remote (the fixture's mix of kinds),
 * one host with BENCH_SHAPE_BIG live remotes (default 2,400, as the registry's largest), each host resting
 * BENCH_SHAPE_GAP_MS between its probes (default 10: loopback, shortened), concurrency 16, in this process
 * (`runCensus`, as `onetap census` calls it). The floor is what the largest host needs alone: its probes' own
 * durations plus a rest between each two. Prints the census's wall time against it, and the extrapolation to the
 * registry's 1 s rest. JSON on one line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_PROFILES } from '../src/attest/profile.js';
import { runCensus } from '../src/census/census.js';
import { parseOptOut } from '../src/census/hosts.js';
import { kindOf, startRegistry } from '../test/fleet/registry.js';

const BIG = Number(process.env.BENCH_SHAPE_BIG ?? 2_400);
const GAP_MS = Number(process.env.BENCH_SHAPE_GAP_MS ?? 10);

// The big host takes the first BIG remotes of the plain live kind; every other remote has a host of its own.
const hostOf: number[] = [];
let big = 0;
let others = 0;
for (let i = 0; big < BIG; i++) hostOf.push(kindOf(i) === 'small' && big++ < BIG ? 0 : ++others);
const reg = await startRegistry(hostOf.length, others + 1, 0, { hostOf: (i) => hostOf[i]! });
const bigHost = reg.hosts[0]!;
const dir = await mkdtemp(join(tmpdir(), 'onetap-census-shape-'));
const durations: number[] = [];
try {
  const t0 = performance.now();
  const result = await runCensus({
    registry: reg.url,
    publisher: 'io.example',
    out: join(dir, 'census.json'),
    stateDir: join(dir, 'state'),
    resume: false,
    profile: CLIENT_PROFILES['mcp-2025-11-25']!,
    matrix: false,
    optOut: parseOptOut(''),
    expiresAfterDays: 14,
    timeoutMs: 3_000,
    concurrency: 16,
    allowPrivate: true,
    allowHttp: true,
    gapMs: GAP_MS,
    userAgent: 'onetap-bench',
    onProbed: (url, o) => {
      if (new URL(url).host === bigHost) durations.push(o.durationMs);
    },
  });
  const wallMs = performance.now() - t0;
  const probeMs = durations.reduce((a, b) => a + b, 0);
  const floorMs = probeMs + (durations.length - 1) * GAP_MS;
  const meanProbeMs = probeMs / durations.length;
  process.stdout.write(
    `${JSON.stringify({
      remotes: hostOf.length,
      hosts: others + 1,
      big: durations.length,
      gapMs: GAP_MS,
      probed: result.probed,
      wallMs: Math.round(wallMs),
      floorMs: Math.round(floorMs),
      ratio: wallMs / floorMs,
      meanProbeMs,
      // At the registry's 1 s rest, the same overhead over a floor of BIG x (probe + 1 s).
      registryRatio: (BIG * (meanProbeMs + 1_000) + (wallMs - floorMs)) / (BIG * (meanProbeMs + 1_000)),
    })}\n`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
  await reg.close();
}
