/**
 * Tool acceptances, beside the catalog: `tools.lock.json` (which tool list a maintainer accepted, per server)
 * and the snapshots it points at, content-addressed under `history/snapshots/<hash>.json`. Both are plain
 * text with a stable order, made to be committed: the next weekly run on a fresh clone reads them.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { parseStoredSnapshot, snapshotText, type StoredSnapshot } from '../attest/snapshot.js';
import type { FileWrite } from '../util/atomic.js';
import { CatalogError } from './model.js';

export interface LockEntry {
  /** The server's name when accepted (the key is its URL). */
  name: string;
  /** The accepted snapshot's hash. */
  hash: string;
  /** The accepted tools digest (64 hex; absent in entries written before it was recorded). */
  toolsDigest?: string;
  /** SHA-256 of the accepted snapshot file's bytes (absent in older entries): a file that differs is not read. */
  snapshotSha256?: string;
  by: string;
  why: string;
  /** ISO time of the acceptance. */
  at: string;
}

export interface ToolsLock { version: 1; servers: Record<string, LockEntry> }

export const EMPTY_LOCK: ToolsLock = { version: 1, servers: {} };

export const lockPath = (catalogPath: string) => join(dirname(catalogPath), 'tools.lock.json');
export const snapshotPath = (catalogPath: string, hash: string) => join(dirname(catalogPath), 'history', 'snapshots', `${hash}.json`);

const HASH = /^[0-9a-f]{16}$/;
const SHA256 = /^[0-9a-f]{64}$/;
/** The largest snapshot file read back (today's are at most SNAPSHOT_LIMITS.bytes; older, indented ones more). */
const MAX_SNAPSHOT_FILE_BYTES = 128 * 1024 * 1024;

export async function readLock(catalogPath: string): Promise<ToolsLock> {
  const path = lockPath(catalogPath);
  let text: string;
  try { text = await readFile(path, 'utf8'); } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_LOCK;
    throw err;
  }
  let value: unknown;
  try { value = JSON.parse(text); } catch (err) { throw new CatalogError(`${path}: not JSON: ${(err as Error).message}`); }
  const servers = (value as { servers?: unknown })?.servers;
  if ((value as { version?: unknown })?.version !== 1 || typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new CatalogError(`${path}: expected {"version": 1, "servers": {<url>: {name, hash, by, why, at}}}`);
  }
  for (const [url, e] of Object.entries(servers as Record<string, Partial<LockEntry>>)) {
    const ok = e && typeof e === 'object' && ['name', 'by', 'why', 'at'].every((k) => typeof e[k as keyof LockEntry] === 'string') && typeof e.hash === 'string' && HASH.test(e.hash)
      && [e.toolsDigest, e.snapshotSha256].every((x) => x === undefined || (typeof x === 'string' && SHA256.test(x)));
    if (!ok) throw new CatalogError(`${path}: servers["${url}"]: expected {name, hash (16 hex digits), toolsDigest?, snapshotSha256? (64 hex digits), by, why, at}`);
  }
  return value as ToolsLock;
}

/** Stable text: servers sorted by URL, fields in one order, one entry per line group. */
export function serializeLock(lock: ToolsLock): string {
  const servers = Object.fromEntries(Object.keys(lock.servers).sort().map((url) => {
    const e = lock.servers[url]!;
    return [url, { name: e.name, hash: e.hash, ...(e.toolsDigest ? { toolsDigest: e.toolsDigest } : {}), ...(e.snapshotSha256 ? { snapshotSha256: e.snapshotSha256 } : {}), by: e.by, why: e.why, at: e.at }];
  }));
  return JSON.stringify({ version: 1, servers }, null, 2) + '\n';
}

/** A snapshot file as read back: the snapshot, or why it is not used (it then counts as missing). */
export type SnapshotRead = { snapshot: StoredSnapshot; sha256: string; warning: null } | { snapshot: null; warning: string | null };

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
    if ((await stat(path)).size > MAX_SNAPSHOT_FILE_BYTES) return { snapshot: null, warning: `${path}: larger than ${MAX_SNAPSHOT_FILE_BYTES} bytes; treated as missing` };
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { snapshot: null, warning: null };
    return { snapshot: null, warning: `${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}); treated as missing` };
  }
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (sha256 && actual !== sha256) return { snapshot: null, warning: `${path}: does not match the SHA-256 recorded for it; treated as missing` };
  let value: unknown;
  try { value = JSON.parse(bytes.toString('utf8')); } catch { value = undefined; }
  const snapshot = parseStoredSnapshot(value, hash);
  return snapshot ? { snapshot, sha256: actual, warning: null } : { snapshot: null, warning: `${path}: not a snapshot of ${hash}; treated as missing` };
}

export function snapshotFile(catalogPath: string, snapshot: StoredSnapshot): FileWrite {
  return { path: snapshotPath(catalogPath, snapshot.hash), content: snapshotText(snapshot) };
}
