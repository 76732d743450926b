/**
 * The demo's loopback fleet: one small MCP server per shipped entry, each on its own port of 127.0.0.1
 * (so each is its own host), playing what real servers do: live, auth-optional, flaky, dead, edge 526.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Role = 'live-json' | 'live-sse' | 'auth-optional' | 'flaky' | 'dead' | 'origin-526';

export interface DemoServer {
  url: string;
  close: () => Promise<void>;
}

export async function startDemoServer(role: Role, name: string, tools: string[]): Promise<DemoServer> {
  let initializes = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      let msg: { id?: number; method?: string };
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return void res.writeHead(400).end();
      }
      if (role === 'origin-526')
        return void res
          .writeHead(526, { 'content-type': 'text/html', server: 'cloudflare' })
          .end('<h1>Invalid SSL certificate</h1>');
      if (msg.method === 'initialize' && role === 'flaky' && ++initializes % 2 === 1)
        return void res.writeHead(503).end('upstream busy');
      if (msg.id === undefined) return void res.writeHead(202).end();
      if (msg.method === 'tools/list' && role === 'auth-optional') {
        return void res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: msg.id,
            error: { code: -32001, message: 'a free API key is needed for search tools' },
          }),
        );
      }
      const result =
        msg.method === 'initialize'
          ? { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name, version: 'demo' } }
          : // Each server's own tools: described, with an argument of its own, so no two demo servers serve the
            // same set.
            {
              tools: tools.map((t) => ({
                name: t,
                description: `${name}: ${t.replace(/[-_]/g, ' ')}`,
                inputSchema: {
                  type: 'object',
                  properties: { [`${t}_input`]: { type: 'string', description: `what ${t} works on` } },
                },
              })),
            };
      const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
      if (role === 'live-sse')
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${body}\n\n`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}/mcp`;
  if (role === 'dead') {
    await close(server); // the port is free again: connection refused, like a host that went away
    return { url, close: async () => {} };
  }
  return { url, close: () => close(server) };
}

const listen = (s: Server) =>
  new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
const close = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });
