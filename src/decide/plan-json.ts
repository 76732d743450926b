/**
 * The plan as `refresh --json` prints it (and the MCP tool `plan_refresh` returns it): a view of the plan rows
 * (`planJsonSchema`), one function.
 */
import type { Plan, PlanRow } from '../model/plan.js';
import type { PlanJson, PlanRowJson } from '../model/views.js';

export type { PlanJson, PlanRowJson };

/** A plan row as `refresh --json` prints it: the contract fields in their order, then the later ones. */
export function planRowJson(r: PlanRow): PlanRowJson {
  return {
    name: r.name,
    url: r.url,
    decision: r.decision,
    verdict: r.verdict,
    reason: r.reason,
    attempts: r.attempts,
    previous: r.previous,
    changed: r.changed,
    dropStreak: r.dropStreak,
    note: r.note,
    httpStatus: r.httpStatus,
    tools: r.tools,
    error: r.error,
    durationMs: r.durationMs,
    profile: r.profile,
    reasons: r.reasons,
    appError: r.appError,
    location: r.location,
    ...(r.matrix ? { matrix: r.matrix } : {}),
    toolsHash: r.toolsHash,
    acceptedHash: r.acceptedHash,
    toolChanges: r.toolChanges,
    firstUse: r.firstUse,
    heldOut: r.heldOut,
    findings: r.findings,
    findingsSeen: r.findingsSeen,
    cardMismatches: r.cardMismatches,
    serverInfoChanged: r.serverInfoChanged,
    snapshotSha256: r.snapshotSha256,
    toolCount: r.toolCount,
    toolsDigest: r.toolsDigest,
    toolsChanged: r.toolsChanged,
    identityChanged: r.identityChanged,
    run: r.run,
    vantage: r.vantage,
    observedAt: r.observedAt,
    ...(r.vantages ? { vantages: r.vantages } : {}),
    tokens: r.tokens ?? null,
    nameBlindDigest: r.nameBlindDigest ?? null,
    descriptionBlindDigest: r.descriptionBlindDigest ?? null,
    sameToolsAs: r.sameToolsAs ?? [],
    ...(r.redacted ? { redacted: r.redacted } : {}),
  };
}

/** The `refresh --json` shape: `{plan: [...], summary, aborted, warnings}`. */
export function planJson(plan: Plan): PlanJson {
  return {
    plan: plan.rows.map(planRowJson),
    summary: plan.summary,
    aborted: plan.aborted,
    warnings: plan.warnings,
    ...(plan.quorum !== undefined ? { quorum: plan.quorum } : {}),
  };
}
