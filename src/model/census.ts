/**
 * A census's verification record: what `onetap census` puts under `"<publisher>/verification"` in each item's `_meta`
 * of the list document it publishes (docs/census.md documents the field). Readers of another census get this shape
 * from a document they do not trust: it is what a record says, not what was checked here.
 */
import { z } from 'zod';
import { sameToolsSchema } from './plan.js';
import { count, isoTime, sha256Hex, snapshotHash } from './scalars.js';

export const checkResultSchema = z.enum(['passed', 'failed', 'not run']);

/** What was checked of a remote, each passed, failed or not run. */
export const checksSchema = z.strictObject({
  reachable: checkResultSchema,
  mcp: checkResultSchema,
  tools: checkResultSchema,
  auth: checkResultSchema,
  'one-tap': checkResultSchema,
});

/** One remote of a server as the census saw it. */
export const remoteRecordSchema = z.strictObject({
  url: z.string(),
  /**
   * The verdict, or `not probed` for a remote the census does not attest (SSE-only, templated, opted out, refused by
   * the address rule).
   */
  verdict: z.string(),
  /** The reason of the verdict, or why the remote was not probed. */
  reason: z.string(),
  checks: checksSchema,
  toolsHash: snapshotHash.nullable(),
  toolCount: count.nullable(),
  tokens: count.nullable(),
  /** Other servers of the census serving the same tool set, and which digest matched. */
  sameToolsAs: z.array(sameToolsSchema),
  /** SHA-256 of the recorded observation's JSON (`evidence/<digest>.json`), or null when not probed. */
  evidence: sha256Hex.nullable(),
});

/**
 * The server.json against the registry's schema: `schema` the date of its `$schema`; `valid` null when not validated,
 * with `why`.
 */
export const serverJsonAssessmentSchema = z.strictObject({
  schema: z.string().nullable(),
  valid: z.boolean().nullable(),
  why: z.string().nullable(),
});

/** How the census attested: the profile, its protocol version, the steps it ran and from where. */
export const censusMethodSchema = z.strictObject({
  profile: z.string(),
  protocolVersion: z.string(),
  vantages: z.array(z.string()),
  /** The records are not signed. */
  signed: z.literal(false),
  steps: z.array(z.string()),
});

/** The verification of one server: who checked it, when, until when, how, and each remote's record. */
export const verificationSchema = z.strictObject({
  verifier: z.strictObject({ publisher: z.string(), tool: z.literal('onetap'), version: z.string() }),
  verifiedAt: isoTime,
  /** After this time the record says nothing (a reader marks it `expired`). */
  expiresAt: isoTime,
  method: censusMethodSchema,
  remotes: z.array(remoteRecordSchema),
  /** The server.json against the registry's schema: valid, invalid, or not validated (and why). */
  serverJson: serverJsonAssessmentSchema,
  /** Why none of the server's remotes was probed (over the limits, invalid), or null. */
  skipped: z.string().nullable(),
  /** Set by a reader (`serve --census`, `site --census`) once `expiresAt` has passed: the record says nothing. */
  expired: z.literal(true).optional(),
});

export type CheckResult = z.infer<typeof checkResultSchema>;
export type Checks = z.infer<typeof checksSchema>;
export type RemoteRecord = z.infer<typeof remoteRecordSchema>;
export type ServerJsonAssessment = z.infer<typeof serverJsonAssessmentSchema>;
export type Verification = z.infer<typeof verificationSchema>;
