/**
 * Many vantages, one verdict (pure). Every vantage that answered gave its own verdict of a URL (the policy table's);
 * these rules make them one, in this order:
 *   1. fewer than `quorum` vantages answered: failed/vantage-incomplete (the row is kept; the run neither extends nor
 *      resets its drop streak);
 *   2. reachable (live or review) from some and drop-class from others: review/vantage-split, naming each side;
 *   3. reachable from some, only failed in the others: the reachable verdict (a review before a live one), with a note;
 *   4. drop-class from at least `quorum` vantages and reachable from none: drop;
 *   5. otherwise failed (the first failure's reason), the note naming drop-class vantages short of the quorum.
 * With one vantage and a quorum of 1, a URL's verdict is its vantage's and there is no note: as before vantages.
 * A vantage whose job failed for good (`unanswered`: why) did not answer, as one past the deadline; the note says why.
 */
import type { Reason, VerdictName } from '../model/words.js';

/** What one vantage saw of a URL. */
export interface VantageVerdict {
  vantage: string;
  verdict: VerdictName;
  reason: Reason;
}

/** The URL's one verdict, and which vantage's reading stands for the row (its evidence, tools and timing). */
export interface Combined {
  verdict: VerdictName;
  reason: Reason;
  /** Why the verdict is not simply the standing vantage's (null when it is). */
  note: string | null;
  /** Index in the readings of the one that stands for the row, or null when no vantage answered. */
  from: number | null;
}

/** The quorum when none is given: a majority of the vantages asked (1 of 1, 2 of 2 or 3, 3 of 4 or 5). */
export const majority = (vantages: number): number => Math.floor(vantages / 2) + 1;

const reachable = (v: VantageVerdict) => v.verdict === 'live' || v.verdict === 'review';
const list = (vs: readonly VantageVerdict[]) => vs.map((v) => `${v.vantage} (${v.verdict}/${v.reason})`).join(', ');

/**
 * One verdict from the readings of the vantages that answered (`asked`: every vantage the run asked, in order;
 * `unanswered`: why a vantage that did not answer did not, when that is known).
 */
export function combineVantages(
  readings: readonly VantageVerdict[],
  asked: readonly string[],
  quorum: number,
  unanswered: ReadonlyMap<string, string> = new Map(),
): Combined {
  const missing = asked.filter((a) => !readings.some((r) => r.vantage === a));
  const named = (v: string) => (unanswered.has(v) ? `${v} (${unanswered.get(v)})` : v);
  if (readings.length < quorum) {
    return {
      verdict: 'failed',
      reason: 'vantage-incomplete',
      from: index(readings, readings.find(reachable) ?? readings[0]),
      note: `${readings.length} of ${asked.length} vantages answered, the quorum is ${quorum}${
        missing.length ? `: no answer from ${missing.map(named).join(', ')}` : ''
      }`,
    };
  }
  // With the quorum met, a vantage that did not answer is named only when why is known (its job failed).
  const why = missing.filter((v) => unanswered.has(v));
  const c = combineAnswers(readings, quorum);
  const also = why.length ? `no answer from ${why.map(named).join(', ')}` : null;
  return { ...c, note: c.note && also ? `${c.note}; ${also}` : (c.note ?? also) };
}

const index = (readings: readonly VantageVerdict[], v: VantageVerdict | undefined) =>
  v === undefined ? null : readings.indexOf(v);

/** Rules 2 to 5: at least `quorum` vantages answered. */
function combineAnswers(readings: readonly VantageVerdict[], quorum: number): Combined {
  const up = readings.filter(reachable);
  const dropped = readings.filter((r) => r.verdict === 'drop');
  const failed = readings.filter((r) => r.verdict === 'failed');
  if (up.length && dropped.length) {
    return {
      verdict: 'review',
      reason: 'vantage-split',
      from: index(readings, up[0]),
      note: `reachable from ${list(up)}; drop-class from ${list(dropped)}`,
    };
  }
  if (up.length) {
    const standing = up.find((r) => r.verdict === 'review') ?? up[0]!;
    return {
      verdict: standing.verdict,
      reason: standing.reason,
      from: index(readings, standing),
      note: failed.length ? `failed from ${list(failed)}` : null,
    };
  }
  if (dropped.length >= quorum) {
    return {
      verdict: 'drop',
      reason: dropped[0]!.reason,
      from: index(readings, dropped[0]),
      note: failed.length ? `drop-class from ${list(dropped)}; failed from ${list(failed)}` : null,
    };
  }
  // Reachable from none and drop-class short of the quorum: with at least `quorum` answers, some vantage failed.
  return {
    verdict: 'failed',
    reason: failed[0]!.reason,
    from: index(readings, failed[0]),
    note: dropped.length ? `drop-class from ${list(dropped)} only, the quorum is ${quorum}` : null,
  };
}
