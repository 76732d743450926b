/**
 * Per-row decisions from verdicts and history (pure). The policy says what a probe means; this says
 * what happens to the row: never drop on one flake, never drop when this machine's network is down.
 */
import type { Reason, VerdictName } from '../policy/policy.js';
import type { ObservationRecord, ProbeOutcome } from '../history/store.js';
import type { Mismatch } from '../discover/consistency.js';
import { HELD_OUT, NO_TOOL_REVIEW, reviewTools, type ToolChanges, type ToolReview } from './drift.js';

export type Decision = 'keep' | 'keep-failed' | 'review' | 'drop';

export interface ProbedRow extends ProbeOutcome {
  /** Earlier observations of this URL, newest first. */
  history: ObservationRecord[];
  /** The tools against their acceptance (default: nothing to review). */
  toolReview?: ToolReview;
  /** Where the server's own card disagrees with it (null: no card). Advisory. */
  cardMismatches?: Mismatch[] | null;
}

/** A plan row: the probe's outcome and what happens to the row. */
export interface PlanRow extends ProbeOutcome {
  decision: Decision;
  /** The last recorded observation before this run, or null. */
  previous: { verdict: VerdictName; reason: Reason; at: string } | null;
  /** The verdict or reason differs from the previous observation (or there was none). */
  changed: boolean;
  /** Consecutive drop-class runs, this one included (0 when this run is not drop-class). */
  dropStreak: number;
  /** Why the decision differs from the verdict, when it does. */
  note: string | null;
  /** Tool drift against the accepted snapshot (null: nothing to compare). */
  toolChanges: ToolChanges | null;
  /** The accepted snapshot's hash (null: none yet). */
  acceptedHash: string | null;
  /** serverInfo differs from the accepted snapshot's while the tools do not (a version bump): reported only. */
  serverInfoChanged: boolean;
  /** This run's tool list is accepted on first use when the run writes. */
  firstUse: boolean;
  /** Held out of the generated runtime lists until accepted (identity-changed, suspicious-tools). */
  heldOut: boolean;
  /** Where the server's own Server Card disagrees with it (null: it serves no card). Advisory, never a drop. */
  cardMismatches: Mismatch[] | null;
}

export interface PlanSummary {
  total: number;
  keep: number;
  keepFailed: number;
  review: number;
  drop: number;
  changed: number;
}

export interface Plan {
  rows: PlanRow[];
  summary: PlanSummary;
  /** Why nothing may be dropped or written this run (the outage guard), or null. */
  aborted: string | null;
  /** What the run noticed but that decides nothing (a snapshot file that does not match its record, …). */
  warnings: string[];
}

export interface CanaryCheck { configured: number; reachable: number }

/** Failures that say more about this machine's network than about the server. */
const NETWORK_LEVEL: ReadonlySet<Reason> = new Set(['dns', 'refused', 'timeout', 'network', 'tls']);

/**
 * The outage guard. With canaries configured, they decide (all unreachable = outage). Without, an outage
 * is at least half of the entries failing at the network level in one run.
 */
export function detectOutage(rows: readonly Pick<ProbedRow, 'reason'>[], canaries: CanaryCheck): string | null {
  if (canaries.configured > 0) {
    return canaries.reachable === 0 ? `the local network looks down: none of ${canaries.configured} canary URL(s) answered` : null;
  }
  const failing = rows.filter((r) => NETWORK_LEVEL.has(r.reason)).length;
  if (rows.length > 0 && failing * 2 >= rows.length) {
    return `the local network looks down: ${failing} of ${rows.length} entries failed at the network level (DNS, refused, timeout, TLS); nothing is dropped or written`;
  }
  return null;
}

export function decideRow(row: ProbedRow, confirmDrops: number, outage: boolean): Pick<PlanRow, 'decision' | 'dropStreak' | 'note'> {
  switch (row.verdict) {
    case 'live': return { decision: 'keep', dropStreak: 0, note: null };
    case 'review': return { decision: 'review', dropStreak: 0, note: null };
    case 'failed': return { decision: 'keep-failed', dropStreak: 0, note: null };
    case 'drop': {
      let streak = 1;
      for (const h of row.history) {
        if (h.verdict !== 'drop') break;
        streak++;
      }
      if (outage) return { decision: 'keep-failed', dropStreak: streak, note: 'not dropped: outage guard' };
      if (streak < confirmDrops) return { decision: 'keep-failed', dropStreak: streak, note: `would drop (${streak} of ${confirmDrops} consecutive runs)` };
      return { decision: 'drop', dropStreak: streak, note: null };
    }
  }
}

export function buildPlan(rows: readonly ProbedRow[], opts: { confirmDrops: number; canaries: CanaryCheck; warnings?: string[] }): Plan {
  const aborted = detectOutage(rows, opts.canaries);
  const planRows = rows.map(({ history, toolReview: review = NO_TOOL_REVIEW, cardMismatches = null, ...probed }): PlanRow => {
    const outcome = { ...probed, ...reviewTools(probed, review) };
    const last = history[0];
    const previous = last ? { verdict: last.verdict, reason: last.reason, at: last.at } : null;
    return {
      ...outcome,
      ...decideRow({ ...outcome, history }, opts.confirmDrops, aborted !== null),
      previous,
      changed: !previous || previous.verdict !== outcome.verdict || previous.reason !== outcome.reason,
      toolChanges: review.changes,
      acceptedHash: review.acceptedHash,
      serverInfoChanged: review.serverInfoChanged,
      firstUse: review.firstUse && outcome.toolsHash !== null && outcome.reason !== 'suspicious-tools',
      heldOut: outcome.verdict === 'review' && HELD_OUT.has(outcome.reason),
      cardMismatches,
    };
  });
  const count = (d: Decision) => planRows.filter((r) => r.decision === d).length;
  return {
    rows: planRows,
    summary: { total: planRows.length, keep: count('keep'), keepFailed: count('keep-failed'), review: count('review'), drop: count('drop'), changed: planRows.filter((r) => r.changed).length },
    aborted,
    warnings: opts.warnings ?? [],
  };
}
