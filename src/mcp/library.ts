/**
 * The seam between the MCP tools and library APIs that issue 8 is changing on main (profiles by id, the
 * matrix, `probeResultJson`). Everything the tools need from the prober goes through here, so the switch
 * to main's API happens in this one file.
 */
import { probeMany } from '../attest/probe-many.js';
import type { ProbeResult } from '../attest/probe.js';
import { CLIENT_PROFILES } from '../attest/profile.js';
import type { Lookup } from '../discover/fetcher.js';

/** Profile ids a probe may name; the first is the default (the app's own client). */
export const PROFILE_IDS: string[] = Object.keys(CLIENT_PROFILES);
export const DEFAULT_PROFILE = 'kai-9000';
/** Whether this build can run every profile per URL (`probe --matrix`). */
export const MATRIX_AVAILABLE = false;

export interface ProbeCall {
  profile?: string;
  matrix?: boolean;
  lookup?: Lookup;
  onResult?: (result: ProbeResult, index: number) => void;
}

/** Probes as `onetap probe` does with no flags but these (same defaults, so the JSON matches the CLI's). */
export function probeLikeCli(targets: { url: string; requiresAuth?: boolean }[], call: ProbeCall): Promise<ProbeResult[]> {
  // TODO(issue 8 merge): pass {profile: id, matrix} straight to probeMany.
  return probeMany(targets, {
    timeoutMs: 15_000, headers: {}, concurrency: 16,
    profile: CLIENT_PROFILES[call.profile ?? DEFAULT_PROFILE],
    lookup: call.lookup, onResult: call.onResult,
  });
}

/**
 * The object `onetap probe --json` prints per URL.
 * TODO(issue 8 merge): replace with `probeResultJson` from src/attest/result.ts (a copy of the CLI's `probeJson`).
 */
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
    detail: r.detail,
    serverVersion: r.serverVersion,
    quirks: r.quirks,
    steps: r.observation.steps.map((s) => ({ step: s.step, status: s.status, contentType: s.contentType, body: s.body, problem: s.problem, errorCode: s.errorCode, durationMs: s.durationMs })),
  };
}
