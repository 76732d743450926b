/** Runs `fn` over `items` with at most `limit` in flight; results keep input order; the first error is thrown. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    try {
      for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!, i);
    } catch (err) {
      next = items.length; // nothing more starts
      throw err;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
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
