/**
 * Memory across probes: a body read costs up to the 4 MiB cap, and concurrency multiplies it. Each read may hold
 * `freeBytes` on its own; beyond that it needs one of a few slots, and while it waits its stream is paused (the
 * server feels backpressure). Honest MCP answers are far below `freeBytes`; hostile endless bodies reach the cap
 * and give their slot back at once. A read that waits still runs against its own time limit.
 */
export class BodyBudget {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly freeBytes = 128 * 1024, readonly slots = 8) {
    this.free = slots;
  }

  /** One body read: `need(held)` when the read holds `held` bytes (a promise to wait on, or null); `release()` at the end. */
  reader(): BodyHold {
    let holding = false;
    return {
      need: (held) => {
        if (holding || held <= this.freeBytes) return null;
        holding = true;
        if (this.free > 0) { this.free--; return null; }
        return new Promise<void>((resolve) => this.waiting.push(resolve));
      },
      release: () => {
        if (!holding) return;
        holding = false;
        const next = this.waiting.shift();
        if (next) next(); else this.free++;
      },
    };
  }
}

export interface BodyHold {
  need(held: number): Promise<void> | null;
  release(): void;
}
