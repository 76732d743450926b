/**
 * Atomic file writes and a single-writer lock. A killed run leaves every file either old or new, never torn;
 * a failed write (an error, not a kill) leaves every file of its batch old.
 */
import { randomBytes } from 'node:crypto';
import {
  copyFile,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * One generated file, the one shape every stage that makes files uses (refresh's outputs, init, publish, the site):
 * where it goes (a file path; relative with forward slashes, or a URL path, before it is placed) and its content.
 */
export interface FileWrite {
  path: string;
  content: string;
  /** What it is, where it is also served (`serve`): its media type. */
  mediaType?: string;
}

/** A file's content: one string, or its parts in order (a large document made one part at a time, never held whole). */
export type Content = string | Iterable<string> | AsyncIterable<string>;

/**
 * Faults for tests of what a failed or killed write leaves behind. Never set in normal use: read from the
 * environment variable `ONETAP_TEST_FAULT` (JSON) so a test can inject them into a child process.
 */
export interface AtomicFaults {
  /** Apply only to a batch that writes a file with this base name (e.g. `servers.json`); default any batch. */
  batchWith?: string;
  /** The Nth rename of the batch (1-based) fails with EIO. */
  failRename?: number;
  /** After staging, before the first rename: write this file (the signal), then wait forever (to be killed). */
  holdBeforeRename?: string;
}

export interface AtomicOptions {
  faults?: AtomicFaults;
}

function faultsFromEnv(): AtomicFaults | undefined {
  const text = process.env.ONETAP_TEST_FAULT;
  if (!text) return undefined;
  try {
    return JSON.parse(text) as AtomicFaults;
  } catch {
    return undefined;
  }
}

/** Write to a temporary file beside the target, fsync, then rename over it. */
export async function writeFileAtomic(path: string, content: Content, opts: AtomicOptions = {}): Promise<void> {
  await writeAllAtomic([{ path, content }], opts);
}

interface Staged {
  tmp: string;
  path: string;
  backup: string | null;
  renamed: boolean;
}

/**
 * Stages every file first (temporary, fsynced), then renames them in order. A crash while staging changes
 * nothing; a crash while renaming leaves each file whole. A rename that fails puts back the files already
 * renamed (from hard-linked backups), so an error leaves the batch all old. Temporary files a killed writer
 * left beside these targets are removed first. Put the file that others derive from last.
 */
export async function writeAllAtomic(
  files: ReadonlyArray<{ path: string; content: Content }>,
  opts: AtomicOptions = {},
): Promise<void> {
  const faults = opts.faults ?? faultsFromEnv();
  const faulty = !!faults && (!faults.batchWith || files.some((f) => basename(f.path) === faults.batchWith));
  await sweepLeftovers(files.map((f) => f.path));
  // Stage in parallel (the fsyncs overlap), rename in order.
  const settled = await Promise.allSettled(files.map((f) => stage(f)));
  const staged: Staged[] = settled.flatMap((r) =>
    r.status === 'fulfilled' ? [{ ...r.value, backup: null, renamed: false }] : [],
  );
  try {
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    if (faulty && faults!.holdBeforeRename) await holdForever(faults!.holdBeforeRename);
    let n = 0;
    for (const s of staged) {
      s.backup = await backup(s.path);
      if (faulty && ++n === faults!.failRename)
        throw Object.assign(new Error(`EIO: injected fault, rename '${s.tmp}' -> '${s.path}'`), { code: 'EIO' });
      await rename(s.tmp, s.path);
      s.renamed = true;
    }
  } catch (err) {
    // Newest first: each renamed target gets its old content back (or goes, if it did not exist).
    for (const s of [...staged].reverse()) {
      if (s.renamed) await (s.backup ? rename(s.backup, s.path) : unlink(s.path)).catch(() => {});
      else if (s.backup) await unlink(s.backup).catch(() => {});
      await unlink(s.tmp).catch(() => {});
    }
    throw err;
  }
  await Promise.all(staged.map((s) => (s.backup ? unlink(s.backup).catch(() => {}) : undefined)));
}

/** `<target>.<pid>.<8 hex>.tmp` (staged content) and `….old.tmp` (a backup): only this module makes such names. */
const tempName = (path: string, kind: '' | '.old') =>
  `${path}.${process.pid}.${randomBytes(4).toString('hex')}${kind}.tmp`;
const TEMP = /^(.*)\.(\d+)\.[0-9a-f]{8}(?:\.old)?\.tmp$/;

/** A hard link to the current file (no copy, no window), or null when there is none yet. */
async function backup(path: string): Promise<string | null> {
  const bak = tempName(path, '.old');
  try {
    await link(path, bak);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'EEXIST') throw err;
    await copyFile(path, bak); // a file system without hard links
  }
  return bak;
}

/** Removes temporary files of these targets whose writer is dead (killed between staging and renaming). */
async function sweepLeftovers(paths: string[]): Promise<void> {
  const byDir = new Map<string, Set<string>>();
  for (const p of paths) {
    const names = byDir.get(dirname(p)) ?? new Set<string>();
    names.add(basename(p));
    byDir.set(dirname(p), names);
  }
  for (const [dir, names] of byDir) {
    const entries = await readdir(dir).catch(() => [] as string[]);
    for (const entry of entries) {
      const m = TEMP.exec(entry);
      if (m && names.has(m[1]!) && !isAlive(Number(m[2]))) await unlink(join(dir, entry)).catch(() => {});
    }
  }
}

async function holdForever(signal: string): Promise<never> {
  await writeFile(signal, String(process.pid));
  return new Promise<never>(() => {
    setInterval(() => {}, 1 << 30);
  });
}

async function stage(f: { path: string; content: Content }): Promise<{ tmp: string; path: string }> {
  await mkdir(dirname(f.path), { recursive: true });
  const tmp = tempName(f.path, '');
  const handle = await open(tmp, 'wx', 0o644);
  try {
    if (typeof f.content === 'string') await handle.writeFile(f.content, 'utf8');
    else await writeChunks(handle, f.content);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await handle.close();
  return { tmp, path: f.path };
}

/** Chunks gathered into writes of about a megabyte each. */
async function writeChunks(handle: FileHandle, chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  let pending: string[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    pending.push(chunk);
    size += chunk.length;
    if (size >= 1 << 20) {
      await handle.write(pending.join(''));
      pending = [];
      size = 0;
    }
  }
  if (pending.length) await handle.write(pending.join(''));
}

export class LockBusyError extends Error {}

/**
 * Takes `<path>.lock` (O_EXCL), waiting up to `waitMs` while a live process holds it; a dead holder's lock
 * is taken over. Returns the release function.
 */
export async function acquireLock(path: string, waitMs = 0): Promise<() => Promise<void>> {
  const lockPath = `${path}.lock`;
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => unlink(lockPath).catch(() => {});
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (holder > 0 && isAlive(holder)) {
        if (Date.now() >= until)
          throw new LockBusyError(
            `another refresh (pid ${holder}) is writing ${path}; try again when it ends (lock: ${lockPath})`,
          );
        await new Promise((r) => setTimeout(r, 50));
      } else if (Date.now() >= until || holder > 0) {
        await unlink(lockPath).catch(() => {}); // the holder died without releasing it
      } else {
        await new Promise((r) => setTimeout(r, 50)); // being written right now: no pid yet
      }
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
