/**
 * The observation record: what one probe of one URL from one vantage in one run saw and concluded. Plain data,
 * declared once here: the TypeScript type, the validation of anything read back (a history line, a worker's
 * message, an API body) and the published JSON Schemas all come from these schemas. Every other form (`probe
 * --json`, plan rows, history lines, the status API, the MCP tools' structured content) is a view of it.
 *
 * The top-level fields are the deciding client's outcome (what `probe --json` has always printed); `evidence`
 * holds what the policy read to reach it, so the verdict can be judged again when the policy or the deciding
 * profile changes. Records read from history lines written before the evidence existed have `evidence: null`
 * and `probe: null`.
 */
import { z } from 'zod';
import { evidenceSchema } from './evidence.js';
import { count, duration, isoTime, sha256Hex, snapshotHash } from './scalars.js';
import { AUTH_KINDS, QUIRKS, REASONS, VERDICTS } from './words.js';

export const verdictNameSchema = z.enum(VERDICTS);
export const reasonSchema = z.enum(REASONS);

/**
 * One suspicious place in one tool. `field` is 'name', 'title', 'description', or a path into the tool such as
 * 'inputSchema.properties.path.description'. `excerpt` is a short, inert quote (no control, bidi or invisible
 * character survives: each is shown as ⟨U+XXXX⟩).
 */
export const findingSchema = z.object({ tool: z.string(), field: z.string(), rule: z.string(), excerpt: z.string() });

/** One client profile's outcome in the matrix (`works`: it would connect and list at least one tool). */
export const matrixCellSchema = z.object({
  works: z.boolean(),
  verdict: verdictNameSchema,
  reason: reasonSchema,
  tools: z.array(z.string()).nullable(),
});

/** The spec-correct reading, when it ran, with its own evidence (the top-level fields are the deciding client's). */
export const diagnosisSummarySchema = z.object({
  works: z.boolean(),
  tools: z.array(z.string()).nullable(),
  error: z.string().nullable(),
  httpStatus: z.number().int().nullable(),
  protocolVersion: z.string().nullable(),
  serverName: z.string().nullable(),
  serverVersion: z.string().nullable(),
  quirks: z.array(z.enum(QUIRKS)),
});

/** Where the server's own Server Card disagrees with what answered (`card`: the claim, bounded). */
export const mismatchSchema = z.object({ field: z.string(), card: z.unknown(), live: z.unknown() });

/** How the probe was made: enough to know what a record can be compared with. */
export const probeSettingsSchema = z.object({
  /** The onetap version that probed. */
  version: z.string(),
  /** SHA-256 (16 hex) of the deciding profile's definition: a profile whose behaviour changed has another. */
  profileDigest: z.string(),
  /** The entry was probed as auth-optional (initialize without a key is enough). */
  requiresAuth: z.boolean(),
  /** The per-request time limit override, ms (null: the profile's own). */
  timeoutMs: count.nullable(),
  /** Every other profile ran too (`evidence.matrix`). */
  matrix: z.boolean(),
  /** Names of the extra request headers sent (never their values). */
  headers: z.array(z.string()),
  /**
   * Probe-only keys (a requiresAuth entry's `probeHeaders`), absent without any: the headers sent with a key (names
   * only), the environment variables that were not set (the row was probed without them), whether the keyed session
   * listed tools (then the tool list, its snapshot and screening are the keyed session's), and its error. `refused`:
   * the variables the key rule refused (`policy.keyEnv`; never read, the row was probed without them), absent when
   * none.
   */
  keys: z
    .object({
      headers: z.array(z.string()),
      missing: z.array(z.string()),
      refused: z.array(z.string()).optional(),
      listed: z.boolean(),
      error: z.string().nullable(),
    })
    .optional(),
});

export const observationSchema = z.object({
  /** The URL probed (the catalog row's, as written there). */
  url: z.string(),
  /** The run the observation belongs to (null: a probe outside any run). */
  run: z.string().nullable(),
  /** Where it was observed from (`local` unless the run names its vantage). */
  vantage: z.string(),
  /** ISO time of the run that made it (every observation of a run carries the run's time). */
  observedAt: isoTime,
  /** The deciding profile's id. */
  profile: z.string(),
  /** How the probe was made (null in rows of 0.1's history). */
  probe: probeSettingsSchema.nullable(),
  /** What the deciding client's outcome means for the row (`docs/reference/verdicts.md`). */
  verdict: verdictNameSchema,
  /** Why: the first rule of the policy table that holds. */
  reason: reasonSchema,
  /** Every reason that applies, `reason` first. */
  reasons: z.array(reasonSchema),
  /** 1, or 2 when the first attempt failed in a way worth one retry. */
  attempts: count,
  /** The whole probe, retry included, ms. */
  durationMs: duration,
  /** HTTP status of the step that decided (initialize, or tools/list once initialize succeeded). */
  httpStatus: z.number().int().nullable(),
  /** The protocol version the server answered the deciding client with. */
  protocolVersion: z.string().nullable(),
  /** serverInfo.name and .version as the deciding client read them. */
  serverName: z.string().nullable(),
  serverVersion: z.string().nullable(),
  /** What the deciding client lists (page 1 for the app); names clipped. */
  tools: z.array(z.string()).nullable(),
  /** How many tools it listed (kept when a bounded history line leaves the names out). */
  toolCount: count.nullable(),
  /** The server gave the deciding client a session id (its value is never recorded). */
  sessionId: z.boolean(),
  /** The first thing that went wrong, as short text (null when live/ok). */
  error: z.string().nullable(),
  /** The app's own error when the app (or its fork) decides and would not list tools. */
  appError: z.string().nullable(),
  /** What the server does that a server author should know, without changing the verdict. */
  quirks: z.array(z.enum(QUIRKS)),
  /** Tools the deciding client leaves out (2026-07-28: an invalid `x-mcp-header`), with why. */
  excludedTools: z.array(z.object({ name: z.string(), reason: z.string() })),
  /** A time limit override stopped a request before the client's own limit. */
  cutShort: z.boolean(),
  /** How a 401/403 asked to authenticate (null: no such answer). */
  auth: z.enum(AUTH_KINDS).nullable(),
  /** Where a redirected initialize points. */
  location: z.string().nullable(),
  /** The spec-correct reading, when it ran. */
  diagnosis: diagnosisSummarySchema.nullable(),
  /** Per profile, with `--matrix`. */
  matrix: z.record(z.string(), matrixCellSchema).nullable(),
  /** The snapshot hash of the tool list (16 hex; names the file `history/snapshots/<hash>.json`), or null. */
  toolsHash: snapshotHash.nullable(),
  /** SHA-256 over every tool's digest (64 hex), or null. */
  toolsDigest: sha256Hex.nullable(),
  /**
   * The o200k token count of the tool list as a conversation carries it (`src/attest/tokens.ts` says exactly what is
   * counted), over the full list; null without a list, or when it was not counted (`tokensError` says why); absent in
   * records made before it was counted (none is guessed).
   */
  tokens: count.nullable().optional(),
  /**
   * Why a listed tool list has no count (`not counted: …`, e.g. counting took longer than its time budget); null when
   * counted or without a list; absent in records made before it existed.
   */
  tokensError: z.string().nullable().optional(),
  /**
   * The tool set's digest ignoring tool names and titles (a renamed copy), and ignoring every description and title
   * (the same interface reworded); null without tools.
   */
  nameBlindDigest: sha256Hex.nullable().optional(),
  descriptionBlindDigest: sha256Hex.nullable().optional(),
  /** Screening findings on the full tool text (at most `RECORD_LIMITS.findings`; `findingsSeen` counts all). */
  findings: z.array(findingSchema),
  findingsSeen: count,
  /** Where the server's own card disagrees with it (null: no card, or not checked). Advisory. */
  cardMismatches: z.array(mismatchSchema).nullable(),
  /** What the policy read to reach the verdict (null in rows of 0.1's history, or bounded away). */
  evidence: evidenceSchema.nullable(),
  /**
   * How many texts of the record onetap redacted, each such run now reading `[redacted]`: a header's value or a
   * probe-only key the server sent back (docs/clients.md). Absent when none (and in records made before it was
   * counted).
   */
  redacted: count.optional(),
});

export type Finding = z.infer<typeof findingSchema>;
export type MatrixCell = z.infer<typeof matrixCellSchema>;
export type DiagnosisSummary = z.infer<typeof diagnosisSummarySchema>;
export type Mismatch = z.infer<typeof mismatchSchema>;
export type ProbeSettings = z.infer<typeof probeSettingsSchema>;
export type Observation = z.infer<typeof observationSchema>;
