/**
 * Tool snapshots beside the catalog: `history/snapshots/<hash>.json`, content-addressed, compact JSON, made to be
 * committed. Read back as untrusted input (they arrive through pull requests): a file must be a snapshot of its
 * hash, at most `MAX_SNAPSHOT_FILE_BYTES`, and exactly the bytes a record names (its SHA-256), or it counts as missing.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { storedSnapshotSchema, type StoredSnapshot, type ToolDefinition, type ToolDigest } from '../model/snapshot.js';
import { SNAPSHOT_LIMITS } from '../model/snapshot-hash.js';
import { clipText } from '../text/clip.js';
import type { FileWrite } from '../util/atomic.js';

export const snapshotPath = (catalogPath: string, hash: string) =>
  join(dirname(catalogPath), 'history', 'snapshots', `${hash}.json`);

const HASH = /^[0-9a-f]{16}$/;
const DIGEST_1 = /^[0-9a-f]{12}$/;
/** The largest snapshot file read back (today's are at most SNAPSHOT_LIMITS.bytes; older, indented ones more). */
const MAX_SNAPSHOT_FILE_BYTES = 128 * 1024 * 1024;

/** The stored file's text: compact JSON and a newline. */
export const snapshotText = (s: StoredSnapshot) => JSON.stringify(s) + '\n';

export function snapshotFile(catalogPath: string, snapshot: StoredSnapshot): FileWrite {
  return { path: snapshotPath(catalogPath, snapshot.hash), content: snapshotText(snapshot) };
}

/**
 * A snapshot file's content as read back. Format 1 files (digests keyed by name, no tools digest) are read into
 * today's shape; anything else that does not fit the schema, or is not a snapshot of `expectedHash`, is null.
 */
export function parseStoredSnapshot(value: unknown, expectedHash: string): StoredSnapshot | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (v.hash !== expectedHash) return null;
  if (v.digests && typeof v.digests === 'object' && !Array.isArray(v.digests)) {
    // Format 1: keyed by the full name, 12 hex digits; names clipped as today's digests are, so both compare.
    const entries = Object.entries(v.digests as Record<string, unknown>);
    if (!entries.every(([, d]) => typeof d === 'string' && DIGEST_1.test(d))) return null;
    const digests: ToolDigest[] = entries.map(([name, digest]) => ({
      name: clipText(name, SNAPSHOT_LIMITS.nameChars),
      digest: digest as string,
    }));
    const r = storedSnapshotSchema.omit({ digests: true, format: true, toolsDigest: true, clipped: true }).safeParse(v);
    return r.success
      ? {
          ...r.data,
          format: 1,
          toolsDigest: null,
          clipped: v.clipped === true,
          digests,
          tools: r.data.tools as ToolDefinition[],
        }
      : null;
  }
  const r = storedSnapshotSchema.safeParse({
    format: 1,
    toolsDigest: null,
    clipped: false,
    ...v,
    ...(typeof v.toolsDigest === 'string' ? {} : { toolsDigest: null }),
  });
  return r.success ? r.data : null;
}

/** A snapshot file as read back: the snapshot, or why it is not used (it then counts as missing). */
export type SnapshotRead =
  | { snapshot: StoredSnapshot; sha256: string; warning: null }
  | { snapshot: null; warning: string | null };

/**
 * Reads `history/snapshots/<hash>.json`, untrusted: its content must be a snapshot of that hash, at most the
 * stored size limit, and (when `sha256` is given) exactly the bytes that were recorded. Missing: no warning.
 */
export async function readSnapshot(catalogPath: string, hash: string, sha256?: string | null): Promise<SnapshotRead> {
  if (!HASH.test(hash)) return { snapshot: null, warning: null };
  const path = snapshotPath(catalogPath, hash);
  let bytes: Buffer;
  try {
    // Format-1 files were indented JSON of the clipped list, and could reach tens of MB for a hostile list.
    if ((await stat(path)).size > MAX_SNAPSHOT_FILE_BYTES)
      return { snapshot: null, warning: `${path}: larger than ${MAX_SNAPSHOT_FILE_BYTES} bytes; treated as missing` };
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { snapshot: null, warning: null };
    return {
      snapshot: null,
      warning: `${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}); treated as missing`,
    };
  }
  return snapshotOfBytes(bytes, hash, sha256, path);
}

/** Stored bytes read back as the snapshot `hash` (`where` names them in a warning), untrusted as a file is. */
export function snapshotOfBytes(
  bytes: Buffer,
  hash: string,
  sha256: string | null | undefined,
  where: string,
): SnapshotRead {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (sha256 && actual !== sha256)
    return { snapshot: null, warning: `${where}: does not match the SHA-256 recorded for it; treated as missing` };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    value = undefined;
  }
  const snapshot = parseStoredSnapshot(value, hash);
  return snapshot
    ? { snapshot, sha256: actual, warning: null }
    : { snapshot: null, warning: `${where}: not a snapshot of ${hash}; treated as missing` };
}

/**
 * What a recorded run writes of its snapshots, and the SHA-256 of each file's bytes as they are once it is recorded.
 */
export interface SnapshotFiles {
  /** Files this run writes when it records. */
  writes: FileWrite[];
  /** Per snapshot hash of this run, the SHA-256 of the file's bytes as they are once the run is recorded. */
  sha: Map<string, string>;
}

/**
 * This run's snapshot files: a missing one is written, and so is one whose bytes are not this snapshot's (an
 * edit; or an older format, which only a `--write` run rewrites, since it also updates the lock's SHA-256).
 */
export async function snapshotFiles(
  catalogPath: string,
  snapshots: Iterable<StoredSnapshot>,
  write: boolean,
): Promise<SnapshotFiles> {
  const writes: FileWrite[] = [];
  const sha = new Map<string, string>();
  await Promise.all(
    [...snapshots].map(async (s) => {
      const file = snapshotFile(catalogPath, s);
      const kept = keptSnapshot(await readFile(file.path).catch(() => null), s, write);
      if (kept === null) writes.push(file);
      sha.set(s.hash, kept ?? sha256Of(file.content));
    }),
  );
  return { writes, sha };
}

const sha256Of = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The SHA-256 of a snapshot's stored bytes when they stay as they are (they are this snapshot's, or an older
 * format that only a `write` run rewrites), or null when the snapshot is to be written (`snapshotText`).
 */
export function keptSnapshot(current: Buffer | null, s: StoredSnapshot, write: boolean): string | null {
  if (!current) return null;
  const text = current.toString('utf8');
  return text === snapshotText(s) || (!write && isFormat1(text, s.hash)) ? sha256Of(current) : null;
}

function isFormat1(text: string, hash: string): boolean {
  try {
    return parseStoredSnapshot(JSON.parse(text), hash)?.format === 1;
  } catch {
    return false;
  }
}
