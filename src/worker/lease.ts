/**
 * The fence of a host lease: a worker's probe runs under a slot that expires in the store `leaseMs` after its last
 * renewal, by the database's clock. The worker counts the same time on its own monotonic clock from when it sent
 * each renewal that succeeded (the database's expiry is at least that late), less a margin, and holds the lease
 * only until then: a worker paused past its lease (a stopped process, a blocked event loop) finds it lost before it
 * sends another request, whatever its wall clock says.
 */
import { LeaseLost, type Fence } from '../net/fence.js';

export class LeaseFence implements Fence {
  private readonly controller = new AbortController();
  private validUntil: number;

  /** `sentAt`: when the statement that took the lease was sent, on `now`'s clock. */
  // biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
  constructor(
    private readonly what: string,
    private readonly leaseMs: number,
    private readonly marginMs: number,
    sentAt: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.validUntil = sentAt + leaseMs - marginMs;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** When the lease is held until, on `now`'s clock (what a watchdog waits for). */
  get until(): number {
    return this.validUntil;
  }

  /** A renewal sent at `sentAt` succeeded. */
  renewed(sentAt: number): void {
    if (!this.controller.signal.aborted)
      this.validUntil = Math.max(this.validUntil, sentAt + this.leaseMs - this.marginMs);
  }

  /** The lease is lost (a renewal found it another's). */
  lose(why: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new LeaseLost(`${this.what}: ${why}`));
  }

  check(): void {
    if (!this.controller.signal.aborted && this.now() >= this.validUntil)
      this.lose(`not renewed within ${this.leaseMs} ms`);
    this.controller.signal.throwIfAborted();
  }
}
