/**
 * The files a store keeps beside the catalog (fast: a temporary folder, no network): `tools.lock.json` and the
 * content-addressed tool snapshots, read back as untrusted input. A file that is not what its record says counts as
 * missing, with a warning; a lock that is not the format stops the command that reads it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { lockPath, readLock, serializeLock } from '../../src/store/lock.js';
import {
  parseStoredSnapshot,
  readSnapshot,
  snapshotFile,
  snapshotFiles,
  snapshotPath,
  snapshotText,
} from '../../src/store/snapshots.js';
import { storedSnapshot, toolListSnapshot } from '../../src/model/snapshot-hash.js';
import { EMPTY_LOCK, type LockEntry } from '../../src/model/acceptance.js';
import { CatalogError } from '../../src/catalog/model.js';

const workspace = () => join(mkdtempSync(join(tmpdir(), 'onetap-files-')), 'catalog', 'servers.json');
const snap = storedSnapshot(
  toolListSnapshot({ name: 'docs', version: '1.0.0' }, [{ name: 'search', description: 'Search.' }, { name: 'fetch' }]),
);
const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const entry: LockEntry = {
  name: 'A',
  hash: snap.hash,
  toolsDigest: snap.toolsDigest!,
  snapshotSha256: sha(snapshotText(snap)),
  by: 'ada',
  why: 'reviewed',
  at: '2026-11-01T00:00:00.000Z',
};

describe('tools.lock.json', () => {
  it('missing is the empty lock; written and read back, it is the same lock', async () => {
    const catalog = workspace();
    assert.deepEqual(await readLock(catalog), EMPTY_LOCK);
    await mkdir(dirname(lockPath(catalog)), { recursive: true });
    await writeFile(lockPath(catalog), serializeLock({ version: 1, servers: { 'https://a.example/mcp': entry } }));
    assert.deepEqual(await readLock(catalog), { version: 1, servers: { 'https://a.example/mcp': entry } });
  });

  it('stable text: servers sorted by URL, fields in one order, optional digests only when present', () => {
    const text = serializeLock({
      version: 1,
      servers: {
        'https://z.example/mcp': { ...entry, toolsDigest: undefined, snapshotSha256: undefined },
        'https://a.example/mcp': entry,
      },
    });
    const parsed = JSON.parse(text) as { servers: Record<string, object> };
    assert.deepEqual(Object.keys(parsed.servers), ['https://a.example/mcp', 'https://z.example/mcp']);
    assert.deepEqual(Object.keys(parsed.servers['https://a.example/mcp']!), [
      'name',
      'hash',
      'toolsDigest',
      'snapshotSha256',
      'by',
      'why',
      'at',
    ]);
    assert.deepEqual(Object.keys(parsed.servers['https://z.example/mcp']!), ['name', 'hash', 'by', 'why', 'at']);
    assert.ok(text.endsWith('}\n') && text.includes('\n  "servers": {'), 'indented, one trailing newline');
  });

  it('not JSON, another version or a bad entry stops the command, naming the file and the place', async () => {
    const catalog = workspace();
    await mkdir(dirname(lockPath(catalog)), { recursive: true });
    const cases: Array<[string, RegExp]> = [
      ['{', /tools\.lock\.json: not JSON/],
      [JSON.stringify({ version: 2, servers: {} }), /tools\.lock\.json: version: expected 1/],
      [
        JSON.stringify({ version: 1, servers: { 'https://a.example/mcp': { ...entry, hash: 'nope' } } }),
        /servers\.\*\.hash: expected a snapshot hash \(16 hex digits\)/,
      ],
      [
        JSON.stringify({ version: 1, servers: { 'https://a.example/mcp': { ...entry, snapshotSha256: 'abc' } } }),
        /servers\.\*\.snapshotSha256: expected a SHA-256/,
      ],
      [
        JSON.stringify({ version: 1, servers: { 'https://a.example/mcp': { ...entry, by: 7 } } }),
        /servers\.\*\.by: expected a string/,
      ],
    ];
    for (const [text, problem] of cases) {
      await writeFile(lockPath(catalog), text);
      await assert.rejects(
        readLock(catalog),
        (err: Error) => err instanceof CatalogError && problem.test(err.message),
        text.slice(0, 60),
      );
    }
  });
});

describe('snapshot files', () => {
  it("a snapshot's file reads back as the snapshot, with the SHA-256 of its bytes", async () => {
    const catalog = workspace();
    const file = snapshotFile(catalog, snap);
    assert.equal(file.path, snapshotPath(catalog, snap.hash));
    assert.equal(file.content, `${JSON.stringify(snap)}\n`);
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.content);
    assert.deepEqual(await readSnapshot(catalog, snap.hash, sha(file.content)), {
      snapshot: snap,
      sha256: sha(file.content),
      warning: null,
    });
    assert.deepEqual(
      await readSnapshot(catalog, snap.hash),
      { snapshot: snap, sha256: sha(file.content), warning: null },
      'without a recorded SHA-256 it is read as it is',
    );
  });

  it('missing is no warning; another SHA-256, another hash or not a snapshot counts as missing, with a warning', async () => {
    const catalog = workspace();
    assert.deepEqual(await readSnapshot(catalog, snap.hash), { snapshot: null, warning: null });
    assert.deepEqual(
      await readSnapshot(catalog, '../../etc/passwd'),
      { snapshot: null, warning: null },
      'a hash that is not 16 hex digits names no file',
    );
    const path = snapshotPath(catalog, snap.hash);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, snapshotText(snap));
    assert.match(
      (await readSnapshot(catalog, snap.hash, 'a'.repeat(64))).warning!,
      /does not match the SHA-256 recorded for it; treated as missing$/,
    );
    await writeFile(path, snapshotText({ ...snap, hash: 'ffffffffffffffff' }));
    assert.match(
      (await readSnapshot(catalog, snap.hash)).warning!,
      new RegExp(`not a snapshot of ${snap.hash}; treated as missing$`),
    );
    await writeFile(path, 'not json');
    assert.match((await readSnapshot(catalog, snap.hash)).warning!, /not a snapshot of/);
  });

  it("format 1 (digests by name, 12 hex) reads into today's shape; anything else that does not fit is null", () => {
    const format1 = {
      hash: snap.hash,
      serverInfo: snap.serverInfo,
      tools: snap.tools,
      toolsSeen: 2,
      clipped: false,
      digests: { search: 'a'.repeat(12), fetch: 'b'.repeat(12) },
    };
    const read = parseStoredSnapshot(format1, snap.hash)!;
    assert.deepEqual(
      [read.format, read.toolsDigest, read.digests],
      [
        1,
        null,
        [
          { name: 'search', digest: 'a'.repeat(12) },
          { name: 'fetch', digest: 'b'.repeat(12) },
        ],
      ],
    );
    assert.equal(parseStoredSnapshot({ ...format1, digests: { search: 'nothex' } }, snap.hash), null);
    assert.equal(parseStoredSnapshot(format1, 'ffffffffffffffff'), null, 'another hash');
    assert.deepEqual(parseStoredSnapshot(JSON.parse(snapshotText(snap)), snap.hash), snap);
    for (const bad of [
      null,
      [],
      'x',
      { ...snap, tools: 'x' },
      { ...snap, toolsSeen: -1 },
      { ...snap, serverInfo: null },
      { ...snap, digests: [{ name: 'a', digest: 'short' }] },
    ]) {
      assert.equal(parseStoredSnapshot(bad, snap.hash), null, JSON.stringify(bad).slice(0, 80));
    }
  });

  it('a run writes a missing or edited snapshot file, keeps one that is as it would write it, and a format-1 file unless it writes', async () => {
    const catalog = workspace();
    const missing = await snapshotFiles(catalog, [snap], false);
    assert.deepEqual(
      missing.writes.map((w) => w.path),
      [snapshotPath(catalog, snap.hash)],
    );
    assert.equal(missing.sha.get(snap.hash), sha(snapshotText(snap)));
    await mkdir(dirname(snapshotPath(catalog, snap.hash)), { recursive: true });
    await writeFile(snapshotPath(catalog, snap.hash), snapshotText(snap));
    assert.deepEqual((await snapshotFiles(catalog, [snap], true)).writes, []);
    const format1 = `${JSON.stringify(
      {
        hash: snap.hash,
        serverInfo: snap.serverInfo,
        tools: snap.tools,
        toolsSeen: 2,
        digests: { search: 'a'.repeat(12) },
      },
      null,
      2,
    )}\n`;
    await writeFile(snapshotPath(catalog, snap.hash), format1);
    const kept = await snapshotFiles(catalog, [snap], false);
    assert.deepEqual(
      [kept.writes.length, kept.sha.get(snap.hash)],
      [0, sha(format1)],
      "a plan-only run keeps it (the lock's SHA-256 still names it)",
    );
    assert.equal((await snapshotFiles(catalog, [snap], true)).writes.length, 1, 'a --write run rewrites it');
    await writeFile(snapshotPath(catalog, snap.hash), snapshotText(snap).replace('Search.', 'Edited.'));
    assert.equal((await snapshotFiles(catalog, [snap], false)).writes.length, 1, 'an edited file is written again');
    assert.equal(
      await readFile(snapshotPath(catalog, snap.hash), 'utf8').then((t) => t.includes('Edited.')),
      true,
      'snapshotFiles only plans: it writes nothing',
    );
  });
});
