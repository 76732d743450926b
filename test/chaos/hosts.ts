/**
 * MCP hosts for the chaos suite: `n` HTTP servers on 127.0.0.1, each its own host (its own port), answering any path
 * as a well-behaved MCP server (fleet's `answer`), with an optional hold per JSON-RPC method. They count what the
 * suite asserts on, server side:
 *   - each URL's requests by method (`calls(url, 'tools/list')`): a job probed twice shows as two;
 *   - each host's JSON-RPC requests (those with an id: initialize, tools/list) in flight at once, and the most ever
 *     (`mostInFlight()`): a probe sends those one after another, so two at once on a host are two probes.
 * `ports` listens on given ports (a fixture in a network namespace answering on the same ones); `0`: a free one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { answer, type RpcMessage } from '../fleet/fleet.js';

export interface McpHosts {
  /** `http://127.0.0.1:<port>` of each host. */
  origins: string[];
  /** `127.0.0.1:<port>` of each host (for `policy.sharedGatewayHosts`). */
  hosts: string[];
  ports: number[];
  /** A URL on host `i` (`path` with its query). */
  url: (i: number, path: string) => string;
  /** Requests that URL received with that JSON-RPC method. */
  calls: (url: string, method: string) => number;
  /** That URL's JSON-RPC requests in flight now (with `method`: of that method only). */
  inFlight: (url: string, method?: string) => number;
  /** The most JSON-RPC requests ever in flight at once on one host, over every host. */
  mostInFlight: () => number;
  /** When a host first had two in flight: which URLs, for the failure message. */
  firstOverlap: () => string | null;
  /** Forgets every count (between runs on the same hosts). */
  reset: () => void;
  close: () => Promise<void>;
}

export interface HostsOptions {
  /** How long a request of that method (on that URL) is held before its answer (ms); default 0. */
  holdMs?: (method: string, url: string) => number;
  ports?: number[];
}

export async function startMcpHosts(n: number, opts: HostsOptions = {}): Promise<McpHosts> {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const calls = new Map<string, number>();
  const flying = new Map<string, number>();
  const hostFlying = new Map<string, Set<string>>();
  let most = 0;
  let overlap: string | null = null;
  const origins: string[] = [];

  const handler = (origin: string) => async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let msg: RpcMessage | null = null;
    try {
      msg = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcMessage) : null;
    } catch {
      msg = null;
    }
    if (req.method !== 'POST') {
      res.writeHead(405);
      res.end();
      return;
    }
    const url = origin + (req.url ?? '/');
    const method = msg?.method ?? '(none)';
    calls.set(`${url} ${method}`, (calls.get(`${url} ${method}`) ?? 0) + 1);
    const ctx = { req, res, msg, state: {}, hits: 0 };
    if (!msg || msg.id === undefined) return answer(ctx);
    // A request with an id is in flight from its arrival until its answer is sent or its connection is gone.
    const key = `${url} ${method}`;
    const tag = `${method} ${req.url} #${calls.get(key)}`;
    const onHost = hostFlying.get(origin) ?? new Set<string>();
    hostFlying.set(origin, onHost);
    onHost.add(tag);
    flying.set(key, (flying.get(key) ?? 0) + 1);
    if (onHost.size > most) most = onHost.size;
    if (onHost.size > 1 && overlap === null) overlap = `${origin}: ${[...onHost].join(', ')}`;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      onHost.delete(tag);
      flying.set(key, flying.get(key)! - 1);
    };
    res.once('close', finish);
    const hold = opts.holdMs?.(method, url) ?? 0;
    if (hold > 0)
      setTimeout(() => {
        if (!res.destroyed) answer(ctx);
      }, hold);
    else answer(ctx);
  };

  for (let i = 0; i < n; i++) {
    const srv = createServer();
    srv.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(opts.ports?.[i] ?? 0, '127.0.0.1', () => resolve());
    });
    const origin = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
    srv.on('request', handler(origin));
    servers.push(srv);
    origins.push(origin);
  }

  return {
    origins,
    hosts: origins.map((o) => new URL(o).host),
    ports: origins.map((o) => Number(new URL(o).port)),
    url: (i, path) => `${origins[i]}${path.startsWith('/') ? path : `/${path}`}`,
    calls: (url, method) => calls.get(`${url} ${method}`) ?? 0,
    inFlight: (url, method) => {
      if (method) return flying.get(`${url} ${method}`) ?? 0;
      let sum = 0;
      for (const [k, v] of flying) if (k.startsWith(`${url} `)) sum += v;
      return sum;
    },
    mostInFlight: () => most,
    firstOverlap: () => overlap,
    reset: () => {
      calls.clear();
      most = 0;
      overlap = null;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
