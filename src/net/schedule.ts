/**
 * The one scheduler of probes in a process: refresh, probe, discovery and a worker's job (`probeMany`) and the
 * census run their probes through `eachInTurn`, the politeness rules its options: at most `concurrency` in flight,
 * `perHost` per host, a host's rest between its probes (and the hold a probe returns, for a 429), and, where a host's
 * addresses are known (the census resolves them), the address rule below. Workers share the same rules over
 * processes through the store's leases (`worker/worker.ts`, `underHostLeases`).
 *
 * `Schedule` decides which host starts next (pure: no timers, no I/O; `eachInTurn` drives it). A host (a normalised
 * name and port, `./host-key.ts`) is offered when it may take one more probe (its rest is over, it has a slot). Its
 * addresses (what its name resolved to) are shared with other hosts: one address is asked on one port at a time, by
 * at most `PER_ADDRESS` probes at once (a CDN address serves many servers). A host that cannot start waits in the
 * line of the first address that holds it, and each address serves its line first come, first served: a host
 * arriving later waits behind it, so a busy port cannot starve another one. Exempt addresses (loopback fixtures) are
 * not counted. Each event costs work in proportion to the hosts it lets go, not to all that wait.
 */
import { PER_ADDRESS } from './host-key.js';

export { PER_ADDRESS } from './host-key.js';

/** A host as the schedule sees it: its key, the port it is asked on, the addresses its name resolved to. */
export interface ScheduledHost {
  key: string;
  port: number;
  addresses: readonly string[];
}

/** Hosts offered, in the order a start takes them. */
interface DueQueue<T> {
  readonly length: number;
  push(item: T): void;
  shift(): T | undefined;
}

/** A first-in, first-out queue with O(1) take. */
class Queue<T> implements DueQueue<T> {
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

/** The least rank first (a binary heap): hosts by the input position of their next item. */
class Ranked<T> implements DueQueue<T> {
  private readonly items: T[] = [];
  constructor(private readonly rank: (item: T) => number) {}
  get length(): number {
    return this.items.length;
  }
  push(item: T): void {
    const xs = this.items;
    xs.push(item);
    for (let i = xs.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (this.rank(xs[parent]!) <= this.rank(xs[i]!)) break;
      [xs[parent], xs[i]] = [xs[i]!, xs[parent]!];
      i = parent;
    }
  }
  shift(): T | undefined {
    const xs = this.items;
    const top = xs[0];
    const last = xs.pop();
    if (xs.length === 0 || last === undefined) return top;
    xs[0] = last;
    for (let i = 0; ; ) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let least = i;
      if (l < xs.length && this.rank(xs[l]!) < this.rank(xs[least]!)) least = l;
      if (r < xs.length && this.rank(xs[r]!) < this.rank(xs[least]!)) least = r;
      if (least === i) break;
      [xs[least], xs[i]] = [xs[i]!, xs[least]!];
      i = least;
    }
    return top;
  }
}

export interface ScheduleOptions<H> {
  /** Addresses the per-address rule does not count (loopback fixtures). */
  exempt?: (address: string) => boolean;
  perAddress?: number;
  /** Offered hosts start by least rank (the input position of their next item); without, first offered first. */
  rank?: (host: H) => number;
}

/** One address in use: the port it is asked on, how many probes ask it, and the hosts waiting for it. */
interface InUse<H> {
  port: number;
  inFlight: number;
  line: Queue<H>;
}

export class Schedule<H extends ScheduledHost> {
  private running = 0;
  private readonly due: DueQueue<H>;
  private readonly used = new Map<string, InUse<H>>();
  /** Addresses where a probe ended while hosts wait in their line: their first waiters go first. */
  private readonly freed = new Queue<string>();
  private readonly freedSet = new Set<string>();

  private readonly exempt: (address: string) => boolean;
  private readonly perAddress: number;

  constructor(
    private readonly concurrency: number,
    options: ScheduleOptions<H> = {},
  ) {
    this.exempt = options.exempt ?? (() => false);
    this.perAddress = options.perAddress ?? PER_ADDRESS;
    this.due = options.rank ? new Ranked(options.rank) : new Queue();
  }

  /** Probes in flight. */
  get inFlight(): number {
    return this.running;
  }

  /** Nothing in flight and nothing waiting. */
  get idle(): boolean {
    return this.running === 0 && this.due.length === 0 && this.used.size === 0;
  }

  /** A host that may take one more probe now (offered once per probe it is to start). */
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

/** The host an item is probed on: its key, the port it is asked on and the name its addresses are looked up by. */
export interface ItemHost {
  key: string;
  port: number;
  name: string;
}

export interface InTurnOptions<T> {
  /** Items in flight at once. */
  concurrency: number;
  /** Items in flight at once per host (default 1). */
  perHost?: number;
  /** A host's rest between the end of a probe and the start of its next (default 0). */
  restMs?: number;
  hostOf: (item: T) => ItemHost;
  /**
   * A host name's addresses (the probes' own answer), for the address rule; looked up `RESOLVING` at a time while
   * others are probed, a host scheduled once its name is resolved. Without: no address rule.
   */
  addressesOf?: (name: string) => Promise<string[]>;
  /** Addresses the rule does not count (loopback fixtures). */
  exempt?: (address: string) => boolean;
  /**
   * 'input' (default): a free slot takes the earliest item, in input order, whose host may start; 'most-left': the
   * host with the most items left (a census: its largest host, probed one at a time with rests between, sets how long
   * the whole takes, so it never waits behind hosts of one remote).
   */
  order?: 'input' | 'most-left';
}

/** Host names looked up at once. */
const RESOLVING = 8;

interface HostTurn extends ScheduledHost {
  name: string;
  /** Input positions of its items not yet started, in order. */
  items: number[];
  next: number;
  inFlight: number;
  /** Offered to the schedule, or resting: not to be offered again until started or rested. */
  waiting: boolean;
}

/**
 * Runs `work` for every item under the politeness rules of `options` (see the top of this file). `work` may return
 * how long its host must wait before its next probe (a 429's Retry-After), beyond `restMs`. The first error stops
 * every start and is thrown.
 */
export async function eachInTurn<T>(
  items: readonly T[],
  options: InTurnOptions<T>,
  work: (item: T, index: number) => Promise<number | undefined>,
): Promise<void> {
  const { concurrency, perHost = 1, restMs = 0, addressesOf, order = 'input' } = options;
  const byKey = new Map<string, HostTurn>();
  items.forEach((item, i) => {
    const h = options.hostOf(item);
    const turn = byKey.get(h.key);
    if (turn) turn.items.push(i);
    else byKey.set(h.key, { ...h, addresses: [], items: [i], next: 0, inFlight: 0, waiting: false });
  });
  const hosts = [...byKey.values()];
  const schedule = new Schedule<HostTurn>(Math.max(1, concurrency), {
    exempt: options.exempt,
    rank: order === 'input' ? (h) => h.items[h.next]! : (h) => h.next - h.items.length,
  });
  const mayStart = (h: HostTurn) => !h.waiting && h.next < h.items.length && h.inFlight < perHost;
  const offer = (h: HostTurn) => {
    if (!mayStart(h)) return;
    h.waiting = true;
    schedule.offer(h);
  };
  let resolved = addressesOf ? 0 : hosts.length;
  let resolving = 0;
  let resting = 0;
  let failure: { error: unknown } | null = null;
  if (!addressesOf) hosts.forEach(offer);
  await new Promise<void>((resolve, reject) => {
    const pump = () => {
      if (failure) return reject(failure.error);
      while (addressesOf && resolving < RESOLVING && resolved + resolving < hosts.length) {
        const host = hosts[resolved + resolving++]!;
        addressesOf(host.name).then(
          (addresses) => {
            host.addresses = addresses;
            resolving--;
            resolved++;
            offer(host);
            pump();
          },
          (error) => {
            failure ??= { error };
            pump();
          },
        );
      }
      for (let host = schedule.next(); host; host = schedule.next()) {
        const h = host;
        const index = h.items[h.next++]!;
        h.inFlight++;
        h.waiting = false;
        offer(h);
        work(items[index]!, index).then(
          (hold) => {
            h.inFlight--;
            schedule.ended(h);
            const wait = Math.max(restMs, hold ?? 0);
            if (wait > 0 && h.next < h.items.length && !h.waiting) {
              h.waiting = true;
              resting++;
              setTimeout(() => {
                resting--;
                h.waiting = false;
                offer(h);
                pump();
              }, wait);
            } else offer(h);
            pump();
          },
          (error) => {
            failure ??= { error };
            schedule.ended(h);
            pump();
          },
        );
      }
      if (resolved === hosts.length && resting === 0 && schedule.idle) resolve();
    };
    pump();
  });
}
