/**
 * `serve --census <file>`: a census's verification records as a sub-registry: `/v0.1/servers` with cursor paging
 * (the registry's list API: `cursor`, `limit` up to 100; a record past its `expiresAt` marked `expired: true`), and
 * the census page at `/` and `/census`. The file is read again when it changes (a new census replaces it).
 */
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hardenedServer, SERVE_LIMITS, terminalLog, type RunningServer } from './server.js';
import { sendDocument, sendJson } from './http.js';
import { CENSUS_CSP, censusListPage, censusPage, nextExpiry, type CensusDocument } from '../census/page.js';

export function censusRoutes(
  path: string,
  previousPath?: string,
  now: () => Date = () => new Date(),
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean> {
  // The page is made again when the file changes, or when one of its records expires.
  let cached: { mtimeMs: number; doc: CensusDocument; page: string | null; until: number } | null = null;
  const read = async () => {
    const { mtimeMs } = await stat(path);
    if (cached?.mtimeMs !== mtimeMs)
      cached = {
        mtimeMs,
        doc: JSON.parse(await readFile(path, 'utf8')) as CensusDocument,
        page: null,
        until: Infinity,
      };
    else if (now().getTime() > cached.until) cached.page = null;
    return cached;
  };
  return async (req, res, url) => {
    if (url.pathname === '/v0.1/servers') {
      const limit = Number(url.searchParams.get('limit') ?? 30);
      const page =
        Number.isInteger(limit) && limit >= 1 && limit <= 100
          ? censusListPage((await read()).doc, url.searchParams.get('cursor'), limit, now())
          : null;
      sendJson(req, res, page ?? { error: 'bad cursor or limit (1 to 100)' }, page ? 200 : 400);
      return true;
    }
    if (url.pathname === '/' || url.pathname === '/census') {
      const c = await read();
      if (c.page === null) {
        const at = now();
        c.page = censusPage(
          c.doc,
          previousPath ? (JSON.parse(await readFile(previousPath, 'utf8')) as CensusDocument) : null,
          at,
        );
        c.until = nextExpiry(c.doc, at);
      }
      res.setHeader('content-security-policy', CENSUS_CSP);
      sendDocument(req, res, c.page, 'text/html; charset=utf-8', 'no-cache');
      return true;
    }
    return false;
  };
}

/** The census alone on its own server (no catalog), in `serve`'s hardened shell. */
export async function serveCensusFile(
  path: string,
  previousPath: string | undefined,
  host: string,
  port: number,
): Promise<RunningServer> {
  const route = censusRoutes(path, previousPath);
  return hardenedServer({ ...SERVE_LIMITS, host, port, log: terminalLog }, async (req, res, url) => {
    if (!(await route(req, res, url))) sendJson(req, res, { error: 'not found', path: url.pathname }, 404);
  });
}
