/**
 * The census's hosts (pure): a host is known by its normalised name and port, whatever the registry's spelling
 * (`EXAMPLE.com.`, `[::ffff:7f00:1]`, `:443` on https), and addresses by one canonical form. Politeness, the rest
 * between probes, `--opt-out` and the outage guard all count hosts this way.
 */
import { isIP } from 'node:net';

/** One host as politeness counts it: the normalised name (IPv6 without brackets) and the port it is asked on. */
export interface HostKey { name: string; port: number; key: string }

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
function normalName(hostname: string): string {
  const name = hostname.replace(/\.+$/, '');
  return canonicalAddress(name) ?? name;
}

const keyOf = (name: string, port: number) => `${isIP(name) === 6 ? `[${name}]` : name}:${port}`;

/** The host a URL asks: its normalised name and its port, the scheme's default when none is written. */
export function hostKey(url: URL): HostKey {
  const name = normalName(url.hostname);
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol] ?? 0;
  return { name, port, key: keyOf(name, port) };
}

/** The hosts a census never contacts: a name alone (every port of it), or a name and port. */
export interface OptOut { names: ReadonlySet<string>; hosts: ReadonlySet<string> }

export const NO_OPT_OUT: OptOut = { names: new Set(), hosts: new Set() };

/**
 * An opt-out file: one host per line (`host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; `#` starts a
 * comment), each normalised as `hostKey` normalises URLs. A line that is not a host throws, naming its number.
 */
export function parseOptOut(text: string): OptOut {
  const names = new Set<string>();
  const hosts = new Set<string>();
  text.split('\n').forEach((line, i) => {
    const entry = line.replace(/#.*/, '').trim();
    if (!entry) return;
    const bareV6 = isIP(entry) === 6;
    const m = bareV6 ? null : /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
    let url: URL | null = null;
    try { url = new URL(`http://${bareV6 ? `[${entry}]` : m?.[1] ?? ''}/`); } catch { /* not a host */ }
    const port = m?.[2] === undefined ? null : Number(m[2]);
    if (!url || !url.hostname || (!bareV6 && !m) || (port !== null && (port < 1 || port > 65_535))) throw new Error(`line ${i + 1} is not a host or host:port: ${JSON.stringify(entry.slice(0, 80))}`);
    const name = normalName(url.hostname);
    if (port === null) names.add(name); else hosts.add(keyOf(name, port));
  });
  return { names, hosts };
}

export const optedOut = (optOut: OptOut, host: HostKey): boolean => optOut.names.has(host.name) || optOut.hosts.has(host.key);

/** Loopback (127.0.0.0/8, ::1), of a canonical address. */
export const isLoopback = (address: string): boolean => address === '::1' || /^127\./.test(address);

/** Failures before any HTTP answer, of this machine's network as much as of the server's. */
const NETWORK_LEVEL = new Set(['dns', 'refused', 'timeout', 'network', 'tls']);

/** The fewest hosts probed before the outage guard may stop a census. */
export const OUTAGE_HOSTS = 20;

/**
 * The outage guard: this machine's network looks down when at least `OUTAGE_HOSTS` hosts were probed and at least
 * half of them failed at the network level (every probe of the host did). Counted by host, so one host with many
 * remotes weighs as one.
 */
export class OutageGuard {
  /** Per host: whether every probe of it failed at the network level. */
  private readonly failedAll = new Map<string, boolean>();

  add(url: string, reason: string): void {
    let key: string;
    try { key = hostKey(new URL(url)).key; } catch { return; }
    this.failedAll.set(key, (this.failedAll.get(key) ?? true) && NETWORK_LEVEL.has(reason));
  }

  /** Why the census must not publish, or null. */
  outage(): string | null {
    const failed = [...this.failedAll.values()].filter(Boolean).length;
    if (this.failedAll.size < OUTAGE_HOSTS || failed * 2 < this.failedAll.size) return null;
    return `${failed} of ${this.failedAll.size} hosts failed at the network level: this machine's network looks down`;
  }
}
