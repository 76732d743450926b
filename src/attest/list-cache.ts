/**
 * What onetap works out from a tool list, kept once per process: one cache for every such fact (the token count, the
 * set fingerprints), keyed by the fact's name and a digest of exactly what it is worked out from. Bounded: past
 * LIST_CACHE_ENTRIES the least recently used entry goes. Process memory only: nothing here is read from or written to
 * a store, so a value in a record is always worked out by this process.
 */
export const LIST_CACHE_ENTRIES = 1_000;

const facts = new Map<string, unknown>();

/** `work()`'s value for this fact of this digest, worked out once (a promise is kept as it is: callers share it). */
export function remembered<T>(fact: string, digest: string, work: () => T): T {
  const key = `${fact}:${digest}`;
  if (facts.has(key)) {
    const known = facts.get(key) as T;
    facts.delete(key);
    facts.set(key, known);
    return known;
  }
  const value = work();
  facts.set(key, value);
  if (facts.size > LIST_CACHE_ENTRIES) facts.delete(facts.keys().next().value!);
  return value;
}
