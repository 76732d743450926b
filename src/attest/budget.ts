/**
 * Memory across probes: a body read costs up to the 4 MiB cap, and concurrency multiplies it. Each read may hold
 * `freeBytes` on its own; beyond that it needs one of a few slots, and while it waits its stream is paused (the
 * server feels backpressure). Honest MCP answers are far below `freeBytes`; hostile endless bodies reach the cap
 * and give their slot back at once. A slot owns one buffer, made on first use and reused by every read after it:
 * a large body is copied there, so the gigabytes that hostile bodies stream through a run leave no garbage for
 * the collector to catch up with. The time a read waits for a slot does not count against its limit (the wait is
 * onetap's doing, not the server's); a read that holds a slot runs against its own, so every wait ends.
 */
interface Slot {
  buffer: Buffer | null;
}

export class BodyBudget {
  private readonly idle: Slot[];
  private readonly waiting: Array<(slot: Slot) => void> = [];

  /** Called whenever a read has to wait for a slot (probeMany then lets fewer probes run). */
  onWait: (() => void) | null = null;

  constructor(
    readonly freeBytes = 32 * 1024,
    readonly slots = 2,
  ) {
    this.idle = Array.from({ length: slots }, () => ({ buffer: null }));
  }

  /** A slot now, or `wake` is called with one later (unless `cancel`led first). */
  take(wake: (slot: Slot) => void): Slot | null {
    const slot = this.idle.pop();
    if (slot) return slot;
    this.waiting.push(wake);
    this.onWait?.();
    return null;
  }

  cancel(wake: (slot: Slot) => void): void {
    const at = this.waiting.indexOf(wake);
    if (at >= 0) this.waiting.splice(at, 1);
  }

  give(slot: Slot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.idle.push(slot);
  }
}

/** The read's time limit, stopped while it waits for a slot. */
export interface Clock {
  pause(): void;
  resume(): void;
}

/**
 * The bytes one body read holds (at most `cap`): its chunks while they fit in the budget's `freeBytes`, then a
 * copy in a slot's buffer. Without a budget nothing is ever waited for. `release()` when the read ends.
 */
export class HeldBytes {
  private parts: Buffer[] = [];
  private size = 0;
  private slot: Slot | null = null;
  /** True once the bytes live in the slot's buffer (a `reserve`d slot holds none). */
  private inSlot = false;
  private wake: ((slot: Slot) => void) | null = null;

  constructor(
    private readonly cap: number,
    private readonly budget?: BodyBudget,
    private readonly clock?: Clock,
  ) {}

  get length(): number {
    return this.size;
  }

  /** Holds `chunk` (copied only into a slot); a promise when the read must first wait for a slot. */
  add(chunk: Buffer): Promise<void> | null {
    if (this.inSlot) {
      this.copyIn(chunk);
      return null;
    }
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size <= (this.budget?.freeBytes ?? Infinity)) return null;
    return this.acquire(() => this.moveIntoSlot());
  }

  /** For memory a parser holds on its own: waits for a slot once `held` exceeds `freeBytes`. */
  reserve(held: number): Promise<void> | null {
    if (!this.budget || held <= this.budget.freeBytes) return null;
    return this.acquire(() => {});
  }

  /** Every byte held, in order (a view: decode it before `clear` or `release`). */
  bytes(): Buffer {
    if (this.inSlot) return this.slot!.buffer!.subarray(0, this.size);
    if (this.parts.length !== 1) this.parts = [Buffer.concat(this.parts, this.size)];
    return this.parts[0]!;
  }

  /** Forgets the bytes and gives the slot back. */
  clear(): void {
    this.parts = [];
    this.size = 0;
    this.inSlot = false;
    if (this.slot) this.budget!.give(this.slot);
    this.slot = null;
  }

  release(): void {
    if (this.wake) this.budget!.cancel(this.wake);
    this.wake = null;
    this.clear();
  }

  private acquire(then: () => void): Promise<void> | null {
    if (this.slot || !this.budget) {
      then();
      return null;
    }
    let resolve!: () => void;
    const waited = new Promise<void>((r) => {
      resolve = r;
    });
    const wake = (slot: Slot) => {
      this.wake = null;
      this.slot = slot;
      this.clock?.resume();
      then();
      resolve();
    };
    const slot = this.budget.take(wake);
    if (!slot) {
      this.wake = wake;
      this.clock?.pause();
      return waited;
    }
    this.slot = slot;
    then();
    return null;
  }

  private moveIntoSlot(): void {
    const buffer = this.room(this.size);
    let at = 0;
    for (const part of this.parts) at += part.copy(buffer, at);
    this.parts = [];
    this.inSlot = true;
  }

  private copyIn(chunk: Buffer): void {
    chunk.copy(this.room(this.size + chunk.length), this.size);
    this.size += chunk.length;
  }

  /** The slot's buffer, grown to hold `need` bytes (made once at the cap, so normally never again). */
  private room(need: number): Buffer {
    const slot = this.slot!;
    if (!slot.buffer || slot.buffer.length < need) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.cap, need));
      if (this.inSlot) slot.buffer!.copy(grown, 0, 0, this.size);
      slot.buffer = grown;
    }
    return slot.buffer;
  }
}
