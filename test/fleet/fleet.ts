/**
 * A loopback fleet of scripted MCP servers: one HTTP server on 127.0.0.1, one behaviour per path.
 * Each scenario plays one thing real servers do (what the app's client trips on: docs/app-client.md §4.3, or
 * what other clients meet) or one policy row.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';

export interface RpcMessage {
  jsonrpc?: string;
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
}

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  msg: RpcMessage | null;
  /** Per-scenario state that survives across requests (counters, sessions). */
  state: Record<string, unknown>;
  hits: number;
}

type Handler = (c: Ctx) => void;

export const TOOLS = [
  { name: 'search', inputSchema: { type: 'object' } },
  { name: 'fetch', inputSchema: { type: 'object' } },
];

export const initResult = (name = 'fleet') => ({
  protocolVersion: '2024-11-05',
  capabilities: { tools: {} },
  serverInfo: { name, version: '1.0.0' },
});

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

export function sse(
  res: ServerResponse,
  frames: string[],
  opts: { end?: boolean; headers?: Record<string, string> } = {},
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...opts.headers });
  for (const f of frames) res.write(f);
  if (opts.end !== false) res.end();
}

export const frame = (data: unknown) => `event: message\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The tools a scenario serves unless it says otherwise: TOOLS's names, described and with an argument of the
 * scenario's own, since every path of the fleet plays a different server (no two serve the same set).
 */
export const toolsOf = (scenario: string) =>
  TOOLS.map((t) => ({
    ...t,
    description: `${t.name} on the ${scenario} server`,
    inputSchema: { type: 'object', properties: { [`${scenario}_${t.name}`]: { type: 'string' } } },
  }));

const scenarioOf = (c: Ctx) => new URL(c.req.url ?? '/', 'http://x').pathname.split('/')[1] ?? '';

/** A well-behaved answer to initialize / tools/list / notifications, as JSON or SSE. */
export function answer(
  c: Ctx,
  mode: 'json' | 'sse' = 'json',
  tools: unknown[] = toolsOf(scenarioOf(c)),
  headers: Record<string, string> = {},
): void {
  const { msg, res } = c;
  if (!msg || msg.id === undefined) {
    res.writeHead(202, headers);
    res.end();
    return;
  }
  const result = msg.method === 'initialize' ? initResult() : msg.method === 'tools/list' ? { tools } : {};
  const body = { jsonrpc: '2.0', id: msg.id, result };
  if (mode === 'json') json(res, 200, body, headers);
  else sse(res, [frame(body)], { headers });
}

const count = (c: Ctx, key: string) => (c.state[key] = ((c.state[key] as number) ?? 0) + 1) as number;

export const scenarios: Record<string, Handler> = {
  // ---- attested live
  'ok-json': (c) => answer(c, 'json'),
  'ok-sse': (c) => answer(c, 'sse'),
  'sse-crlf-multiline': (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    const text = JSON.stringify({ jsonrpc: '2.0', id: c.msg.id, result }, null, 1).split('\n');
    // priming event (id + empty data), a comment, then the response split over several data: lines, CRLF framed
    sse(c.res, [
      'id: prime-1\r\ndata: \r\n\r\n',
      ': keep-alive\r\n\r\n',
      `event: message\r\nid: 7\r\n${text.map((l) => `data: ${l}`).join('\r\n')}\r\n\r\n`,
    ]);
  },
  'sse-data-without-space': (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    sse(c.res, [`event: message\ndata:${JSON.stringify({ jsonrpc: '2.0', id: c.msg.id, result })}\n\n`]);
  },
  'messages-before-response': (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    sse(c.res, [
      frame({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hello' } }),
      frame({ jsonrpc: '2.0', id: 99, method: 'roots/list' }),
      frame({ jsonrpc: '2.0', id: c.msg.id, result }),
    ]);
  },
  'stream-left-open': (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    sse(c.res, [frame({ jsonrpc: '2.0', id: c.msg.id, result })], { end: false });
    const keepAlive = setInterval(() => c.res.write(': ping\n\n'), 50);
    c.res.on('close', () => clearInterval(keepAlive));
  },
  'session-required': (c) => {
    const sessions = (c.state.sessions ??= new Set<string>()) as Set<string>;
    if (c.req.method === 'DELETE') {
      c.state.deleted = c.req.headers['mcp-session-id'];
      sessions.delete(String(c.req.headers['mcp-session-id']));
      c.res.writeHead(200);
      c.res.end();
      return;
    }
    if (c.msg?.method === 'initialize') {
      const id = `s-${count(c, 'n')}`;
      sessions.add(id);
      return answer(c, 'sse', TOOLS, { 'mcp-session-id': id });
    }
    if (!sessions.has(String(c.req.headers['mcp-session-id'])))
      return json(c.res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' },
      });
    answer(c, 'sse');
  },
  'notification-200-empty': (c) => (c.msg?.id === undefined ? (c.res.writeHead(200), c.res.end()) : answer(c)),
  'notification-200-object': (c) => (c.msg?.id === undefined ? json(c.res, 200, {}) : answer(c)),
  'notification-204': (c) => (c.msg?.id === undefined ? (c.res.writeHead(204), c.res.end()) : answer(c)),
  'notification-406': (c) =>
    c.msg?.id === undefined
      ? json(c.res, 406, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not Acceptable' } })
      : answer(c),
  gzip: (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    c.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    c.res.end(gzipSync(JSON.stringify({ jsonrpc: '2.0', id: c.msg.id, result })));
  },
  'jsonrpc-last-large': (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const tools = Array.from({ length: 3000 }, (_, i) => ({
      name: `tool_${i}`,
      description: 'x'.repeat(300),
      inputSchema: { type: 'object' },
    }));
    const result = c.msg.method === 'initialize' ? initResult() : { tools };
    json(c.res, 200, `{"id":${JSON.stringify(c.msg.id)},"result":${JSON.stringify(result)},"jsonrpc":"2.0"}`);
  },
  paginated: (c) => {
    if (c.msg?.method !== 'tools/list') return answer(c);
    const cursor = (c.msg.params?.cursor as string | undefined) ?? 'p0';
    const page = Number(cursor.slice(1));
    const next = page < 2 ? { nextCursor: `p${page + 1}` } : {};
    json(c.res, 200, {
      jsonrpc: '2.0',
      id: c.msg.id,
      result: { tools: [{ name: `t${page}`, inputSchema: { type: 'object' } }], ...next },
    });
  },
  'endless-pages': (c) => {
    if (c.msg?.method !== 'tools/list') return answer(c);
    json(c.res, 200, {
      jsonrpc: '2.0',
      id: c.msg.id,
      result: {
        tools: [{ name: `t${count(c, 'page')}`, inputSchema: { type: 'object' } }],
        nextCursor: `c${c.state.page}`,
      },
    });
  },
  'browser-ua-only': (c) => {
    if (!/Mozilla/.test(String(c.req.headers['user-agent']))) {
      c.res.writeHead(403, { 'content-type': 'text/plain', server: 'cloudflare' });
      c.res.end('error code: 1010');
      return;
    }
    answer(c);
  },
  // ---- what the app's client trips on (docs/app-client.md §4.3)
  'http-500-result': (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    json(c.res, 500, { jsonrpc: '2.0', id: c.msg.id, result });
  },
  // Python SDK v1.x stateful: Accept must list both types, also on notifications; a session never marked
  // initialized refuses tools/list with -32602 (docs/app-client.md §4.3).
  'python-stateful': (c) => {
    const sessions = (c.state.sessions ??= new Map<string, boolean>()) as Map<string, boolean>;
    const accept = String(c.req.headers.accept ?? '');
    if (!(accept.includes('application/json') && accept.includes('text/event-stream'))) {
      return json(c.res, 406, {
        jsonrpc: '2.0',
        id: 'server-error',
        error: {
          code: -32600,
          message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
        },
      });
    }
    if (c.msg?.method === 'initialize') {
      const id = `py-${count(c, 'n')}`;
      sessions.set(id, false);
      return answer(c, 'sse', TOOLS, { 'mcp-session-id': id });
    }
    const sid = String(c.req.headers['mcp-session-id']);
    if (c.msg?.method === 'notifications/initialized') {
      sessions.set(sid, true);
      c.res.writeHead(202);
      c.res.end();
      return;
    }
    if (!sessions.get(sid))
      return sse(c.res, [
        frame({ jsonrpc: '2.0', id: c.msg?.id, error: { code: -32602, message: 'Invalid request parameters' } }),
      ]);
    answer(c, 'sse');
  },
  batch: (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    json(c.res, 200, [{ jsonrpc: '2.0', id: c.msg.id, result }]);
  },
  brotli: (c) => {
    if (!c.msg || c.msg.id === undefined) return answer(c);
    const result = c.msg.method === 'initialize' ? initResult() : { tools: TOOLS };
    c.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
    c.res.end(brotliCompressSync(JSON.stringify({ jsonrpc: '2.0', id: c.msg.id, result })));
  },
  'tool-without-name': (c) =>
    answer(c, 'json', [...TOOLS, { description: 'a tool with no name', inputSchema: { type: 'object' } }]),
  'oversize-valid': (c) => {
    if (c.msg?.method !== 'initialize') return answer(c);
    c.res.writeHead(200, { 'content-type': 'application/json' });
    c.res.write(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","padding":[`);
    const chunk = Buffer.from('"0123456789abcdef0123456789abcdef",'.repeat(2000));
    const pump = () => {
      while (c.res.write(chunk)) {
        if ((c.state.sent = ((c.state.sent as number) ?? 0) + 1) > 200) return c.res.end('0]}}');
      }
    };
    c.res.on('drain', pump);
    pump();
  },
  // Speaks only the 2026-07-28 revision: server/discover and tools/list with the version header and _meta;
  // the classic initialize is an unknown method (404 with -32601, as that revision says).
  'era-2026-only': (c) => {
    const meta = (c.msg?.params?._meta ?? {}) as Record<string, unknown>;
    const modern =
      c.req.headers['mcp-protocol-version'] === '2026-07-28' &&
      meta['io.modelcontextprotocol/protocolVersion'] === '2026-07-28';
    if (!modern)
      return json(c.res, c.msg?.method === 'initialize' ? 404 : 400, {
        jsonrpc: '2.0',
        id: c.msg?.id ?? null,
        error: { code: -32601, message: `Method not found: ${c.msg?.method}` },
      });
    if (c.msg?.method === 'server/discover') {
      return sse(c.res, [
        frame({
          jsonrpc: '2.0',
          id: c.msg.id,
          result: {
            supportedVersions: ['2026-07-28'],
            capabilities: { tools: {} },
            resultType: 'complete',
            _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern', version: '2.0.0' } },
          },
        }),
      ]);
    }
    if (c.msg?.method === 'tools/list')
      return sse(c.res, [frame({ jsonrpc: '2.0', id: c.msg.id, result: { tools: TOOLS, resultType: 'complete' } })]);
    json(c.res, 404, { jsonrpc: '2.0', id: c.msg?.id ?? null, error: { code: -32601, message: 'Method not found' } });
  },
  'payment-402': (c) =>
    json(c.res, 402, { x402Version: 1, error: 'payment required', accepts: [{ scheme: 'exact', network: 'base' }] }),
  'oauth-401': (c) =>
    json(
      c.res,
      401,
      { error: 'invalid_token' },
      {
        'www-authenticate': `Bearer resource_metadata="http://${c.req.headers.host}/.well-known/oauth-protected-resource/oauth-401"`,
      },
    ),
  '.well-known': (c) => {
    if (c.req.url === '/.well-known/oauth-protected-resource/oauth-401')
      return json(c.res, 200, {
        resource: `http://${c.req.headers.host}/oauth-401`,
        authorization_servers: ['https://auth.example'],
      });
    c.res.writeHead(404);
    c.res.end();
  },
  // ---- auth
  'auth-optional': (c) =>
    c.msg?.method === 'tools/list'
      ? json(
          c.res,
          401,
          { jsonrpc: '2.0', id: c.msg.id, error: { code: -32001, message: 'API key required' } },
          { 'www-authenticate': 'Bearer' },
        )
      : answer(c),
  'auth-optional-with-key': (c) => {
    if (c.msg?.method === 'tools/list' && c.req.headers.authorization !== 'Bearer free-key')
      return json(c.res, 401, { error: 'missing key' });
    answer(c);
  },
  'init-401': (c) =>
    json(
      c.res,
      401,
      { error: 'unauthorized', message: 'an API key is required' },
      { 'www-authenticate': 'Bearer realm="mcp"' },
    ),
  'init-403-json': (c) => json(c.res, 403, { error: 'forbidden', message: 'paid plan required' }),
  'edge-challenge': (c) => {
    c.res.writeHead(403, { 'content-type': 'text/html', 'cf-mitigated': 'challenge', server: 'cloudflare' });
    c.res.end('<!DOCTYPE html><title>Just a moment...</title><script src="/cdn-cgi/challenge-platform/x.js"></script>');
  },
  // ---- review
  'zero-tools': (c) => answer(c, 'json', []),
  redirect: (c) => {
    c.res.writeHead(301, { location: '/ok-json' });
    c.res.end();
  },
  'unsupported-version': (c) =>
    json(c.res, 400, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Bad Request: Unsupported protocol version' },
    }),
  'init-error': (c) =>
    json(c.res, 200, {
      jsonrpc: '2.0',
      id: c.msg?.id ?? null,
      error: { code: -32602, message: 'Invalid params: clientInfo.title is required' },
    }),
  'tools-error': (c) =>
    c.msg?.method === 'tools/list'
      ? json(c.res, 200, {
          jsonrpc: '2.0',
          id: c.msg.id,
          error: { code: -32602, message: 'Invalid request parameters' },
        })
      : answer(c),
  // ---- drop
  'http-404': (c) => {
    c.res.writeHead(404, { 'content-type': 'text/html' });
    c.res.end('<h1>Not Found</h1>');
  },
  'http-410': (c) => {
    c.res.writeHead(410, { 'content-type': 'text/plain' });
    c.res.end('gone');
  },
  'html-200': (c) => {
    c.res.writeHead(200, { 'content-type': 'text/html' });
    c.res.end('<!doctype html><html><body>Welcome to our site</body></html>');
  },
  'json-not-rpc': (c) => json(c.res, 200, { status: 'ok', message: 'hello' }),
  'garbage-sse': (c) => sse(c.res, ['data: hello world\n\n', 'data: {not json\n\n']),
  'wrong-id': (c) => json(c.res, 200, { jsonrpc: '2.0', id: 12345, result: initResult() }),
  'no-protocol-version': (c) => {
    if (c.msg?.method !== 'initialize') return answer(c);
    json(c.res, 200, {
      jsonrpc: '2.0',
      id: c.msg.id,
      result: { capabilities: {}, serverInfo: { name: 'old', version: '0' } },
    });
  },
  oversize: (c) => {
    c.res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (c.res.write(chunk)) {
        if ((c.state.sent = ((c.state.sent as number) ?? 0) + 1) > 200) return c.res.end();
      }
    };
    c.res.on('drain', pump);
    pump();
  },
  'legacy-sse': (c) => {
    if (c.req.method === 'GET')
      return sse(c.res, ['event: endpoint\ndata: /messages?sessionId=abc\n\n'], { end: false });
    c.res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' });
    c.res.end('Method Not Allowed');
  },
  'legacy-sse-404': (c) => {
    if (c.req.method === 'GET')
      return sse(c.res, ['event: endpoint\ndata: /messages?sessionId=abc\n\n'], { end: false });
    c.res.writeHead(404, { 'content-type': 'text/plain' });
    c.res.end('Not Found');
  },
  'endpoint-on-post': (c) => sse(c.res, ['event: endpoint\ndata: /messages?sessionId=abc\n\n'], { end: false }),
  'edge-526': (c) => {
    c.res.writeHead(526, { 'content-type': 'text/html', server: 'cloudflare' });
    c.res.end('<html>Invalid SSL certificate</html>');
  },
  'edge-530': (c) => {
    c.res.writeHead(530, { 'content-type': 'text/html', server: 'cloudflare' });
    c.res.end('<html>Origin DNS error</html>');
  },
  'non-retryable-5xx': (c) =>
    json(c.res, 502, {
      success: false,
      errors: [{ code: 1016, message: 'Origin unreachable' }],
      retryable: false,
      owner_action_required: true,
    }),
  // ---- failed (retried once)
  'always-503': (c) => {
    c.res.writeHead(503, { 'content-type': 'text/plain' });
    c.res.end('Service Unavailable');
  },
  'flaky-503-once': (c) => {
    if (c.msg?.method === 'initialize' && count(c, 'inits') === 1) {
      c.res.writeHead(503);
      c.res.end('try later');
      return;
    }
    answer(c);
  },
  hang: (c) => {
    c.state.hung = count(c, 'hung'); /* never answers */
  },
  'hang-once': (c) => {
    if (c.msg?.method === 'initialize' && count(c, 'inits') === 1) return; // first initialize hangs
    answer(c);
  },
  'rate-limited': (c) => {
    c.res.writeHead(429, { 'retry-after': '0', 'content-type': 'text/plain' });
    c.res.end('slow down');
  },
  'rate-limited-long': (c) => {
    c.res.writeHead(429, { 'retry-after': '3600' });
    c.res.end('slow down');
  },
  reset: (c) => {
    c.req.socket.destroy();
  },
  // ---- appended for the mutation review (issue 9)
  // A bare 405 to the POST: no body, no JSON-RPC, and (as the fleet does for every scenario) 405 to GET too.
  'post-405': (c) => {
    c.res.writeHead(405);
    c.res.end();
  },
};

export interface Fleet {
  origin: string;
  url: (scenario: string) => string;
  /** Requests per scenario path, by method. */
  hits: (scenario: string) => { POST: number; GET: number; DELETE: number };
  state: (scenario: string) => Record<string, unknown>;
  close: () => Promise<void>;
}

/**
 * Starts the fleet on 127.0.0.1 (or another loopback `host`) with a free port (or `listenOn`). `extra` adds or
 * overrides scenarios.
 */
export async function startFleet(
  extra: Record<string, Handler> = {},
  listenOn = 0,
  host = '127.0.0.1',
): Promise<Fleet> {
  const all = { ...scenarios, ...extra };
  const states = new Map<string, Record<string, unknown>>();
  const hits = new Map<string, { POST: number; GET: number; DELETE: number }>();
  const server = createServer(async (req, res) => {
    const name = new URL(req.url ?? '/', 'http://x').pathname.split('/')[1] ?? '';
    const handler = all[name];
    const h = hits.get(name) ?? { POST: 0, GET: 0, DELETE: 0 };
    hits.set(name, h);
    if (req.method === 'POST' || req.method === 'GET' || req.method === 'DELETE') h[req.method]++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let msg: RpcMessage | null = null;
    try {
      msg = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
    } catch {
      msg = null;
    }
    if (!handler) {
      res.writeHead(404);
      res.end('no such scenario');
      return;
    }
    const state = states.get(name) ?? {};
    states.set(name, state);
    const cardRequest = req.method === 'GET' && (req.url ?? '').split('?')[0]!.endsWith('/server-card');
    if (
      req.method === 'GET' &&
      !cardRequest &&
      name !== 'legacy-sse' &&
      name !== 'legacy-sse-404' &&
      name !== '.well-known'
    ) {
      res.writeHead(405);
      res.end();
      return;
    }
    handler({ req, res, msg, state, hits: h.POST });
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(listenOn, host, resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;
  return {
    origin,
    url: (s) => `${origin}/${s}`,
    hits: (s) => hits.get(s) ?? { POST: 0, GET: 0, DELETE: 0 },
    state: (s) => states.get(s) ?? {},
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
