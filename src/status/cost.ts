/**
 * What a list's tools cost a conversation, at a glance (pure): the total a user pays to add every server, and the
 * largest. Rows without a count (no tool list, or recorded before tokens were counted) are left out and counted as
 * such: no estimate stands in for them.
 */
export interface ContextCost {
  /** Tokens of every counted row's tools together. */
  total: number;
  counted: number;
  uncounted: number;
  /** The largest first. */
  largest: Array<{ name: string; tokens: number }>;
}

export function contextCost(rows: ReadonlyArray<{ name: string; tokens?: number | null }>, top = 3): ContextCost {
  const counted = rows.filter((r): r is { name: string; tokens: number } => typeof r.tokens === 'number');
  return {
    total: counted.reduce((sum, r) => sum + r.tokens, 0),
    counted: counted.length,
    uncounted: rows.length - counted.length,
    largest: [...counted]
      .sort((a, b) => b.tokens - a.tokens)
      .slice(0, top)
      .map((r) => ({ name: r.name, tokens: r.tokens })),
  };
}

const n = (x: number) => x.toLocaleString('en');

/** "; +1,200 since the run before" (null: no two runs with counts to compare). */
export function costChange(c: { lastRun: number | null; previousRun: number | null }): string | null {
  if (c.lastRun === null || c.previousRun === null) return null;
  const d = c.lastRun - c.previousRun;
  return `; ${d === 0 ? 'no change' : `${d > 0 ? '+' : '−'}${n(Math.abs(d))}`} since the run before`;
}

/**
 * "12,345 tokens for 10 servers' tools (largest: A 3,002, B 1,200, C 900); 2 not counted" (null when nothing was
 * counted).
 */
export function costLine(c: ContextCost, describe: (name: string) => string = (s) => s): string | null {
  if (!c.counted) return null;
  return `${n(c.total)} tokens for ${c.counted} server${
    c.counted === 1 ? "'s" : "s'"
  } tools (largest: ${c.largest.map((l) => `${describe(l.name)} ${n(l.tokens)}`).join(', ')})${c.uncounted ? `; ${c.uncounted} not counted` : ''}`;
}
