/**
 * `rejudge` (pure): recorded evidence judged again by today's rules: the policy table, the deciding profile and
 * the catalog's settings. Tool review is judged against the acceptances as they were when the run was recorded
 * (the row keeps them), so a later acceptance is not a difference. A row without evidence (written before the
 * record kept it, or whose evidence was bounded away), or without a run of today's deciding profile (no matrix),
 * is `no evidence`, never a difference.
 */
import type { PlanRow, RecordedRun } from '../model/plan.js';
import type { Reason, VerdictName } from '../model/words.js';
import { classify, classifyAs, type Classification, type EntryFacts } from '../policy/policy.js';
import { combineVantages } from '../policy/vantages.js';
import { reviewBudget, reviewTools, type ToolReview } from './drift.js';

export interface RejudgeOptions {
  /** Today's deciding profile. */
  profile: string;
  /** Whether a URL is curated as auth-optional today (null: not in the catalog; the recorded setting is used). */
  requiresAuth: (url: string) => boolean | null;
  /** Today's policy.maxToolTokens (off when undefined). */
  maxToolTokens?: number;
}

export interface Judgement {
  verdict: VerdictName;
  reason: Reason;
}

export interface RejudgedRow {
  name: string;
  url: string;
  vantage: string;
  recorded: Judgement;
  /** What today's rules give, or null when the record holds no evidence to judge. */
  today: Judgement | null;
  differs: boolean;
}

export interface RejudgedRun {
  id: string;
  startedAt: string;
  aborted: boolean;
  rows: RejudgedRow[];
}

export interface Rejudged {
  runs: RejudgedRun[];
  /** Rows whose verdict or reason differs today. */
  differences: number;
  /** Rows that could not be judged again. */
  noEvidence: number;
}

/** The tool review a row was decided with: the acceptance of that day, as the row recorded it. */
const reviewOf = (r: PlanRow): ToolReview => ({
  acceptedHash: r.acceptedHash,
  changes: r.toolChanges,
  toolsChanged: r.toolsChanged,
  serverInfoChanged: r.serverInfoChanged,
  identityChanged: r.identityChanged,
  firstUse: r.firstUse,
});

/**
 * One row judged again, or null without evidence (none recorded, none of that profile, or too little to read). A
 * row of a run across vantages (`quorum`: the run's) is its standing vantage's evidence judged again, combined with
 * what the other vantages recorded, by today's vantage rules.
 */
export function rejudgeRow(r: PlanRow, opts: RejudgeOptions, quorum?: number): Judgement | null {
  if (!r.evidence) return null;
  const facts: EntryFacts = {
    requiresAuth: opts.requiresAuth(r.url) ?? r.probe?.requiresAuth ?? false,
    flagged: r.findingsSeen > 0,
  };
  let v: Classification | null;
  try {
    v = opts.profile === r.profile ? classify(r.evidence, facts) : classifyAs(r.evidence, opts.profile, facts);
  } catch {
    return null; // a run with no exchange (a hand-made line): nothing for the policy to read
  }
  if (!v) return null;
  const own = v;
  if (r.vantages && r.vantages.length > 1 && quorum !== undefined) {
    const asked = r.vantages.filter((e) => e.left === null);
    const readings = asked.flatMap((e) =>
      e.vantage === r.vantage
        ? [{ vantage: e.vantage, verdict: own.verdict, reason: own.reason }]
        : e.verdict !== null && e.reason !== null
          ? [{ vantage: e.vantage, verdict: e.verdict, reason: e.reason }]
          : [],
    );
    const c = combineVantages(
      readings,
      asked.map((e) => e.vantage),
      quorum,
    );
    v = { ...own, verdict: c.verdict, reason: c.reason };
  }
  const toolsReviewed = { ...reviewTools({ ...v, toolsHash: r.toolsHash }, reviewOf(r)), tokens: r.tokens };
  const reviewed = reviewBudget(toolsReviewed, opts.maxToolTokens);
  return { verdict: reviewed.verdict, reason: reviewed.reason };
}

export function rejudge(runs: readonly RecordedRun[], opts: RejudgeOptions): Rejudged {
  let differences = 0;
  let noEvidence = 0;
  const out = runs.map(({ run, rows }) => ({
    id: run.id,
    startedAt: run.startedAt,
    aborted: run.aborted !== null,
    rows: rows.map((r): RejudgedRow => {
      const today = rejudgeRow(r, opts, run.quorum);
      const differs = today !== null && (today.verdict !== r.verdict || today.reason !== r.reason);
      if (today === null) noEvidence++;
      if (differs) differences++;
      return {
        name: r.name,
        url: r.url,
        vantage: r.vantage,
        recorded: { verdict: r.verdict, reason: r.reason },
        today,
        differs,
      };
    }),
  }));
  return { runs: out, differences, noEvidence };
}
