/** HTTP manners shared by every document onetap serves: CORS, caching, ETag and 304. */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Content-Type, If-None-Match',
  'access-control-expose-headers': 'ETag',
} as const;

function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** RFC 9110 If-None-Match: a list of tags (weak comparison) or `*`. */
function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => strip(t) === strip(etag));
}

export interface Sent {
  status: number;
}

/** Sends a body with its media type, ETag and cache policy; answers 304 when the client's copy is current. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export function sendDocument(
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  mediaType: string,
  cacheControl = 'public, max-age=3600',
): void {
  const etag = etagOf(body);
  const headers = { ...CORS_HEADERS, 'cache-control': cacheControl, etag, vary: 'Accept' };
  if (matchesIfNoneMatch(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  res.writeHead(200, { ...headers, 'content-type': mediaType, 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  value: unknown,
  status = 200,
  cacheControl = 'no-cache',
): void {
  if (status !== 200) {
    const body = JSON.stringify(value) + '\n';
    res.writeHead(status, {
      ...CORS_HEADERS,
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  sendDocument(req, res, JSON.stringify(value, null, 2) + '\n', 'application/json', cacheControl);
}
