/**
 * The status views: what `serve` answers at `/api/servers` (the status model), `/api/refreshes/latest` and
 * `/api/servers/<id>/history`, and what `site` writes as `api/*.json`. Their fields are the record's where they
 * carry one (`src/status/model.ts` builds them, clipping remote text to `LIMITS`).
 */
import { z } from 'zod';
import { matrixCellSchema, observationSchema, verdictNameSchema } from './observation.js';
import { decisionSchema, planRowSchema, planSummarySchema, sameToolsSchema, vantageEntrySchema } from './plan.js';
import { count, isoTime } from './scalars.js';
import { planRowJsonSchema } from './views.js';

const record = observationSchema.shape;
const row = planRowSchema.shape;

/** One day of a server's bar: the worst verdict observed that day (null: none), and how many observations. */
export const dayBarSchema = z.strictObject({
  date: z.string(),
  verdict: verdictNameSchema.nullable(),
  observations: count,
});

/** One server as the status page and `/api/servers` show it: its catalog row, its last probe and its uptime. */
export const serverStatusSchema = z.strictObject({
  /** The server's id on the page and in the API (from its name, unique in the list). */
  id: z.string(),
  name: z.string(),
  url: z.string(),
  description: z.string(),
  requiresAuth: z.boolean(),
  /** The decision of the last refresh that probed this server, or null. */
  decision: decisionSchema.nullable(),
  verdict: record.verdict.nullable(),
  reason: record.reason.nullable(),
  /** The reason in plain language. */
  reasonText: z.string().nullable(),
  /** The first tool names (clipped, see `LIMITS`); `toolCount` says how many the server listed. */
  tools: z.array(z.string()).nullable(),
  toolCount: count.nullable(),
  /** When the last probe ran (its run's time). */
  lastProbeAt: isoTime.nullable(),
  attempts: record.attempts.nullable(),
  durationMs: record.durationMs.nullable(),
  httpStatus: record.httpStatus,
  error: z.string().nullable(),
  /** The app's own error, when it would not list tools. */
  appError: z.string().nullable(),
  /** Where a redirected initialize points. */
  location: z.string().nullable(),
  /** Per client profile, when the last probe ran the matrix. */
  matrix: z.record(z.string(), matrixCellSchema).nullable(),
  /** Share of observations that were live, 0..1, or null without observations (30 and 90 days). */
  uptime30: z.number().min(0).max(1).nullable(),
  uptime90: z.number().min(0).max(1).nullable(),
  days30: z.array(dayBarSchema),
  /** What each vantage saw in the last probe, when it ran across vantages (`verdict` null: no answer). */
  vantages: z.array(vantageEntrySchema.strict()).nullable(),
  /** What the server's tools cost a conversation (o200k tokens of its last list), or null: none counted. */
  tokens: count.nullable(),
  /** Other servers whose last list is the same tool set (which fingerprint matched), or null. */
  sameToolsAs: z.array(sameToolsSchema.strict()).nullable(),
});

/** A plan row as the status shows it (`refresh --json`'s row), its remote text clipped. */
export const planRowViewSchema = planRowJsonSchema.extend({
  /** The tools the server listed (`tools` is clipped). */
  toolCount: count.nullable().optional(),
});

/** The last refresh (`/api/refreshes/latest`). */
export const refreshViewSchema = z.strictObject({
  startedAt: isoTime,
  finishedAt: isoTime,
  /** The run wrote the catalog and outputs (`--write`). */
  applied: z.boolean(),
  summary: planSummarySchema.strict(),
  /** Why nothing was dropped or written (the outage guard), or null. */
  aborted: z.string().nullable(),
  plan: z.array(planRowViewSchema),
});

/** What the list's tools cost: every server's last count together, and the totals of the last two runs. */
export const costViewSchema = z.strictObject({
  /** Tokens of every counted server's tools together. */
  total: count,
  counted: count,
  uncounted: count,
  /** The largest first. */
  largest: z.array(z.strictObject({ name: z.string(), tokens: count })),
  /** The counted total of the last run (null: none, or nothing counted in it). */
  lastRun: count.nullable(),
  /** The counted total of the run before it. */
  previousRun: count.nullable(),
});

/** `/api/servers` (and the site's `api/servers.json`). */
export const statusModelSchema = z.strictObject({
  generatedAt: isoTime,
  lastRefresh: refreshViewSchema.nullable(),
  servers: z.array(serverStatusSchema),
  cost: costViewSchema,
});

/** One observation as the history API answers it (a view of the recorded row): tools and remote text clipped. */
export const observationViewSchema = z.strictObject({
  url: row.url,
  name: row.name,
  /** When it was observed. */
  at: row.observedAt,
  verdict: row.verdict,
  reason: row.reason,
  attempts: row.attempts,
  httpStatus: row.httpStatus,
  durationMs: row.durationMs,
  tools: row.tools,
  error: row.error,
  profile: row.profile,
  reasons: row.reasons,
  appError: row.appError,
  location: row.location,
  matrix: row.matrix,
  toolsHash: row.toolsHash,
  findings: row.findings,
  findingsSeen: row.findingsSeen,
  snapshotSha256: row.snapshotSha256,
  /** The tools the server listed (`tools` is clipped). */
  toolCount: count.nullable(),
  decision: row.decision,
  run: row.run,
  vantage: row.vantage,
  tokens: count.nullable(),
});

/** `/api/servers/<id>/history?days=N` (and the site's `history-N.json`). */
export const historyAnswerSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  days: count,
  observations: z.array(observationViewSchema),
  daily: z.array(dayBarSchema),
});

export type DayBar = z.infer<typeof dayBarSchema>;
export type ServerStatus = z.infer<typeof serverStatusSchema>;
export type PlanRowView = z.infer<typeof planRowViewSchema>;
export type RefreshView = z.infer<typeof refreshViewSchema>;
export type CostView = z.infer<typeof costViewSchema>;
export type StatusModel = z.infer<typeof statusModelSchema>;
export type HistoryAnswer = z.infer<typeof historyAnswerSchema>;
