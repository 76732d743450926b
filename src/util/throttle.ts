/**
 * How many tasks may run, adapted to pressure: `squeeze()` (a read had to wait for memory) lowers the limit to half
 * of what runs now, and each task that ends raises it by one, back up to `max` (additive increase, multiplicative
 * decrease, as TCP does). Tasks already running are never stopped; only new ones wait.
 */
export class Throttle {
  private limit: number;
  private running = 0;
  private readonly queue: Array<() => void> = [];

  private readonly min: number;

  constructor(
    private readonly max: number,
    min: number,
  ) {
    this.limit = max;
    this.min = Math.min(min, max);
  }

  /** Resolves when the task may start (null: at once). Call `leave()` when it ends. */
  enter(): Promise<void> | null {
    if (this.running < this.limit && this.queue.length === 0) {
      this.running++;
      return null;
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  leave(): void {
    this.running--;
    this.limit = Math.min(this.max, this.limit + 1);
    while (this.running < this.limit && this.queue.length > 0) {
      this.running++;
      this.queue.shift()!();
    }
  }

  squeeze(): void {
    this.limit = Math.max(this.min, Math.floor(this.running / 2));
  }
}
