/**
 * The plan: each observation decided (`decide`, pure) into what happens to its catalog row, and the run that
 * records them. A plan row is the observation with its final verdict (after tool review against the accepted
 * list) and the decision; the history keeps plan rows, so a row read back is a plan row.
 */
import { z } from 'zod';
import { observationSchema, reasonSchema, verdictNameSchema } from './observation.js';
import { DECISIONS } from './words.js';
import { count, isoTime, sha256Hex, snapshotHash } from './scalars.js';

/** Which tools changed against the accepted list. */
export const toolChangesSchema = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  /**
   * The tools digest differs but no stored per-tool digest names the change (a list cut for storage, or no readable
   * accepted snapshot).
   */
  unlisted: z.boolean().optional(),
});

export const decisionSchema = z.enum(DECISIONS);

/**
 * What one vantage the run asked saw of the URL (`verdict` null: it gave no answer, or was left out: `left` says why).
 */
export const vantageEntrySchema = z.object({
  vantage: z.string(),
  verdict: verdictNameSchema.nullable(),
  reason: reasonSchema.nullable(),
  /** The probe's whole time there, ms. */
  latencyMs: count.nullable(),
  observedAt: isoTime.nullable(),
  /** Why the vantage was left out of this run (its canaries failed, or the network-level rule), or null. */
  left: z.string().nullable(),
});

/**
 * Which fingerprint two tool sets share: the exact tools digest, the name-blind one, or only the description-blind one.
 */
export const sameToolsDigestSchema = z.enum(['tools', 'name-blind', 'description-blind']);

/** Another entry that serves the same tool set. */
export const sameToolsSchema = z.object({ name: z.string(), url: z.string(), digest: sameToolsDigestSchema });

export const planRowSchema = observationSchema.extend({
  /** The catalog row's name. */
  name: z.string(),
  decision: decisionSchema,
  /**
   * The last recorded observation of the URL before this run, or null (recomputed from the runs before it when read
   * back).
   */
  previous: z.object({ verdict: verdictNameSchema, reason: reasonSchema, at: isoTime }).nullable(),
  /** The verdict or reason differs from the previous observation (or there was none). */
  changed: z.boolean(),
  /** Consecutive drop-class runs, this one included (0 when this run is not drop-class). */
  dropStreak: count,
  /** Why the decision differs from the verdict, when it does. */
  note: z.string().nullable(),
  /** The accepted snapshot's hash when the run was made (null: none yet). */
  acceptedHash: snapshotHash.nullable(),
  /** Tool drift against the accepted snapshot (null: nothing to compare). */
  toolChanges: toolChangesSchema.nullable(),
  /** The tools differ from the accepted ones (the tools digest). */
  toolsChanged: z.boolean(),
  /** serverInfo differs from the accepted snapshot's while the tools may not (a version bump): reported only. */
  serverInfoChanged: z.boolean(),
  /** The server turned into another one (another name, fewer than half of the accepted tools). */
  identityChanged: z.boolean(),
  /** This run's tool list is accepted on first use when the run writes. */
  firstUse: z.boolean(),
  /** Held out of the generated runtime lists until accepted (identity-changed, suspicious-tools, unprocessable). */
  heldOut: z.boolean(),
  /** SHA-256 of the stored snapshot file's bytes (`history/snapshots/<toolsHash>.json`), or null without one. */
  snapshotSha256: sha256Hex.nullable(),
  /** A run across several vantages: one entry per vantage asked; the row's own fields are its standing vantage's. */
  vantages: z.array(vantageEntrySchema).optional(),
  /**
   * Other rows of this run serving the same tool set, and which digest matched (`tools`: exactly; `name-blind`;
   * `description-blind`).
   */
  sameToolsAs: z.array(sameToolsSchema).optional(),
});

export const planSummarySchema = z.object({
  total: count,
  keep: count,
  keepFailed: count,
  review: count,
  drop: count,
  changed: count,
});

export const planSchema = z.object({
  rows: z.array(planRowSchema),
  summary: planSummarySchema,
  /** Why nothing may be dropped or written this run (the outage guard), or null. */
  aborted: z.string().nullable(),
  /** What the run noticed but that decides nothing (a snapshot file that does not match its record, …). */
  warnings: z.array(z.string()),
  /** A run across several vantages: how many had to agree before a drop. */
  quorum: count.optional(),
});

/** One recorded run: its plan's summary and what became of it. Its rows are recorded beside it. */
export const runRecordSchema = z.object({
  /** The run's id: given (`--run-id`, a CI run's) or its start time. */
  id: z.string(),
  startedAt: isoTime,
  finishedAt: isoTime,
  /** The catalog file's name. */
  catalog: z.string(),
  /** True when the run wrote the catalog and outputs (`--write`). */
  applied: z.boolean(),
  aborted: z.string().nullable(),
  summary: planSummarySchema,
  warnings: z.array(z.string()),
  /** A run across several vantages: how many had to agree before a drop (`rejudge` combines them again). */
  quorum: count.optional(),
});

export type ToolChanges = z.infer<typeof toolChangesSchema>;
export type PlanRow = z.infer<typeof planRowSchema>;
export type VantageEntry = z.infer<typeof vantageEntrySchema>;
export type SameToolsDigest = z.infer<typeof sameToolsDigestSchema>;
export type SameTools = z.infer<typeof sameToolsSchema>;
export type PlanSummary = z.infer<typeof planSummarySchema>;
export type Plan = z.infer<typeof planSchema>;
export type RunRecord = z.infer<typeof runRecordSchema>;
/** One observation of a URL as bars and uptime read it: when, and what it came to. */
export type VerdictPoint = Pick<PlanRow, 'observedAt' | 'verdict' | 'reason'>;
/** What a run's (or a vantage's) outage canaries came to: how many were asked, how many answered. */
export interface CanaryCheck {
  configured: number;
  reachable: number;
}
/** A run as the history holds it: the run and its rows (an aborted run's rows are its plan, never observations). */
export interface RecordedRun {
  run: RunRecord;
  rows: PlanRow[];
}

/**
 * A skipped line of the history: `file` relative to the catalog's directory (`history/2026-11.jsonl`), `line` 1-based.
 */
export interface HistoryProblem {
  file: string;
  line: number;
  problem: string;
}
/** How many lines the history had that could not be used, and the first of them. */
export interface HistoryProblems {
  count: number;
  first: HistoryProblem[];
}
