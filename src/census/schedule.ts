/**
 * Which host a census probes next (pure: no timers, no I/O; `census.ts` drives it). A host (a normalised name and
 * port, `./hosts.ts`) is offered when its turn is due (its rest after the last probe is over) and probed once at a
 * time. Its addresses (what its name resolved to) are shared with other hosts: one address is asked on one port at a
 * time, by at most `PER_ADDRESS` probes at once (a CDN address serves many servers). A host that cannot start waits
 * in the line of the first address that holds it, and each address serves its line first come, first served: a
 * host arriving later waits behind it, so a busy port cannot starve another one. Exempt addresses (loopback
 * fixtures) are not counted. Each event costs work in proportion to the hosts it lets go, not to all that wait.
 */
import { PER_ADDRESS } from '../net/host-key.js';

// The rule is the net layer's, shared with the workers' address leases.
export { PER_ADDRESS } from '../net/host-key.js';

/** A host as the schedule sees it: its key, the port it is asked on, the addresses its name resolved to. */
export interface ScheduledHost {
  key: string;
  port: number;
  addresses: readonly string[];
}

/** A first-in, first-out queue with O(1) take. */
class Queue<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  peek(): T | undefined {
    return this.items[this.head];
  }
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/** One address in use: the port it is asked on, how many probes ask it, and the hosts waiting for it. */
interface InUse<H> {
  port: number;
  inFlight: number;
  line: Queue<H>;
}

export class Schedule<H extends ScheduledHost> {
  private running = 0;
  private readonly due = new Queue<H>();
  private readonly used = new Map<string, InUse<H>>();
  /** Addresses where a probe ended while hosts wait in their line: their first waiters go first. */
  private readonly freed = new Queue<string>();
  private readonly freedSet = new Set<string>();

  constructor(
    private readonly concurrency: number,
    private readonly exempt: (address: string) => boolean = () => false,
    private readonly perAddress = PER_ADDRESS,
  ) {}

  /** Probes in flight. */
  get inFlight(): number {
    return this.running;
  }

  /** Nothing in flight and nothing waiting. */
  get idle(): boolean {
    return this.running === 0 && this.due.length === 0 && this.used.size === 0;
  }

  /** A host whose turn is due (once at a time: offered again only after its probe ended). */
  offer(host: H): void {
    this.due.push(host);
  }

  /** The next host to probe now (counted as started), or null: wait for a probe to end or a host to be offered. */
  next(): H | null {
    if (this.running >= this.concurrency) return null;
    const host = this.fromLines() ?? this.fromDue();
    if (host) this.start(host);
    return host;
  }

  /** The probe of `host` ended. */
  ended(host: H): void {
    this.running--;
    for (const a of this.counted(host)) {
      const u = this.used.get(a)!;
      u.inFlight--;
      if (u.line.length === 0) {
        if (u.inFlight === 0) this.used.delete(a);
      } else if (!this.freedSet.has(a)) {
        this.freedSet.add(a);
        this.freed.push(a);
      }
    }
  }

  private counted(host: H): string[] {
    return host.addresses.filter((a) => !this.exempt(a));
  }

  /** The address may take one more probe of `host` (its line aside). */
  private fits(address: string, host: H): boolean {
    const u = this.used.get(address);
    return !u || u.inFlight === 0 || (u.port === host.port && u.inFlight < this.perAddress);
  }

  /** The first address that holds `host` back: taken, or with hosts waiting before it (`own`: the line it left). */
  private holder(host: H, own: string | null): string | null {
    for (const a of this.counted(host)) {
      if (a === own) continue;
      if (!this.fits(a, host) || (this.used.get(a)?.line.length ?? 0) > 0) return a;
    }
    return null;
  }

  /**
   * `host` waits in the line of `address` (which `holder` found in use). Every address with a line has a probe in
   * flight or is among the freed ones, so a line always gets its turn.
   */
  private wait(host: H, address: string): void {
    this.used.get(address)!.line.push(host);
  }

  /** The first in the line of a freed address, when the address now takes it and no other address holds it. */
  private fromLines(): H | null {
    while (this.freed.length) {
      const a = this.freed.peek()!;
      const u = this.used.get(a);
      const first = u?.line.peek();
      if (!u || !first || !this.fits(a, first)) {
        this.freed.shift();
        this.freedSet.delete(a);
        if (u && u.line.length === 0 && u.inFlight === 0) this.used.delete(a);
        continue;
      }
      u.line.shift();
      const holder = this.holder(first, a);
      if (holder) {
        this.wait(first, holder);
        continue;
      }
      return first;
    }
    return null;
  }

  private fromDue(): H | null {
    for (let host = this.due.shift(); host; host = this.due.shift()) {
      const holder = this.holder(host, null);
      if (holder) {
        this.wait(host, holder);
        continue;
      }
      return host;
    }
    return null;
  }

  private start(host: H): void {
    this.running++;
    for (const a of this.counted(host)) {
      let u = this.used.get(a);
      if (!u) this.used.set(a, (u = { port: host.port, inFlight: 0, line: new Queue() }));
      if (u.inFlight === 0) u.port = host.port;
      u.inFlight++;
    }
  }
}
