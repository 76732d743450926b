/**
 * Memory across probes: a body read costs up to the 4 MiB cap, and concurrency multiplies it. Each read may hold
 * `freeBytes` on its own; beyond that it needs one of a few slots, and while it waits its stream is paused (the
 * server feels backpressure). Honest MCP answers are far below `freeBytes`; hostile endless bodies reach the cap
 * and give their slot back at once. A read that waits still runs against its own time limit.
 */
export class BodyBudget {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly freeBytes = 32 * 1024, readonly slots = 4) {
    this.free = slots;
  }

  /** One body read: `need(held)` when the read holds `held` bytes (a promise to wait on, or null); `release()` at the end. */
  reader(): BodyHold {
    let state: 'free' | 'waiting' | 'holding' = 'free';
    let wake: (() => void) | null = null;
    return {
      need: (held) => {
        if (state !== 'free' || held <= this.freeBytes) return null;
        if (this.free > 0) { this.free--; state = 'holding'; return null; }
        state = 'waiting';
        return new Promise<void>((resolve) => {
          wake = () => { state = 'holding'; resolve(); };
          this.waiting.push(wake);
        });
      },
      release: () => {
        // A read that ended while waiting (its time ran out) leaves the queue; it never got a slot to give back.
        if (state === 'waiting') this.waiting.splice(this.waiting.indexOf(wake!), 1);
        else if (state === 'holding') {
          const next = this.waiting.shift();
          if (next) next(); else this.free++;
        }
        state = 'free';
      },
    };
  }
}

export interface BodyHold {
  need(held: number): Promise<void> | null;
  release(): void;
}
