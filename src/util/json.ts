/** JSON values as untrusted input. */

/** Deeper JSON than this is not processed (canonical JSON, hashing, screening and header scans stop here). */
export const MAX_NESTING = 256;

/** Whether a JSON value nests deeper than `limit` levels (arrays and objects), without recursion. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

