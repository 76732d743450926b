/**
 * A tool list as stored: `history/snapshots/<hash>.json`, content-addressed, hashed on the full text and clipped
 * for storage (`src/model/snapshot-hash.ts` makes it, `src/store/snapshots.ts` reads it back as untrusted input).
 */
import { z } from 'zod';
import { count, sha256Hex, snapshotHash } from './scalars.js';

/** A tool as a client listed it (the full definition; clipped only where it is stored or shown). */
export const toolDefinitionSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.unknown().optional(),
  annotations: z.unknown().optional(),
});

export const toolDigestSchema = z.object({
  name: z.string(),
  digest: z.string().regex(/^[0-9a-f]{16}$/, 'a tool digest (16 hex digits)'),
});

/** Format 2 (format-1 files, digests keyed by name, are read into this shape by the store). */
export const storedSnapshotSchema = z.object({
  format: z.number().int(),
  hash: snapshotHash,
  /** SHA-256 over every tool's digest (64 hex); null for a format-1 file, which did not record it. */
  toolsDigest: sha256Hex.nullable(),
  serverInfo: z.object({ name: z.string().nullable(), version: z.string().nullable() }),
  /** Tools the server listed (the stored list may hold fewer). */
  toolsSeen: count,
  /** True when any tool, text, schema or digest was clipped for storage. */
  clipped: z.boolean(),
  /** Every tool's digest, in the list's order (16 hex; 12 in format-1 files); cut only past the digest budget. */
  digests: z.array(toolDigestSchema),
  /** Sorted by name, then by content; canonical JSON (sorted keys) inside. */
  tools: z.array(toolDefinitionSchema),
});

export type ToolDefinition = z.infer<typeof toolDefinitionSchema>;
export type ToolDigest = z.infer<typeof toolDigestSchema>;
export type StoredSnapshot = z.infer<typeof storedSnapshotSchema>;
/** The hashable document: serverInfo and the tools, canonical. */
export type ToolListSnapshot = Pick<StoredSnapshot, 'serverInfo' | 'tools'>;
