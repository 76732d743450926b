import type { HistoryProblems } from '../model/plan.js';

/**
 * One line for a terminal or a page: "3 history lines skipped (history/2026-11.jsonl:3: …; …)", or null
 * when there was nothing to skip. Made of file names, line numbers and onetap's own words only.
 */
export function describeHistoryProblems(p: HistoryProblems, listed = 3): string | null {
  if (!p.count) return null;
  const where = p.first
    .slice(0, listed)
    .map((x) => `${x.file}:${x.line}: ${x.problem}`)
    .join('; ');
  return `${p.count} history line${p.count === 1 ? '' : 's'} skipped (${p.count > listed ? 'first: ' : ''}${where}${p.count > listed ? '; …' : ''})`;
}
