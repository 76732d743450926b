/**
 * The published views of the record, as schemas made of its fields: what `probe --json` prints for a URL and what
 * `refresh --json` prints for a row (also the MCP tools' structured content). `src/views/` builds each by copying
 * its keys from the record in this order; `src/views/registry.ts` names the record fields each leaves out, and
 * `test/fast/views-registry.test.ts` fails on a record field in neither and on a view that does not parse strictly.
 */
import { z } from 'zod';
import { exchangeSchema } from './evidence.js';
import { matrixCellSchema, observationSchema } from './observation.js';
import { planRowSchema, planSummarySchema, vantageEntrySchema } from './plan.js';
import { isoTime } from './scalars.js';

const record = observationSchema.shape;
const row = planRowSchema.shape;

/** Per profile, with `--matrix` (absent without it). */
const matrixView = z.record(z.string(), matrixCellSchema).optional();

/**
 * One URL of `probe --json`: the deciding client's outcome, `detail`, and a summary of its exchanges. The keys are
 * the output's, in its order (`src/views/project.ts` copies them from the record); only `detail`, `matrix`, `steps`,
 * `vantages`, `note` and the null defaults are computed (`src/views/probe.ts`).
 */
export const probeJsonSchema = z.object({
  url: record.url,
  verdict: record.verdict,
  reason: record.reason,
  attempts: record.attempts,
  httpStatus: record.httpStatus,
  protocolVersion: record.protocolVersion,
  serverName: record.serverName,
  tools: record.tools,
  sessionId: record.sessionId,
  durationMs: record.durationMs,
  error: record.error,
  profile: record.profile,
  reasons: record.reasons,
  appError: record.appError,
  diagnosis: record.diagnosis,
  cutShort: record.cutShort,
  /** The reason in plain language (and where onetap could not process the answer). */
  detail: z.string(),
  serverVersion: record.serverVersion,
  quirks: record.quirks,
  excludedTools: record.excludedTools,
  auth: record.auth,
  location: record.location,
  findings: record.findings,
  toolsHash: record.toolsHash,
  matrix: matrixView,
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
  toolsDigest: record.toolsDigest,
  findingsSeen: record.findingsSeen,
  observedAt: record.observedAt,
  tokens: record.tokens,
  tokensError: record.tokensError,
  nameBlindDigest: record.nameBlindDigest,
  descriptionBlindDigest: record.descriptionBlindDigest,
  /**
   * One entry per vantage asked: the machine that ran `probe` (`local`), or each of `--vantages` (the fields above
   * are then the standing vantage's, with the combined verdict).
   */
  vantages: z.array(vantageEntrySchema),
  /** With `--vantages`: why the verdict is not simply the standing vantage's (null when it is). */
  note: z.string().nullable().optional(),
  redacted: record.redacted,
});

/** One row of `refresh --json`: the keys in the output's order; only `matrix` and defaults are computed. */
export const planRowJsonSchema = z.object({
  name: row.name,
  url: row.url,
  decision: row.decision,
  verdict: row.verdict,
  reason: row.reason,
  attempts: row.attempts,
  previous: row.previous,
  changed: row.changed,
  dropStreak: row.dropStreak,
  note: row.note,
  httpStatus: row.httpStatus,
  tools: row.tools,
  error: row.error,
  durationMs: row.durationMs,
  profile: row.profile,
  reasons: row.reasons,
  appError: row.appError,
  location: row.location,
  matrix: matrixView,
  toolsHash: row.toolsHash,
  acceptedHash: row.acceptedHash,
  toolChanges: row.toolChanges,
  firstUse: row.firstUse,
  heldOut: row.heldOut,
  findings: row.findings,
  findingsSeen: row.findingsSeen,
  cardMismatches: row.cardMismatches,
  serverInfoChanged: row.serverInfoChanged,
  snapshotSha256: row.snapshotSha256,
  toolCount: row.toolCount,
  toolsDigest: row.toolsDigest,
  toolsChanged: row.toolsChanged,
  identityChanged: row.identityChanged,
  run: row.run,
  vantage: row.vantage,
  observedAt: row.observedAt,
  vantages: row.vantages,
  tokens: row.tokens,
  nameBlindDigest: row.nameBlindDigest,
  descriptionBlindDigest: row.descriptionBlindDigest,
  sameToolsAs: row.sameToolsAs,
  redacted: row.redacted,
});

/** The plan as `refresh --json` prints it, before what the command adds (`refreshJsonSchema`). */
export const planJsonSchema = z.object({
  plan: z.array(planRowJsonSchema),
  summary: planSummarySchema,
  aborted: z.string().nullable(),
  warnings: z.array(z.string()),
  /** A run across vantages: how many had to agree before a drop. */
  quorum: z.number().int().optional(),
});

/** What `refresh --json` prints: the plan, and what the command did with it. */
export const refreshJsonSchema = planJsonSchema.extend({
  /** The run's time (every observation of the run carries it). */
  probedAt: isoTime,
  /** Every file whose bytes the run changed (none without `--write`). */
  written: z.array(z.string()),
  /** A `--write` run that changed nothing: no generated file was written (but perhaps the snapshot's dates). */
  quiet: z.boolean(),
  /** A quiet run that refreshed only the snapshot's dates, which would have gone stale before the next run. */
  datesOnly: z.boolean(),
  /** The run id was recorded already: this is its recorded plan. */
  alreadyRecorded: z.literal(true).optional(),
});

export type ProbeJson = z.infer<typeof probeJsonSchema>;
export type PlanRowJson = z.infer<typeof planRowJsonSchema>;
export type PlanJson = z.infer<typeof planJsonSchema>;
