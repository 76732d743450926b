/**
 * `serve`: the published documents over HTTP with the standard's manners (content types, CORS,
 * Cache-Control, ETag/304), built in memory from the catalog and rebuilt when the file changes.
 */
import { statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadCatalog, type Catalog } from '../catalog/model.js';
import { publication, publishedDocuments } from '../publish/publish.js';
import { CORS_HEADERS, sendDocument, sendJson } from './http.js';

export interface ServeOptions {
  catalogPath: string;
  host?: string;
  port?: number;
  /** Base for absolute URLs in the catalogs (default: this server's own origin). */
  baseUrl?: string;
  /** Extra routes (the status page adds its own). Return true when handled. */
  routes?: Array<(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ServeContext) => Promise<boolean> | boolean>;
}

export interface ServeContext { catalog: () => Promise<Catalog> }

export interface RunningServer { url: string; server: Server; close: () => Promise<void> }

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  let origin = '';
  let cache: { mtimeMs: number; catalog: Catalog; docs: ReturnType<typeof publishedDocuments> } | null = null;
  const current = async () => {
    const mtimeMs = statSync(opts.catalogPath).mtimeMs;
    if (!cache || cache.mtimeMs !== mtimeMs) {
      const { catalog } = await loadCatalog(opts.catalogPath);
      cache = { mtimeMs, catalog, docs: publishedDocuments(publication(catalog, { baseUrl: opts.baseUrl ?? origin })) };
    }
    return cache;
  };
  const ctx: ServeContext = { catalog: async () => (await current()).catalog };
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendJson(req, res, { error: 'internal error', detail: String((err as Error).message) }, 500);
      else res.destroy();
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'OPTIONS') return void res.writeHead(204, { ...CORS_HEADERS, 'access-control-max-age': '86400' }).end();
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { ...CORS_HEADERS, allow: 'GET, HEAD, OPTIONS' }).end();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const doc = (await current()).docs.get(url.pathname);
    if (doc) return sendDocument(req, res, doc.body, doc.mediaType);
    for (const route of opts.routes ?? []) if (await route(req, res, url, ctx)) return;
    sendJson(req, res, { error: 'not found', path: url.pathname }, 404);
  };
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8787, opts.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url: origin,
    server,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
