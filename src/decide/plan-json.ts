/** The plan as `refresh --json` prints it and the history keeps it: one serialized shape, one function (pure). */
import type { MatrixCell } from '../attest/result.js';
import type { Reason, VerdictName } from '../policy/policy.js';
import type { Finding } from '../screen/types.js';
import type { Decision, Plan, PlanSummary } from './decide.js';
import type { ToolChanges } from './drift.js';
import type { Mismatch } from '../discover/consistency.js';

/** A plan row as `refresh --json` prints it. Fields after `location` were added later: older history may lack them. */
export interface PlanRowJson {
  name: string; url: string; decision: Decision; verdict: VerdictName; reason: Reason; attempts: number;
  previous: { verdict: VerdictName; reason: Reason; at: string } | null; changed: boolean; dropStreak: number; note: string | null;
  httpStatus: number | null; tools: string[] | null; error: string | null; durationMs: number;
  profile: string; reasons: Reason[]; appError: string | null; location: string | null; matrix?: Record<string, MatrixCell>;
  toolsHash?: string | null; acceptedHash?: string | null; toolChanges?: ToolChanges | null; firstUse?: boolean; heldOut?: boolean;
  findings?: Finding[]; findingsSeen?: number; cardMismatches?: Mismatch[] | null;
  serverInfoChanged?: boolean; snapshotSha256?: string | null;
}

export interface PlanJson {
  plan: PlanRowJson[];
  summary: PlanSummary;
  aborted: string | null;
  /** Absent in plans recorded before it existed. */
  warnings?: string[];
}

/** The `refresh --json` shape: `{plan: [...], summary, aborted}`. */
export function planJson(plan: Plan): PlanJson {
  return {
    plan: plan.rows.map((r) => ({
      name: r.name, url: r.url, decision: r.decision, verdict: r.verdict, reason: r.reason, attempts: r.attempts, previous: r.previous,
      changed: r.changed, dropStreak: r.dropStreak, note: r.note, httpStatus: r.httpStatus, tools: r.tools, error: r.error, durationMs: r.durationMs,
      profile: r.profile, reasons: r.reasons, appError: r.appError, location: r.location, ...(r.matrix ? { matrix: r.matrix } : {}),
      toolsHash: r.toolsHash, acceptedHash: r.acceptedHash, toolChanges: r.toolChanges, firstUse: r.firstUse, heldOut: r.heldOut,
      findings: r.findings, findingsSeen: r.findingsSeen, cardMismatches: r.cardMismatches,
      serverInfoChanged: r.serverInfoChanged, snapshotSha256: r.snapshotSha256 ?? null,
    })),
    summary: plan.summary,
    aborted: plan.aborted,
    warnings: plan.warnings,
  };
}
