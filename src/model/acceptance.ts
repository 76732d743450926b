/**
 * Acceptances: which tool list a maintainer accepted, per server URL (`tools.lock.json` beside the catalog, or a
 * store's table). Drift is judged against them; `onetap accept` and a first-use refresh write them.
 */
import { z } from 'zod';
import { sha256Hex, snapshotHash } from './scalars.js';

export const lockEntrySchema = z.object({
  /** The server's name when accepted (the key is its URL). */
  name: z.string(),
  /** The accepted snapshot's hash (16 hex). */
  hash: snapshotHash,
  /** The accepted tools digest (64 hex; absent in entries written before it was recorded). */
  toolsDigest: sha256Hex.optional(),
  /** SHA-256 of the accepted snapshot file's bytes (absent in older entries): a file that differs is not read. */
  snapshotSha256: sha256Hex.optional(),
  by: z.string(),
  why: z.string(),
  /** ISO time of the acceptance. */
  at: z.string(),
});

export const toolsLockSchema = z.object({ version: z.literal(1), servers: z.record(z.string(), lockEntrySchema) });

export type LockEntry = z.infer<typeof lockEntrySchema>;
export type ToolsLock = z.infer<typeof toolsLockSchema>;

export const EMPTY_LOCK: ToolsLock = Object.freeze({
  version: 1,
  servers: Object.freeze({}) as ToolsLock['servers'],
}) as ToolsLock;
