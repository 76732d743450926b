/**
 * The one guarded fetcher for discovery GETs. Discovery reads untrusted documents from the internet, so:
 * https only (http only with `allowPrivate`, for local testing); the address rule of ./address.ts on every
 * connection (IP literals and DNS answers, so on every redirect too); at most 3 redirects; a size cap per
 * document; a time limit; no cookies and no configured headers.
 */
import { isIP } from 'node:net';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';
import { withDefaults } from '../util/defaults.js';
import {
  checkUrl,
  FetchRefused,
  guardedLookup,
  isForbiddenAddress,
  type AddressPolicy,
  type Resolver,
} from './address.js';
import type { Fence } from './fence.js';

export {
  assertPublicTarget,
  checkUrl,
  FetchRefused,
  guardedLookup,
  isForbiddenAddress,
  systemResolver,
  type AddressPolicy,
  type Lookup,
  type RefusalCode,
  type Resolver,
} from './address.js';

export interface FetchPolicy extends AddressPolicy {
  timeoutMs?: number;
  /** The User-Agent sent (default `onetap-discovery/0.1`). */
  userAgent?: string;
  maxBytes?: number;
  maxRedirects?: number;
  /** The lease the read runs under (a worker's probe): checked before each request, and its loss ends the read. */
  fence?: Fence;
}

export interface Fetched {
  /** The URL finally read, after redirects. */
  url: string;
  status: number;
  contentType: string | null;
  etag: string | null;
  text: string;
}

/**
 * An undici dispatcher whose every connection obeys the address rule: an IP literal is refused before the
 * socket opens (Node never runs a lookup for one), a name in the connection's own DNS lookup. For any
 * connection to a URL a document or a server supplied (discovery, authorization metadata, tool arguments).
 * The caller owns it (close it when done).
 */
export function guardedDispatcher(
  policy: AddressPolicy & { connectTimeoutMs?: number; keepAliveTimeoutMs?: number } = {},
): Agent {
  const trusted = policy.trustedAddresses ?? [];
  const connector = buildConnector({
    timeout: policy.connectTimeoutMs ?? 10_000,
    lookup: guardedLookup(trusted, policy.resolver, { allowPrivate: policy.allowPrivate }) as never,
  });
  return new Agent({
    keepAliveTimeout: policy.keepAliveTimeoutMs ?? 1_000,
    connect: (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      if (!policy.allowPrivate && isIP(host) && isForbiddenAddress(host) && !trusted.includes(host)) {
        return callback(new FetchRefused('private-address', `${host} is a private or reserved address`), null);
      }
      connector(opts, callback);
    },
  });
}

/** One pool per address policy (and per injected resolver). */
const dispatchers = new WeakMap<Resolver | typeof FetchRefused, Map<string, Agent>>();

function discoveryDispatcher(policy: AddressPolicy): Dispatcher {
  const owner = policy.resolver ?? FetchRefused;
  const key = policy.allowPrivate ? '*' : (policy.trustedAddresses ?? []).join(',');
  let byKey = dispatchers.get(owner);
  if (!byKey) dispatchers.set(owner, (byKey = new Map()));
  let agent = byKey.get(key);
  if (!agent) byKey.set(key, (agent = guardedDispatcher(policy)));
  return agent;
}

const FETCH_DEFAULTS = { timeoutMs: 10_000, maxBytes: 1024 * 1024, maxRedirects: 3 } as const;

export async function guardedGet(url: string, accept: string, policy: FetchPolicy = {}): Promise<Fetched> {
  const { timeoutMs } = withDefaults(FETCH_DEFAULTS, policy);
  if (!policy.fence) return read(url, accept, policy, AbortSignal.timeout(timeoutMs));
  // Not AbortSignal.any with a timeout signal: on Node 20 a timeout signal only the combined one refers to can be
  // collected, and the read then never times out. One controller, its timer cleared when the read ends.
  const fence = policy.fence;
  const ends = new AbortController();
  const timer = setTimeout(() => ends.abort(), timeoutMs);
  const lost = () => ends.abort(fence.signal.reason);
  fence.signal.addEventListener('abort', lost, { once: true });
  try {
    return await read(url, accept, policy, ends.signal);
  } finally {
    clearTimeout(timer);
    fence.signal.removeEventListener('abort', lost);
  }
}

async function read(url: string, accept: string, policy: FetchPolicy, signal: AbortSignal): Promise<Fetched> {
  const { timeoutMs, maxBytes, maxRedirects } = withDefaults(FETCH_DEFAULTS, policy);
  const seen = new Set<string>();
  let current = checkUrl(url, policy);
  for (let hop = 0; ; hop++) {
    seen.add(current.href);
    let res: Dispatcher.ResponseData;
    policy.fence?.check();
    try {
      res = await request(current, {
        method: 'GET',
        headers: { accept, 'user-agent': policy.userAgent ?? 'onetap-discovery/0.1' },
        signal,
        dispatcher: discoveryDispatcher(policy),
      });
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      if (policy.fence?.signal.aborted) throw policy.fence.signal.reason;
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof FetchRefused) throw cause;
      if (signal.aborted) throw new FetchRefused('timeout', `timed out after ${timeoutMs} ms: ${current.href}`);
      throw new FetchRefused(
        'network',
        `${(err as NodeJS.ErrnoException).code ?? 'error'}: ${(err as Error).message} (${current.href})`,
      );
    }
    if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
      await res.body.dump({ limit: 16 * 1024 }).catch(() => {});
      if (hop >= maxRedirects) throw new FetchRefused('redirects', `more than ${maxRedirects} redirects from ${url}`);
      const next = checkUrl(new URL(String(res.headers.location), current).href, policy);
      if (seen.has(next.href)) throw new FetchRefused('redirects', `redirect loop at ${next.href}`);
      current = next;
      continue;
    }
    const length = Number(res.headers['content-length']);
    if (Number.isFinite(length) && length > maxBytes) {
      res.body.destroy();
      throw new FetchRefused('too-large', `${current.href} is ${length} bytes, over the ${maxBytes}-byte cap`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        total += (chunk as Buffer).length;
        if (total > maxBytes) {
          res.body.destroy();
          throw new FetchRefused('too-large', `${current.href} is over the ${maxBytes}-byte cap; reading stopped`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      if (policy.fence?.signal.aborted) throw policy.fence.signal.reason;
      throw new FetchRefused(
        signal.aborted ? 'timeout' : 'network',
        `${signal.aborted ? `timed out after ${timeoutMs} ms` : (err as Error).message}: ${current.href}`,
      );
    }
    const contentType =
      typeof res.headers['content-type'] === 'string'
        ? res.headers['content-type'].split(';')[0]!.trim().toLowerCase()
        : null;
    const etag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
    return {
      url: current.href,
      status: res.statusCode,
      contentType,
      etag,
      text: Buffer.concat(chunks).toString('utf8'),
    };
  }
}
