/**
 * Hosts and addresses as politeness counts them, wherever a probe is made (the one-process census, every worker): a
 * host is known by its normalised name and port, whatever the spelling (`EXAMPLE.com.`, `[::ffff:7f00:1]`, `:443` on
 * https), and an address by one canonical form. A host name's addresses are what it resolves to through the guarded
 * lookup, each name once, in bounded time; one address is asked on one port at a time, by at most `PER_ADDRESS`
 * probes at once.
 */
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Lookup, Resolver } from './address.js';

/** One host as politeness counts it: the normalised name (IPv6 without brackets) and the port it is asked on. */
export interface HostKey {
  name: string;
  port: number;
  key: string;
}

/** The most probes in flight on one address (on its one port): a shared CDN address serves many servers. */
export const PER_ADDRESS = 4;
/** The addresses of a host name that politeness counts (the probe connects to one of them). */
export const ADDRESSES_PER_HOST = 16;
/** How long a host name may take to resolve before it counts as not resolving (a temporary failure). */
export const RESOLVE_MS = 10_000;

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/**
 * An address in one form: IPv4 as dotted quad (also when written IPv4-mapped, `::ffff:1.2.3.4` or `::ffff:102:304`),
 * IPv6 lower case and compressed. Not an address: null.
 */
export function canonicalAddress(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 4) return bare;
  if (isIP(bare) !== 6) return null;
  // The URL parser writes IPv6 in its one compressed form, IPv4-mapped as hex groups (`::ffff:7f00:1`).
  const text = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (!mapped) return text;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** A URL host's name as politeness counts it: lower case (the URL parser's), no trailing dot, an address canonical. */
export function normalName(hostname: string): string {
  const name = hostname.replace(/\.+$/, '');
  return canonicalAddress(name) ?? name;
}

/** The key of a normalised name and a port (`name:port`, IPv6 in brackets). */
export const keyOf = (name: string, port: number): string => `${isIP(name) === 6 ? `[${name}]` : name}:${port}`;

/** The host a URL asks: its normalised name and its port, the scheme's default when none is written. */
export function hostKey(url: URL): HostKey {
  const name = normalName(url.hostname);
  const port = url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0);
  return { name, port, key: keyOf(name, port) };
}

/** Loopback (127.0.0.0/8, ::1), of a canonical address. */
export const isLoopback = (address: string): boolean => address === '::1' || /^127\./.test(address);

/** `resolver` answering within `ms`, or failing as a DNS server that does not answer does (EAI_AGAIN). */
export function resolverWithin(resolver: Resolver, ms: number): Resolver {
  return (name) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`no DNS answer for ${name} in ${ms} ms`), { code: 'EAI_AGAIN' })),
        ms,
      );
    });
    return Promise.race([resolver(name), late]).finally(() => clearTimeout(timer));
  };
}

/**
 * A host name's addresses through `lookup` (the probes' guarded one), canonical, each once, at most
 * `ADDRESSES_PER_HOST` (the first ones the lookup gives, which a connection tries first), sorted; an address is its
 * own. None when the lookup fails or refuses the name: the probe then fails on its own.
 */
export function addressesBy(lookup: Lookup): (name: string) => Promise<string[]> {
  return (name) =>
    isIP(name)
      ? Promise.resolve([name])
      : new Promise((resolve) =>
          lookup(name, { all: true }, (err, answers) => {
            const addresses =
              err || !Array.isArray(answers)
                ? []
                : (answers as LookupAddress[]).map((a) => canonicalAddress(a.address));
            resolve([...new Set(addresses.filter((a): a is string => a !== null))].slice(0, ADDRESSES_PER_HOST).sort());
          }),
        );
}
