/**
 * `onetap mcp`: the tools as an MCP server on the official SDK, over stdio or Streamable HTTP (stateless: a fresh
 * server per POST, so no session state to leak; the app's client sends no DELETE).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ajv as loadAjv } from '../util/lazy.js';
import { CatalogError } from '../catalog/model.js';
import { readPackageJson } from '../util/package-file.js';
import { once } from '../util/once.js';
import { PathRefused } from './confine.js';
import { MCP_LIMITS, type McpLimits } from './limits.js';
import { TOOLS, ToolRefused, type ToolContext } from './tools.js';

export interface McpServeOptions {
  /** Real path of the directory catalog paths are confined to (the directory the server was started in). */
  root: string;
  /** Permit loopback, private and link-local targets, and http:// (local testing only). */
  allowPrivate?: boolean;
  limits?: Partial<McpLimits>;
}

const INSTRUCTIONS = [
  'onetap keeps a curated list of one-tap remote MCP servers honest. These tools attest servers the way the app\'s client',
  'connects (probe), check a catalog (lint), plan a refresh (plan_refresh), find candidates (discover) and explain verdict',
  'reasons (explain). Every tool is read-only: nothing is added, applied, written or recorded through this server.',
].join(' ');

/**
 * The SDK, loaded on first use rather than with the library: its schemas are about 7 MB of heap that a process
 * which only probes never needs (and V8 sizes its next full collection on what is live). `require` keeps
 * `createMcpServer` synchronous; every SDK value here comes from this one load (its CommonJS build).
 */
const sdk = once(() => {
  const require = createRequire(import.meta.url);
  return {
    Server: (require('@modelcontextprotocol/sdk/server/index.js') as typeof import('@modelcontextprotocol/sdk/server/index.js')).Server,
    StdioServerTransport: (require('@modelcontextprotocol/sdk/server/stdio.js') as typeof import('@modelcontextprotocol/sdk/server/stdio.js')).StdioServerTransport,
    StreamableHTTPServerTransport: (require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')).StreamableHTTPServerTransport,
    types: require('@modelcontextprotocol/sdk/types.js') as typeof import('@modelcontextprotocol/sdk/types.js'),
  };
});

const validators = once(() => {
  const ajv = new (loadAjv().Ajv2020)({ allErrors: true, strict: false });
  return new Map<string, ValidateFunction>(TOOLS.map((t) => [t.name, ajv.compile(t.inputSchema)]));
});

const version = once(() => readPackageJson<{ version: string }>('package.json').version);

const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** One SDK server with the tools registered; connect it to one transport. */
export function createMcpServer(opts: McpServeOptions): Server {
  const limits: McpLimits = { ...MCP_LIMITS, ...opts.limits };
  const { Server, types } = sdk();
  const server = new Server({ name: 'onetap', title: 'onetap', version: version() }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });

  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema as never, outputSchema: t.outputSchema as never, annotations: t.annotations })),
  }));

  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) return failure(`unknown tool "${request.params.name}"; tools: ${TOOLS.map((t) => t.name).join(', ')}`);
    const args = request.params.arguments ?? {};
    const validate = validators().get(tool.name)!;
    if (!validate(args)) return failure(`invalid arguments for ${tool.name}: ${validate.errors!.map((e) => `${e.instancePath || '(arguments)'} ${e.message}`).join('; ')}`);
    const token = extra._meta?.progressToken;
    // Progress is sent before the result: a client stops listening for it once the result arrives.
    const sending = new Set<Promise<void>>();
    const ctx: ToolContext = {
      root: opts.root,
      allowPrivate: opts.allowPrivate === true,
      limits,
      progress: (progress, total, message) => {
        if (token === undefined || extra.signal.aborted) return;
        const sent = extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message } })
          .catch(() => {}).finally(() => sending.delete(sent));
        sending.add(sent);
      },
    };
    try {
      const out = await tool.run(args, ctx).finally(() => Promise.all(sending));
      return {
        content: [{ type: 'text', text: out.summary }, { type: 'text', text: JSON.stringify(out.structured) }],
        structuredContent: out.structured,
      };
    } catch (err) {
      if (err instanceof ToolRefused || err instanceof PathRefused || err instanceof CatalogError) return failure(err.message);
      return failure(`${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return server;
}

export interface RunningMcp {
  /** The endpoint URL (HTTP mode). */
  url?: string;
  /** Resolves when the transport ends (stdin closed). */
  closed: Promise<void>;
  close: () => Promise<void>;
}

export async function serveStdio(opts: McpServeOptions): Promise<RunningMcp> {
  const server = createMcpServer(opts);
  const transport = new (sdk().StdioServerTransport)();
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => { ended = resolve; });
  transport.onclose = () => ended();
  // The SDK's stdio transport does not watch for the end of stdin: a client that goes away closes it.
  process.stdin.once('end', () => { void server.close().finally(ended); });
  await server.connect(transport);
  return { closed, close: async () => { await server.close(); ended(); } };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const isLoopbackName = (hostname: string) => LOOPBACK_NAMES.has(hostname.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(hostname);

/**
 * The DNS-rebinding rule: a present Origin must be this server's own or a loopback origin (a page on a name that
 * resolves to 127.0.0.1 is neither); when listening on loopback, the Host must be a loopback name too.
 * Null when allowed, else the reason.
 */
export function requestRefusal(headers: { origin?: string; host?: string }, own: { host: string; port: number }): string | null {
  const ownHost = own.host.includes(':') && !own.host.startsWith('[') ? `[${own.host}]` : own.host;
  if (headers.origin !== undefined) {
    let o: URL | null = null;
    try { o = new URL(headers.origin); } catch { /* refused below */ }
    const same = o !== null && o.origin === new URL(`http://${ownHost}:${own.port}`).origin;
    if (!o || !(same || ((o.protocol === 'http:' || o.protocol === 'https:') && isLoopbackName(o.hostname)))) return `Origin not allowed: ${headers.origin}`;
  }
  if (isLoopbackName(ownHost)) {
    let hostname: string | null = null;
    try { hostname = new URL(`http://${headers.host ?? ''}`).hostname; } catch { /* refused below */ }
    if (!hostname || !isLoopbackName(hostname)) return `Host not allowed: ${headers.host ?? '(none)'}`;
  }
  return null;
}

function jsonRpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

export const MCP_PATH = '/mcp';

/** Streamable HTTP on `host:port` (port 0 picks a free one), endpoint `/mcp`. */
export async function serveHttp(opts: McpServeOptions & { host: string; port: number }): Promise<RunningMcp> {
  let port = opts.port;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return jsonRpcError(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    const refusal = requestRefusal({ origin: req.headers.origin, host: req.headers.host }, { host: opts.host, port });
    if (refusal) return jsonRpcError(res, 403, `Forbidden: ${refusal}`);
    // Stateless: no standalone GET stream and no session to DELETE.
    if (req.method !== 'POST') return jsonRpcError(res, 405, 'Method not allowed: POST only (stateless server)', { allow: 'POST' });
    const server = createMcpServer(opts);
    const transport = new (sdk().StreamableHTTPServerTransport)({ sessionIdGenerator: undefined });
    res.on('close', () => { void transport.close(); void server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) jsonRpcError(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => { http.off('error', reject); resolve(); });
  });
  port = (http.address() as AddressInfo).port;
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => { ended = resolve; });
  return {
    url: `http://${shown}:${port}${MCP_PATH}`,
    closed,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      ended();
    },
  };
}
