/**
 * Where a warm refresh's time goes: `node dist/bench/refresh-profile.js <fleet-origin>` refreshes 1,000 entries of
 * the fleet's slow route (every request answered after 250 ms) once to warm the process, then once more under V8's
 * CPU profiler, and prints the profile's samples by where they ran: the src/ stage (its folder), a dependency, Node's
 * internals, the garbage collector, or idle (waiting on the network). JSON on the last line, as the other benches.
 */
import { Session } from 'node:inspector/promises';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refresh } from '../src/index.js';

const origin = process.argv[2]!;
const N = 1000;
const dir = await mkdtemp(join(tmpdir(), 'onetap-bench-profile-'));

async function catalog(round: number): Promise<string> {
  await mkdir(join(dir, `round-${round}`));
  const path = join(dir, `round-${round}`, 'servers.json');
  const decision = { by: 'bench', at: '2026-11-30', why: 'bench' };
  const servers = Array.from({ length: N }, (_, i) => ({
    name: `S${i}`,
    url: `${origin}/slow?delay=250&i=${i}`,
    description: 'bench',
    requiresAuth: false,
    headers: {},
    decision,
  }));
  await writeFile(
    path,
    JSON.stringify({ policy: { authOptionalHosts: [], sharedGatewayHosts: [] }, servers, removed: [] }),
  );
  return path;
}

const run = async (round: number) => {
  const t0 = performance.now();
  const result = await refresh({
    catalogPath: await catalog(round),
    concurrency: N,
    perHost: N,
    allowHttp: true,
    write: true,
  });
  return { wallMs: performance.now() - t0, slowestProbeMs: Math.max(...result.plan.rows.map((r) => r.durationMs)) };
};

await run(0);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });
await session.post('Profiler.start');
const warm = await run(1);
const { profile } = await session.post('Profiler.stop');
session.disconnect();

type Node = { id: number; callFrame: { url: string; functionName: string }; children?: number[] };
const nodes = new Map((profile.nodes as Node[]).map((n) => [n.id, n]));
const ms = new Map<string, number>();
const byFunction = new Map<string, number>();
const whereOf = (n: Node): string => {
  const { url, functionName } = n.callFrame;
  const src = /\/dist\/src\/([^/]+)\//.exec(url);
  if (src) return `src/${src[1]}`;
  const dep = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dep) return `dependency: ${dep[1]}`;
  if (functionName === '(idle)') return 'idle (waiting on the network)';
  if (functionName === '(garbage collector)') return 'garbage collector';
  return 'Node internals and V8';
};
const deltas = profile.timeDeltas ?? [];
(profile.samples ?? []).forEach((id: number, i: number) => {
  const node = nodes.get(id)!;
  const where = whereOf(node);
  ms.set(where, (ms.get(where) ?? 0) + (deltas[i] ?? 0) / 1000);
  const fn = `${node.callFrame.functionName || '(anonymous)'} (${where}${node.callFrame.url ? `: ${node.callFrame.url.split('/').pop()}` : ''})`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + (deltas[i] ?? 0) / 1000);
});
const total = [...ms.values()].reduce((a, b) => a + b, 0);
const shares = [...ms.entries()]
  .sort((a, b) => b[1] - a[1])
  .map(([where, t]) => ({ where, ms: Math.round(t), share: t / total }));
const functions = [...byFunction.entries()]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 12)
  .map(([fn, t]) => ({ fn, ms: Math.round(t), share: t / total }));
process.stdout.write(`${JSON.stringify({ entries: N, warm, totalMs: Math.round(total), shares, functions })}\n`);
