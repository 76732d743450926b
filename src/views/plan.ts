/**
 * The plan as `refresh --json` prints it (and the MCP tool `plan_refresh` returns it, and the status model shows
 * it): the plan rows' view (`planRowJsonSchema`).
 */
import type { Plan, PlanRow } from '../model/plan.js';
import { planRowJsonSchema, type PlanJson, type PlanRowJson } from '../model/views.js';
import { project } from './project.js';

export type { PlanJson, PlanRowJson };

/** A plan row as `refresh --json` prints it: the contract fields in their order, then the later ones. */
export function planRowJson(r: PlanRow): PlanRowJson {
  return project<PlanRowJson>(planRowJsonSchema, r, {
    matrix: r.matrix || undefined,
    vantages: r.vantages || undefined,
    tokens: r.tokens ?? null,
    nameBlindDigest: r.nameBlindDigest ?? null,
    descriptionBlindDigest: r.descriptionBlindDigest ?? null,
    sameToolsAs: r.sameToolsAs ?? [],
    redacted: r.redacted || undefined,
  });
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
