/**
 * A loopback registry for census tests: the v0.1 list API with cursor paging over `remotes` remotes on `hosts`
 * hosts (ports of 127.0.0.1), each host one HTTP server playing its remotes by index, with a realistic mix: live
 * with tool lists of real sizes (some the same set under other hosts, some renamed copies), auth (401), 402, 404,
 * not MCP, slow, 429 with Retry-After, SSE-only and templated remotes (never to be contacted), and remotes that
 * declare a required header. It counts initialize requests per remote and the most requests in flight per host, and
 * over all hosts at once. Options respell remote URLs, add items of a test's own, listen on another local address,
 * serve the hosts over TLS, slow every answer down, and pad each server.json as served.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { AWKWARD, MANY, SMALL } from '../fixtures/tool-lists.js';

export type Kind =
  | 'small'
  | 'awkward'
  | 'many'
  | 'renamed'
  | 'auth'
  | 'payment'
  | 'missing'
  | 'not-mcp'
  | 'slow'
  | 'limited'
  | 'sse'
  | 'templated'
  | 'keyed';

/** The mix, by `index % 20`, turned by one for every 200 remotes: a host of the 200-host fixture plays ten kinds. */
const MIX: Kind[] = [
  'small',
  'awkward',
  'many',
  'small',
  'awkward',
  'small',
  'renamed',
  'small',
  'keyed',
  'auth',
  'payment',
  'missing',
  'not-mcp',
  'slow',
  'limited',
  'sse',
  'templated',
  'small',
  'renamed',
  'awkward',
];
export const kindOf = (i: number): Kind => MIX[(i + Math.floor(i / 200)) % MIX.length]!;

/** The golden o200k counts of what each live kind lists (test/fixtures/tool-lists.ts). */
export const TOKENS: Partial<Record<Kind, number>> = { small: 92, awkward: 126, many: 3002, keyed: 92 };

export interface RegistryFixture {
  url: string;
  hosts: string[];
  /** The remote URL of index i. */
  remoteUrl: (i: number) => string;
  /** initialize requests per remote index. */
  initializes: Map<number, number>;
  /** Requests to anything a census must never contact (SSE-only and templated remotes). */
  forbidden: () => number;
  /** The most requests in flight at once on any one host. */
  mostInFlight: () => number;
  /** The most requests in flight at once over all hosts. */
  mostInFlightOverall: () => number;
  /** Every User-Agent the hosts saw. */
  agents: Set<string>;
  close: () => Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const renamed = SMALL.map((t, i) => ({ ...t, name: `copy_${i}` }));
const toolsOf: Partial<Record<Kind, unknown[]>> = {
  small: SMALL,
  awkward: AWKWARD,
  many: MANY,
  renamed,
  keyed: SMALL,
  slow: SMALL,
  limited: SMALL,
};

/** A server of the registry with a package and no remote (most of the registry's), of a real entry's size and shape. */
function packageOnly(k: number) {
  const name = `io.example.packages/server-${String(k).padStart(5, '0')}`;
  return {
    server: {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
      name,
      title: `Package ${k}`,
      description: 'An MCP server run locally from its npm package, with options a user sets',
      version: '2.3.1',
      repository: { url: `https://github.com/example/package-${k}`, source: 'github' },
      packages: [
        {
          registryType: 'npm',
          registryBaseUrl: 'https://registry.npmjs.org',
          identifier: `@example/package-${k}`,
          version: '2.3.1',
          runtimeHint: 'npx',
          transport: { type: 'stdio' },
          packageArguments: [
            {
              type: 'named',
              name: '--mode',
              description: 'Operation mode',
              default: 'local',
              choices: ['local', 'cached', 'proxy'],
            },
          ],
          environmentVariables: [
            {
              name: 'EXAMPLE_API_KEY',
              description: 'The API key of your example.com account',
              isRequired: true,
              isSecret: true,
            },
          ],
        },
      ],
    },
    _meta: {
      'io.modelcontextprotocol.registry/official': {
        status: 'active',
        publishedAt: '2026-10-02T00:00:00Z',
        updatedAt: '2026-10-02T00:00:00Z',
        isLatest: true,
      },
    },
  };
}

export interface RegistryOptions {
  /**
   * Remote i's URL, given its host (`address:port`) and the path the host plays it at (default `http://<host><path>`).
   */
  urlOf?: (i: number, host: string, path: string) => string;
  /** Items listed after the fixture's own, made once the hosts listen. */
  extra?: (fixture: { hosts: string[]; remoteUrl: (i: number) => string }) => unknown[];
  /** Which host serves remote i (an index of the hosts; default i modulo their number). */
  hostOf?: (i: number) => number;
  /** The address the hosts listen on (default 127.0.0.1). */
  listenOn?: string;
  /** The hosts serve HTTPS with this key and certificate (PEM); remote URLs are then https:// by default. */
  tls?: { key: string; cert: string };
  /** Every answer of a host this late, ms. */
  delayMs?: number;
  /**
   * Each server.json as served carries this many bytes more (publisher-provided `_meta`), made per page, never held.
   */
  padBytes?: number;
}

/** `packageOnlyServers` more servers without a remote are listed among those with one, spread evenly. */
export async function startRegistry(
  remotes: number,
  hostCount: number,
  packageOnlyServers = 0,
  opts: RegistryOptions = {},
): Promise<RegistryFixture> {
  const initializes = new Map<number, number>();
  const agents = new Set<string>();
  let forbidden = 0;
  let most = 0;
  let overall = 0;
  let mostOverall = 0;
  const servers: Server[] = [];
  const hosts: string[] = [];
  for (let h = 0; h < hostCount; h++) {
    let inFlight = 0;
    const play: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
      agents.add(String(req.headers['user-agent']));
      inFlight++;
      overall++;
      most = Math.max(most, inFlight);
      mostOverall = Math.max(mostOverall, overall);
      // Out of flight once its answer is given (or the request is gone): a client's next request on the connection may
      // arrive before the answer's 'close' event, and must not count as asked at the same time.
      let done = false;
      const landed = () => {
        if (!done) {
          done = true;
          inFlight--;
          overall--;
        }
      };
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.end = ((...args: unknown[]) => {
        landed();
        return end(...args);
      }) as typeof res.end;
      res.on('close', landed);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        setTimeout(() => {
          const m = /^\/mcp\/(\d+)/.exec(req.url ?? '');
          if (!m) {
            if ((req.url ?? '').startsWith('/mcp/old-')) forbidden++;
            return send(res, 404, { error: 'no such remote' });
          }
          const i = Number(m[1]);
          const kind = kindOf(i);
          if (kind === 'sse' || kind === 'templated') {
            forbidden++;
            return send(res, 404, {});
          }
          if (req.method !== 'POST') return void res.writeHead(405).end();
          let msg: { id?: number; method?: string } = {};
          try {
            msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            /* empty */
          }
          if (msg.method === 'initialize') initializes.set(i, (initializes.get(i) ?? 0) + 1);
          if (kind === 'auth')
            return send(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="x"' });
          if (kind === 'payment') return send(res, 402, { error: 'payment required' });
          if (kind === 'missing') return send(res, 404, { error: 'not found' });
          if (kind === 'not-mcp') {
            res.writeHead(200, { 'content-type': 'text/html' });
            return void res.end('<html>hello</html>');
          }
          if (kind === 'limited') return send(res, 429, { error: 'slow down' }, { 'retry-after': '1' });
          if (msg.id === undefined) return void res.writeHead(202).end();
          const result =
            msg.method === 'initialize'
              ? {
                  protocolVersion: '2025-11-25',
                  capabilities: { tools: {} },
                  serverInfo: { name: `remote-${i}`, version: '1.0.0' },
                }
              : msg.method === 'tools/list'
                ? { tools: toolsOf[kind] ?? [] }
                : {};
          const answer = () => send(res, 200, { jsonrpc: '2.0', id: msg.id, result });
          if (kind === 'slow') setTimeout(answer, 300);
          else answer();
        }, opts.delayMs ?? 0),
      );
    };
    const server = opts.tls ? createTlsServer(opts.tls, play) : createServer(play);
    const address = opts.listenOn ?? '127.0.0.1';
    await new Promise<void>((r) => server.listen(0, address, r));
    servers.push(server);
    hosts.push(`${address}:${(server.address() as AddressInfo).port}`);
  }
  const hostIndex = opts.hostOf ?? ((i: number) => i % hostCount);
  const remoteUrl = (i: number) => {
    const path = `/mcp/${i}${kindOf(i) === 'templated' ? '/{tenant}' : ''}`;
    return opts.urlOf
      ? opts.urlOf(i, hosts[hostIndex(i)]!, path)
      : `${opts.tls ? 'https' : 'http'}://${hosts[hostIndex(i)]}${path}`;
  };

  // The list: one server per remote; every 50th server also has an older version (not the latest) and an SSE remote.
  const items = Array.from({ length: remotes }, (_, i) => {
    const kind = kindOf(i);
    const remote =
      kind === 'sse'
        ? { type: 'sse', url: remoteUrl(i) }
        : kind === 'keyed'
          ? {
              type: 'streamable-http',
              url: remoteUrl(i),
              headers: [{ name: 'X-Api-Key', isRequired: true, isSecret: true }],
            }
          : kind === 'templated'
            ? { type: 'streamable-http', url: remoteUrl(i), variables: { tenant: { isRequired: true } } }
            : { type: 'streamable-http', url: remoteUrl(i) };
    const name = `io.example.census/server-${String(i).padStart(5, '0')}`;
    const latest = {
      server: {
        $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
        name,
        description: `Census fixture ${i} (${kind})`,
        version: '1.1.0',
        remotes: [remote],
      },
      _meta: {
        'io.modelcontextprotocol.registry/official': {
          status: 'active',
          publishedAt: '2026-10-02T00:00:00Z',
          isLatest: true,
        },
      },
    };
    const packages = Array.from(
      { length: Math.floor(((i + 1) * packageOnlyServers) / remotes) - Math.floor((i * packageOnlyServers) / remotes) },
      (_, k) => packageOnly(Math.floor((i * packageOnlyServers) / remotes) + k),
    );
    if (i % 50 !== 0) return [latest, ...packages];
    const older = {
      server: {
        ...latest.server,
        version: '1.0.0',
        remotes: [{ type: 'streamable-http', url: `http://${hosts[hostIndex(i)]}/mcp/old-${i}` }],
      },
      _meta: {
        'io.modelcontextprotocol.registry/official': {
          status: 'active',
          publishedAt: '2026-09-01T00:00:00Z',
          isLatest: false,
        },
      },
    };
    return [older, latest, ...packages];
  }).flat() as unknown[];
  items.push(...(opts.extra?.({ hosts, remoteUrl }) ?? []));

  const PAGE = 100;
  const registry = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname !== '/v0.1/servers') return send(res, 404, {});
    const start = u.searchParams.has('cursor') ? Number(u.searchParams.get('cursor')!.replace('page-', '')) : 0;
    const limit = Math.min(PAGE, Number(u.searchParams.get('limit') ?? PAGE));
    const pad = opts.padBytes
      ? { 'io.modelcontextprotocol.registry/publisher-provided': { pad: 'x'.repeat(opts.padBytes) } }
      : null;
    const page = items
      .slice(start, start + limit)
      .map((item) =>
        pad ? { ...(item as object), server: { ...(item as { server: object }).server, _meta: pad } } : item,
      );
    const next = start + limit < items.length ? `page-${start + limit}` : undefined;
    send(res, 200, { servers: page, metadata: { count: page.length, ...(next ? { nextCursor: next } : {}) } });
  });
  await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(registry.address() as AddressInfo).port}`,
    hosts,
    remoteUrl,
    initializes,
    forbidden: () => forbidden,
    mostInFlight: () => most,
    mostInFlightOverall: () => mostOverall,
    agents,
    close: async () => {
      for (const s of [...servers, registry]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
}
