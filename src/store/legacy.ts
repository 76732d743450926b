/**
 * History lines of version 1, as onetap 0.1 wrote them (outcome only, no evidence): their schema, and the record
 * each one becomes. A v1 row reads back as a plan row with `evidence: null` and `probe: null`, so `rejudge` says
 * "no evidence" for it; everything else (streaks, bars, tool review) reads it as before.
 */
import { z } from 'zod';
import {
  matrixCellSchema,
  findingSchema,
  mismatchSchema,
  reasonSchema,
  verdictNameSchema,
} from '../model/observation.js';
import { decisionSchema, planSummarySchema, toolChangesSchema, type PlanRow, type RecordedRun } from '../model/plan.js';
import { count, duration, isoTime, sha256Hex, snapshotHash } from '../model/scalars.js';
import { LOCAL_VANTAGE } from '../model/limits.js';
import type { Decision, VerdictName } from '../model/words.js';

/** A tool list, or a reference to one written in full in the same file. */
export const toolsOrRef = z
  .union([z.array(z.string()), z.string().regex(/^#(?:[0-9a-f]{8}|[0-9a-f]{16})$/)], {
    message: 'a list of strings, a "#<hex>" reference, or null',
  })
  .nullable();

/** The fields a probe outcome has, wherever v1 wrote it (an observation line, a plan row). */
const OUTCOME = {
  name: z.string(),
  url: z.string(),
  verdict: verdictNameSchema,
  reason: reasonSchema,
  attempts: count,
  httpStatus: z.number().int().nullable(),
  durationMs: duration,
  tools: toolsOrRef,
  error: z.string().nullable(),
  profile: z.string(),
  reasons: z.array(reasonSchema),
  appError: z.string().nullable(),
  location: z.string().nullable(),
};
/** Fields added later (older lines may lack them), and those only a bounded line has. */
const LATER = {
  toolsHash: snapshotHash.nullable().optional(),
  acceptedHash: snapshotHash.nullable().optional(),
  findings: z.array(findingSchema).optional(),
  findingsSeen: count.optional(),
  firstUse: z.boolean().optional(),
  heldOut: z.boolean().optional(),
  cardMismatches: z.array(mismatchSchema).nullable().optional(),
  snapshotSha256: sha256Hex.nullable().optional(),
  serverInfoChanged: z.boolean().optional(),
  bounded: z.literal(true).optional(),
  toolCount: count.optional(),
  toolChangesCount: z.object({ added: count, removed: count, changed: count }).optional(),
};

export const v1ObservationLine = z.object({
  at: isoTime,
  ...OUTCOME,
  matrix: z.record(z.string(), matrixCellSchema).nullable(),
  decision: decisionSchema.nullable(),
  dropStreak: count.nullable(),
  note: z.string().nullable(),
  ...LATER,
  toolChanges: toolChangesSchema.optional(),
});

const v1PlanRow = z.object({
  ...OUTCOME,
  decision: decisionSchema,
  previous: z.object({ verdict: verdictNameSchema, reason: reasonSchema, at: isoTime }).nullable(),
  changed: z.boolean(),
  dropStreak: count,
  note: z.string().nullable(),
  ...LATER,
  matrix: z.record(z.string(), matrixCellSchema).optional(),
  toolChanges: toolChangesSchema.nullable().optional(),
});

export const v1RunLine = z.object({
  startedAt: isoTime,
  finishedAt: isoTime,
  catalog: z.string(),
  applied: z.boolean(),
  aborted: z.string().nullable(),
  observations: count,
  summary: planSummarySchema,
  plan: z.array(v1PlanRow).optional(),
  bounded: z.literal(true).optional(),
  planRows: count.optional(),
});

type V1Outcome = z.infer<typeof v1ObservationLine> | z.infer<typeof v1PlanRow>;

const DECISION_OF: Record<VerdictName, Decision> = {
  live: 'keep',
  review: 'review',
  failed: 'keep-failed',
  drop: 'drop',
};

/**
 * A v1 line (an observation, or a plan row of an aborted run) as a plan row of the record; `tools` already resolved.
 */
export function rowOfV1(o: V1Outcome, runId: string, at: string, tools: string[] | null): PlanRow {
  const previous = 'previous' in o ? o.previous : null;
  return {
    url: o.url,
    run: runId,
    vantage: LOCAL_VANTAGE,
    observedAt: at,
    profile: o.profile,
    probe: null,
    verdict: o.verdict,
    reason: o.reason,
    reasons: o.reasons,
    attempts: o.attempts,
    durationMs: o.durationMs,
    httpStatus: o.httpStatus,
    protocolVersion: null,
    serverName: null,
    serverVersion: null,
    tools,
    toolCount: tools?.length ?? o.toolCount ?? null,
    sessionId: false,
    error: o.error,
    appError: o.appError,
    quirks: [],
    excludedTools: [],
    cutShort: false,
    auth: null,
    location: o.location,
    diagnosis: null,
    matrix: o.matrix ?? null,
    toolsHash: o.toolsHash ?? null,
    toolsDigest: null,
    findings: o.findings ?? [],
    findingsSeen: o.findingsSeen ?? 0,
    cardMismatches: o.cardMismatches ?? null,
    evidence: null,
    name: o.name,
    decision: o.decision ?? DECISION_OF[o.verdict],
    previous,
    changed: 'changed' in o ? o.changed : true,
    dropStreak: o.dropStreak ?? 0,
    note: o.note,
    // A v1 line wrote `acceptedHash` only when it differed from the list seen: absent means the list was the accepted
    // one.
    acceptedHash: 'acceptedHash' in o && o.acceptedHash !== undefined ? o.acceptedHash : (o.toolsHash ?? null),
    toolChanges: o.toolChanges ?? null,
    toolsChanged: o.reasons.includes('tools-changed'),
    serverInfoChanged: o.serverInfoChanged ?? false,
    identityChanged: o.reasons.includes('identity-changed'),
    firstUse: o.firstUse ?? false,
    heldOut: o.heldOut ?? false,
    snapshotSha256: o.snapshotSha256 ?? null,
  };
}

/** A v1 run line as a run of the record (v1 runs had no id: their start time is). */
export function runOfV1(line: z.infer<typeof v1RunLine>): RecordedRun['run'] {
  return {
    id: line.startedAt,
    startedAt: line.startedAt,
    finishedAt: line.finishedAt,
    catalog: line.catalog,
    applied: line.applied,
    aborted: line.aborted,
    summary: line.summary,
    warnings: [],
  };
}
