/**
 * What onetap works out from a tool list, kept once per process: one cache for every such fact (the token count, the
 * set fingerprints, the processed list), keyed by the fact's name and a digest of exactly what it is worked out from.
 * Bounded per fact: past its entries (LIST_CACHE_ENTRIES unless the fact says fewer) the least recently used entry
 * goes. Process memory only: nothing here is read from or written to a store, so a value in a record is always
 * worked out by this process.
 */
export const LIST_CACHE_ENTRIES = 1_000;

const facts = new Map<string, Map<string, unknown>>();

/**
 * `work()`'s value for this fact of this digest, worked out once (a promise is kept as it is: callers share it). A
 * kept value is shared: callers must not change it.
 */
export function remembered<T>(fact: string, digest: string, work: () => T, entries = LIST_CACHE_ENTRIES): T {
  let kept = facts.get(fact);
  if (!kept) facts.set(fact, (kept = new Map()));
  if (kept.has(digest)) {
    const known = kept.get(digest) as T;
    kept.delete(digest);
    kept.set(digest, known);
    return known;
  }
  const value = work();
  kept.set(digest, value);
  if (kept.size > entries) kept.delete(kept.keys().next().value!);
  return value;
}
