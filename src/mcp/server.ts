/**
 * `onetap mcp`: the tools as an MCP server on the official SDK (v2: `@modelcontextprotocol/server`), over stdio or
 * Streamable HTTP. Both protocol eras from one endpoint: a request that carries the 2026-07-28 per-request `_meta`
 * envelope is served by that revision; everything else by a stateless classic transport (2024-11-05 … 2025-11-25:
 * a fresh server per POST, no session state to leak, no GET stream). Over stdio the opening message decides the
 * era for the connection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type {
  CallToolResult,
  McpHandlerRequestOptions,
  McpHttpHandler,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';
import { CatalogError } from '../catalog/model.js';
import { readPackageJson } from '../util/package-file.js';
import { once } from '../util/once.js';
import { MAX_NESTING, textNestsDeeperThan } from '../util/json.js';
import { PathRefused } from './confine.js';
import { MCP_LIMITS, type McpLimits } from './limits.js';
import { TOOLS, ToolRefused, type ToolContext } from './tools.js';

export interface McpServeOptions {
  /** Real path of the directory catalog paths are confined to (the directory the server was started in). */
  root: string;
  /** Permit loopback, private and link-local targets, and http:// (local testing only). */
  allowPrivate?: boolean;
  limits?: Partial<McpLimits>;
  /** The PostgreSQL store the tools read (a checked URL); else `openStore`'s choice from the environment. */
  store?: string;
}

const INSTRUCTIONS = [
  "onetap keeps a curated list of one-tap remote MCP servers honest. These tools attest servers the way the app's client",
  'connects (probe), check a catalog (lint), plan a refresh (plan_refresh), find candidates (discover) and explain verdict',
  'reasons (explain). Every tool is read-only: nothing is added, applied, written or recorded through this server.',
].join(' ');

/**
 * The SDK, loaded on first use rather than with the library: a process which only probes never needs it (its
 * schemas are megabytes of heap, and V8 sizes its next full collection on what is live). `require` keeps
 * `createMcpServer` synchronous; every SDK value here comes from its CommonJS build, one load per entry point
 * (`@modelcontextprotocol/node` and `…/server/stdio` require the same `@modelcontextprotocol/server` instance).
 */
const load = once(() => createRequire(import.meta.url));
const sdk = once(() => load()('@modelcontextprotocol/server') as typeof import('@modelcontextprotocol/server'));
const sdkStdio = once(
  () => load()('@modelcontextprotocol/server/stdio') as typeof import('@modelcontextprotocol/server/stdio'),
);
const sdkNode = once(() => load()('@modelcontextprotocol/node') as typeof import('@modelcontextprotocol/node'));

const version = once(() => readPackageJson<{ version: string }>('package.json').version);

const failure = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/**
 * One SDK server (the low-level `Server`: the input schemas are the JSON Schemas zod generates from tools.ts's, the
 * output schemas as written there, listed as they are) with the tools registered. It serves one era: `createMcpHandler`
 * and `serveStdio` make one per request or connection, each connected to its transport.
 */
export function createMcpServer(opts: McpServeOptions): Server {
  const limits: McpLimits = { ...MCP_LIMITS, ...opts.limits };
  const { Server, ProtocolError, ProtocolErrorCode } = sdk();
  const server = new Server(
    { name: 'onetap', title: 'onetap', version: version() },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler('tools/list', () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as never,
      outputSchema: t.outputSchema as never,
      annotations: t.annotations,
    })),
  }));

  server.setRequestHandler('tools/call', async (request, ctx: ServerContext): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    // An unknown tool is a protocol error (-32602, as the 2025-11-25 revision lists it), not a tool result.
    if (!tool)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool: ${JSON.stringify(request.params.name)}; tools: ${TOOLS.map((t) => t.name).join(', ')}`,
      );
    // The tool parses its arguments with its schema: those it refuses are a tool error naming where and why.
    const args = request.params.arguments ?? {};
    const token = ctx.mcpReq._meta?.progressToken;
    const { signal } = ctx.mcpReq;
    // Progress is sent before the result: a client stops listening for it once the result arrives.
    const sending = new Set<Promise<void>>();
    const toolCtx: ToolContext = {
      root: opts.root,
      allowPrivate: opts.allowPrivate === true,
      limits,
      ...(opts.store === undefined ? {} : { store: opts.store }),
      progress: (progress, total, message) => {
        if (token === undefined || signal.aborted) return;
        const sent = ctx.mcpReq
          .notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message },
          })
          .catch(() => {})
          .finally(() => sending.delete(sent));
        sending.add(sent);
      },
    };
    let result: CallToolResult;
    try {
      const out = await tool.call(args, toolCtx).finally(() => Promise.all(sending));
      result = {
        content: [
          { type: 'text', text: out.summary },
          { type: 'text', text: JSON.stringify(out.structured) },
        ],
        structuredContent: out.structured,
      };
    } catch (err) {
      if (err instanceof ToolRefused || err instanceof PathRefused || err instanceof CatalogError)
        return failure(err.message);
      return failure(`${tool.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    // The era's projection of a result (identity for object-shaped structuredContent under an object schema).
    return server.projectCallToolResult(result, tool.outputSchema);
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

/**
 * Stdio: the SDK's `serveStdio` decides the era from the connection's opening message (`initialize`: classic,
 * pinned for the connection; `server/discover` or any request with the 2026-07-28 envelope: that revision).
 */
export async function serveStdio(opts: McpServeOptions): Promise<RunningMcp> {
  const { serveStdio: serve, StdioServerTransport } = sdkStdio();
  const transport = new StdioServerTransport();
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const handle = serve(() => createMcpServer(opts), { transport });
  // The entry owns the transport's callbacks; the end of stdin (the client went away) closes it, and so this.
  const entryClose = transport.onclose;
  transport.onclose = () => {
    entryClose?.();
    ended();
  };
  return {
    closed,
    close: async () => {
      await handle.close();
      ended();
    },
  };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const isLoopbackName = (hostname: string) =>
  LOOPBACK_NAMES.has(hostname.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(hostname);

/**
 * The DNS-rebinding rule: a present Origin must be this server's own or a loopback origin (a page on a name that
 * resolves to 127.0.0.1 is neither); when listening on loopback, the Host must be a loopback name too.
 * Null when allowed, else the reason.
 * (Not the SDK's localhostOriginValidation()/localhostHostValidation(): those allow only three loopback names,
 * any scheme, never the server's own origin when bound elsewhere, and check Host whatever the address.)
 */
export function requestRefusal(
  headers: { origin?: string; host?: string },
  own: { host: string; port: number },
): string | null {
  const ownHost = own.host.includes(':') && !own.host.startsWith('[') ? `[${own.host}]` : own.host;
  if (headers.origin !== undefined) {
    let o: URL | null = null;
    try {
      o = new URL(headers.origin);
    } catch {
      /* refused below */
    }
    const same = o !== null && o.origin === new URL(`http://${ownHost}:${own.port}`).origin;
    if (!o || !(same || ((o.protocol === 'http:' || o.protocol === 'https:') && isLoopbackName(o.hostname))))
      return `Origin not allowed: ${headers.origin}`;
  }
  if (isLoopbackName(ownHost)) {
    let hostname: string | null = null;
    try {
      hostname = new URL(`http://${headers.host ?? ''}`).hostname;
    } catch {
      /* refused below */
    }
    if (!hostname || !isLoopbackName(hostname)) return `Host not allowed: ${headers.host ?? '(none)'}`;
  }
  return null;
}

/**
 * An answer given before the request body is read, so without the request's id: the wire schema's error response
 * has `id` optional and, when present, a string or a number (`null` is not one), so it is left out.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function jsonRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message } }));
}

export const MCP_PATH = '/mcp';

/** The id of a single JSON-RPC request, if it has a valid one. */
function requestIdOf(msg: unknown): string | number | undefined {
  const id = msg && typeof msg === 'object' && !Array.isArray(msg) ? (msg as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : undefined;
}

/**
 * A JSON request body parsed once, here, and handed to the SDK parsed; or the SDK's own parse-error words when it is
 * not JSON. Nesting is checked on the bytes first: megabytes of `[[[[` are refused in milliseconds, not parsed.
 */
export function parsedBodyOf(body: Buffer): { value: unknown } | { refusal: string } {
  if (textNestsDeeperThan(body, MAX_NESTING))
    return { refusal: `Parse error: nested deeper than ${MAX_NESTING} levels` };
  try {
    return { value: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return { refusal: 'Parse error: Invalid JSON' };
  }
}

/**
 * The SDK's classic transport answers what it refuses before dispatch (an MCP-Protocol-Version header it does not
 * support, a body that is not JSON) with `"id": null`, even for a request that had an id. Such an answer gets the
 * request's id, or none when the request had none (`null` is not a valid id in the wire schema); every other
 * response passes through untouched, streams included.
 */
function withRequestId(
  handler: McpHttpHandler,
  idOf: () => string | number | undefined,
): { fetch: (request: Request, options?: McpHandlerRequestOptions) => Promise<Response> } {
  return {
    fetch: async (request, options) => {
      const response = await handler.fetch(request, options);
      if (response.status < 400 || !/^application\/json/i.test(response.headers.get('content-type') ?? ''))
        return response;
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const headers = new Headers(response.headers);
      headers.delete('content-length');
      const nullId =
        body !== null &&
        typeof body === 'object' &&
        !Array.isArray(body) &&
        'error' in body &&
        (body as { id?: unknown }).id === null;
      if (!nullId) return new Response(text, { status: response.status, statusText: response.statusText, headers });
      const { id: _null, ...rest } = body as Record<string, unknown>;
      const id = idOf();
      return new Response(JSON.stringify(id === undefined ? rest : { ...rest, id }), {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    },
  };
}

/**
 * The request body, at most `max` bytes; null when it is longer (the rest is not read, and the socket stays up
 * long enough for the 413 to be written: leaving a `for await` would destroy it first).
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  if (Number(req.headers['content-length']) > max) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.pause();
      resolve(null);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Requests served at once; more get 503 (each holds its body, and its parse, until it is answered). */
const MAX_IN_FLIGHT = 32;

/** Streamable HTTP on `host:port` (port 0 picks a free one), endpoint `/mcp`, both eras. */
export async function serveHttp(opts: McpServeOptions & { host: string; port: number }): Promise<RunningMcp> {
  let port = opts.port;
  // Made on the first request that passes the checks below, so starting the server loads no SDK.
  let handler: McpHttpHandler | undefined;
  let inFlight = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return jsonRpcError(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    const refusal = requestRefusal({ origin: req.headers.origin, host: req.headers.host }, { host: opts.host, port });
    if (refusal) return jsonRpcError(res, 403, `Forbidden: ${refusal}`);
    // Stateless in both eras: no standalone GET stream and no session to DELETE.
    if (req.method !== 'POST')
      return jsonRpcError(res, 405, 'Method not allowed: POST only (stateless server)', { allow: 'POST' });
    if (inFlight >= MAX_IN_FLIGHT)
      return jsonRpcError(res, 503, `Service Unavailable: ${MAX_IN_FLIGHT} requests are being served; retry shortly`, {
        'retry-after': '1',
      });
    inFlight++;
    try {
      const { createMcpHandler, DEFAULT_MAX_REQUEST_BODY_SIZE } = sdk();
      // The body is read here (the SDK's bound) so that an answer the SDK gives without the request's id can get it.
      const body = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
      if (!body)
        return jsonRpcError(
          res,
          413,
          `Payload Too Large: Request body must not exceed ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`,
          { connection: 'close' },
        );
      handler ??= createMcpHandler(() => createMcpServer(opts), { legacy: 'stateless' });
      // The path as the SDK builds its URL from (an absolute-form request target would make that URL invalid).
      const target = new URL(req.url ?? '/', 'http://x');
      const buffered = {
        method: req.method,
        url: target.pathname + target.search,
        headers: req.headers,
        async *[Symbol.asyncIterator]() {
          if (body.length) yield body;
        },
      };
      // Only a JSON body is parsed here: any other media type is the SDK's to refuse (415), unread.
      const parsed = /^application\/json/i.test(req.headers['content-type'] ?? '') ? parsedBodyOf(body) : null;
      if (parsed && 'refusal' in parsed) return jsonRpcError(res, 400, parsed.refusal, {}, -32700);
      const value = parsed?.value;
      await sdkNode().toNodeHandler(withRequestId(handler, () => requestIdOf(value)))(buffered, res, value);
    } finally {
      inFlight--;
    }
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        jsonRpcError(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port, opts.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => {
    ended = resolve;
  });
  return {
    url: `http://${shown}:${port}${MCP_PATH}`,
    closed,
    close: async () => {
      await handler?.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      ended();
    },
  };
}
