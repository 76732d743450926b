/**
 * Issue 34, the decider's pure decisions, table by table: a run id recorded already is shown or applied, never
 * recorded again; a drop streak counts one run once; a vantage whose job failed for good did not answer (the quorum
 * decides, the note says why); the wait's accounting (answered, failed for good, outstanding; a failed job retried is
 * outstanding again); the backoff of a failed poll; a repeated run id in a text history is a problem, ignored after
 * its first appearance (one month file, and across them).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alreadyRecordedAction } from '../../src/apply/apply.js';
import { decideRow } from '../../src/decide/decide.js';
import { combineVantages, type VantageVerdict } from '../../src/policy/vantages.js';
import {
  accountJobs,
  jobKey,
  POLL_BACKOFF,
  pollBackoffMs,
  waitFor,
  type PollSeen,
  type WaitClock,
  type WaitEnded,
} from '../../src/refresh/across.js';
import { parseHistory, runLines, withApplied } from '../../src/store/lines.js';
import { TextIndex } from '../../src/store/text-index.js';
import { CANARIES_URL } from '../../src/store/store.js';
import { recordedRow, recordedRun } from '../helpers.js';

describe('a run whose id is recorded already', () => {
  const cases: Array<[string, { applied: boolean; aborted: string | null }, boolean, 'show' | 'apply' | 'decide']> = [
    [
      'applied, asked again to write: its recorded plan, nothing applied again',
      { applied: true, aborted: null },
      true,
      'show',
    ],
    ['applied, asked for a plan: its recorded plan', { applied: true, aborted: null }, false, 'show'],
    ['recorded (--record), now asked to write: applied', { applied: false, aborted: null }, true, 'apply'],
    [
      'recorded (--record), asked again for a plan: its recorded plan',
      { applied: false, aborted: null },
      false,
      'show',
    ],
    [
      'aborted by the outage guard (it decided nothing), asked to write: decided afresh',
      { applied: false, aborted: 'the local network looks down' },
      true,
      'decide',
    ],
    [
      'aborted by the outage guard, asked for a plan: decided afresh',
      { applied: false, aborted: 'the local network looks down' },
      false,
      'decide',
    ],
  ];
  for (const [name, run, write, expected] of cases)
    it(name, () => assert.equal(alreadyRecordedAction(run, write), expected));
});

describe('a drop streak counts one run once', () => {
  const drop = (run: string) => ({
    verdict: 'drop' as const,
    reason: 'refused' as const,
    observedAt: '2026-11-01T00:00:00.000Z',
    run,
  });
  const cases: Array<[string, Array<ReturnType<typeof drop>>, number, 'drop' | 'keep-failed', number]> = [
    ['one earlier run: 2 of 2', [drop('w1')], 2, 'drop', 2],
    [
      'the same run read twice (a re-run recorded again, before this fix): still 2, not 3',
      [drop('w1'), drop('w1')],
      3,
      'keep-failed',
      2,
    ],
    ['the same run twice among others: each run once', [drop('w2'), drop('w2'), drop('w1')], 3, 'drop', 3],
    ['no earlier run: 1 of 2', [], 2, 'keep-failed', 1],
  ];
  for (const [name, history, confirmDrops, decision, streak] of cases) {
    it(name, () => {
      const d = decideRow({ verdict: 'drop' }, history, confirmDrops, false);
      assert.deepEqual([d.decision, d.dropStreak], [decision, streak]);
    });
  }
});

describe('a vantage whose job failed for good did not answer: the quorum decides, the note says why', () => {
  const v = (
    vantage: string,
    verdict: VantageVerdict['verdict'],
    reason: VantageVerdict['reason'],
  ): VantageVerdict => ({ vantage, verdict, reason });
  const why = new Map([['b', 'its job failed: refused: url: https only']]);
  const cases: Array<[string, VantageVerdict[], string[], number, string, RegExp]> = [
    [
      'quorum 2 of a, b; b failed: vantage-incomplete, naming why',
      [v('a', 'drop', 'refused')],
      ['a', 'b'],
      2,
      'failed/vantage-incomplete',
      /^1 of 2 vantages answered, the quorum is 2: no answer from b \(its job failed: refused: url: https only\)$/,
    ],
    [
      'quorum 1: a decides, the note still names b',
      [v('a', 'drop', 'refused')],
      ['a', 'b'],
      1,
      'drop/refused',
      /^no answer from b \(its job failed: refused: url: https only\)$/,
    ],
    [
      'quorum met with a note of its own: both',
      [v('a', 'live', 'ok'), v('c', 'failed', 'timeout')],
      ['a', 'b', 'c'],
      2,
      'live/ok',
      /^failed from c \(failed\/timeout\); no answer from b \(its job failed/,
    ],
    [
      'a vantage past the deadline (no why): as before',
      [v('a', 'live', 'ok'), v('c', 'live', 'ok')],
      ['a', 'd', 'c'],
      2,
      'live/ok',
      /^$/,
    ],
  ];
  for (const [name, readings, asked, quorum, verdict, note] of cases) {
    it(name, () => {
      const c = combineVantages(readings, asked, quorum, why);
      assert.equal(`${c.verdict}/${c.reason}`, verdict);
      assert.match(c.note ?? '', note);
    });
  }
});

describe("the wait's accounting", () => {
  const seen = (s: Partial<PollSeen>): PollSeen => ({
    observed: 0,
    reported: new Set(),
    failed: [],
    observedFailed: new Set(),
    ...s,
  });
  const A = 'https://a.example/mcp';
  const B = 'https://b.example/mcp';
  const probes2 = { probes: 4, canaries: [] as string[] }; // 2 rows × vantages x, y
  const cases: Array<[string, { probes: number; canaries: string[] }, PollSeen, number, string[]]> = [
    ['nothing yet: all outstanding', probes2, seen({}), 4, []],
    ['all observed: none outstanding', probes2, seen({ observed: 4 }), 0, []],
    [
      'y failed for good on both rows, x answered: accounted for',
      probes2,
      seen({
        observed: 2,
        failed: [
          { url: A, vantage: 'y', why: 'boom' },
          { url: B, vantage: 'y', why: 'boom' },
        ],
      }),
      0,
      [`${A} y`, `${B} y`],
    ],
    [
      'a failed job that recorded its observation all the same counts once',
      probes2,
      seen({ observed: 3, failed: [{ url: A, vantage: 'y', why: 'boom' }], observedFailed: new Set([jobKey(A, 'y')]) }),
      1,
      [],
    ],
    [
      "a failed job retried since is no longer in the queue's failed state: outstanding again",
      probes2,
      seen({ observed: 2, failed: [{ url: A, vantage: 'y', why: 'boom' }] }),
      1,
      [`${A} y`],
    ],
    [
      "canaries: one reported, the other's job failed for good",
      { probes: 2, canaries: ['x', 'y'] },
      seen({ observed: 2, reported: new Set(['x']), failed: [{ url: CANARIES_URL, vantage: 'y', why: 'boom' }] }),
      0,
      [`${CANARIES_URL} y`],
    ],
    [
      'canaries: a failed canaries job that reported all the same is answered',
      { probes: 2, canaries: ['x', 'y'] },
      seen({ observed: 2, reported: new Set(['x', 'y']), failed: [{ url: CANARIES_URL, vantage: 'y', why: 'boom' }] }),
      0,
      [],
    ],
    [
      'canaries still outstanding',
      { probes: 2, canaries: ['x', 'y'] },
      seen({ observed: 2, reported: new Set(['x']) }),
      1,
      [],
    ],
  ];
  for (const [name, expected, poll, outstanding, failed] of cases) {
    it(name, () => {
      const a = accountJobs(expected, poll);
      assert.equal(a.outstanding, outstanding);
      assert.deepEqual(
        [...a.failed].flatMap(([url, vs]) => [...vs.keys()].map((v) => `${url} ${v}`)),
        failed,
      );
    });
  }
});

describe("a failed poll's backoff: capped exponential, jittered between half and all of it", () => {
  // [failures in a row, random, the ceiling it is jittered under]
  const { baseMs, capMs } = POLL_BACKOFF;
  const cases: Array<[number, number, number]> = [
    [1, 0, baseMs],
    [1, 0.999, baseMs],
    [2, 0.5, baseMs * 2],
    [3, 0.25, baseMs * 4],
    [5, 0, baseMs * 16],
    [6, 0.999, capMs],
    [7, 0, capMs],
    [60, 0.999, capMs],
    [0, 0, baseMs],
  ];
  for (const [failures, random, ceiling] of cases) {
    it(`${failures} failed in a row, jitter ${random}: between ${ceiling / 2} and ${ceiling} ms`, () => {
      const ms = pollBackoffMs(failures, random);
      assert.equal(ms, Math.round(ceiling / 2 + (ceiling / 2) * random));
      assert.ok(ms >= ceiling / 2 && ms <= ceiling);
    });
  }
});

describe('the wait, on an injected clock: polls until every job is accounted for or the deadline; a failed poll tried again with backoff', () => {
  /** A clock that moves only when the wait pauses, and every pause it took. */
  const fakeClock = () => {
    let now = 0;
    const pauses: number[] = [];
    const clock: WaitClock = {
      now: () => now,
      sleep: async (ms) => {
        pauses.push(ms);
        now += ms;
      },
      random: () => 0.5,
    };
    return { clock, pauses, at: () => now };
  };
  const expected = { probes: 2, canaries: [] as string[] };
  const seen = (observed: number): PollSeen => ({
    observed,
    reported: new Set(),
    failed: [],
    observedFailed: new Set(),
  });
  /** A poll answering from a script: a number is what it saw, an Error how it failed (the last step repeats). */
  const scripted = (steps: Array<number | Error>) => {
    let i = 0;
    return async () => {
      const step = steps[Math.min(i++, steps.length - 1)]!;
      if (step instanceof Error) throw step;
      return seen(step);
    };
  };
  const run = async (steps: Array<number | Error>, deadlineMs: number) => {
    const c = fakeClock();
    const failed: number[] = [];
    const ended: WaitEnded[] = [];
    const opts = {
      vantages: ['x', 'y'],
      queueUrl: 'postgres://u@db/x',
      deadlineMs,
      pollMs: 500,
      onPollFailed: (_: Error, ms: number) => failed.push(ms),
      onWaited: (e: WaitEnded) => ended.push(e),
    };
    const outcome = await waitFor(expected, scripted(steps), deadlineMs, c.clock, opts).then(
      (a) => a.outstanding,
      (err: Error) => err.message,
    );
    return { outcome, pauses: c.pauses, failed, ended, at: c.at() };
  };
  const down = new Error('the store postgres://u:***@db/x: a query failed: Connection terminated');

  it('answered on the third poll: two pauses of pollMs, ended as accounted for', async () => {
    const r = await run([0, 1, 2], 60_000);
    assert.deepEqual([r.outcome, r.pauses, r.failed], [0, [500, 500], []]);
    assert.deepEqual(r.ended, [{ accounted: true, jobs: 2, answered: 2, failed: 0, outstanding: 0 }]);
  });

  it('three failed polls, then answered: backoff 188, 375, 750 ms (jitter 0.5), then done', async () => {
    const r = await run([down, down, down, 2], 60_000);
    assert.deepEqual([r.outcome, r.failed, r.pauses], [0, [188, 375, 750], [188, 375, 750]]);
  });

  it('answers missing at the deadline: the last poll at the deadline, ended as not accounted for', async () => {
    const r = await run([1], 1_200);
    assert.deepEqual([r.outcome, r.pauses, r.at], [1, [500, 500, 200], 1_200]);
    assert.deepEqual(r.ended, [{ accounted: false, jobs: 2, answered: 1, failed: 0, outstanding: 1 }]);
  });

  it("polls failing until the deadline: the wait fails, naming the store as the poll's error did, after backing off to the cap", async () => {
    const r = await run([down], 60_000);
    assert.match(
      String(r.outcome),
      new RegExp(
        String.raw`^the store postgres:\/\/u:\*\*\*@db\/x: a query failed: Connection terminated \(the wait's polls ` +
          String.raw`failed until the deadline, \d+ in a row, each tried again with backoff\)$`,
      ),
    );
    assert.equal(r.at, 60_000, 'tried until the deadline, not past it');
    assert.ok(
      r.pauses.every((ms) => ms <= POLL_BACKOFF.capMs) && r.pauses.includes(Math.round(POLL_BACKOFF.capMs * 0.75)),
      JSON.stringify(r.pauses),
    );
    assert.deepEqual(r.ended, []);
  });

  it('a poll that fails once between good ones: the failures in a row start again from the first step', async () => {
    const r = await run([0, down, 0, down, 2], 60_000);
    assert.deepEqual([r.outcome, r.pauses], [0, [500, 188, 500, 188]]);
  });
});

describe('a run id repeated in a text history: the first appearance stands, a later one is a problem', () => {
  const A = 'https://alpha.example/mcp';
  const first = recordedRun(
    '2026-11-01T06:00:00.000Z',
    [recordedRow('Alpha', { url: A, verdict: 'drop', reason: 'refused' })],
    { id: 'github-42' },
  );
  const again = recordedRun(
    '2026-11-01T07:00:00.000Z',
    [recordedRow('Alpha', { url: A, verdict: 'drop', reason: 'refused' })],
    { id: 'github-42' },
  );
  const other = recordedRun(
    '2026-11-08T06:00:00.000Z',
    [recordedRow('Alpha', { url: A, verdict: 'drop', reason: 'refused' })],
    { id: 'github-43' },
  );

  it('in one month file', () => {
    const parsed = parseHistory(runLines(first) + runLines(again) + runLines(other));
    assert.deepEqual(
      parsed.runs.map((r) => [r.run.id, r.run.startedAt]),
      [
        ['github-42', first.run.startedAt],
        ['github-43', other.run.startedAt],
      ],
    );
    assert.deepEqual(parsed.problems, [
      {
        line: 3,
        problem:
          'run line: its run id was recorded before, at line 1 (a run id is recorded once): this later record is ignored',
      },
    ]);
    assert.equal(
      parsed.wholeBytes,
      Buffer.byteLength(runLines(first) + runLines(again) + runLines(other)),
      'an append keeps the lines as they are',
    );
  });

  it('across month files: the index reads the first, a drop streak sees the run once', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'onetap-repeat-')), 'history');
    await mkdir(dir);
    const december = {
      ...again,
      run: { ...again.run, startedAt: '2026-12-01T00:00:00.000Z' },
      rows: again.rows.map((r) => ({ ...r, observedAt: '2026-12-01T00:00:00.000Z' })),
    };
    await writeFile(join(dir, '2026-11.jsonl'), runLines(first) + runLines(other));
    await writeFile(join(dir, '2026-12.jsonl'), runLines(december));
    const index = new TextIndex(dir);
    index.sync();
    assert.deepEqual(
      index.runs({}).map((r) => r.run.id),
      ['github-42', 'github-43'],
    );
    assert.equal(index.run('github-42')?.run.startedAt, first.run.startedAt);
    assert.deepEqual(
      index.recent(A, 10).map((r) => r.run),
      ['github-43', 'github-42'],
    );
    assert.deepEqual(index.problems(), {
      count: 1,
      first: [
        {
          file: 'history/2026-12.jsonl',
          line: 1,
          problem:
            'run line: its run id was recorded before, at history/2026-11.jsonl:1 (a run id is recorded once): this later record is ignored',
        },
      ],
    });
    assert.equal(
      decideRow({ verdict: 'drop' }, index.recent(A, 3), 3, false).dropStreak,
      3,
      'this run, github-43 and github-42: three runs, not four',
    );
  });

  it('a run line marked applied keeps its bytes but for that value', () => {
    const line = runLines({ ...first, run: { ...first.run, applied: false } }).split('\n')[0]!;
    assert.equal(withApplied(line, true), line.replace('"applied":false', '"applied":true'));
  });
});
