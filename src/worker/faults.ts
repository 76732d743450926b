/**
 * What a worker does when what it depends on (the store, the queue) is out of reach: it waits, longer each time up to
 * a cap, with jitter (`../util/backoff.ts`) so that a fleet of workers does not come back in step; and it says so
 * without flooding its log.
 */

/** The wait after a worker's first fault in a row, and the longest. */
export const WORKER_BACKOFF = { baseMs: 500, capMs: 30_000 } as const;

/**
 * A log where lines of one kind come at most once per `windowMs`: the first line of a window is written, the rest
 * counted, and the count said with the next line written of that kind (or by `flush`).
 */
export class RateLimitedLog {
  private readonly kinds = new Map<string, { openedAt: number; suppressed: number; last: string }>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly windowMs = 10_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  line(kind: string, text: string): void {
    const at = this.now();
    const k = this.kinds.get(kind);
    if (k && at - k.openedAt < this.windowMs) {
      k.suppressed++;
      k.last = text;
      return;
    }
    const more = k?.suppressed
      ? ` (${k.suppressed} more like this in the last ${Math.round((at - k.openedAt) / 1000)} s)`
      : '';
    this.kinds.set(kind, { openedAt: at, suppressed: 0, last: text });
    this.write(`${text}${more}`);
  }

  /** Says how many lines of each kind were held back since the last written. */
  flush(): void {
    for (const k of this.kinds.values()) if (k.suppressed) this.write(`${k.last} (${k.suppressed} more like this)`);
    this.kinds.clear();
  }
}
