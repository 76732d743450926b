/**
 * Atomic writes and the write lock (fast: a temporary folder, in this process). What must hold is what a user
 * relies on: each file is written whole and fsynced before it is renamed into place; a batch that fails leaves
 * every file as it was and no temporary file; a dead writer's leftovers are swept, a live one's are not; one writer
 * at a time, and a dead holder's lock is taken over.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { existsSync, mkdtempSync } from 'node:fs';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, LockBusyError, writeAllAtomic, writeFileAtomic } from '../../src/util/atomic.js';

const require = createRequire(import.meta.url);
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
const dir = () => mkdtempSync(join(tmpdir(), 'onetap-atomic-'));
/** A pid no process has (the kernel's limit is below it). */
const DEAD_PID = 4_194_304 + 17;

describe('atomic writes', () => {
  const events: string[] = [];
  const realRename = fsp.rename;
  let realSync: ((this: unknown) => Promise<void>) | null = null;
  let handleProto: { sync: (this: unknown) => Promise<void> } | null = null;

  after(() => {
    fsp.rename = realRename;
    syncBuiltinESMExports();
    if (handleProto && realSync) handleProto.sync = realSync;
  });

  it('every staged file is fsynced before the first rename, and renamed in the order given', async () => {
    const d = dir();
    const probe = await open(join(d, 'probe'), 'w');
    handleProto = Object.getPrototypeOf(probe) as { sync: (this: unknown) => Promise<void> };
    await probe.close();
    realSync = handleProto.sync;
    const sync = realSync;
    handleProto.sync = function (this: unknown) {
      events.push('sync');
      return sync.call(this);
    };
    fsp.rename = (async (from: string, to: string) => {
      events.push(`rename ${to.split('/').pop()}`);
      return realRename(from, to);
    }) as typeof fsp.rename;
    syncBuiltinESMExports();
    try {
      await writeAllAtomic([
        { path: join(d, 'a.json'), content: 'A' },
        { path: join(d, 'sub', 'b.json'), content: 'B' },
        { path: join(d, 'c.json'), content: 'C' },
      ]);
    } finally {
      fsp.rename = realRename;
      syncBuiltinESMExports();
      handleProto.sync = sync;
    }
    assert.deepEqual(events, ['sync', 'sync', 'sync', 'rename a.json', 'rename b.json', 'rename c.json']);
    assert.deepEqual(await Promise.all(['a.json', 'sub/b.json', 'c.json'].map((f) => readFile(join(d, f), 'utf8'))), [
      'A',
      'B',
      'C',
    ]);
    assert.deepEqual(
      (await readdir(d)).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );
  });

  it('a rename that fails puts back the files already renamed: the batch is all old, and no temporary file is left', async () => {
    const d = dir();
    await writeFile(join(d, 'a.json'), 'old a');
    await writeFile(join(d, 'c.json'), 'old c');
    await assert.rejects(
      writeAllAtomic(
        [
          { path: join(d, 'a.json'), content: 'new a' },
          { path: join(d, 'b.json'), content: 'new b' },
          { path: join(d, 'c.json'), content: 'new c' },
        ],
        { faults: { failRename: 3 } },
      ),
      /EIO: injected fault/,
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old a');
    assert.equal(existsSync(join(d, 'b.json')), false, 'a file that did not exist does not exist after');
    assert.equal(await readFile(join(d, 'c.json'), 'utf8'), 'old c');
    assert.deepEqual((await readdir(d)).sort(), ['a.json', 'c.json']);
  });

  it('a fault for another batch does not apply', async () => {
    const d = dir();
    await writeAllAtomic([{ path: join(d, 'a.json'), content: 'x' }], {
      faults: { failRename: 1, batchWith: 'servers.json' },
    });
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'x');
  });

  it('a file that cannot be staged writes nothing of the batch', async () => {
    const d = dir();
    await writeFile(join(d, 'a.json'), 'old');
    await writeFile(join(d, 'blocker'), 'a file where a folder is needed');
    await assert.rejects(
      writeAllAtomic([
        { path: join(d, 'a.json'), content: 'new' },
        { path: join(d, 'blocker', 'b.json'), content: 'b' },
      ]),
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old');
    assert.deepEqual(
      (await readdir(d)).filter((f) => f.endsWith('.tmp')),
      [],
    );
  });

  it('a file written in parts: whole when every part came (2 MB, more than one write), old and no temporary file when a part failed', async () => {
    const d = dir();
    const path = join(d, 'census.json');
    await writeFile(path, 'old');
    const part = 'x'.repeat(1_000);
    await assert.rejects(
      writeFileAtomic(
        path,
        (async function* () {
          for (let i = 0; i < 2_000; i++) yield part;
          throw new Error('the source failed half way');
        })(),
      ),
      /half way/,
    );
    assert.equal(await readFile(path, 'utf8'), 'old');
    assert.deepEqual(
      (await readdir(d)).filter((f) => f.endsWith('.tmp')),
      [],
    );
    await writeFileAtomic(
      path,
      (function* () {
        for (let i = 0; i < 2_000; i++) yield `${i},`;
      })(),
    );
    assert.equal(await readFile(path, 'utf8'), Array.from({ length: 2_000 }, (_, i) => `${i},`).join(''));
    await writeFileAtomic(
      path,
      (function* () {
        for (let i = 0; i < 2_100; i++) yield part;
      })(),
    );
    assert.equal((await readFile(path, 'utf8')).length, 2_100_000);
  });

  it("a dead writer's temporary files of these targets are swept; a live writer's, and other files, are kept", async () => {
    const d = dir();
    const dead = join(d, `a.json.${DEAD_PID}.0123abcd.tmp`);
    const deadBackup = join(d, `a.json.${DEAD_PID}.0123abcd.old.tmp`);
    const live = join(d, `a.json.${process.pid}.89abcdef.tmp`);
    const otherTarget = join(d, `z.json.${DEAD_PID}.0123abcd.tmp`);
    for (const f of [dead, deadBackup, live, otherTarget]) await writeFile(f, 'leftover');
    await writeFileAtomic(join(d, 'a.json'), 'new');
    assert.deepEqual(
      [existsSync(dead), existsSync(deadBackup), existsSync(live), existsSync(otherTarget)],
      [false, false, true, true],
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'new');
  });
});

describe('the write lock', () => {
  it('one holder at a time: a second waits or fails naming the holder; released, it is free', async () => {
    const target = join(dir(), 'servers.json');
    const release = await acquireLock(target);
    assert.equal(await readFile(`${target}.lock`, 'utf8').then((t) => Number(t.trim())), process.pid);
    await assert.rejects(
      acquireLock(target, 0),
      (err: Error) => err instanceof LockBusyError && err.message.includes(`pid ${process.pid}`),
    );
    const waiting = acquireLock(target, 5_000);
    await release();
    const second = await waiting;
    assert.ok(existsSync(`${target}.lock`));
    await second();
    assert.equal(existsSync(`${target}.lock`), false);
  });

  it('a lock whose holder died is taken over', async () => {
    const target = join(dir(), 'servers.json');
    await writeFile(`${target}.lock`, String(DEAD_PID));
    const release = await acquireLock(target, 0);
    assert.equal(Number((await readFile(`${target}.lock`, 'utf8')).trim()), process.pid);
    await release();
  });
});
