/**
 * What serving MCP costs a process: `node dist/bench/mcp-start.js [<bin/onetap> …]` (default: this checkout's). For
 * each bin: the time from spawning `onetap mcp --http --port 0` to its "listening on" line (median of BENCH_RUNS,
 * default 5), its RSS idle after start, after one classic exchange (initialize, tools/list, tools/call explain: the
 * first request is what loads the SDK, so its time is shown too) and after one 2026-07-28 exchange as well
 * (server/discover, tools/list, tools/call explain; a server that refuses that revision is marked). Then, for this
 * checkout only, whether a process that only probes loads any `@modelcontextprotocol` module: the library's `probe()`
 * in-process and the CLI's `onetap probe`, with every ESM resolve and every CommonJS module recorded (the check is
 * shown to see the SDK by creating an MCP server in the same process afterwards). Prints Markdown.
 */
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const OWN_BIN = fileURLToPath(new URL('../../bin/onetap', import.meta.url));
const bins = process.argv.slice(2).length ? process.argv.slice(2) : [OWN_BIN];
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IDLE_MS = 1_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = { 'mcp-protocol-version': '2025-11-25' },
): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok && headers['mcp-protocol-version'] !== '2026-07-28') throw new Error(`${res.status}: ${text}`);
  return res.status;
}

/** One classic (2025-11-25, stateless) exchange: what any client does first. */
async function classicRound(url: string): Promise<void> {
  await post(url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  await post(url, {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'explain', arguments: { reason: 'ok' } },
  });
}

/** One 2026-07-28 exchange (server/discover, tools/list, tools/call explain); false when the server refuses it. */
async function modernRound(url: string): Promise<boolean> {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  };
  const h = (method: string, name?: string) => ({
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  });
  const codes = [
    await post(url, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta } }, h('server/discover')),
    await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta } }, h('tools/list')),
    await post(
      url,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'explain', arguments: { reason: 'ok' }, _meta } },
      h('tools/call', 'explain'),
    ),
  ];
  return codes.every((c) => c === 200);
}

async function startOnce(bin: string, cwd: string) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'mcp', '--http', '--port', '0'], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  const startMs = performance.now() - t0;
  await sleep(IDLE_MS);
  const idleMb = rssMb(child.pid!);
  const t1 = performance.now();
  await classicRound(url);
  const firstMs = performance.now() - t1;
  await sleep(IDLE_MS);
  const servedMb = rssMb(child.pid!);
  const modernServed = await modernRound(url);
  await sleep(IDLE_MS);
  const bothMb = rssMb(child.pid!);
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { startMs, idleMb, firstMs, servedMb, modernServed, bothMb };
}

/**
 * Hooks (on the loader thread) append every resolved ESM URL to a file; at exit the CommonJS cache is appended
 * too. Node 20 has no in-thread hook API, and a file keeps the record independent of message timing.
 */
function tracer(logFile: string): string {
  const hooks = `import { appendFileSync } from 'node:fs';
let log;
export function initialize(d) { log = d.log; }
export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(log, r.url + '\\n'); return r; }`;
  const main = `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { log: ${JSON.stringify(logFile)} } });
const cache = createRequire('/').cache;
process.on('exit', () => appendFileSync(${JSON.stringify(logFile)}, Object.keys(cache).join('\\n') + '\\n'));`;
  return `data:text/javascript,${encodeURIComponent(main)}`;
}

const sdkModules = (logFile: string, from = 0) => {
  const lines = readFileSync(logFile, 'utf8').split('\n').slice(from).filter(Boolean);
  return { total: new Set(lines).size, sdk: [...new Set(lines.filter((l) => l.includes('@modelcontextprotocol')))] };
};

function probeChecks(dir: string) {
  const lib = pathToFileURL(fileURLToPath(new URL('../src/index.js', import.meta.url))).href;
  const mcpServer = pathToFileURL(fileURLToPath(new URL('../src/mcp/server.js', import.meta.url))).href;
  // In-process: the library's probe() on a port nothing listens on, then an MCP server made in the same process.
  const libLog = join(dir, 'lib.log');
  const script = `const m = await import(${JSON.stringify(lib)});
const r = await m.probe('http://127.0.0.1:1/mcp');
const { appendFileSync, readFileSync } = await import('node:fs');
const { createRequire } = await import('node:module');
appendFileSync(${JSON.stringify(libLog)}, Object.keys(createRequire('/').cache).join('\\n') + '\\n--- after probe: ' + r.verdict + '/' + r.reason + '\\n');
const { createMcpServer } = await import(${JSON.stringify(mcpServer)});
createMcpServer({ root: process.cwd() });`;
  execFileSync(process.execPath, ['--import', tracer(libLog), '--input-type=module', '-e', script], {
    stdio: 'ignore',
  });
  const lines = readFileSync(libLog, 'utf8').split('\n');
  const cut = lines.findIndex((l) => l.startsWith('--- after probe'));
  const beforeCut = join(dir, 'lib-before.log');
  execFileSync('sh', ['-c', `head -n ${cut} "${libLog}" > "${beforeCut}"`]);
  // The CLI: `onetap probe --json` on the same address.
  const cliLog = join(dir, 'cli.log');
  // Exit 1: the verdict is drop (nothing listens there); what matters is what the process loaded.
  const cli = spawnSync(
    process.execPath,
    ['--import', tracer(cliLog), OWN_BIN, 'probe', '--json', 'http://127.0.0.1:1/mcp'],
    { encoding: 'utf8' },
  );
  if (!cli.stdout.includes('"verdict"')) throw new Error(`onetap probe: ${cli.stderr}`);
  return {
    verdict: lines[cut]!.replace('--- after probe: ', ''),
    lib: sdkModules(beforeCut),
    libThenServer: sdkModules(libLog, cut + 1),
    cli: sdkModules(cliLog),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'onetap-mcp-start-'));
try {
  const say = (s = '') => process.stdout.write(s + '\n');
  say(
    `## onetap mcp --http --port 0: median of ${RUNS} starts (node ${process.version}, ${new Date().toISOString().slice(0, 10)})`,
  );
  say();
  say(
    '| bin | start to "listening on" | RSS idle after start | first classic exchange (loads the SDK) | RSS idle after it | then after one 2026-07-28 exchange |',
  );
  say('|---|---|---|---|---|---|');
  for (const bin of bins) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await startOnce(bin, dir));
    say(
      `| ${bin} | ${median(runs.map((r) => r.startMs)).toFixed(0)} ms (${runs.map((r) => r.startMs.toFixed(0)).join(', ')}) | ${median(runs.map((r) => r.idleMb)).toFixed(1)} MB | ${median(runs.map((r) => r.firstMs)).toFixed(0)} ms | ${median(runs.map((r) => r.servedMb)).toFixed(1)} MB | ${median(runs.map((r) => r.bothMb)).toFixed(1)} MB${runs.every((r) => r.modernServed) ? '' : ' (2026-07-28 refused)'} |`,
    );
  }
  const c = probeChecks(dir);
  say();
  say(
    `Probing process (${c.verdict}): library probe() loaded ${c.lib.total} modules, ${c.lib.sdk.length} of them @modelcontextprotocol; ` +
      `\`onetap probe --json\` loaded ${c.cli.total}, ${c.cli.sdk.length} @modelcontextprotocol. ` +
      `Control: createMcpServer() afterwards in the library process loads ${c.libThenServer.sdk.length} @modelcontextprotocol modules.`,
  );
  if (c.lib.sdk.length || c.cli.sdk.length)
    say(`SDK modules in a probing process: ${[...c.lib.sdk, ...c.cli.sdk].join(', ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
