/** Atomic file writes and a single-writer lock. A killed run leaves every file either old or new, never torn. */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface FileWrite { path: string; content: string }

/** Write to a temporary file beside the target, fsync, then rename over it. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  await writeAllAtomic([{ path, content }]);
}

/**
 * Stages every file first (temporary, fsynced), then renames them in order. A crash while staging changes
 * nothing; a crash while renaming leaves each file whole. Put the file that others derive from last.
 */
export async function writeAllAtomic(files: FileWrite[]): Promise<void> {
  // Stage in parallel (the fsyncs overlap), rename in order.
  const staged = await Promise.allSettled(files.map((f) => stage(f)));
  const temps = staged.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const failed = staged.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    for (const t of temps) await rename(t.tmp, t.path);
  } catch (err) {
    await Promise.all(temps.map((t) => unlink(t.tmp).catch(() => {})));
    throw err;
  }
}

async function stage(f: FileWrite): Promise<{ tmp: string; path: string }> {
  await mkdir(dirname(f.path), { recursive: true });
  const tmp = `${f.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', 0o644);
  try {
    await handle.writeFile(f.content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { tmp, path: f.path };
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
        if (Date.now() >= until) throw new LockBusyError(`another refresh (pid ${holder}) is writing ${path}; try again when it ends (lock: ${lockPath})`);
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
