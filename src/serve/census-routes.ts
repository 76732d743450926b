/**
 * `serve --census <file>`: a census's verification records as a sub-registry: `/v0.1/servers` with cursor paging
 * (the registry's list API: `cursor`, `limit` up to 100), and the census page at `/` and `/census`. The file is read
 * again when it changes (a new census replaces it).
 */
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SERVE_LIMITS } from './server.js';
import { CENSUS_CSP, censusListPage, censusPage, type CensusDocument } from '../census/page.js';

export function censusRoutes(path: string, previousPath?: string): Array<(req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>> {
  let cached: { mtimeMs: number; doc: CensusDocument; page: string | null } | null = null;
  const read = async () => {
    const { mtimeMs } = await stat(path);
    if (cached?.mtimeMs !== mtimeMs) cached = { mtimeMs, doc: JSON.parse(await readFile(path, 'utf8')) as CensusDocument, page: null };
    return cached;
  };
  return [async (req, res, url) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (url.pathname === '/v0.1/servers') {
      const limit = Number(url.searchParams.get('limit') ?? 30);
      const page = Number.isInteger(limit) && limit >= 1 && limit <= 100 ? censusListPage((await read()).doc, url.searchParams.get('cursor'), limit) : null;
      res.writeHead(page ? 200 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify(page ?? { error: 'bad cursor or limit (1 to 100)' }));
      return true;
    }
    if (url.pathname === '/' || url.pathname === '/census') {
      const c = await read();
      c.page ??= censusPage(c.doc, previousPath ? JSON.parse(await readFile(previousPath, 'utf8')) as CensusDocument : null);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CENSUS_CSP });
      res.end(c.page);
      return true;
    }
    return false;
  }];
}

/** The census alone on its own server (no catalog), with `serve`'s connection limits. */
export async function serveCensusFile(path: string, previousPath: string | undefined, host: string, port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const [route] = censusRoutes(path, previousPath);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://census');
    route!(req, res, url).then((handled) => {
      if (!handled) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not found'); }
    }, () => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('the census file could not be read');
    });
  });
  server.maxConnections = SERVE_LIMITS.maxConnections;
  server.headersTimeout = SERVE_LIMITS.headersTimeoutMs;
  server.keepAliveTimeout = SERVE_LIMITS.keepAliveTimeoutMs;
  server.setTimeout(SERVE_LIMITS.idleTimeoutMs);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const a = server.address() as AddressInfo;
  return { url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}
