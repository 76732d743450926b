/**
 * How many tasks may run, adapted to pressure, as TCP paces a connection: a run starts with `min` and each task
 * that ends allows one more, up to `max` (slow start: the limit doubles while tasks end without trouble);
 * `squeeze()` (a read had to wait for memory) lowers it to half of what runs now, never below `min` (additive
 * increase, multiplicative decrease). Starting low matters when the first targets are the hostile ones: starting
 * at `max` would let every one of them open a stream before the first squeeze. Tasks already running are never
 * stopped; only new ones wait.
 */
export class Throttle {
  private limit: number;
  private running = 0;
  private readonly queue: Array<() => void> = [];

  private readonly min: number;

  constructor(private readonly max: number, min: number) {
    this.min = Math.min(min, max);
    this.limit = this.min;
  }

  /** Resolves when the task may start (null: at once). Call `leave()` when it ends. */
  enter(): Promise<void> | null {
    if (this.running < this.limit && this.queue.length === 0) { this.running++; return null; }
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
