/**
 * The one guarded fetcher for discovery GETs. Discovery reads untrusted documents from the internet, so:
 * https only (http only with `allowPrivate`, for local testing); no loopback, private, link-local, CGNAT or
 * cloud-metadata address, checked after DNS resolution on every connection (so on every redirect too);
 * at most 3 redirects; a size cap per document; a time limit; no cookies and no configured headers.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { withDefaults } from '../util/defaults.js';

export interface FetchPolicy {
  /** Permit http:// and private/loopback addresses (local testing only). */
  allowPrivate?: boolean;
  /** Exact addresses exempt from the private-address rule, http allowed (local fixtures, an internal mirror). */
  trustedAddresses?: readonly string[];
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
}

export interface Fetched {
  /** The URL finally read, after redirects. */
  url: string;
  status: number;
  contentType: string | null;
  etag: string | null;
  text: string;
}

export type RefusalCode = 'bad-url' | 'scheme' | 'private-address' | 'redirects' | 'too-large' | 'timeout' | 'network' | 'http';

export class FetchRefused extends Error {
  constructor(readonly code: RefusalCode, message: string, readonly status: number | null = null) {
    super(message);
  }
}

/** Addresses that discovery never reaches without `allowPrivate`. */
const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32]] as const) FORBIDDEN.addSubnet(net, prefix, 'ipv6');

function isForbiddenAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return FORBIDDEN.check(mapped[1]!, 'ipv4');
  return FORBIDDEN.check(address, v === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;
export type Lookup = (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => void;

/** dns.lookup that refuses forbidden answers: the check happens where the connection is made, every time. */
export function guardedLookup(trusted: readonly string[] = []): Lookup {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const bad = addresses.find((a) => isForbiddenAddress(a.address) && !trusted.includes(a.address));
      if (bad) return callback(Object.assign(new FetchRefused('private-address', `${hostname} resolves to ${bad.address}, a private or reserved address`), { code: 'EPRIVATE' }) as never);
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

const dispatchers = new Map<string, Agent>();

/** The dispatcher for traffic that must obey the address rules (discovery's GETs and probes). */
function discoveryDispatcher(policy: Pick<FetchPolicy, 'allowPrivate' | 'trustedAddresses'>): Dispatcher {
  const key = policy.allowPrivate ? '*' : (policy.trustedAddresses ?? []).join(',');
  let agent = dispatchers.get(key);
  if (!agent) {
    agent = new Agent({ keepAliveTimeout: 1_000, ...(policy.allowPrivate ? {} : { connect: { lookup: guardedLookup(policy.trustedAddresses) as never } }) });
    dispatchers.set(key, agent);
  }
  return agent;
}

/** Refuses a URL that discovery may not read: bad scheme, or an IP literal in a forbidden range. */
export function checkUrl(url: string, policy: Pick<FetchPolicy, 'allowPrivate' | 'trustedAddresses'>): URL {
  let u: URL;
  try { u = new URL(url); } catch { throw new FetchRefused('bad-url', `not a URL: ${url}`); }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const trusted = policy.trustedAddresses?.includes(host) ?? false;
  const open = policy.allowPrivate || trusted;
  if (!open && (isForbiddenAddress(host) || host === 'localhost' || host.endsWith('.localhost'))) {
    throw new FetchRefused('private-address', `${host} is a private or reserved address (use --allow-private for local testing)`);
  }
  if (u.protocol !== 'https:' && !(open && u.protocol === 'http:')) throw new FetchRefused('scheme', `${u.protocol.replace(':', '')} is refused: https only${open ? '' : ' (http only with --allow-private)'}: ${url}`);
  if (u.username || u.password) throw new FetchRefused('bad-url', `credentials in a URL are refused: ${u.host}`);
  return u;
}

const FETCH_DEFAULTS = { timeoutMs: 10_000, maxBytes: 1024 * 1024, maxRedirects: 3 } as const;

export async function guardedGet(url: string, accept: string, policy: FetchPolicy = {}): Promise<Fetched> {
  const { timeoutMs, maxBytes, maxRedirects } = withDefaults(FETCH_DEFAULTS, policy);
  const signal = AbortSignal.timeout(timeoutMs);
  const seen = new Set<string>();
  let current = checkUrl(url, policy);
  for (let hop = 0; ; hop++) {
    seen.add(current.href);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(current, { method: 'GET', headers: { accept, 'user-agent': 'onetap-discovery/0.1' }, signal, dispatcher: discoveryDispatcher(policy) });
    } catch (err) {
      if (err instanceof FetchRefused) throw err;
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof FetchRefused) throw cause;
      if (signal.aborted) throw new FetchRefused('timeout', `timed out after ${timeoutMs} ms: ${current.href}`);
      throw new FetchRefused('network', `${(err as NodeJS.ErrnoException).code ?? 'error'}: ${(err as Error).message} (${current.href})`);
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
      throw new FetchRefused(signal.aborted ? 'timeout' : 'network', `${signal.aborted ? `timed out after ${timeoutMs} ms` : (err as Error).message}: ${current.href}`);
    }
    const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'].split(';')[0]!.trim().toLowerCase() : null;
    const etag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
    return { url: current.href, status: res.statusCode, contentType, etag, text: Buffer.concat(chunks).toString('utf8') };
  }
}
