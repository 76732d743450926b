/** Runs `fn` over `items` with at most `limit` in flight; results keep input order. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  return mapConcurrentPerKey(items, limit, Infinity, () => '', fn);
}

/**
 * Like `mapConcurrent`, and at most `perKey` in flight for items with the same key (a host: politeness towards
 * shared gateways). A free slot takes the next item, in input order, whose key has room, so one busy key never
 * holds up the others.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function mapConcurrentPerKey<T, R>(
  items: readonly T[],
  limit: number,
  perKey: number,
  key: (item: T) => string,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const queues = new Map<string, number[]>();
  items.forEach((item, i) => {
    const k = key(item);
    const q = queues.get(k);
    if (q) q.push(i);
    else queues.set(k, [i]);
  });
  const inFlight = new Map<string, number>();
  let running = 0;
  let failed: unknown = null;
  return new Promise<R[]>((resolve, reject) => {
    const next = (): number | null => {
      let best: [string, number] | null = null;
      for (const [k, q] of queues) {
        if ((inFlight.get(k) ?? 0) >= perKey) continue;
        if (best === null || q[0]! < best[1]) best = [k, q[0]!];
      }
      if (best === null) return null;
      const q = queues.get(best[0])!;
      q.shift();
      if (q.length === 0) queues.delete(best[0]);
      inFlight.set(best[0], (inFlight.get(best[0]) ?? 0) + 1);
      return best[1];
    };
    const pump = () => {
      if (failed !== null) return;
      while (running < Math.max(1, limit)) {
        const i = next();
        if (i === null) break;
        running++;
        const k = key(items[i]!);
        fn(items[i]!, i)
          .then(
            (r) => {
              results[i] = r;
            },
            (err) => {
              failed ??= err;
              reject(err);
            },
          )
          .finally(() => {
            running--;
            inFlight.set(k, inFlight.get(k)! - 1);
            if (running === 0 && queues.size === 0 && failed === null) resolve(results);
            else pump();
          });
      }
      if (running === 0 && queues.size === 0 && failed === null) resolve(results);
    };
    pump();
  });
}

/**
 * `items` in turns: every key's first item (in order of first appearance), then every key's second, and so on. A
 * queue in this order does not put one key's items back to back, where they would wait on each other.
 */
export function inTurns<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Map<string, number>();
  const turn = items.map((item) => {
    const k = key(item);
    const n = seen.get(k) ?? 0;
    seen.set(k, n + 1);
    return n;
  });
  // A stable sort by turn keeps each turn in input order.
  return items
    .map((item, i) => ({ item, turn: turn[i]! }))
    .sort((a, b) => a.turn - b.turn)
    .map((x) => x.item);
}
