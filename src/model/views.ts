/**
 * The published views of the record, as schemas picked from it: what `probe --json` prints for a URL and what
 * `refresh --json` prints for a row (also the MCP tools' structured content). The functions that build them
 * (`src/attest/json.ts`, `src/decide/plan-json.ts`) are typed by these, and a test holds them to them, so a view
 * can neither lose a field nor grow one its schema does not say.
 */
import { z } from 'zod';
import { exchangeSchema } from './evidence.js';
import { matrixCellSchema, observationSchema } from './observation.js';
import { planRowSchema, planSummarySchema, vantageEntrySchema } from './plan.js';

/** One URL of `probe --json`: the deciding client's outcome, `detail`, and a summary of its exchanges. */
export const probeJsonSchema = observationSchema
  .pick({
    url: true,
    verdict: true,
    reason: true,
    attempts: true,
    httpStatus: true,
    protocolVersion: true,
    serverName: true,
    tools: true,
    sessionId: true,
    durationMs: true,
    error: true,
    profile: true,
    reasons: true,
    appError: true,
    diagnosis: true,
    cutShort: true,
    serverVersion: true,
    quirks: true,
    excludedTools: true,
    auth: true,
    location: true,
    findings: true,
    toolsHash: true,
    toolsDigest: true,
    findingsSeen: true,
    observedAt: true,
    tokens: true,
    tokensError: true,
    nameBlindDigest: true,
    descriptionBlindDigest: true,
    redacted: true,
  })
  .extend({
    /** The reason in plain language (and where onetap could not process the answer). */
    detail: z.string(),
    /** Per profile, with `--matrix` (absent without it). */
    matrix: z.record(z.string(), matrixCellSchema).optional(),
    /** The deciding client's exchanges, in order. */
    steps: z.array(
      exchangeSchema.pick({
        step: true,
        status: true,
        contentType: true,
        body: true,
        problem: true,
        errorCode: true,
        durationMs: true,
      }),
    ),
    /**
     * One entry per vantage asked: the machine that ran `probe` (`local`), or each of `--vantages` (the fields above
     * are then the standing vantage's, with the combined verdict).
     */
    vantages: z.array(vantageEntrySchema),
    /** With `--vantages`: why the verdict is not simply the standing vantage's (null when it is). */
    note: z.string().nullable().optional(),
  });

/** One row of `refresh --json`. */
export const planRowJsonSchema = planRowSchema
  .pick({
    name: true,
    url: true,
    decision: true,
    verdict: true,
    reason: true,
    attempts: true,
    previous: true,
    changed: true,
    dropStreak: true,
    note: true,
    httpStatus: true,
    tools: true,
    error: true,
    durationMs: true,
    profile: true,
    reasons: true,
    appError: true,
    location: true,
    toolsHash: true,
    acceptedHash: true,
    toolChanges: true,
    firstUse: true,
    heldOut: true,
    findings: true,
    findingsSeen: true,
    cardMismatches: true,
    serverInfoChanged: true,
    snapshotSha256: true,
    toolCount: true,
    toolsDigest: true,
    toolsChanged: true,
    identityChanged: true,
    run: true,
    vantage: true,
    observedAt: true,
    vantages: true,
    tokens: true,
    nameBlindDigest: true,
    descriptionBlindDigest: true,
    sameToolsAs: true,
    redacted: true,
  })
  .extend({
    /** Per profile, with `--matrix` (absent without it). */
    matrix: z.record(z.string(), matrixCellSchema).optional(),
  });

/** `refresh --json`: the plan (`probedAt` and `written` are added by the command). */
export const planJsonSchema = z.object({
  plan: z.array(planRowJsonSchema),
  summary: planSummarySchema,
  aborted: z.string().nullable(),
  warnings: z.array(z.string()),
  /** A run across vantages: how many had to agree before a drop. */
  quorum: z.number().int().optional(),
});

export type ProbeJson = z.infer<typeof probeJsonSchema>;
export type PlanRowJson = z.infer<typeof planRowJsonSchema>;
export type PlanJson = z.infer<typeof planJsonSchema>;
