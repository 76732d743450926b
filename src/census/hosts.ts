/**
 * The census's hosts (pure): a host is known by its normalised name and port, whatever the registry's spelling
 * (`EXAMPLE.com.`, `[::ffff:7f00:1]`, `:443` on https), and addresses by one canonical form. Politeness, the rest
 * between probes, `--opt-out` and the outage guard all count hosts this way.
 */
import { isIP } from 'node:net';
import { hostKey, keyOf, normalName, type HostKey } from '../net/host-key.js';
import { isNetworkLevel, networkLooksDown } from '../policy/policy.js';

// The normalisation is the net layer's, shared with the workers (their host and address leases count hosts alike).
export { canonicalAddress, hostKey, isLoopback, type HostKey } from '../net/host-key.js';

/** The hosts a census never contacts: a name alone (every port of it), or a name and port. */
export interface OptOut {
  names: ReadonlySet<string>;
  hosts: ReadonlySet<string>;
}

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
    try {
      url = new URL(`http://${bareV6 ? `[${entry}]` : (m?.[1] ?? '')}/`);
    } catch {
      /* not a host */
    }
    const port = m?.[2] === undefined ? null : Number(m[2]);
    if (!url?.hostname || (!bareV6 && !m) || (port !== null && (port < 1 || port > 65_535)))
      throw new Error(`line ${i + 1} is not a host or host:port: ${JSON.stringify(entry.slice(0, 80))}`);
    const name = normalName(url.hostname);
    if (port === null) names.add(name);
    else hosts.add(keyOf(name, port));
  });
  return { names, hosts };
}

export const optedOut = (optOut: OptOut, host: HostKey): boolean =>
  optOut.names.has(host.name) || optOut.hosts.has(host.key);

/** The fewest hosts probed before the outage guard may stop a census. */
export const OUTAGE_HOSTS = 20;

/**
 * The outage guard (the policy's `networkLooksDown`, by host): this machine's network looks down when at least
 * `OUTAGE_HOSTS` hosts were probed and at least half of them failed at the network level (every probe of the host
 * did). Counted by host, so one host with many remotes weighs as one.
 */
export class OutageGuard {
  /** Per host: whether every probe of it failed at the network level. */
  private readonly failedAll = new Map<string, boolean>();

  add(url: string, reason: string): void {
    let key: string;
    try {
      key = hostKey(new URL(url)).key;
    } catch {
      return;
    }
    this.failedAll.set(key, (this.failedAll.get(key) ?? true) && isNetworkLevel(reason));
  }

  /** Why the census must not publish, or null. */
  outage(): string | null {
    const failed = [...this.failedAll.values()].filter(Boolean).length;
    if (!networkLooksDown(failed, this.failedAll.size, OUTAGE_HOSTS)) return null;
    return `${failed} of ${this.failedAll.size} hosts failed at the network level: this machine's network looks down`;
  }
}
