/**
 * The Store interface's own suite (`src/store/store.ts`): one table of cases, run against the text store and the
 * PostgreSQL store. Expectations come from the interface's doc comments, the record types (`src/model/`) and
 * docs/history.md, never from either implementation.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { storedSnapshot, toolListSnapshot } from '../src/model/snapshot-hash.js';
import type { LockEntry, ToolsLock } from '../src/model/acceptance.js';
import type { PlanRow, RecordedRun } from '../src/model/plan.js';
import type { StoredSnapshot } from '../src/model/snapshot.js';
import { migrateStore, openPgStore } from '../src/store/pg-store.js';
import { RunRecordedError, type RunChanges, type Store } from '../src/store/store.js';
import { decideRow } from '../src/decide/decide.js';
import type { Retention } from '../src/store/text-index.js';
import { TextStore } from '../src/store/text-store.js';
import { catalogOf, recordedRow, recordedRun, server, workspace } from './helpers.js';
import { freshSchema, postgresMissing } from './postgres.js';

const A = 'https://alpha.example/mcp';
const B = 'https://beta.example/mcp';
const C = 'https://gamma.example/mcp';

/** One backing history (a catalog's directory, a schema), any number of stores opened on it, and a temp dir. */
interface Backend {
  /** A directory of the test's own, for `changes.files`. */
  dir: string;
  open(retention?: Retention): Promise<Store>;
  cleanup(): Promise<void>;
}
type MakeBackend = (label: string) => Promise<Backend>;

function tracked(dir: string, open: (r?: Retention) => Promise<Store>, done: () => Promise<void>): Backend {
  const opened: Store[] = [];
  return {
    dir,
    open: async (r) => {
      const s = await open(r);
      opened.push(s);
      return s;
    },
    cleanup: async () => {
      for (const s of opened) await s.close().catch(() => {});
      await done();
    },
  };
}

const textBackend: MakeBackend = async () => {
  const ws = await workspace(catalogOf([server('Alpha', A), server('Beta', B), server('Gamma', C)]));
  return tracked(
    ws.dir,
    async (r) => new TextStore(ws.catalogPath, r),
    () => rm(ws.dir, { recursive: true, force: true }),
  );
};

const pgBackend: MakeBackend = async (label) => {
  const { url, drop } = await freshSchema(`contract_${label}`);
  await migrateStore(url);
  const dir = await mkdtemp(join(tmpdir(), 'onetap-contract-'));
  return tracked(
    dir,
    (r) => openPgStore(url, r),
    async () => {
      await drop();
      await rm(dir, { recursive: true, force: true });
    },
  );
};

const changes = (c: Partial<RunChanges> = {}): RunChanges => ({
  snapshots: [],
  lock: null,
  files: [],
  rewriteSnapshots: false,
  ...c,
});

/** What a recorder might have left in `previous`/`changed`: the store must not return it, it recomputes them. */
const stale = { previous: { verdict: 'drop', reason: 'dns', at: '2020-01-01T00:00:00.000Z' }, changed: false } as const;

const row = (name: string, url: string, verdict: PlanRow['verdict'], reason: PlanRow['reason']) =>
  recordedRow(name, { url, verdict, reason }, stale);

/** A row as read back: `previous` the URL's last recorded observation before it, `changed` against that. */
function readBack(r: PlanRow, before: PlanRow | null): PlanRow {
  return {
    ...r,
    previous: before ? { verdict: before.verdict, reason: before.reason, at: before.observedAt } : null,
    changed: !before || before.verdict !== r.verdict || before.reason !== r.reason,
  };
}

/** Three runs on three days; Gamma is not in the second. */
function threeRuns(): RecordedRun[] {
  return [
    recordedRun('2026-11-01T06:00:00.000Z', [
      row('Alpha', A, 'live', 'ok'),
      row('Beta', B, 'failed', 'timeout'),
      row('Gamma', C, 'live', 'ok'),
    ]),
    recordedRun('2026-11-02T06:00:00.000Z', [row('Alpha', A, 'live', 'ok'), row('Beta', B, 'live', 'ok')]),
    recordedRun('2026-11-03T06:00:00.000Z', [
      row('Alpha', A, 'review', 'tools-changed'),
      row('Beta', B, 'live', 'ok'),
      row('Gamma', C, 'failed', 'timeout'),
    ]),
  ];
}

/** The runs as read back: each row's previous from the runs before it. */
function expectedRuns(runs: RecordedRun[]): RecordedRun[] {
  const last = new Map<string, PlanRow>();
  return runs.map((r) => {
    const rows = r.rows.map((x) => readBack(x, last.get(x.url) ?? null));
    for (const x of r.rows) last.set(x.url, x);
    return { run: r.run, rows };
  });
}

/** A run as the interface types it ({run, rows}); what else an answer carries is checked once, in its own test. */
const asRecorded = (r: RecordedRun | null | undefined) => (r ? { run: r.run, rows: r.rows } : r);
const allRecorded = (rs: RecordedRun[]) => rs.map(asRecorded);

const rowsOf = (runs: RecordedRun[], url: string) => runs.flatMap((r) => r.rows.filter((x) => x.url === url));

function snapshotOf(name: string, version: string): StoredSnapshot {
  return storedSnapshot(
    toolListSnapshot({ name, version }, [
      {
        name: 'search',
        description: 'Searches the docs',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      },
      { name: 'fetch', title: 'Fetch', description: 'Fetches a page', annotations: { readOnlyHint: true } },
    ]),
  );
}

const entry = (name: string, hash: string, at: string): LockEntry => ({ name, hash, by: 'test', why: 'fixture', at });

function contract(name: string, make: MakeBackend): void {
  describe(`${name} contract`, () => {
    /** Runs `body` on a fresh backend, cleaned up afterwards whatever happens. */
    const withBackend = (label: string, body: (b: Backend) => Promise<void>) => async () => {
      const b = await make(label);
      try {
        await body(b);
      } finally {
        await b.cleanup();
      }
    };

    test(
      'an empty store answers empty',
      withBackend('empty', async (b) => {
        const s = await b.open();
        assert.deepEqual(await s.recent(A, 10), []);
        assert.deepEqual(await s.since(A, '2000-01-01'), []);
        assert.deepEqual(await s.verdicts(A, '2000-01-01'), []);
        assert.equal(await s.latestRun(), null);
        assert.deepEqual(await s.runs({}), []);
        assert.deepEqual(await s.runs({ last: 5 }), []);
        assert.deepEqual((await s.acceptances()).servers, {});
        assert.equal((await s.problems()).count, 0);
        assert.deepEqual(await s.snapshot('0123456789abcdef'), { snapshot: null, warning: null });
      }),
    );

    test(
      'recorded runs: recent newest first, since and verdicts oldest first, previous and changed recomputed',
      withBackend('rows', async (b) => {
        const s = await b.open();
        const runs = threeRuns();
        for (const r of runs) await s.record(r, changes());
        const read = expectedRuns(runs);
        const [a1, a2, a3] = rowsOf(read, A);
        assert.deepEqual(await s.recent(A, 2), [a3, a2]);
        assert.deepEqual(await s.recent(A, 10), [a3, a2, a1]);
        assert.deepEqual(await s.recent('https://unknown.example/mcp', 10), []);
        assert.deepEqual(await s.since(A, '2026-11-02'), [a2, a3]);
        assert.deepEqual(await s.since(A, '2026-11-02T06:00:00.000Z'), [a2, a3], 'on or after a time');
        assert.deepEqual(await s.since(A, '2026-11-02T06:00:00.001Z'), [a3]);
        assert.deepEqual(await s.verdicts(B, '2026-11-01'), [
          { observedAt: '2026-11-01T06:00:00.000Z', verdict: 'failed', reason: 'timeout' },
          { observedAt: '2026-11-02T06:00:00.000Z', verdict: 'live', reason: 'ok' },
          { observedAt: '2026-11-03T06:00:00.000Z', verdict: 'live', reason: 'ok' },
        ]);
        assert.deepEqual(await s.verdicts(B, '2026-11-03'), [
          { observedAt: '2026-11-03T06:00:00.000Z', verdict: 'live', reason: 'ok' },
        ]);
        // previous and changed, spelled out: Alpha unchanged then changed; Gamma's previous skips the run it was not
        // in.
        assert.deepEqual([a1!.changed, a2!.changed, a3!.changed], [true, false, true]);
        const [g3] = await s.recent(C, 1);
        assert.deepEqual(g3!.previous, { verdict: 'live', reason: 'ok', at: '2026-11-01T06:00:00.000Z' });
        assert.equal(g3!.changed, true);
        const [b2] = await s.since(B, '2026-11-02T00:00:00.000Z');
        assert.deepEqual(
          [b2!.previous, b2!.changed],
          [{ verdict: 'failed', reason: 'timeout', at: '2026-11-01T06:00:00.000Z' }, true],
        );
        assert.equal((await s.problems()).count, 0);
        // histories: per URL what verdicts(url, since) and recent(url, 1) give, in one call.
        for (const since of ['2026-11-01', '2026-11-03', '2026-11-02T06:00:00.001Z', '2026-12-01']) {
          const unknown = 'https://unknown.example/mcp';
          const all = await s.histories([A, B, C, unknown], since);
          for (const url of [A, B, C, unknown]) {
            const points = await s.verdicts(url, since);
            assert.deepEqual(
              all.get(url),
              { points, last: points.length ? (await s.recent(url, 1))[0] : null },
              `${url} since ${since}`,
            );
          }
        }
      }),
    );

    test(
      'an aborted run is the latest run with its rows, but its rows never count',
      withBackend('aborted', async (b) => {
        const s = await b.open();
        const runs = threeRuns().slice(0, 2);
        for (const r of runs) await s.record(r, changes());
        const aborted = recordedRun(
          '2026-11-03T06:00:00.000Z',
          [row('Alpha', A, 'failed', 'refused'), row('Beta', B, 'failed', 'refused')],
          { aborted: 'outage guard: 2 of 2 rows failed the same way', applied: false },
        );
        await s.record(aborted, changes());
        const latest = await s.latestRun();
        assert.deepEqual(latest?.run, aborted.run);
        assert.deepEqual(
          latest.rows.map((r) => [r.url, r.verdict, r.reason]),
          [
            [A, 'failed', 'refused'],
            [B, 'failed', 'refused'],
          ],
        );
        assert.deepEqual(
          (await s.runs({ last: 1 })).map((r) => r.run),
          [aborted.run],
          'an aborted run is a recorded run',
        );

        const read = expectedRuns(runs);
        assert.deepEqual(await s.recent(A, 10), rowsOf(read, A).reverse());
        assert.deepEqual(await s.since(B, '2026-11-03'), []);
        assert.deepEqual(
          (await s.verdicts(A, '2026-11-01')).map((v) => v.observedAt),
          ['2026-11-01T06:00:00.000Z', '2026-11-02T06:00:00.000Z'],
        );

        // The next run's previous is the run before the aborted one.
        const next = recordedRun('2026-11-04T06:00:00.000Z', [
          row('Alpha', A, 'live', 'ok'),
          row('Beta', B, 'failed', 'refused'),
        ]);
        await s.record(next, changes());
        const [a4] = await s.recent(A, 1);
        assert.deepEqual(a4, readBack(next.rows[0]!, runs[1]!.rows[0]!));
        assert.equal(a4!.changed, false, 'same as the last counted observation');
        const [b4] = await s.recent(B, 1);
        assert.deepEqual([b4!.previous?.at, b4!.changed], ['2026-11-02T06:00:00.000Z', true]);
      }),
    );

    test(
      'runs({last}) and runs({since}) oldest first; latestRun the newest',
      withBackend('runs', async (b) => {
        const s = await b.open();
        const runs = threeRuns();
        for (const r of runs) await s.record(r, changes());
        const read = expectedRuns(runs);
        assert.deepEqual(allRecorded(await s.runs({ last: 2 })), read.slice(1));
        assert.deepEqual(allRecorded(await s.runs({ last: 10 })), read);
        assert.deepEqual(allRecorded(await s.runs({ since: '2026-11-02' })), read.slice(1));
        assert.deepEqual(allRecorded(await s.runs({ since: '2026-11-02T06:00:00.001Z' })), read.slice(2));
        assert.deepEqual(await s.runs({ since: '2026-12-01' }), []);
        assert.deepEqual(asRecorded(await s.latestRun()), read[2]);
      }),
    );

    test(
      'stamp: the same while nothing is recorded, another once a run is (seen by another store too)',
      withBackend('stamp', async (b) => {
        const s = await b.open();
        const [first, second] = threeRuns();
        const empty = await s.stamp();
        assert.equal(await s.stamp(), empty);
        await s.record(first!, changes());
        const one = await s.stamp();
        assert.notEqual(one, empty);
        assert.equal(await s.stamp(), one);
        const other = await b.open();
        assert.equal(await other.stamp(), one, 'another store on the same history agrees');
        await other.record(second!, changes());
        assert.notEqual(await s.stamp(), one, 'a run recorded by another store changes it');
      }),
    );

    test(
      'runs and latestRun answer RecordedRun records: {run, rows}, nothing else',
      withBackend('shape', async (b) => {
        const s = await b.open();
        await s.record(threeRuns()[0]!, changes());
        const keys = (r: object | null) => (r ? Object.keys(r).sort() : r);
        assert.deepEqual(keys(await s.latestRun()), ['rows', 'run']);
        assert.deepEqual((await s.runs({ last: 1 })).map(keys), [['rows', 'run']]);
        assert.deepEqual((await s.runs({ since: '2026-11-01' })).map(keys), [['rows', 'run']]);
      }),
    );

    test(
      'snapshots: stored with the run, verified against their SHA-256, digests known before recording',
      withBackend('snapshots', async (b) => {
        const s = await b.open();
        const snap = snapshotOf('alpha', '1.0.0');
        const digests = await s.snapshotDigests([snap], false);
        assert.deepEqual([...digests.keys()], [snap.hash]);
        const sha = digests.get(snap.hash)!;
        assert.match(sha, /^[0-9a-f]{64}$/);
        const run = recordedRun('2026-11-01T06:00:00.000Z', [
          recordedRow(
            'Alpha',
            { url: A, toolsHash: snap.hash, toolsDigest: snap.toolsDigest },
            { snapshotSha256: sha },
          ),
        ]);
        await s.record(run, changes({ snapshots: [snap] }));

        assert.deepEqual(await s.snapshot(snap.hash), { snapshot: snap, sha256: sha, warning: null });
        assert.deepEqual(await s.snapshot(snap.hash, sha), { snapshot: snap, sha256: sha, warning: null });
        const wrong = await s.snapshot(snap.hash, '0'.repeat(64));
        assert.equal(wrong.snapshot, null);
        assert.equal(typeof wrong.warning, 'string');
        assert.ok(wrong.warning);
        assert.deepEqual(await s.snapshotDigests([snap], false), new Map([[snap.hash, sha]]));
        assert.deepEqual(await s.snapshot(snapshotOf('other', '1.0.0').hash), { snapshot: null, warning: null });
      }),
    );

    test(
      'acceptances: recorded with a run, then accept adds or replaces one entry',
      withBackend('accept', async (b) => {
        const s = await b.open();
        const sa = snapshotOf('alpha', '1.0.0');
        const sb = snapshotOf('beta', '1.0.0');
        const lock: ToolsLock = {
          version: 1,
          servers: { [A]: { ...entry('Alpha', sa.hash, '2026-11-01T06:00:00.000Z'), toolsDigest: sa.toolsDigest! } },
        };
        await s.record(
          recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')]),
          changes({ snapshots: [sa], lock }),
        );
        assert.deepEqual(await s.acceptances(), lock);

        const eb = entry('Beta', sb.hash, '2026-11-02T00:00:00.000Z');
        await s.accept(B, eb);
        assert.deepEqual(await s.acceptances(), { version: 1, servers: { [A]: lock.servers[A]!, [B]: eb } });

        const a2 = {
          ...entry('Alpha', snapshotOf('alpha', '2.0.0').hash, '2026-11-03T00:00:00.000Z'),
          why: 'reviewed 2.0',
        };
        await s.accept(A, a2);
        assert.deepEqual(await s.acceptances(), { version: 1, servers: { [A]: a2, [B]: eb } });

        // A run recording no lock (null) leaves the acceptances as they are.
        await s.record(recordedRun('2026-11-04T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')]), changes());
        assert.deepEqual(await s.acceptances(), { version: 1, servers: { [A]: a2, [B]: eb } });
      }),
    );

    test(
      'changes.files are written with the run, and only when their bytes change',
      withBackend('files', async (b) => {
        const s = await b.open();
        const path = join(b.dir, 'out', 'servers.md');
        const first = await s.record(
          recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')]),
          changes({ files: [{ path, content: '# one\n' }] }),
        );
        assert.ok(first.includes(path), `written paths ${JSON.stringify(first)} include ${path}`);
        assert.equal(await readFile(path, 'utf8'), '# one\n');

        const again = await s.record(
          recordedRun('2026-11-02T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')]),
          changes({ files: [{ path, content: '# one\n' }] }),
        );
        assert.ok(!again.includes(path), 'a file already holding its content is not written');
        assert.equal(await readFile(path, 'utf8'), '# one\n');

        const third = await s.record(
          recordedRun('2026-11-03T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')]),
          changes({ files: [{ path, content: '# two\n' }] }),
        );
        assert.ok(third.includes(path));
        assert.equal(await readFile(path, 'utf8'), '# two\n');
        assert.equal((await s.runs({ last: 10 })).length, 3);
      }),
    );

    test(
      'files that cannot be written: record throws, the run is recorded as not applied, no file is written',
      withBackend('unwritable', async (b) => {
        const s = await b.open();
        const blocker = join(b.dir, 'blocker');
        await writeFile(blocker, 'a regular file\n');
        const good = join(b.dir, 'out', 'good.md');
        const run = recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')], { applied: true });
        await assert.rejects(
          s.record(
            run,
            changes({
              files: [
                { path: good, content: 'fine\n' },
                { path: join(blocker, 'sub', 'x.md'), content: 'never\n' },
              ],
            }),
          ),
        );
        const latest = await s.latestRun();
        assert.equal(latest?.run.id, run.run.id, 'the run is recorded');
        assert.equal(latest.run.applied, false, 'as not applied');
        assert.equal(existsSync(good), false, 'all or none: the writable file is not written either');
        assert.equal(await readFile(blocker, 'utf8'), 'a regular file\n');
      }),
    );

    test(
      'retention leaves out runs started before the first kept day',
      withBackend('retention', async (b) => {
        const s = await b.open();
        const runs = [
          recordedRun('2026-12-08T23:59:59.000Z', [row('Alpha', A, 'failed', 'timeout')]),
          recordedRun('2026-12-09T00:00:00.000Z', [row('Alpha', A, 'live', 'ok')]),
          recordedRun('2026-12-10T08:00:00.000Z', [row('Alpha', A, 'review', 'tools-changed')]),
        ];
        for (const r of runs) await s.record(r, changes());
        const kept = await b.open({ days: 2, now: () => new Date('2026-12-10T12:00:00.000Z') });
        const kept2 = ['2026-12-09T00:00:00.000Z', '2026-12-10T08:00:00.000Z'];
        assert.deepEqual(
          (await kept.runs({ last: 10 })).map((r) => r.run.id),
          kept2,
        );
        assert.deepEqual(
          (await kept.runs({ since: '2026-12-01' })).map((r) => r.run.id),
          kept2,
        );
        assert.deepEqual(
          (await kept.recent(A, 10)).map((r) => r.observedAt),
          [...kept2].reverse(),
        );
        assert.deepEqual(
          (await kept.since(A, '2026-12-01')).map((r) => r.observedAt),
          kept2,
        );
        assert.deepEqual(
          (await kept.verdicts(A, '2026-12-01')).map((v) => v.observedAt),
          kept2,
        );
        assert.equal((await kept.latestRun())?.run.id, '2026-12-10T08:00:00.000Z');
        // Retention never prunes: a store without it still has every run.
        assert.equal((await s.runs({ last: 10 })).length, 3);
        assert.equal((await (await b.open()).runs({ last: 10 })).length, 3);
      }),
    );

    test(
      'a run id is recorded once: recording it again is refused and writes nothing; a drop streak counts the run once',
      withBackend('once', async (b) => {
        const s = await b.open();
        const path = join(b.dir, 'out', 'servers.md');
        const first = recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'drop', 'refused')], {
          id: 'github-42',
        });
        await s.record(first, changes());
        // A re-run with the same id (GitHub's "Re-run jobs"), started later by the decider's clock.
        const again = recordedRun('2026-11-01T07:30:00.000Z', [row('Alpha', A, 'drop', 'refused')], {
          id: 'github-42',
        });
        await assert.rejects(
          s.record(again, changes({ files: [{ path, content: '# never\n' }] })),
          (err: Error) => err instanceof RunRecordedError && err.runId === 'github-42',
        );
        assert.equal(existsSync(path), false, 'none of its files written');
        const other = await b.open();
        await assert.rejects(
          other.record(again, changes()),
          RunRecordedError,
          'another store on the same history refuses it too',
        );
        assert.deepEqual(
          (await s.runs({})).map((r) => [r.run.id, r.run.startedAt]),
          [['github-42', first.run.startedAt]],
        );
        assert.deepEqual(asRecorded(await s.recordedRun('github-42')), expectedRuns([first])[0]);
        assert.equal(await s.recordedRun('github-43'), null);
        assert.deepEqual(
          (await s.recent(A, 10)).map((r) => r.run),
          ['github-42'],
        );
        // The next week's run: its streak reads github-42 once.
        await s.record(
          recordedRun('2026-11-08T06:00:00.000Z', [row('Alpha', A, 'drop', 'refused')], { id: 'github-43' }),
          changes(),
        );
        assert.equal(
          decideRow({ verdict: 'drop' }, await s.recent(A, 3), 3, false).dropStreak,
          3,
          'this run, github-43, github-42',
        );
        assert.equal(decideRow({ verdict: 'drop' }, await s.recent(A, 3), 4, false).decision, 'keep-failed');
      }),
    );

    test(
      'a run the outage guard aborted claims no id: the re-run of it records, once, and is the run read back',
      withBackend('aborted-id', async (b) => {
        const s = await b.open();
        const aborted = recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'drop', 'refused')], {
          id: 'github-50',
          applied: false,
          aborted: 'the local network looks down',
        });
        await s.record(aborted, changes());
        const rerun = recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')], { id: 'github-50' });
        await s.record(rerun, changes());
        assert.equal(
          (await s.recordedRun('github-50'))?.run.aborted,
          null,
          'the run that decided is the one read back',
        );
        assert.deepEqual(
          (await s.runs({})).map((r) => [r.run.id, r.run.aborted !== null]),
          [
            ['github-50', true],
            ['github-50', false],
          ],
          'the abort is kept, as it happened',
        );
        await assert.rejects(s.record(rerun, changes()), RunRecordedError, 'once it decided, the id is recorded');
        await assert.rejects(
          s.record({ ...aborted, run: { ...aborted.run, startedAt: '2026-11-01T07:00:00.000Z' } }, changes()),
          RunRecordedError,
          'nor aborted again after',
        );
        assert.deepEqual(
          (await s.recent(A, 10)).map((r) => r.run),
          ['github-50'],
        );
      }),
    );

    test(
      'holdRun: a second holder of a run id waits until the first releases it; another run id does not wait',
      withBackend('hold', async (b) => {
        const one = await b.open();
        const two = await b.open();
        const order: string[] = [];
        const release = await one.holdRun('github-42');
        let busy = 0;
        const second = two
          .holdRun('github-42', () => {
            busy++;
          })
          .then((r) => {
            order.push('second held');
            return r;
          });
        const elsewhere = await two.holdRun('github-43', () => {
          throw new Error('another run id never waits');
        });
        await elsewhere();
        await new Promise((r) => setTimeout(r, 700));
        assert.deepEqual([order, busy], [[], 1], 'waiting, and said so once');
        order.push('first released');
        await release();
        await (await second)();
        assert.deepEqual(order, ['first released', 'second held']);
        await (await one.holdRun('github-42'))();
      }),
    );

    test(
      'applyRecorded: a run recorded, not applied, is marked applied with its files; nothing else is recorded',
      withBackend('apply', async (b) => {
        const s = await b.open();
        const path = join(b.dir, 'out', 'servers.md');
        const run = recordedRun('2026-11-01T06:00:00.000Z', [row('Alpha', A, 'live', 'ok')], {
          id: 'plan-1',
          applied: false,
        });
        await s.record(run, changes());
        const written = await s.applyRecorded('plan-1', changes({ files: [{ path, content: '# applied\n' }] }));
        assert.ok(written.includes(path), JSON.stringify(written));
        assert.equal(await readFile(path, 'utf8'), '# applied\n');
        const read = await (await b.open()).recordedRun('plan-1');
        assert.deepEqual(read?.run, { ...run.run, applied: true });
        assert.deepEqual((await s.runs({})).length, 1);
        assert.deepEqual(await s.recent(A, 10), expectedRuns([run])[0]!.rows);
      }),
    );

    test(
      'another store on the same history sees what one recorded; close resolves',
      withBackend('persist', async (b) => {
        const one = await b.open();
        const two = await b.open();
        const snap = snapshotOf('alpha', '1.0.0');
        const sha = (await one.snapshotDigests([snap], false)).get(snap.hash)!;
        const lock: ToolsLock = {
          version: 1,
          servers: { [A]: { ...entry('Alpha', snap.hash, '2026-11-03T06:00:00.000Z'), snapshotSha256: sha } },
        };
        const runs = threeRuns();
        await one.record(runs[0]!, changes());
        await one.record(runs[1]!, changes());
        await one.record(runs[2]!, changes({ snapshots: [snap], lock }));
        const eb = entry('Beta', snapshotOf('beta', '1.0.0').hash, '2026-11-04T00:00:00.000Z');
        await one.accept(B, eb);
        const read = expectedRuns(runs);
        // Opened before the records: it follows them.
        assert.deepEqual(asRecorded(await two.latestRun()), read[2]);
        assert.deepEqual(await two.recent(A, 10), rowsOf(read, A).reverse());
        assert.equal(await one.close(), undefined);

        const three = await b.open();
        assert.deepEqual(allRecorded(await three.runs({ last: 10 })), read);
        assert.deepEqual(await three.since(B, '2026-11-01'), rowsOf(read, B));
        assert.deepEqual(await three.acceptances(), { version: 1, servers: { [A]: lock.servers[A]!, [B]: eb } });
        assert.deepEqual(await three.snapshot(snap.hash, sha), { snapshot: snap, sha256: sha, warning: null });
        assert.equal((await three.problems()).count, 0);
        await assert.doesNotReject(two.close());
        await assert.doesNotReject(three.close());
      }),
    );
  });
}

contract('text store', textBackend);

const missing = await postgresMissing();
if (missing) test('PostgreSQL store contract', { skip: missing }, () => {});
else contract('PostgreSQL store', pgBackend);
