/**
 * `serve`: the published documents over HTTP with the standard's manners (content types, CORS,
 * Cache-Control, ETag/304), built in memory from the catalog and rebuilt when the file changes.
 *
 * It faces the internet, so it is bounded: a cap on open connections (when full, the oldest connection
 * without a request in progress makes room), short header and keep-alive timeouts, an inactivity timeout,
 * and errors that tell the client nothing internal (the detail goes to the operator's log).
 */
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { loadCatalog, type Catalog } from '../catalog/model.js';
import { formatProblems, type LintOptions, type LintProblem } from '../catalog/lint.js';
import {
  leakProblems,
  publication,
  publishProblems,
  publishedDocuments,
  UnpublishableCatalog,
} from '../publish/publish.js';
import { CORS_HEADERS, sendDocument, sendJson } from './http.js';
import type { FileWrite } from '../util/atomic.js';
import { inert } from '../text/escape.js';

export interface ServeOptions {
  catalogPath: string;
  host?: string;
  port?: number;
  /** Base for absolute URLs in the catalogs (default: this server's own origin). */
  baseUrl?: string;
  /** Extra routes (the status page adds its own). Return true when handled. */
  routes?: Array<
    (req: IncomingMessage, res: ServerResponse, url: URL, ctx: ServeContext) => Promise<boolean> | boolean
  >;
  /**
   * Lint each version of the catalog before serving it (the CLI always does). A version that fails is not
   * served: the last good version stays, and the findings go to the log. Without it, only the leak rules
   * of `publication` apply (no secret header values, credentials or non-http(s) URLs).
   */
  lint?: LintOptions;
  /** Open connections at most (default 256). */
  maxConnections?: number;
  /** A client must send its whole request head within this time (default 10 s). */
  headersTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this time (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** A connection with no traffic either way for this long is closed (default 30 s; slow readers). */
  idleTimeoutMs?: number;
  /** Where internal errors and refused catalog versions are reported (default: stderr). */
  log?: (line: string) => void;
}

export interface ServeContext {
  catalog: () => Promise<Catalog>;
  /** The catalog's lint findings (empty when it is publishable). */
  problems: () => Promise<LintProblem[]>;
}

export interface RunningServer {
  url: string;
  server: Server;
  close: () => Promise<void>;
}

/** Thrown by a route when a dependency (the history store) is unusable: a generic 503 for the client. */
export class ServiceUnavailable extends Error {}

export const SERVE_LIMITS = {
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
} as const;

/**
 * The operator's log: one call, one line. Whatever a line carries (a request target, a catalog's text, a history
 * file's) reaches the terminal inert: no control, line-breaking or bidi character, so no line can be forged or hidden.
 */
export const terminalLog = (line: string): void => void process.stderr.write(`${inert(line)}\n`);

/** The request target as a URL, or null when it is not an origin-form path with valid % escapes. */
function requestUrl(target: string | undefined): URL | null {
  if (!target?.startsWith('/')) return null;
  try {
    const url = new URL(`http://localhost${target}`);
    decodeURIComponent(url.pathname);
    return url;
  } catch {
    return null;
  }
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const log = opts.log ?? terminalLog;
  const limits = {
    maxConnections: opts.maxConnections ?? SERVE_LIMITS.maxConnections,
    headersTimeoutMs: opts.headersTimeoutMs ?? SERVE_LIMITS.headersTimeoutMs,
    keepAliveTimeoutMs: opts.keepAliveTimeoutMs ?? SERVE_LIMITS.keepAliveTimeoutMs,
    idleTimeoutMs: opts.idleTimeoutMs ?? SERVE_LIMITS.idleTimeoutMs,
  };
  let origin = '';
  type Built = {
    version: string;
    catalog: Catalog;
    /** The published documents by URL path. */
    docs: ReadonlyMap<string, Required<FileWrite>> | null;
    problems: LintProblem[];
  };
  let built: Built | null = null;
  /** The last publishable documents: a newer catalog that fails lint keeps them served, its findings on the page. */
  let lastGoodDocs: Built['docs'] = null;
  let unreadable: string | null = null;
  /**
   * The catalog as it is now. One that fails lint is still shown on the status page, with its findings; only the
   * published documents are withheld (the last publishable ones stay, else 503). An unreadable one is logged once.
   */
  const current = async (): Promise<Built> => {
    let version: string;
    try {
      const st = statSync(opts.catalogPath);
      version = `${st.mtimeMs}:${st.size}`;
    } catch (err) {
      if (built) return built;
      throw err;
    }
    if (built?.version === version) return built;
    if (unreadable === version) {
      if (built) return built;
      throw new ServiceUnavailable('no readable catalog');
    }
    try {
      const { catalog } = await loadCatalog(opts.catalogPath);
      // A catalog that would leak a secret is not shown at all; one that only fails lint is, with its findings.
      const leaks = opts.lint ? leakProblems(catalog) : [];
      if (leaks.length) throw new UnpublishableCatalog(leaks);
      const problems = opts.lint ? publishProblems(catalog, opts.lint) : [];
      if (problems.length) {
        log(
          `onetap serve: ${opts.catalogPath} fails lint, its published documents are withheld${
            lastGoodDocs ? ' (the last good ones stay)' : ''
          }: ${new UnpublishableCatalog(problems).message}`,
        );
        for (const p of problems) log(formatProblems(opts.catalogPath, [p]));
      } else {
        const docs = publishedDocuments(publication(catalog, { baseUrl: opts.baseUrl ?? origin }));
        lastGoodDocs = new Map(docs.map((doc) => [doc.path, doc]));
      }
      built = { version, catalog, docs: lastGoodDocs, problems };
      unreadable = null;
      return built;
    } catch (err) {
      unreadable = version;
      log(
        `onetap serve: this version of ${opts.catalogPath} is not served${built ? ' (the last good one stays)' : ''}: ${(err as Error).message}`,
      );
      if (err instanceof UnpublishableCatalog) for (const p of err.problems) log(formatProblems(opts.catalogPath, [p]));
      if (built) return built;
      throw new ServiceUnavailable('no readable catalog');
    }
  };
  const ctx: ServeContext = {
    catalog: async () => (await current()).catalog,
    problems: async () => (await current()).problems,
  };

  const running = await hardenedServer({ ...limits, host: opts.host, port: opts.port, log }, async (req, res, url) => {
    const now = await current();
    const doc = now.docs?.get(url.pathname);
    if (doc) return sendDocument(req, res, doc.content, doc.mediaType);
    if (!now.docs && url.pathname.startsWith('/.well-known/')) {
      return sendJson(
        req,
        res,
        {
          error: 'the catalog fails lint: its published documents are withheld',
          problems: now.problems.map((p) => `${p.where}: ${p.message}`),
        },
        503,
      );
    }
    for (const route of opts.routes ?? []) if (await route(req, res, url, ctx)) return;
    sendJson(req, res, { error: 'not found', path: url.pathname }, 404);
  });
  origin = running.url;
  return running;
}

type Limits = Required<
  Pick<ServeOptions, 'maxConnections' | 'headersTimeoutMs' | 'keepAliveTimeoutMs' | 'idleTimeoutMs'>
>;

/**
 * The HTTP shell every `serve` shares: the limits above, GET and HEAD only (OPTIONS answered for CORS), a request
 * path that is not a URL path refused, and errors that tell the client nothing internal (the detail goes to `log`).
 */
export async function hardenedServer(
  opts: Limits & { host?: string; port?: number; log: (line: string) => void },
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>,
): Promise<RunningServer> {
  const server = createServer(
    {
      headersTimeout: opts.headersTimeoutMs,
      requestTimeout: opts.headersTimeoutMs + 5_000,
      keepAliveTimeout: opts.keepAliveTimeoutMs,
      // How often Node looks for connections past the header timeout (its default, 30 s, would let them linger).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, opts.headersTimeoutMs / 4)),
    },
    (req, res) => {
      respond(req, res).catch((err: Error) => {
        const unavailable = err instanceof ServiceUnavailable;
        opts.log(
          `onetap serve: ${req.method} ${(req.url ?? '').slice(0, 300)}: ${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}`,
        );
        if (!res.headersSent)
          sendJson(
            req,
            res,
            { error: unavailable ? 'service unavailable' : 'internal error' },
            unavailable ? 503 : 500,
          );
        else res.destroy();
      });
    },
  );
  server.setTimeout(opts.idleTimeoutMs); // no 'timeout' listener: Node destroys the socket

  // Connection accounting: when full, close the oldest connection that has no request in progress (a slow
  // or silent client); when every connection is busy, the newcomer is closed.
  const open = new Map<Socket, { busy: boolean }>();
  server.on('connection', (socket: Socket) => {
    if (open.size >= opts.maxConnections) {
      const idle = [...open].find(([, s]) => !s.busy)?.[0];
      if (!idle) return void socket.destroy();
      open.delete(idle);
      idle.destroy();
    }
    open.set(socket, { busy: false });
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = open.get(req.socket);
    if (!state) return;
    state.busy = true;
    res.once('close', () => {
      state.busy = false;
    });
  });

  const respond = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS')
      return void res.writeHead(204, { ...CORS_HEADERS, 'access-control-max-age': '86400' }).end();
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return void res.writeHead(405, { ...CORS_HEADERS, allow: 'GET, HEAD, OPTIONS' }).end();
    const url = requestUrl(req.url);
    if (!url) return sendJson(req, res, { error: 'bad request: the path is not a valid URL path' }, 400);
    await handle(req, res, url);
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8787, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
