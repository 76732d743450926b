/**
 * The `probe --json` object: the observation record's view (`probeJsonSchema`), the contract fields first. Used by
 * the CLI and the MCP server.
 */
import type { Observation } from '../model/observation.js';
import { probeJsonSchema, type ProbeJson } from '../model/views.js';
import type { VantageEntry } from '../model/plan.js';
import { detailOf } from '../policy/policy.js';
import { project } from './project.js';

export type { ProbeJson };

/**
 * `across`: the readings of each vantage asked, and the note, when the URL was probed from several
 * (`probe --vantages`).
 */
export function probeJson(r: Observation, across?: { vantages: VantageEntry[]; note: string | null }): ProbeJson {
  return project<ProbeJson>(probeJsonSchema, r, {
    detail: detailOf(r),
    matrix: r.matrix || undefined,
    steps: (r.evidence?.deciding.steps ?? []).map((s) => ({
      step: s.step,
      status: s.status,
      contentType: s.contentType,
      body: s.body,
      problem: s.problem,
      errorCode: s.errorCode,
      durationMs: s.durationMs,
    })),
    tokens: r.tokens ?? null,
    tokensError: r.tokensError ?? null,
    nameBlindDigest: r.nameBlindDigest ?? null,
    descriptionBlindDigest: r.descriptionBlindDigest ?? null,
    vantages: across?.vantages ?? [
      {
        vantage: r.vantage,
        verdict: r.verdict,
        reason: r.reason,
        latencyMs: Math.round(r.durationMs),
        observedAt: r.observedAt,
        left: null,
      },
    ],
    note: across ? across.note : undefined,
    redacted: r.redacted || undefined,
  });
}
