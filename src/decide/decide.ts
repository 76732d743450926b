/**
 * `decide`: this run's observations, the rows recorded before them, the accepted tool lists and the policy
 * settings → the plan (pure, no I/O). The policy says what a probe means; this says what happens to the row:
 * tools are reviewed against their acceptance, nothing is dropped on one flake, nothing when this machine's
 * network is down.
 */
import type { ToolsLock } from '../model/acceptance.js';
import type { Observation } from '../model/observation.js';
import type { CanaryCheck, Plan, PlanRow, VantageEntry } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import type { Decision } from '../model/words.js';
import { asUnprocessable, isNetworkLevel, networkLooksDown } from '../policy/policy.js';
import { combineVantages } from '../policy/vantages.js';
import { sameToolsIndex } from '../policy/same-tools.js';
import { HELD_OUT, NO_TOOL_REVIEW, reviewAgainst, reviewBudget, reviewTools, type ToolReview } from './drift.js';

/**
 * One catalog row to decide: its name, this run's observation of its URL (or, in a run across vantages, one per
 * vantage that answered, at least one), the rows recorded for that URL before.
 */
export interface RowInput {
  name: string;
  /** The row's URL: needed only when no vantage answered for it (its record then says so). */
  url?: string;
  observation?: Observation;
  observations?: readonly Observation[];
  /**
   * In a run across vantages: why a vantage that did not answer for this row did not, when known (its job failed for
   * good).
   */
  unanswered?: ReadonlyMap<string, string>;
  /** Earlier rows of this URL, newest first (the drop streak reads as many as `confirmDrops`; a run counts once). */
  history: readonly (Pick<PlanRow, 'verdict' | 'reason' | 'observedAt'> & Partial<Pick<PlanRow, 'run'>>)[];
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
  /** The catalog's policy.maxToolTokens: a live row whose tools cost more goes to review (off when undefined). */
  maxToolTokens?: number;
  canaries: CanaryCheck;
  /** What the run noticed but that decides nothing (carried into the plan). */
  warnings?: readonly string[];
  /**
   * A run across vantages: the vantages asked (in order), how many must agree before a drop, and each one's canaries.
   * Without (or with one vantage), every row's one observation decides, as before.
   */
  vantages?: {
    asked: readonly string[];
    quorum: number;
    canaries?: ReadonlyMap<string, CanaryCheck>;
    run?: { id: string; startedAt: string };
  };
}

/**
 * The outage guard. With canaries configured, they decide (all unreachable = outage). Without, an outage
 * is at least half of the entries failing at the network level in one run.
 */
export function detectOutage(rows: readonly Pick<Observation, 'reason'>[], canaries: CanaryCheck): string | null {
  if (canaries.configured > 0) {
    return canaries.reachable === 0
      ? `the local network looks down: none of ${canaries.configured} canary URL(s) answered`
      : null;
  }
  const failing = rows.filter((r) => isNetworkLevel(r.reason)).length;
  if (networkLooksDown(failing, rows.length)) {
    return (
      `the local network looks down: ${failing} of ${rows.length} entries failed at the network level (DNS, ` +
      `refused, timeout, TLS); nothing is dropped or written`
    );
  }
  return null;
}

/**
 * What happens to a row with this verdict, given the rows before it (newest first): only consecutive drop-class runs
 * drop.
 */
export function decideRow(
  row: Pick<Observation, 'verdict'>,
  history: RowInput['history'],
  confirmDrops: number,
  outage: boolean,
): Pick<PlanRow, 'decision' | 'dropStreak' | 'note'> {
  switch (row.verdict) {
    case 'live':
      return { decision: 'keep', dropStreak: 0, note: null };
    case 'review':
      return { decision: 'review', dropStreak: 0, note: null };
    case 'failed':
      return { decision: 'keep-failed', dropStreak: 0, note: null };
    case 'drop': {
      let streak = 1;
      const counted = new Set<string>();
      for (const h of history) {
        if (h.reason === 'vantage-incomplete') continue; // too few vantages answered: that run counts for nothing
        if (typeof h.run === 'string' && counted.has(h.run)) continue; // one run is one run, however often it was read
        if (h.verdict !== 'drop') break;
        if (typeof h.run === 'string') counted.add(h.run);
        streak++;
      }
      if (outage) return { decision: 'keep-failed', dropStreak: streak, note: 'not dropped: outage guard' };
      if (streak < confirmDrops)
        return {
          decision: 'keep-failed',
          dropStreak: streak,
          note: `would drop (${streak} of ${confirmDrops} consecutive runs)`,
        };
      return { decision: 'drop', dropStreak: streak, note: null };
    }
  }
}

/**
 * The row's tools against their acceptance: drift and identity against the accepted snapshot, when it could be read.
 */
function toolReviewOf(o: Observation, input: DecideInput, url: string): ToolReview {
  const accepted = input.lock.servers[url];
  const latest = o.toolsHash === null ? null : (input.snapshots.get(o.toolsHash) ?? null);
  return reviewAgainst(
    accepted
      ? { hash: accepted.hash, toolsDigest: accepted.toolsDigest, snapshot: input.snapshots.get(accepted.hash) ?? null }
      : null,
    latest,
  );
}

/**
 * One row decided. Whatever goes wrong in its tool review is this row's verdict (review/unprocessable), never the
 * run's.
 */
function planRow(row: RowInput, input: DecideInput, outage: boolean): PlanRow {
  let o = row.observation!;
  let review: ToolReview;
  try {
    review = toolReviewOf(o, input, o.url);
  } catch (err) {
    o = asUnprocessable(o, 'review', err);
    review = NO_TOOL_REVIEW;
  }
  const toolsReviewed = { ...o, ...reviewTools(o, review) };
  const reviewed = { ...toolsReviewed, ...reviewBudget(toolsReviewed, input.maxToolTokens) };
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
    snapshotSha256: reviewed.toolsHash === null ? null : (input.snapshotSha256?.get(reviewed.toolsHash) ?? null),
  };
}

const answersOf = (r: RowInput): readonly Observation[] => r.observations ?? (r.observation ? [r.observation] : []);

/**
 * Vantages to leave out of a run: one whose canaries all failed; without canaries, one where at least half, and at
 * least two, of the servers another vantage reached fail at the network level (servers no vantage reached do not
 * count).
 */
export function vantageOutages(
  rows: readonly (readonly Pick<Observation, 'url' | 'vantage' | 'verdict' | 'reason'>[])[],
  asked: readonly string[],
  canaries: ReadonlyMap<string, CanaryCheck> = new Map(),
): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of asked) {
    const c = canaries.get(v);
    if (c && c.configured > 0) {
      if (c.reachable === 0) out.set(v, `none of its ${c.configured} canary URL(s) answered`);
      continue;
    }
    const reachedElsewhere = rows.filter((answers) =>
      answers.some((o) => o.vantage !== v && (o.verdict === 'live' || o.verdict === 'review')),
    );
    const failing = reachedElsewhere.filter((answers) =>
      answers.some((o) => o.vantage === v && isNetworkLevel(o.reason)),
    ).length;
    if (failing >= 2 && networkLooksDown(failing, reachedElsewhere.length))
      out.set(
        v,
        `${failing} of ${reachedElsewhere.length} servers other vantages reached failed there at the network level`,
      );
  }
  return out;
}

/** The record of a row no vantage answered for by the deadline: nothing was observed, and it says so. */
function unanswered(row: RowInput, input: DecideInput): Observation {
  const run = input.vantages?.run;
  if (row.url === undefined || run === undefined)
    throw new Error(`${row.name}: no observation from any vantage, and no URL and run to record that by`);
  return unansweredAt(row.url, run, input.vantages!.asked[0]!);
}

/** The record of a URL no vantage answered for by the deadline. */
export function unansweredAt(url: string, run: { id: string; startedAt: string }, vantage: string): Observation {
  return {
    url,
    run: run.id,
    vantage,
    observedAt: run.startedAt,
    profile: '',
    probe: null,
    verdict: 'failed',
    reason: 'vantage-incomplete',
    reasons: ['vantage-incomplete'],
    attempts: 0,
    durationMs: 0,
    httpStatus: null,
    protocolVersion: null,
    serverName: null,
    serverVersion: null,
    tools: null,
    toolCount: null,
    sessionId: false,
    error: 'no vantage answered by the deadline',
    appError: null,
    quirks: [],
    excludedTools: [],
    cutShort: false,
    auth: null,
    location: null,
    diagnosis: null,
    matrix: null,
    toolsHash: null,
    toolsDigest: null,
    findings: [],
    findingsSeen: 0,
    cardMismatches: null,
    evidence: null,
  };
}

/**
 * One URL across vantages (pure): its answers made one observation (the standing vantage's, with the combined verdict),
 * and each vantage's reading.
 */
export interface AcrossVantages {
  observation: Observation;
  vantages: VantageEntry[];
  note: string | null;
}

/**
 * `all`: the URL's observations from the vantages that answered; `asked`: every vantage the run asked, in order;
 * `left`: vantages left out of the run, with why (their answers are shown, not counted); `unanswered`: why a vantage
 * that did not answer did not, when known.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export function acrossVantages(
  all: readonly Observation[],
  asked: readonly string[],
  quorum: number,
  none: () => Observation,
  left: ReadonlyMap<string, string> = new Map(),
  unanswered: ReadonlyMap<string, string> = new Map(),
): AcrossVantages {
  const answers = all.filter((o) => !left.has(o.vantage));
  const c = combineVantages(
    answers,
    asked.filter((v) => !left.has(v)),
    quorum,
    unanswered,
  );
  const standing = (c.from === null ? all[0] : answers[c.from]) ?? none();
  const vantages: VantageEntry[] = asked.map((v) => {
    const o = all.find((x) => x.vantage === v);
    return {
      vantage: v,
      verdict: o?.verdict ?? null,
      reason: o?.reason ?? null,
      latencyMs: o ? Math.round(o.durationMs) : null,
      observedAt: o?.observedAt ?? null,
      left: left.get(v) ?? null,
    };
  });
  const observation: Observation = {
    ...standing,
    verdict: c.verdict,
    reason: c.reason,
    reasons: c.reason === standing.reason ? standing.reasons : [c.reason, ...standing.reasons],
  };
  return { observation, vantages, note: c.note };
}

/** A row of a run across vantages: its answers made one observation, and each vantage's reading. */
interface CombinedRow extends RowInput {
  observation: Observation;
  vantages: VantageEntry[];
  note: string | null;
}

/** The rows of a run across vantages (pure). */
function combined(
  input: DecideInput,
  asked: readonly string[],
  quorum: number,
  left: ReadonlyMap<string, string>,
): CombinedRow[] {
  return input.rows.map((row) => {
    return {
      name: row.name,
      history: row.history,
      ...acrossVantages(answersOf(row), asked, quorum, () => unanswered(row, input), left, row.unanswered),
    };
  });
}

export function decide(input: DecideInput): Plan {
  const asked = input.vantages?.asked ?? [];
  const quorum = input.vantages?.quorum ?? 1;
  let aborted: string | null;
  let rows: PlanRow[];
  const warnings = [...(input.warnings ?? [])];
  if (asked.length <= 1) {
    const one = input.rows.map((r) => answersOf(r)[0] ?? unanswered(r, input));
    aborted = detectOutage(one, input.canaries);
    rows = input.rows.map((r, i) => planRow({ ...r, observation: one[i] }, input, aborted !== null));
  } else {
    const left = vantageOutages(input.rows.map(answersOf), asked, input.vantages?.canaries);
    for (const [v, why] of left) warnings.push(`vantage ${v} left out of this run: ${why}`);
    const remaining = asked.length - left.size;
    aborted =
      remaining < quorum
        ? `too few vantages left to decide: ${remaining} of ${asked.length} (the quorum is ${quorum}); ` +
          `${[...left].map(([v, why]) => `${v}: ${why}`).join('; ')}`
        : null;
    rows = combined(input, asked, quorum, left).map((r) => {
      const p = planRow(r, input, aborted !== null);
      return { ...p, vantages: r.vantages, note: p.note ?? r.note };
    });
  }
  // Curated entries serving the same tool set are flagged (the decision stays the policy's).
  const same = sameToolsIndex(rows);
  rows = rows.map((r) => {
    const found = same(r);
    return found.length ? { ...r, sameToolsAs: found } : r;
  });
  const count = (d: Decision) => rows.filter((r) => r.decision === d).length;
  return {
    rows,
    summary: {
      total: rows.length,
      keep: count('keep'),
      keepFailed: count('keep-failed'),
      review: count('review'),
      drop: count('drop'),
      changed: rows.filter((r) => r.changed).length,
    },
    aborted,
    warnings,
    ...(asked.length > 1 ? { quorum } : {}),
  };
}
