/**
 * Auth evidence for a 401/403 on initialize: how the server wants to be authenticated. OAuth-only servers
 * stay out of the list (policy: "Must not add: OAuth-only"), so `add` refuses them with this evidence.
 * Read: `WWW-Authenticate` (`resource_metadata`, RFC 9728 §5.1), then the protected resource metadata at
 * `/.well-known/oauth-protected-resource` (path-aware first, then the root). A URL the server supplies on
 * another origin passes discovery's address rule (no private addresses); the typed URL's own origin is the
 * maintainer's.
 */
import type { AuthKind, Exchange } from './observation.js';
import { FetchRefused, guardedGet, type FetchPolicy } from '../discover/fetcher.js';

export interface AuthOptions { timeoutMs: number; allowPrivate?: boolean }

export async function authEvidence(url: string, answer: Exchange, opts: AuthOptions): Promise<AuthKind> {
  const challenge = answer.headers['www-authenticate'] ?? '';
  const origin = new URL(url).origin;
  const candidates: string[] = [];
  const supplied = /resource_metadata\s*=\s*"?([^",\s]+)"?/i.exec(challenge)?.[1];
  if (supplied) { try { candidates.push(new URL(supplied, url).href); } catch { /* not a URL: ignored */ } }
  const path = new URL(url).pathname.replace(/\/$/, '');
  if (path) candidates.push(`${origin}/.well-known/oauth-protected-resource${path}`);
  candidates.push(`${origin}/.well-known/oauth-protected-resource`);
  for (const candidate of candidates) {
    const own = new URL(candidate).origin === origin;
    const policy: FetchPolicy = { timeoutMs: opts.timeoutMs, maxBytes: 64 * 1024, maxRedirects: 0, allowPrivate: own || opts.allowPrivate };
    try {
      const doc = await guardedGet(candidate, 'application/json', policy);
      if (doc.status !== 200) continue;
      const metadata = JSON.parse(doc.text) as { authorization_servers?: unknown };
      if (Array.isArray(metadata.authorization_servers) && metadata.authorization_servers.length > 0) return 'oauth';
    } catch (err) {
      if (!(err instanceof FetchRefused) && !(err instanceof SyntaxError)) throw err;
    }
  }
  if (/^\s*bearer\b/i.test(challenge) && /error="?invalid_token|scope=|realm=/i.test(challenge) && supplied) return 'oauth';
  if (/api[-_ ]?key|x-api-key|apikey|token/i.test(`${challenge} ${answer.bodySnippet ?? ''}`)) return 'api-key';
  return 'unknown';
}
