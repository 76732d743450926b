/**
 * The address rule for every connection to a URL that a document or a server supplied (catalog and card
 * URLs, redirects, discovered remotes, authorization metadata, URLs handed to the MCP server's tools).
 * Only URLs a maintainer typed are exempt.
 *
 * Two places enforce it, because neither alone is enough:
 * - IP literals are checked before connecting (`checkUrl`): Node never runs a DNS lookup for a literal.
 * - Names are checked inside the DNS lookup of the connection itself (`guardedLookup`), so a name that
 *   answers differently on a second lookup (DNS rebinding) still cannot reach a private address.
 * `assertPublicTarget` runs both up front for callers that want an early, clear refusal; it does not
 * replace the guarded lookup on the connection.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export type RefusalCode =
  | 'bad-url'
  | 'scheme'
  | 'private-address'
  | 'redirects'
  | 'too-large'
  | 'timeout'
  | 'network'
  | 'http';

export class FetchRefused extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** Resolves a host name to its addresses (injectable: tests and embedders supply their own). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true });

export interface AddressPolicy {
  /** Permit http:// and private/loopback addresses (local testing only). */
  allowPrivate?: boolean;
  /** Exact addresses exempt from the private-address rule, http allowed (local fixtures, an internal mirror). */
  trustedAddresses?: readonly string[];
  /** How names are resolved for these connections (default: the system's resolver). */
  resolver?: Resolver;
  /** Permit http:// as well as https:// (the address rule still holds): the origin of a typed http URL. */
  allowHttp?: boolean;
}

/** IPv4 ranges that are not on the public internet (IANA special-purpose registry, "globally reachable: false"). */
const FORBIDDEN_V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  FORBIDDEN_V4.addSubnet(net, prefix, 'ipv4');
/** Registry entries marked "globally reachable: true" inside a refused block (PCP and TURN anycast in 192.0.0.0/24). */
const REACHABLE_V4 = new BlockList();
for (const address of ['192.0.0.9', '192.0.0.10']) REACHABLE_V4.addAddress(address, 'ipv4');
const forbiddenV4 = (address: string) => FORBIDDEN_V4.check(address, 'ipv4') && !REACHABLE_V4.check(address, 'ipv4');

/**
 * Reserved parts of IPv6 global unicast (2000::/3). Everything outside 2000::/3 is refused outright, which
 * covers ::/128, ::1, ::a.b.c.d (IPv4-compatible, ::/96), ::ffff:0:0:0/96 (IPv4-translated), 64:ff9b:1::/48
 * (local-use NAT64), 100::/64 (discard), fc00::/7, fe80::/10, fec0::/10 and ff00::/8.
 * 2001::/23 (IETF protocol assignments, Teredo and benchmarking among them) is refused but for the entries the
 * registry marks globally reachable. 6to4 and Teredo embed an IPv4 address that a relay would reach: both are
 * deprecated and refused whole.
 */
const FORBIDDEN_V6_UNICAST = new BlockList();
for (const [net, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID 2001:10::/28
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation (RFC 9637)
] as const)
  FORBIDDEN_V6_UNICAST.addSubnet(net, prefix, 'ipv6');
const REACHABLE_V6 = new BlockList();
for (const [net, prefix] of [
  ['2001:1::1', 128],
  ['2001:1::2', 128],
  ['2001:1::3', 128], // PCP, TURN and DNS-SD SRP anycast
  ['2001:3::', 32], // AMT
  ['2001:4:112::', 48], // AS112-v6
  ['2001:20::', 28], // ORCHIDv2
  ['2001:30::', 28], // drone remote ID
] as const)
  REACHABLE_V6.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included), or null. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const groups =
    tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 ? groups : null;
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** True for an IP address that a supplied URL must never reach. Names are not addresses: false. */
export function isForbiddenAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return forbiddenV4(address);
  const g = ipv6Groups(address);
  if (!g) return false;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // IPv4-mapped (::ffff:a.b.c.d) and the well-known NAT64 prefix (64:ff9b::a.b.c.d, what DNS64 synthesises
  // on IPv6-only networks): the connection reaches the embedded IPv4 address, so that address decides.
  if (zeros(0, 5) && g[5] === 0xffff) return forbiddenV4(v4Of(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return forbiddenV4(v4Of(g[6]!, g[7]!));
  if ((g[0]! & 0xe000) !== 0x2000) return true;
  return FORBIDDEN_V6_UNICAST.check(address, 'ipv6') && !REACHABLE_V6.check(address, 'ipv6');
}

/** `localhost` and its subdomains (RFC 6761) resolve to loopback without asking DNS. */
function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.+$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/** The host of a URL without IPv6 brackets. */
export function hostOfUrl(u: URL): string {
  return u.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Refuses a URL that a supplied document may not make us read, before any connection: not a URL,
 * a scheme other than https (http only when private addresses are allowed or the literal is trusted),
 * credentials in the URL, or an IP literal (or `localhost`) in a forbidden range.
 */
export function checkUrl(url: string, policy: AddressPolicy = {}): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new FetchRefused('bad-url', `not a URL: ${url}`);
  }
  const host = hostOfUrl(u);
  const trusted = policy.trustedAddresses?.includes(host) ?? false;
  const open = policy.allowPrivate || trusted;
  if (!open && (isForbiddenAddress(host) || isLocalName(host))) {
    throw new FetchRefused(
      'private-address',
      `${host} is a private or reserved address (use --allow-private for local testing)`,
    );
  }
  if (u.protocol !== 'https:' && !((open || policy.allowHttp) && u.protocol === 'http:'))
    throw new FetchRefused(
      'scheme',
      `${u.protocol.replace(':', '')} is refused: https only${open ? '' : ' (http only with --allow-private)'}: ${url}`,
    );
  if (u.username || u.password) throw new FetchRefused('bad-url', `credentials in a URL are refused: ${u.host}`);
  return u;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;
export type Lookup = (
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
) => void;

function privateRefusal(hostname: string, address: string): FetchRefused {
  return new FetchRefused('private-address', `${hostname} resolves to ${address}, a private or reserved address`);
}

/**
 * A `lookup` for a connection (undici's `connect.lookup`, `net.connect`) that resolves with `resolver` and
 * refuses the connection when any answer is forbidden and not trusted: the check happens where the
 * connection is made, on every connection. With `allowPrivate`, nothing is refused (the resolver still serves).
 */
export function guardedLookup(
  trusted: readonly string[] = [],
  resolver: Resolver = systemResolver,
  opts: { allowPrivate?: boolean } = {},
): Lookup {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (answers) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const addresses = answers
          .filter((a) => !family || a.family === family)
          .map((a) => ({ address: a.address, family: a.family }));
        if (!addresses.length)
          return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
        const bad = opts.allowPrivate
          ? undefined
          : addresses.find((a) => (isForbiddenAddress(a.address) || !isIP(a.address)) && !trusted.includes(a.address));
        if (bad) return callback(privateRefusal(hostname, bad.address));
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err),
    );
  };
}

/**
 * Checks a supplied URL up front: the URL rules of `checkUrl`, then every address its name resolves to.
 * A name that does not resolve passes (the connection fails on its own). Connections must still use
 * `guardedLookup`: a name may answer differently the second time.
 */
export async function assertPublicTarget(url: string, opts: AddressPolicy = {}): Promise<void> {
  const u = checkUrl(url, opts);
  const host = hostOfUrl(u);
  if (opts.allowPrivate || isIP(host)) return;
  let answers: ReadonlyArray<{ address: string }>;
  try {
    answers = await (opts.resolver ?? systemResolver)(host);
  } catch {
    return;
  }
  const bad = answers.find(
    (a) => (isForbiddenAddress(a.address) || !isIP(a.address)) && !(opts.trustedAddresses ?? []).includes(a.address),
  );
  if (bad) throw privateRefusal(host, bad.address);
}
