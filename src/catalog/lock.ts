/**
 * Tool acceptances, beside the catalog: `tools.lock.json` (which tool list a maintainer accepted, per server)
 * and the snapshots it points at, content-addressed under `history/snapshots/<hash>.json`. Both are plain
 * text with a stable order, made to be committed: the next weekly run on a fresh clone reads them.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { StoredSnapshot } from '../attest/snapshot.js';
import type { FileWrite } from '../util/atomic.js';
import { CatalogError } from './model.js';

export interface LockEntry {
  /** The server's name when accepted (the key is its URL). */
  name: string;
  /** The accepted snapshot's hash. */
  hash: string;
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
    const ok = e && typeof e === 'object' && ['name', 'by', 'why', 'at'].every((k) => typeof e[k as keyof LockEntry] === 'string') && typeof e.hash === 'string' && HASH.test(e.hash);
    if (!ok) throw new CatalogError(`${path}: servers["${url}"]: expected {name, hash (16 hex digits), by, why, at}`);
  }
  return value as ToolsLock;
}

/** Stable text: servers sorted by URL, fields in one order, one entry per line group. */
export function serializeLock(lock: ToolsLock): string {
  const servers = Object.fromEntries(Object.keys(lock.servers).sort().map((url) => {
    const e = lock.servers[url]!;
    return [url, { name: e.name, hash: e.hash, by: e.by, why: e.why, at: e.at }];
  }));
  return JSON.stringify({ version: 1, servers }, null, 2) + '\n';
}

export async function readSnapshot(catalogPath: string, hash: string): Promise<StoredSnapshot | null> {
  if (!HASH.test(hash)) return null;
  try {
    return JSON.parse(await readFile(snapshotPath(catalogPath, hash), 'utf8')) as StoredSnapshot;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export function snapshotFile(catalogPath: string, snapshot: StoredSnapshot): FileWrite {
  return { path: snapshotPath(catalogPath, snapshot.hash), content: JSON.stringify(snapshot, null, 1) + '\n' };
}
