/**
 * Benchmark servers, run in their own process so that the client's CPU is measured alone.
 * `node dist/bench/server.js fast <json|sse> [ports]`: a minimal stateless MCP server that counts requests (on `ports`
 * ports of 127.0.0.1, default 1: as many hosts, each host being name and port; their origins on one line).
 * `node dist/bench/server.js fleet`: the scripted test fleet (faults, hangs, huge bodies).
 * Prints the origin on stdout; GET /__stats answers {requests, connections}, GET /__reset zeroes it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer, startFleet, type Ctx } from '../test/fleet/fleet.js';

const [kind = 'fast', mode = 'json', portsArg = '1'] = process.argv.slice(2);

/** Writes `head`, then `fill` forever (until the client goes away). */
function endless(c: Ctx, type: string, head: string, fill: string): void {
  c.res.writeHead(200, { 'content-type': type });
  c.res.write(head);
  const chunk = Buffer.from(fill.repeat(64 * 1024));
  const pump = () => {
    while (!c.res.destroyed && c.res.write(chunk));
  };
  c.res.on('drain', pump);
  c.res.on('close', () => c.res.off('drain', pump));
  pump();
}

if (kind === 'fleet') {
  const fleet = await startFleet({
    // Every request answered after `?delay=` ms (default 250, an internet round trip and some work):
    // a handshake takes three of them, so serial work would show at once.
    slow: (c) => {
      setTimeout(() => answer(c), Number(new URL(c.req.url ?? '', 'http://x').searchParams.get('delay') ?? 250));
    },
    // Endless bodies that stay valid as far as they go: a JSON object that never closes, and one SSE data line
    // that never ends. A reader that buffers them (as the app does) needs the memory budget.
    'endless-json': (c) => endless(c, 'application/json', '{"jsonrpc":"2.0","id":1,"result":{"padding":"', 'a'),
    'endless-sse': (c) =>
      endless(c, 'text/event-stream', 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"padding":"', 'a'),
    // 512 MiB of SSE comments and never a response: the probe must stop reading at its cap.
    'huge-stream': (c) => {
      c.res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = Buffer.from(`: ${'x'.repeat(64 * 1024 - 4)}\n\n`);
      let sent = 0;
      const pump = () => {
        while (sent < 512 * 1024 * 1024) {
          sent += chunk.length;
          if (!c.res.write(chunk)) return;
        }
        c.res.end();
      };
      c.res.on('drain', pump);
      c.res.on('close', () => c.res.off('drain', pump));
      pump();
    },
  });
  process.stdout.write(fleet.origin + '\n');
} else {
  let requests = 0;
  let connections = 0;
  const tools = Array.from({ length: 8 }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool number ${i}`,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  }));
  const handle = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    if (req.url === '/__stats') return void res.end(JSON.stringify({ requests, connections }));
    if (req.url === '/__reset') {
      requests = 0;
      connections = 0;
      return void res.end('{}');
    }
    requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (msg.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        msg.method === 'initialize'
          ? {
              protocolVersion: msg.params?.protocolVersion ?? '2024-11-05',
              capabilities: { tools: {} },
              serverInfo: { name: 'bench', version: '1.0.0' },
            }
          : msg.method === 'tools/list'
            ? { tools }
            : {};
      const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
      if (mode === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(`event: message\ndata: ${body}\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      }
    });
  };
  const origins = await Promise.all(
    Array.from(
      { length: Number(portsArg) },
      () =>
        new Promise<string>((resolve) => {
          const server = createServer(handle);
          server.keepAliveTimeout = 30_000;
          server.on('connection', () => connections++);
          server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
        }),
    ),
  );
  process.stdout.write(origins.join(' ') + '\n');
}
