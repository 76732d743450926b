/**
 * The history's line format (fast, no network): what is written reads back as it was; what a pull request, a
 * crash or a merge leaves is read as the format says (runs whole or skipped, every problem named, never a crash);
 * 0.1's lines read as the record; lines are bounded. Expectations from the format as `src/store/lines.ts` states it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { HISTORY_LIMITS, HISTORY_LINE_VERSION, parseHistory, rowAt, runLines } from '../../src/store/lines.js';
import type { RecordedRun } from '../../src/model/plan.js';
import { recordedRow, recordedRun } from '../helpers.js';

const AT1 = '2026-11-10T06:00:00.000Z';
const AT2 = '2026-11-17T06:00:00.000Z';
const tools = ['search', 'fetch'];
const rowA = (extra = {}) =>
  recordedRow('A', { url: 'https://a.example/mcp', tools, toolsHash: '0123456789abcdef', ...extra });
const rowB = (extra = {}) =>
  recordedRow('B', {
    url: 'https://b.example/mcp',
    verdict: 'drop',
    reason: 'http-410',
    reasons: ['http-410'],
    ...extra,
  });
const lines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
/** What a row reads back as: the written row, `previous` and `changed` left for the index. */
const asRead = (r: RecordedRun) => ({ run: r.run, rows: r.rows.map((x) => ({ ...x, previous: null, changed: true })) });
const strip = ({ spans: _s, line: _l, bytes: _b, ...run }: ReturnType<typeof parseHistory>['runs'][number]) => run;

describe('written, then read back', () => {
  it("a run reads back field for field; keys in the record's order, the run's id on every line", () => {
    const run = recordedRun(AT1, [rowA(), rowB()]);
    const text = runLines(run);
    const parsed = parseHistory(text);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.runs.map(strip), [asRead(run)]);
    assert.equal(parsed.wholeBytes, Buffer.byteLength(text));
    const [head, first] = lines(text);
    assert.deepEqual(Object.keys(head!).slice(0, 4), ['v', 'type', 'id', 'startedAt']);
    assert.deepEqual(Object.keys(first!).slice(0, 5), ['v', 'type', 'run', 'url', 'vantage']);
    assert.deepEqual([head!.v, head!.observations, first!.run], [HISTORY_LINE_VERSION, 2, AT1]);
    assert.ok(!('previous' in first!) && !('changed' in first!), 'previous and changed are recomputed, not written');
  });

  it('a tool list written once is referred to after, in the same file, and resolves', () => {
    const known = new Map<string, string[]>();
    const text =
      runLines(recordedRun(AT1, [rowA()]), known) + runLines(recordedRun(AT2, [rowA(), rowB({ tools })]), known);
    const obs = lines(text).filter((l) => l.type === 'observation');
    assert.deepEqual(obs[0]!.tools, tools);
    assert.match(String(obs[1]!.tools), /^#[0-9a-f]{16}$/);
    assert.equal(obs[2]!.tools, obs[1]!.tools, 'the same list, the same reference');
    assert.deepEqual(
      parseHistory(text).runs.flatMap((r) => r.rows.map((x) => x.tools)),
      [tools, tools, tools],
    );
  });

  it('a reference is used only for the same list: another list under a known reference is written in full', () => {
    const known = new Map<string, string[]>();
    runLines(recordedRun(AT1, [rowA()]), known);
    const [ref] = known.keys();
    known.set(ref!, ['not', 'the', 'same']);
    const obs = lines(runLines(recordedRun(AT2, [rowA()]), known)).filter((l) => l.type === 'observation');
    assert.deepEqual(obs[0]!.tools, tools);
  });

  it("acceptedHash round-trips: null (no acceptance) and a hash other than the tools'", () => {
    const run = recordedRun(
      AT1,
      [rowA({}), rowA({ url: 'https://c.example/mcp' })].map((r, i) => ({
        ...r,
        acceptedHash: i ? 'fedcba9876543210' : null,
      })),
    );
    assert.deepEqual(
      parseHistory(runLines(run)).runs[0]!.rows.map((r) => r.acceptedHash),
      [null, 'fedcba9876543210'],
    );
  });

  it('an aborted run is one line, its rows inline and never observations', () => {
    const run = recordedRun(AT1, [rowA(), rowB()], { aborted: 'the local network looks down', applied: false });
    const text = runLines(run);
    assert.equal(lines(text).length, 1);
    assert.equal(lines(text)[0]!.observations, 0);
    const back = parseHistory(text).runs[0]!;
    assert.deepEqual(
      [back.run.aborted, back.rows.map((r) => r.url)],
      ['the local network looks down', ['https://a.example/mcp', 'https://b.example/mcp']],
    );
  });

  it('rowAt reads one observation line again, and says null for anything else', () => {
    const run = recordedRun(AT1, [rowA()]);
    const text = runLines(run);
    const parsed = parseHistory(text);
    const [start, end] = parsed.runs[0]!.spans[0]!;
    const row = rowAt(Buffer.from(text).subarray(start, end), run.run, parsed.tools)!;
    assert.deepEqual(row, { ...run.rows[0], previous: null, changed: true });
    assert.equal(rowAt(Buffer.from('{"v":2'), run.run, parsed.tools), null);
    assert.equal(rowAt(Buffer.from('[1]'), run.run, parsed.tools), null);
  });
});

describe('read as untrusted input', () => {
  const good = runLines(recordedRun(AT1, [rowA(), rowB()]));
  const [runLine, obsA, obsB] = good.split('\n');

  it('a torn run anywhere in the file is skipped and named; the whole runs around it are kept', () => {
    const later = runLines(recordedRun(AT2, [rowA()]));
    const text = `${runLine}\n${obsA}\n${later}`; // a merge kept the run line and one of its two lines
    const parsed = parseHistory(text);
    assert.deepEqual(
      parsed.runs.map((r) => r.run.id),
      [AT2],
    );
    assert.deepEqual(parsed.problems, [
      { line: 1, problem: 'run incomplete: 1 of 2 observation lines (the run is skipped)' },
    ]);
    const torn = parseHistory(`${good}${runLine}\n${obsA}\n`);
    assert.deepEqual(
      torn.runs.map((r) => r.run.id),
      [AT1],
    );
    assert.equal(torn.wholeBytes, Buffer.byteLength(good), 'an append may cut what follows the last whole run');
  });

  it('a partial last line is not history yet, and no problem', () => {
    const parsed = parseHistory(`${good}${runLine!.slice(0, 30)}`);
    assert.deepEqual([parsed.runs.length, parsed.problems, parsed.wholeBytes], [1, [], Buffer.byteLength(good)]);
  });

  it('each kind of bad line is a problem of its own, and the runs around it are read', () => {
    const v3 = JSON.stringify({ v: 3, type: 'run' });
    const cases: Array<[string, string, number]> = [
      ['not JSON', 'not json at all', 0],
      ['a JSON value that is not an object', '[1,2]', 0],
      ['no version', '{"type":"run"}', 0],
      ['a newer version', v3, 0],
      ['an unknown type', JSON.stringify({ v: 2, type: 'note' }), 0],
      ['an observation outside any run', obsA!, 0],
    ];
    const expected = [
      'not JSON',
      'not a history line (not a JSON object)',
      'not a history line (no "v":1 or "v":2)',
      'a line of version 3, newer than this onetap reads (2)',
      'not a history line (its "type" is neither run nor observation)',
      'observation line outside a run (no run line of its run before it)',
    ];
    cases.forEach(([label, bad], i) => {
      const parsed = parseHistory(`${bad}\n${good}`);
      assert.deepEqual(parsed.problems, [{ line: 1, problem: expected[i] }], label);
      assert.equal(parsed.runs.length, 1, `${label}: the run after it is read`);
      assert.equal(parsed.skipped, 1);
    });
  });

  it('a bad observation line is skipped alone (its run still counts it); a bad run line skips its run', () => {
    const badObs = JSON.stringify({ ...JSON.parse(obsB!), verdict: 'gone' });
    const parsed = parseHistory(`${runLine}\n${obsA}\n${badObs}\n`);
    assert.deepEqual(
      parsed.runs[0]!.rows.map((r) => r.url),
      ['https://a.example/mcp'],
    );
    assert.deepEqual(parsed.problems, [
      {
        line: 3,
        problem: 'observation line: verdict: expected one of live, review, drop, failed (the observation is skipped)',
      },
    ]);
    const badRun = JSON.stringify({ ...JSON.parse(runLine!), applied: 'yes' });
    const skipped = parseHistory(`${badRun}\n${obsA}\n${obsB}\n`);
    assert.deepEqual([skipped.runs.length, skipped.skipped], [0, 3]);
    assert.deepEqual(skipped.problems, [
      { line: 1, problem: 'run line: applied: expected true or false (its run is skipped)' },
    ]);
  });

  it('a line deeper than the format is a problem, not a crash', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { deep };
    const parsed = parseHistory(
      `${runLine}\n${JSON.stringify({ ...JSON.parse(obsA!), cardMismatches: [{ field: 'f', card: deep, live: null }] })}\n${obsB}\n`,
    );
    assert.match(parsed.problems[0]!.problem, /nested deeper than 16 levels/);
  });

  it('a line over the read limit is not parsed: an observation of the run still counts towards it, a run line skips its run', () => {
    const long = JSON.stringify({ ...JSON.parse(obsA!), error: 'e'.repeat(HISTORY_LIMITS.readLineBytes) });
    const parsed = parseHistory(`${runLine}\n${long}\n${obsB}\n`);
    assert.deepEqual(
      parsed.runs[0]!.rows.map((r) => r.url),
      ['https://b.example/mcp'],
    );
    assert.match(
      parsed.problems[0]!.problem,
      /^observation line: \d+ bytes, more than the 147456 a line may have \(not read\)/,
    );
    const longRun = JSON.stringify({ ...JSON.parse(runLine!), catalog: 'c'.repeat(HISTORY_LIMITS.readLineBytes) });
    const skipped = parseHistory(`${longRun}\n${obsA}\n${obsB}\n${good}`);
    assert.deepEqual(
      skipped.runs.map((r) => r.rows.length),
      [2],
      'the run after it is read',
    );
    assert.match(skipped.problems[0]!.problem, /^run line: \d+ bytes/);
  });
});

describe("0.1's lines (version 1)", () => {
  const v1 = readFileSync(new URL('../../../test/fixtures/history-v1.jsonl', import.meta.url));
  it("read as the record: no evidence, acceptedHash as 0.1 meant it, references resolved, the run's time as its id", () => {
    const parsed = parseHistory(v1);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(
      parsed.runs.map((r) => r.run.id),
      ['2026-11-10T06:00:00.000Z', '2026-11-17T06:00:00.000Z', '2026-11-24T06:00:00.000Z'],
    );
    const rows = parsed.runs.flatMap((r) => r.rows);
    assert.ok(rows.every((r) => r.evidence === null && r.probe === null && r.vantage === 'local'));
    const context7 = rows.filter((r) => r.name === 'Context7');
    assert.deepEqual(
      context7.map((r) => r.tools),
      [
        ['resolve-library-id', 'query-docs'],
        ['resolve-library-id', 'query-docs'],
        ['resolve-library-id', 'query-docs'],
      ],
    );
    assert.deepEqual(
      context7.map((r) => r.acceptedHash === r.toolsHash),
      [false, true, true],
      'a v1 line with acceptedHash null had none; without it, the list seen was the accepted one',
    );
    const gone = rows.filter((r) => r.name === 'Gone').at(-1)!;
    assert.deepEqual([gone.verdict, gone.reason, gone.decision, gone.dropStreak], ['drop', 'http-404', 'drop', 2]);
  });
});

describe('bounded lines', () => {
  it('a row too long for a line loses its lists first, its free text next, and says so', () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `tool_number_${i}`);
    const text = runLines(recordedRun(AT1, [rowA({ tools: names, error: 'x'.repeat(200_000) })]));
    const obs = lines(text)[1]!;
    assert.ok(Buffer.byteLength(text.split('\n')[1]!) <= HISTORY_LIMITS.lineBytes);
    assert.deepEqual([obs.tools, obs.toolCount, obs.bounded], [null, 10_000, true]);
    assert.equal(String(obs.error).length, HISTORY_LIMITS.textChars);
    assert.deepEqual(parseHistory(text).problems, []);
  });
  it('a line that fits is written as it is', () => {
    assert.equal(lines(runLines(recordedRun(AT1, [rowA()])))[1]!.bounded, undefined);
  });
});
