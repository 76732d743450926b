/**
 * Auth evidence for a 401/403 on initialize: how the server wants to be authenticated. OAuth-only servers
 * stay out of the list (policy: "Must not add: OAuth-only"), so `add` refuses them with this evidence.
 * Read: `WWW-Authenticate` (`resource_metadata`, RFC 9728 §5.1), then the protected resource metadata at
 * `/.well-known/oauth-protected-resource` (path-aware first, then the root).
 *
 * Every one of these GETs obeys discovery's address rule (no private or reserved address, checked on the
 * connection's own DNS lookup), the server's own origin included: the name resolved once for the probe is
 * resolved again here, and a rebinding name would otherwise aim this GET inward. The one exemption is a
 * typed URL whose host is an IP literal (or `localhost`): its own origin is the address the maintainer typed,
 * which no DNS answer can change. The own origin of a typed http:// URL may be read over http (the address
 * rule still holds); another origin only over https. `allowPrivate` (tests, local fixtures) lifts the rule.
 */
import type { LiveExchange } from './live.js';
import type { AuthKind } from '../model/words.js';
import { isIP } from 'node:net';
import { FetchRefused, guardedGet, type FetchPolicy, type Resolver } from '../net/fetcher.js';
import type { Fence } from '../net/fence.js';

export interface AuthOptions {
  timeoutMs: number;
  allowPrivate?: boolean;
  /** How names are resolved for these GETs (default: the system's resolver; tests inject one). */
  resolver?: Resolver;
  /** The User-Agent of these GETs (default: onetap's discovery agent). */
  userAgent?: string;
  /** The lease the probe runs under (a worker's): its loss ends these GETs. */
  fence?: Fence;
}

/** The typed URL names its address itself (an IP literal or `localhost`): no DNS answer can move it. */
function literalHost(u: URL): boolean {
  const host = u.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '');
  return isIP(host) !== 0 || host === 'localhost' || host.endsWith('.localhost');
}

export async function authEvidence(url: string, answer: LiveExchange, opts: AuthOptions): Promise<AuthKind> {
  const challenge = answer.headers['www-authenticate'] ?? '';
  const typed = new URL(url);
  const origin = typed.origin;
  const literal = literalHost(typed);
  const candidates: string[] = [];
  const supplied = /resource_metadata\s*=\s*"?([^",\s]+)"?/i.exec(challenge)?.[1];
  if (supplied) {
    try {
      candidates.push(new URL(supplied, url).href);
    } catch {
      /* not a URL: ignored */
    }
  }
  const path = new URL(url).pathname.replace(/\/$/, '');
  if (path) candidates.push(`${origin}/.well-known/oauth-protected-resource${path}`);
  candidates.push(`${origin}/.well-known/oauth-protected-resource`);
  for (const candidate of candidates) {
    const own = new URL(candidate).origin === origin;
    const policy: FetchPolicy = {
      timeoutMs: opts.timeoutMs,
      maxBytes: 64 * 1024,
      maxRedirects: 0,
      allowPrivate: (own && literal) || opts.allowPrivate,
      allowHttp: own && typed.protocol === 'http:',
      resolver: opts.resolver,
      userAgent: opts.userAgent,
      fence: opts.fence,
    };
    try {
      const doc = await guardedGet(candidate, 'application/json', policy);
      if (doc.status !== 200) continue;
      const metadata = JSON.parse(doc.text) as { authorization_servers?: unknown } | null;
      if (
        metadata &&
        typeof metadata === 'object' &&
        Array.isArray(metadata.authorization_servers) &&
        metadata.authorization_servers.length > 0
      )
        return 'oauth';
    } catch (err) {
      if (!(err instanceof FetchRefused) && !(err instanceof SyntaxError)) throw err;
    }
  }
  if (/^\s*bearer\b/i.test(challenge) && /error="?invalid_token|scope=|realm=/i.test(challenge) && supplied)
    return 'oauth';
  if (/api[-_ ]?key|x-api-key|apikey|token/i.test(`${challenge} ${answer.bodySnippet ?? ''}`)) return 'api-key';
  return 'unknown';
}
