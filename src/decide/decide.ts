/**
 * `decide`: this run's observations, the rows recorded before them, the accepted tool lists and the policy
 * settings → the plan (pure, no I/O). The policy says what a probe means; this says what happens to the row:
 * tools are reviewed against their acceptance, nothing is dropped on one flake, nothing when this machine's
 * network is down.
 */
import type { ToolsLock } from '../model/acceptance.js';
import type { Observation } from '../model/observation.js';
import type { Plan, PlanRow } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import type { Decision, Reason } from '../model/words.js';
import { asUnprocessable } from '../policy/policy.js';
import { HELD_OUT, NO_TOOL_REVIEW, reviewAgainst, reviewTools, type ToolReview } from './drift.js';

export interface CanaryCheck { configured: number; reachable: number }

/** One catalog row to decide: its name, this run's observation of its URL, the rows recorded for that URL before. */
export interface RowInput {
  name: string;
  observation: Observation;
  /** Earlier rows of this URL, newest first (the drop streak reads as many as `confirmDrops`). */
  history: readonly Pick<PlanRow, 'verdict' | 'reason' | 'observedAt'>[];
}

export interface DecideInput {
  rows: readonly RowInput[];
  /** The accepted tool lists when the run was made. */
  lock: ToolsLock;
  /** By hash: this run's tool lists, and the accepted ones that could be read and verified. */
  snapshots: ReadonlyMap<string, StoredSnapshot>;
  /** By hash, the SHA-256 of the stored snapshot's bytes (recorded on each row; default none). */
  snapshotSha256?: ReadonlyMap<string, string>;
  confirmDrops: number;
  canaries: CanaryCheck;
  /** What the run noticed but that decides nothing (carried into the plan). */
  warnings?: readonly string[];
}

/** Failures that say more about this machine's network than about the server. */
const NETWORK_LEVEL: ReadonlySet<Reason> = new Set(['dns', 'refused', 'timeout', 'network', 'tls']);

/**
 * The outage guard. With canaries configured, they decide (all unreachable = outage). Without, an outage
 * is at least half of the entries failing at the network level in one run.
 */
export function detectOutage(rows: readonly Pick<Observation, 'reason'>[], canaries: CanaryCheck): string | null {
  if (canaries.configured > 0) {
    return canaries.reachable === 0 ? `the local network looks down: none of ${canaries.configured} canary URL(s) answered` : null;
  }
  const failing = rows.filter((r) => NETWORK_LEVEL.has(r.reason)).length;
  if (rows.length > 0 && failing * 2 >= rows.length) {
    return `the local network looks down: ${failing} of ${rows.length} entries failed at the network level (DNS, refused, timeout, TLS); nothing is dropped or written`;
  }
  return null;
}

/** What happens to a row with this verdict, given the rows before it (newest first): only consecutive drop-class runs drop. */
export function decideRow(row: Pick<Observation, 'verdict'>, history: RowInput['history'], confirmDrops: number, outage: boolean): Pick<PlanRow, 'decision' | 'dropStreak' | 'note'> {
  switch (row.verdict) {
    case 'live': return { decision: 'keep', dropStreak: 0, note: null };
    case 'review': return { decision: 'review', dropStreak: 0, note: null };
    case 'failed': return { decision: 'keep-failed', dropStreak: 0, note: null };
    case 'drop': {
      let streak = 1;
      for (const h of history) {
        if (h.verdict !== 'drop') break;
        streak++;
      }
      if (outage) return { decision: 'keep-failed', dropStreak: streak, note: 'not dropped: outage guard' };
      if (streak < confirmDrops) return { decision: 'keep-failed', dropStreak: streak, note: `would drop (${streak} of ${confirmDrops} consecutive runs)` };
      return { decision: 'drop', dropStreak: streak, note: null };
    }
  }
}

/** The row's tools against their acceptance: drift and identity against the accepted snapshot, when it could be read. */
function toolReviewOf(o: Observation, input: DecideInput, url: string): ToolReview {
  const accepted = input.lock.servers[url];
  const latest = o.toolsHash === null ? null : input.snapshots.get(o.toolsHash) ?? null;
  return reviewAgainst(accepted ? { hash: accepted.hash, toolsDigest: accepted.toolsDigest, snapshot: input.snapshots.get(accepted.hash) ?? null } : null, latest);
}

/** One row decided. Whatever goes wrong in its tool review is this row's verdict (review/unprocessable), never the run's. */
function planRow(row: RowInput, input: DecideInput, outage: boolean): PlanRow {
  let o = row.observation;
  let review: ToolReview;
  try {
    review = toolReviewOf(o, input, o.url);
  } catch (err) {
    o = asUnprocessable(o, 'review', err);
    review = NO_TOOL_REVIEW;
  }
  const reviewed = { ...o, ...reviewTools(o, review) };
  const last = row.history[0];
  const previous = last ? { verdict: last.verdict, reason: last.reason, at: last.observedAt } : null;
  return {
    ...reviewed,
    name: row.name,
    ...decideRow(reviewed, row.history, input.confirmDrops, outage),
    previous,
    changed: !previous || previous.verdict !== reviewed.verdict || previous.reason !== reviewed.reason,
    acceptedHash: review.acceptedHash,
    toolChanges: review.changes,
    toolsChanged: review.toolsChanged,
    serverInfoChanged: review.serverInfoChanged,
    identityChanged: review.identityChanged,
    firstUse: review.firstUse && reviewed.toolsHash !== null && reviewed.reason !== 'suspicious-tools',
    heldOut: reviewed.verdict === 'review' && HELD_OUT.has(reviewed.reason),
    snapshotSha256: reviewed.toolsHash === null ? null : input.snapshotSha256?.get(reviewed.toolsHash) ?? null,
  };
}

export function decide(input: DecideInput): Plan {
  const aborted = detectOutage(input.rows.map((r) => r.observation), input.canaries);
  const rows = input.rows.map((r) => planRow(r, input, aborted !== null));
  const count = (d: Decision) => rows.filter((r) => r.decision === d).length;
  return {
    rows,
    summary: { total: rows.length, keep: count('keep'), keepFailed: count('keep-failed'), review: count('review'), drop: count('drop'), changed: rows.filter((r) => r.changed).length },
    aborted,
    warnings: [...(input.warnings ?? [])],
  };
}
