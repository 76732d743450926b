/**
 * Atomic writes under injected faults: a rename that fails, and a writer killed between staging and renaming.
 * What must hold afterwards is what a user would see: every file old, and no temporary files left.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { writeAllAtomic, type AtomicFaults } from '../src/util/atomic.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { BIN, catalogOf, server, snapshotDir, workspace } from './helpers.js';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet();
});
after(async () => {
  await fleet.close();
});

/** Every temporary file an atomic write could leave (`*.tmp`), relative to dir. */
async function leftovers(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.tmp'));
}

/** `onetap <args>` with the fault set in its environment; resolves on exit. `onSignal` may kill it. */
function runWithFault(args: string[], faults: AtomicFaults | null, onSpawn?: (kill: () => void) => void) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    if (faults) env.ONETAP_TEST_FAULT = JSON.stringify(faults);
    else delete env.ONETAP_TEST_FAULT;
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    onSpawn?.(() => child.kill('SIGKILL'));
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

async function waitFor(path: string, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 20)))
    if (existsSync(path)) return true;
  return false;
}

/**
 * The files a refresh --write replaces (not the history it appends, the run's tool lists, the lock a killed run leaves
 * for the next to take over).
 */
async function writtenFiles(dir: string): Promise<Record<string, string>> {
  const all = await snapshotDir(join(dir, 'catalog'));
  return Object.fromEntries(
    Object.entries(all)
      .map(([p, c]) => [relative(dir, p), c])
      .filter(([p]) => !/^catalog\/(history|snapshots)\//.test(p!) && !p!.endsWith('.tmp') && !p!.endsWith('.lock')),
  );
}

describe('writeAllAtomic under faults', () => {
  it('the third rename fails: every file of the batch is old (or still absent), no temporary file is left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'onetap-atomic-'));
    const names = ['a.json', 'b.json', 'c.json', 'sub/d.json', 'e.json'];
    for (const n of ['a.json', 'b.json', 'c.json', 'e.json']) await writeFile(join(dir, n), `old ${n}\n`);
    const before = await snapshotDir(dir);
    await assert.rejects(
      writeAllAtomic(
        names.map((n) => ({ path: join(dir, n), content: `new ${n}\n` })),
        { faults: { failRename: 3 } },
      ),
      /EIO: injected fault/,
    );
    assert.deepEqual(
      await snapshotDir(dir),
      before,
      'the two files already renamed are put back; d.json, new, is not there',
    );
    assert.deepEqual(await leftovers(dir), []);
    // The same batch without the fault writes everything.
    await writeAllAtomic(names.map((n) => ({ path: join(dir, n), content: `new ${n}\n` })));
    for (const n of names) assert.equal(await readFile(join(dir, n), 'utf8'), `new ${n}\n`);
    assert.deepEqual(await leftovers(dir), []);
  });
});

describe('refresh --write under faults (a child process)', () => {
  const catalog = () =>
    catalogOf([
      server('Dead', fleet.url('http-410')),
      server('A', fleet.url('ok-json')),
      server('B', fleet.url('ok-sse') + '?b'),
    ]);
  const args = (ws: { catalogPath: string; statePath: string }) => [
    'refresh',
    '--catalog',
    ws.catalogPath,
    '--state',
    ws.statePath,
    '--write',
    '--allow-http',
  ];

  it('the third rename of the catalog batch fails: catalog and generated files stay old, no *.tmp', async () => {
    const ws = await workspace(catalog());
    const first = await runWithFault(args(ws), null);
    assert.equal(first.code, 0, first.stderr);
    // A second run would write new content into every file: a server added changes the runtime lists, and one
    // dropped changes the catalog (a file that would keep its bytes is not written at all).
    const text = JSON.parse(await readFile(ws.catalogPath, 'utf8'));
    text.servers.push(server('C', fleet.url('ok-json') + '?c'), server('Gone', fleet.url('http-410') + '?gone'));
    await writeFile(ws.catalogPath, JSON.stringify(text, null, 2) + '\n');
    const before = await writtenFiles(ws.dir);
    const failed = await runWithFault(args(ws), { batchWith: 'servers.json', failRename: 3 });
    assert.notEqual(failed.code, 0, 'the failed write is an error');
    assert.match(failed.stderr, /injected fault/);
    assert.deepEqual(await writtenFiles(ws.dir), before, 'every file old');
    assert.deepEqual(await leftovers(ws.dir), []);
  });

  it('killed between staging and renaming: every file old; the next run removes the staged files and writes', async () => {
    const ws = await workspace(catalog());
    const before = await writtenFiles(ws.dir);
    const signal = join(ws.dir, 'staged.signal');
    let held = false;
    const killed = await runWithFault(args(ws), { batchWith: 'servers.json', holdBeforeRename: signal }, (kill) => {
      void waitFor(signal, 20_000).then((ok) => {
        held = ok;
        kill();
      });
    });
    assert.ok(held, `the child reached the point between staging and renaming (exit ${killed.code}: ${killed.stderr})`);
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(await writtenFiles(ws.dir), before, 'every file old: the catalog untouched, no generated file');
    assert.ok((await leftovers(ws.dir)).length >= 6, 'the kill left the staged files (the next writer removes them)');
    const next = await runWithFault(args(ws), null);
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual(await leftovers(ws.dir), [], 'no temporary file left');
    assert.deepEqual(
      JSON.parse(await readFile(ws.catalogPath, 'utf8')).servers.map((s: { name: string }) => s.name),
      ['A', 'B'],
    );
  });
});
