/**
 * The `probe --json` object: a view of the observation record (`probeJsonSchema`), the contract fields first. Used by
 * the CLI and the MCP server.
 */
import type { Observation } from '../model/observation.js';
import type { ProbeJson } from '../model/views.js';
import type { VantageEntry } from '../model/plan.js';
import { detailOf } from '../policy/policy.js';

export type { ProbeJson };

/**
 * `across`: the readings of each vantage asked, and the note, when the URL was probed from several
 * (`probe --vantages`).
 */
export function probeJson(r: Observation, across?: { vantages: VantageEntry[]; note: string | null }): ProbeJson {
  return {
    url: r.url,
    verdict: r.verdict,
    reason: r.reason,
    attempts: r.attempts,
    httpStatus: r.httpStatus,
    protocolVersion: r.protocolVersion,
    serverName: r.serverName,
    tools: r.tools,
    sessionId: r.sessionId,
    durationMs: r.durationMs,
    error: r.error,
    profile: r.profile,
    reasons: r.reasons,
    appError: r.appError,
    diagnosis: r.diagnosis,
    cutShort: r.cutShort,
    detail: detailOf(r),
    serverVersion: r.serverVersion,
    quirks: r.quirks,
    excludedTools: r.excludedTools,
    auth: r.auth,
    location: r.location,
    findings: r.findings,
    toolsHash: r.toolsHash,
    ...(r.matrix ? { matrix: r.matrix } : {}),
    steps: (r.evidence?.deciding.steps ?? []).map((s) => ({
      step: s.step,
      status: s.status,
      contentType: s.contentType,
      body: s.body,
      problem: s.problem,
      errorCode: s.errorCode,
      durationMs: s.durationMs,
    })),
    toolsDigest: r.toolsDigest,
    findingsSeen: r.findingsSeen,
    observedAt: r.observedAt,
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
    ...(across ? { note: across.note } : {}),
    ...(r.redacted ? { redacted: r.redacted } : {}),
  };
}
