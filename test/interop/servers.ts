/**
 * Real third-party MCP servers from npm, started on 127.0.0.1 for interop tests and benchmarks.
 * Each returns its URL, the tool count it serves, and a way to stop it.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createConnection, type AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { FastMCP } from 'fastmcp';
import { createMcpHandler } from 'mcp-handler';
import { serve } from '@hono/node-server';
import { z } from 'zod';

export interface RealServer {
  name: string;
  url: string;
  tools: number;
  /** Tools the app's client sees, when fewer than `tools` (its profile and handshake differ from the SDK's). */
  appTools?: number;
  close: () => Promise<void>;
}

/**
 * A port for a server that must be told its port. Picked below the kernel's ephemeral range (32768 and up on
 * Linux), so that no server of another test listening on port 0, and no outgoing connection, can take it between
 * this check and the child's own bind (that race once had a probe meet another test's 2-tool server).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const s = createServer();
    const bound = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (!bound) continue;
    await new Promise<void>((r) => s.close(() => r()));
    return port;
  }
}

async function waitForPort(port: number, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = createConnection({ port, host: '127.0.0.1' }, () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} did not open`);
}

const listen = (server: Server) =>
  new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
const stop = (server: Server) =>
  new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });

/** `@modelcontextprotocol/server-everything streamableHttp`: stateful, SSE responses, 13 tools. */
export async function serverEverything(): Promise<RealServer> {
  const port = await freePort();
  const require = createRequire(import.meta.url);
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  await waitForPort(port);
  return {
    // 13 for a 2025-11-25 client; the app (2024-11-05, no capabilities) is not offered the task-based
    // `simulate-research-query`: 12.
    name: 'server-everything',
    url: `http://127.0.0.1:${port}/mcp`,
    tools: 13,
    appTools: 12,
    close: async () => {
      child.kill();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

function sdkServer(tools: number): McpServer {
  const server = new McpServer({ name: 'sdk-fixture', version: '1.0.0' });
  for (let i = 0; i < tools; i++) {
    server.registerTool(`tool_${i}`, { description: `tool ${i}`, inputSchema: { q: z.string() } }, async ({ q }) => ({
      content: [{ type: 'text', text: q }],
    }));
  }
  return server;
}

/** An official-SDK server (`StreamableHTTPServerTransport`), SSE or JSON responses, stateful or stateless. */
export async function sdkStreamable(opts: { json: boolean; stateful: boolean; tools?: number }): Promise<RealServer> {
  const tools = opts.tools ?? 3;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (!opts.stateful) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: opts.json,
      });
      const server = sdkServer(tools);
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: opts.json,
        onsessioninitialized: (id) => {
          sessions.set(id, transport!);
        },
      });
      transport.onclose = () => {
        if (transport!.sessionId) sessions.delete(transport!.sessionId);
      };
      await sdkServer(tools).connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  const port = await listen(http);
  return {
    name: `sdk ${opts.json ? 'json' : 'sse'} ${opts.stateful ? 'stateful' : 'stateless'}`,
    url: `http://127.0.0.1:${port}/mcp`,
    tools,
    close: async () => {
      for (const t of sessions.values()) await t.close();
      await stop(http);
    },
  };
}

/** The SDK's legacy HTTP+SSE transport (2024-11-05): must be judged not Streamable HTTP. */
export async function sdkLegacySse(): Promise<RealServer> {
  const transports = new Map<string, SSEServerTransport>();
  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const t = new SSEServerTransport('/messages', res);
      transports.set(t.sessionId, t);
      res.on('close', () => transports.delete(t.sessionId));
      await sdkServer(1).connect(t);
      return;
    }
    const t = transports.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && url.pathname === '/messages' && t) return t.handlePostMessage(req, res);
    res.writeHead(404).end('Not Found');
  });
  const port = await listen(http);
  return { name: 'sdk legacy sse', url: `http://127.0.0.1:${port}/sse`, tools: 1, close: () => stop(http) };
}

/** fastmcp (punkpeye) httpStream; stateful mode answers initialize after about 1 s. */
export async function fastmcp(opts: { stateless: boolean }): Promise<RealServer> {
  const server = new FastMCP({ name: 'fastmcp-fixture', version: '1.0.0' });
  for (const name of ['alpha', 'beta'])
    server.addTool({ name, description: name, parameters: z.object({}), execute: async () => name });
  const port = await freePort();
  await server.start({
    transportType: 'httpStream',
    httpStream: { host: '127.0.0.1', port, endpoint: '/mcp', stateless: opts.stateless },
  });
  return {
    name: `fastmcp ${opts.stateless ? 'stateless' : 'stateful'}`,
    url: `http://127.0.0.1:${port}/mcp`,
    tools: 2,
    close: () => server.stop(),
  };
}

/** mcp-handler (Vercel, SDK v2): serves the 2026-07-28 era and falls back to 2025-era stateless. */
export async function mcpHandler(): Promise<RealServer> {
  const handler = createMcpHandler(
    (server) => {
      server.registerTool(
        'roll_dice',
        { description: 'Roll a dice', inputSchema: z.object({ sides: z.number().int().min(2) }) },
        async ({ sides }) => ({
          content: [{ type: 'text', text: String(1 + Math.floor(Math.random() * sides)) }],
        }),
      );
    },
    { serverInfo: { name: 'mcp-handler-fixture', version: '1.0.0' } },
  );
  const port = await freePort();
  const server = serve({ fetch: handler, port, hostname: '127.0.0.1' });
  await waitForPort(port);
  return {
    name: 'mcp-handler',
    url: `http://127.0.0.1:${port}/mcp`,
    tools: 1,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** tmcp with @tmcp/transport-http: the stateless 2026-07-28 revision as well as the classic handshake. */
export async function tmcpServer(): Promise<RealServer> {
  const { McpServer: TmcpServer } = await import('tmcp');
  const { ZodJsonSchemaAdapter } = await import('@tmcp/adapter-zod');
  const { HttpTransport } = await import('@tmcp/transport-http');
  const server = new TmcpServer(
    { name: 'tmcp-fixture', version: '1.0.0', description: 'tmcp on loopback' },
    { adapter: new ZodJsonSchemaAdapter(), capabilities: { tools: { listChanged: true } } },
  );
  for (const name of ['weather', 'forecast']) {
    server.tool(
      { name, description: `${name} for a city`, schema: z.object({ city: z.string() }) },
      async ({ city }: { city: string }) => ({ content: [{ type: 'text' as const, text: `${name} ${city}` }] }),
    );
  }
  const transport = new HttpTransport(server, { path: '/mcp' });
  const port = await freePort();
  const http = serve({
    fetch: async (req: Request) => (await transport.respond(req)) ?? new Response('Not Found', { status: 404 }),
    port,
    hostname: '127.0.0.1',
  });
  await waitForPort(port);
  return {
    name: 'tmcp',
    url: `http://127.0.0.1:${port}/mcp`,
    tools: 2,
    close: () => new Promise<void>((r) => http.close(() => r())),
  };
}
