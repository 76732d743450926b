/**
 * The runs of consecutive items with the same key, across pages (a page may cut a run: its items are carried over),
 * for reading a large ordered result a page at a time.
 */
export async function* runsOf<T>(
  pages: AsyncIterable<readonly T[]>,
  key: (item: T) => string,
): AsyncGenerator<[string, T[]]> {
  let current: [string, T[]] | null = null;
  for await (const page of pages) {
    for (const item of page) {
      const k = key(item);
      if (current && current[0] === k) current[1].push(item);
      else {
        if (current) yield current;
        current = [k, [item]];
      }
    }
  }
  if (current) yield current;
}
