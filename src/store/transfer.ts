/**
 * Moving a history between stores: a text history (`<catalog dir>/history/`, its snapshots, and `tools.lock.json`
 * beside it) into PostgreSQL and back. Lines travel verbatim, so a round trip gives the same files.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../util/atomic.js';
import { MONTH_FILE } from './lines.js';
import { readLockFile, serializeLock } from './lock.js';
import { importMonth, importSnapshot, type PgStore } from './pg-store.js';

/** The acceptances of a history directory: `tools.lock.json` beside it, where a catalog keeps it. */
export const lockBeside = (historyDir: string) => join(dirname(historyDir), 'tools.lock.json');

const SNAPSHOT_FILE = /^([0-9a-f]{16})\.json$/;
/** The largest snapshot file taken (as the text store reads them). */
const MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024;

export interface Imported {
  /** Runs loaded, and runs left out because the store holds them already (same id and start). */
  runs: number;
  present: number;
  /** Lines that could not be used (recorded as the store's history problems). */
  problems: number;
  snapshots: number;
  acceptances: number;
  /** Files left out, and why. */
  skipped: string[];
}

/** Loads a text history into the store in one transaction: all of it, or nothing. */
export async function importHistory(store: PgStore, dir: string): Promise<Imported> {
  const result: Imported = { runs: 0, present: 0, problems: 0, snapshots: 0, acceptances: 0, skipped: [] };
  const months = readdirSync(dir)
    .filter((f) => MONTH_FILE.test(f))
    .sort();
  const snapshotDir = join(dir, 'snapshots');
  const snapshots = existsSync(snapshotDir)
    ? readdirSync(snapshotDir)
        .filter((f) => SNAPSHOT_FILE.test(f))
        .sort()
    : [];
  const lockFile = lockBeside(dir);
  const lock = existsSync(lockFile) ? await readLockFile(lockFile) : null;
  await store.transaction('nothing was imported', async (client) => {
    for (const file of months) {
      const r = await importMonth(client, file, await readFile(join(dir, file)));
      result.runs += r.runs;
      result.present += r.present;
      result.problems += r.problems;
    }
    for (const file of snapshots) {
      const path = join(snapshotDir, file);
      if (statSync(path).size > MAX_SNAPSHOT_BYTES) {
        result.skipped.push(`${path}: larger than ${MAX_SNAPSHOT_BYTES} bytes`);
        continue;
      }
      await importSnapshot(client, SNAPSHOT_FILE.exec(file)![1]!, await readFile(path, 'utf8'));
      result.snapshots++;
    }
    if (lock) {
      await store.upsertAcceptances(client, lock);
      result.acceptances = Object.keys(lock.servers).length;
    }
  });
  return result;
}

export interface Exported {
  months: string[];
  snapshots: number;
  acceptances: number;
  written: string[];
}

/** Writes the store as a text history into `dir` (each file atomically), the acceptances beside it. */
export async function exportHistory(store: PgStore, dir: string): Promise<Exported> {
  const result: Exported = { months: [], snapshots: 0, acceptances: 0, written: [] };
  for await (const { month, text } of store.months()) {
    const path = join(dir, `${month}.jsonl`);
    await writeFileAtomic(path, text);
    result.months.push(month);
    result.written.push(path);
  }
  for (const s of await store.storedSnapshots()) {
    const path = join(dir, 'snapshots', `${s.hash}.json`);
    await writeFileAtomic(path, s.content);
    result.snapshots++;
    result.written.push(path);
  }
  const lock = await store.acceptances();
  result.acceptances = Object.keys(lock.servers).length;
  if (result.acceptances) {
    await writeFileAtomic(lockBeside(dir), serializeLock(lock));
    result.written.push(lockBeside(dir));
  }
  return result;
}
