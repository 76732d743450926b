/**
 * Tool acceptances beside the catalog: `tools.lock.json` (which tool list a maintainer accepted, per server URL).
 * Plain text with a stable order, made to be committed: the next weekly run on a fresh clone reads it.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EMPTY_LOCK, toolsLockSchema, type ToolsLock } from '../model/acceptance.js';
import { check } from '../model/validate.js';
import { CatalogError } from '../catalog/model.js';

export const lockPath = (catalogPath: string) => join(dirname(catalogPath), 'tools.lock.json');

export async function readLock(catalogPath: string): Promise<ToolsLock> {
  return readLockFile(lockPath(catalogPath));
}

/** A lock file read and checked (missing: no acceptances). */
export async function readLockFile(path: string): Promise<ToolsLock> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_LOCK;
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`${path}: not JSON: ${(err as Error).message}`);
  }
  const c = check(toolsLockSchema, value);
  if (!c.ok)
    throw new CatalogError(
      `${path}: ${c.problem} (expected {"version": 1, "servers": {<url>: {name, hash (16 hex digits), toolsDigest?, ` +
        `snapshotSha256? (64 hex digits), by, why, at}}})`,
    );
  return c.value;
}

/** Stable text: servers sorted by URL, fields in one order, one entry per line group. */
export function serializeLock(lock: ToolsLock): string {
  const servers = Object.fromEntries(
    Object.keys(lock.servers)
      .sort()
      .map((url) => {
        const e = lock.servers[url]!;
        return [
          url,
          {
            name: e.name,
            hash: e.hash,
            ...(e.toolsDigest ? { toolsDigest: e.toolsDigest } : {}),
            ...(e.snapshotSha256 ? { snapshotSha256: e.snapshotSha256 } : {}),
            by: e.by,
            why: e.why,
            at: e.at,
          },
        ];
      }),
  );
  return JSON.stringify({ version: 1, servers }, null, 2) + '\n';
}
