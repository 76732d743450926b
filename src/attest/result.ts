/** The `probe --json` object: the contract fields first, then extras. One function, used by the CLI and the MCP server. */
import type { ProbeResult } from './probe.js';
import type { Reason, VerdictName } from '../policy/policy.js';
import type { Finding } from '../screen/types.js';
import { clipText, oneLine } from '../util/text.js';

/**
 * What a result keeps at most of anything a server controls (errors are also made one line): results are printed,
 * recorded in the history and shown on pages, so a 3 MB error message must not become a 3 MB history line.
 */
export const RECORD_LIMITS = { errorChars: 1_000, locationChars: 2_048, nameChars: 128, fieldChars: 512, findings: 50 } as const;

export function probeResultJson(r: ProbeResult) {
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
    detail: r.detail,
    serverVersion: r.serverVersion,
    quirks: r.quirks,
    excludedTools: r.excludedTools,
    auth: r.auth,
    location: r.location,
    findings: r.findings,
    toolsHash: r.snapshot?.hash ?? null,
    ...(r.matrix ? { matrix: r.matrix } : {}),
    steps: r.observation.deciding.steps.map((s) => ({ step: s.step, status: s.status, contentType: s.contentType, body: s.body, problem: s.problem, errorCode: s.errorCode, durationMs: s.durationMs })),
  };
}

export type ProbeResultJson = ReturnType<typeof probeResultJson>;

/** One client profile's outcome in the matrix (`works`: it would connect and list >= 1 tool). */
export interface MatrixCell { works: boolean; verdict: VerdictName; reason: Reason; tools: string[] | null }

/**
 * What one probe of one catalog entry came to, compactly: the facts a decision, the history, the plan and
 * the pages need. The one type for a probe outcome after the prober (history rows and plan rows extend it).
 */
export interface ProbeOutcome {
  url: string;
  name: string;
  verdict: VerdictName;
  reason: Reason;
  attempts: number;
  httpStatus: number | null;
  durationMs: number;
  tools: string[] | null;
  error: string | null;
  /** The deciding profile. */
  profile: string;
  /** Every reason that applies, `reason` first. */
  reasons: Reason[];
  /** The app's own error when it would not list tools. */
  appError: string | null;
  /** Where a redirected initialize points. */
  location: string | null;
  /** Per profile, when the matrix ran. */
  matrix: Record<string, MatrixCell> | null;
  /** The hash of the tool list the deciding client saw (src/attest/snapshot.ts), or null. */
  toolsHash: string | null;
  /** Screening findings (at most 50 kept; `findingsSeen` counts them all). */
  findings: Finding[];
  findingsSeen: number;
  /** SHA-256 of the stored snapshot file's bytes (history/snapshots/<toolsHash>.json), or null without one; a refresh sets it from the files it keeps. */
  snapshotSha256?: string | null;
}

export function probeOutcome(name: string, r: ProbeResult): ProbeOutcome {
  return {
    url: r.url, name, verdict: r.verdict, reason: r.reason, attempts: r.attempts, httpStatus: r.httpStatus, durationMs: r.durationMs,
    tools: r.tools, error: r.error, profile: r.profile, reasons: r.reasons, appError: r.appError, location: r.location, matrix: r.matrix,
    toolsHash: r.snapshot?.hash ?? null, findings: r.findings.slice(0, RECORD_LIMITS.findings).map(boundedFinding), findingsSeen: r.findings.length,
  };
}

const boundedFinding = (f: Finding): Finding => ({ tool: clipText(f.tool, RECORD_LIMITS.nameChars), field: clipText(f.field, RECORD_LIMITS.fieldChars), rule: f.rule, excerpt: clipText(f.excerpt, RECORD_LIMITS.fieldChars) });

/** The outcome of a row whose answer could not be processed after the probe (stage `review` or `store`). */
export function unprocessableOutcome(name: string, r: Pick<ProbeResult, 'url' | 'profile' | 'attempts' | 'httpStatus' | 'durationMs'>, stage: 'review' | 'store', err: unknown): ProbeOutcome {
  return {
    url: r.url, name, verdict: 'review', reason: 'unprocessable', attempts: r.attempts, httpStatus: r.httpStatus, durationMs: r.durationMs,
    tools: null, error: `${stage}: ${oneLine(String((err as Error)?.message ?? err), RECORD_LIMITS.errorChars)}`, profile: r.profile, reasons: ['unprocessable'],
    appError: null, location: null, matrix: null, toolsHash: null, findings: [], findingsSeen: 0, snapshotSha256: null,
  };
}
