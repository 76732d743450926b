/**
 * One benchmark client run, in its own process: `node dist/bench/client.js <client> <url> <n> <concurrency> [warmup]`.
 * Runs `warmup` handshakes first (default 200, not measured: JIT warm-up is not per-handshake cost), then `n`.
 * Prints {cpuMs, wallMs, maxRssMb, live} as JSON. Clients: onetap, sdk, floor.
 */
import { Agent, request } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { probe } from '../src/index.js';
import { mapConcurrent } from '../src/util/pool.js';

const [client, url, nText, concText, warmupText = '200'] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
];
const n = Number(nText);
const concurrency = Number(concText);
const dispatcher = new Agent({ keepAliveTimeout: 10_000 });

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The floor: three bare POSTs with undici, bodies read whole, the data: line picked by hand. */
async function floor(): Promise<boolean> {
  const post = async (body: unknown, headers: Record<string, string>) => {
    const res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), dispatcher });
    return { session: res.headers['mcp-session-id'] as string | undefined, text: await res.body.text() };
  };
  const parse = (text: string) =>
    JSON.parse(
      text.startsWith('{')
        ? text
        : text
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
    );
  const init = await post(
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'Kai 9000', version: '1.0' } },
    },
    HEADERS,
  );
  const headers = init.session ? { ...HEADERS, 'mcp-session-id': init.session } : HEADERS;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  const tools = parse((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers)).text);
  return Array.isArray(tools.result?.tools) && tools.result.tools.length > 0;
}

async function sdk(): Promise<boolean> {
  const c = new Client({ name: 'Kai 9000', version: '1.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await c.connect(transport);
  const { tools } = await c.listTools();
  await transport.terminateSession().catch(() => {});
  await c.close();
  return tools.length > 0;
}

// read once: process.env is a native lookup per access
const timeoutMs = Number(process.env.BENCH_TIMEOUT_MS ?? 15_000);

async function onetap(): Promise<boolean> {
  return (await probe(url, { dispatcher, retryDelayMs: 200, timeoutMs })).verdict === 'live';
}

const run = { floor, sdk, onetap }[client];
if (!run) throw new Error(`unknown client ${client}`);
await mapConcurrent(
  Array.from({ length: Number(warmupText) }, (_, i) => i),
  concurrency,
  () => run().catch(() => false),
);
// The server counts requests and connections of the measured run only.
if (process.env.BENCH_RESET_URL) await (await request(process.env.BENCH_RESET_URL)).body.dump();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const results = await mapConcurrent(
  Array.from({ length: n }, (_, i) => i),
  concurrency,
  () => run().catch(() => false),
);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await dispatcher.close();
process.stdout.write(
  JSON.stringify({
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    live: results.filter(Boolean).length,
  }) + '\n',
);
