/**
 * The history's line format (fast, no network): what is written reads back as it was; what a pull request, a
 * crash or a merge leaves is read as the format says (runs whole or skipped, every problem named, never a crash);
 * 0.1's lines read as the record; lines are bounded. Expectations from the format as `src/store/lines.ts` states it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync } from 'node:fs';
import {
  HISTORY_LIMITS,
  HISTORY_LINE_VERSION,
  parseHistory,
  rowAt,
  runLines,
  MONTH_FILE,
  historyDir,
  monthFileName,
} from '../../src/store/lines.js';
import type { RecordedRun, PlanRow } from '../../src/model/plan.js';
import { recordedRow, recordedRun } from '../helpers.js';
import { mkdir, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  parseStoredSnapshot,
  readSnapshot,
  snapshotFiles,
  snapshotPath,
  snapshotText,
} from '../../src/store/snapshots.js';
import { storedSnapshot, toolListSnapshot } from '../../src/model/snapshot-hash.js';
import type { Evidence } from '../../src/model/evidence.js';
import type { Observation } from '../../src/model/observation.js';

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

/*
 * The history's line format, 0.1's lines and the tool snapshots, held to what docs/history.md,
 * docs/reference/formats.md and the headers of src/store/lines.ts, legacy.ts and snapshots.ts state (fast: at
 * most a temporary folder). Written against the mutants a mutation run left alive: which lines are kept or
 * skipped and why, where a run ends, what an append may keep, the 128 KiB bound and how a line gets there, and
 * old lines and files read into today's shape.
 */

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const L = HISTORY_LIMITS.lineBytes;
const AT3 = '2026-11-24T06:00:00.000Z';
const bytes = (s: string) => Buffer.byteLength(s);
const split = (text: string) => text.split('\n').filter(Boolean);
const parse = (line: string) => JSON.parse(line) as J;
const row = (name: string, fields: Partial<Observation> = {}, plan: Partial<PlanRow> = {}) =>
  recordedRow(name, { url: `https://${name.toLowerCase()}.example/mcp`, ...fields }, plan);
/** The same input grown with `x`s until its JSON line is exactly `target` bytes (each `x` is one byte of it). */
function sized(make: (k: number) => string, target: number): string {
  const k = 1_000 + target - bytes(make(1_000));
  const s = make(k);
  assert.equal(bytes(s), target, 'the construction reaches the size exactly');
  return s;
}
const evidences = (
  JSON.parse(readFileSync(new URL('../../../test/fixtures/observations.json', import.meta.url), 'utf8')) as Array<{
    evidence: Evidence;
  }>
).map((r) => r.evidence);
const EVIDENCE = evidences[0]!;
const many = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const bigList = many(10_000, (i) => `tool_number_${i}`); // about 170 KB of names: more than a line holds

/** A v2 run of two lines (run A with the two tools, run B without a list). */
const good = runLines(recordedRun(AT1, [row('A', { tools }), row('B')]));
const [runLine, obsA, obsB] = split(good) as [string, string, string];
const later = runLines(recordedRun(AT2, [row('C')]));
const badRun = (fields: J) => JSON.stringify({ ...parse(runLine), applied: 'yes', ...fields });
const obsOf = (run: unknown, base = obsA) => JSON.stringify({ ...parse(base), run });

describe('file names', () => {
  it('month files are YYYY-MM.jsonl, nothing more, beside the catalog under history/', () => {
    assert.ok(MONTH_FILE.test('2026-11.jsonl'));
    for (const name of [
      'x2026-11.jsonl',
      '2026-11.jsonl.bak',
      '2026-1.jsonl',
      '26-11.jsonl',
      'abcd-11.jsonl',
      '2026-ab.jsonl',
    ])
      assert.ok(!MONTH_FILE.test(name), name);
    assert.equal(historyDir('/w/catalog/servers.json'), '/w/catalog/history');
    assert.equal(monthFileName('2026-11-10T06:00:00.000Z'), '2026-11.jsonl', "the month of the run's start, UTC");
    assert.equal(
      snapshotPath('/w/catalog/servers.json', '0123456789abcdef'),
      '/w/catalog/history/snapshots/0123456789abcdef.json',
    );
  });
});

describe('writing: tool lists by reference', () => {
  it('a known reference is used only for the very same list: a shorter list or other names are written in full', () => {
    for (const other of [['search'], ['search', 'other']]) {
      const known = new Map<string, string[]>();
      runLines(recordedRun(AT1, [row('A', { tools })]), known);
      const [ref] = known.keys();
      known.set(ref!, other);
      const obs = split(runLines(recordedRun(AT2, [row('A', { tools })]), known)).map(parse)[1]!;
      assert.deepEqual(obs.tools, tools, JSON.stringify(other));
    }
  });

  it('a list on a bounded line is not written there, so the next line writes it in full and it resolves', () => {
    const known = new Map<string, string[]>();
    const text =
      runLines(recordedRun(AT1, [row('A', { tools, error: 'e'.repeat(200_000) })]), known) +
      runLines(recordedRun(AT2, [row('A', { tools })]), known);
    const obs = split(text)
      .map(parse)
      .filter((l) => l.type === 'observation');
    assert.deepEqual([obs[0]!.bounded, obs[0]!.tools, obs[1]!.tools], [true, null, tools]);
    const parsed = parseHistory(text);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(
      parsed.runs.map((r) => r.rows[0]!.tools),
      [null, tools],
    );
  });
});

describe('writing: a line is at most 128 KiB', () => {
  const obsLine = (fields: Partial<Observation>, plan: Partial<PlanRow> = {}) =>
    split(runLines(recordedRun(AT1, [row('A', fields, plan)])))[1]!;

  it('a line of exactly 131072 bytes fits and is written as it is; one byte more is bounded', () => {
    const exact = sized((k) => obsLine({ tools, error: 'x'.repeat(k) }), L);
    assert.equal(parse(exact).bounded, undefined);
    assert.deepEqual(parse(exact).tools, tools);
    const over = obsLine({ tools, error: 'x'.repeat(parse(exact).error.length + 1) });
    assert.equal(parse(over).bounded, true);
    assert.ok(bytes(over) <= L);
  });

  it('when the lists alone make it long, they become counts and nothing else changes (free text and evidence stay whole)', () => {
    const cell = { works: true, verdict: 'live' as const, reason: 'ok' as const, tools: ['a', 'b'] };
    const diagnosis = {
      works: true,
      tools: ['a'],
      error: null,
      httpStatus: 200,
      protocolVersion: null,
      serverName: null,
      serverVersion: null,
      quirks: [],
    };
    const findings = [{ tool: 't', field: 'description', rule: 'r', excerpt: 'e' }];
    const excludedTools = many(25, (i) => ({ name: `x${i}`, reason: 'invalid x-mcp-header' }));
    const error = 'e'.repeat(2_000);
    const line = parse(
      obsLine(
        {
          tools: bigList,
          findings,
          findingsSeen: 3,
          matrix: { 'kai-9000': cell },
          diagnosis,
          excludedTools,
          error,
          evidence: EVIDENCE,
        },
        { toolChanges: { added: ['n1', 'n2'], removed: ['o1'], changed: [] } },
      ),
    );
    assert.equal(line.bounded, true);
    assert.deepEqual([line.tools, line.toolCount], [null, 10_000]);
    assert.deepEqual([line.findings, line.findingsSeen], [[], 3]);
    assert.deepEqual([line.toolChanges, line.toolChangesCount], [null, { added: 2, removed: 1, changed: 0 }]);
    assert.deepEqual(
      line.matrix,
      { 'kai-9000': { ...cell, tools: null } },
      'matrix cells lose their tool lists, nothing else',
    );
    assert.deepEqual(line.diagnosis, { ...diagnosis, tools: null });
    assert.deepEqual(line.excludedTools, excludedTools.slice(0, HISTORY_LIMITS.listed), 'the first 20 excluded tools');
    assert.equal(line.error, error, 'free text is clipped only when the counts are not enough');
    assert.deepEqual(line.evidence, EVIDENCE);
    assert.deepEqual(Object.keys(line).slice(-2), ['bounded', 'toolChangesCount'], 'the extra fields at its end');
    const back = parseHistory(`${split(runLines(recordedRun(AT1, [row('A')])))[0]}\n${JSON.stringify(line)}\n`);
    assert.deepEqual(back.problems, []);
    assert.deepEqual(back.runs[0]!.rows[0]!.evidence, EVIDENCE);
  });

  it('a bounded line keeps 20 card mismatches, names clipped, values kept when small and clipped as JSON text when not', () => {
    const half = HISTORY_LIMITS.textChars / 2;
    const small = 'c'.repeat(half - 2); // its JSON is exactly textChars/2 characters
    const cardMismatches = [
      { field: 'f'.repeat(300), card: small, live: null },
      { field: 'name', card: 'd'.repeat(998), live: 'e'.repeat(2_998) },
      ...many(28, (i) => ({ field: `field${i}`, card: i, live: { n: i } })),
    ];
    const line = parse(obsLine({ tools: bigList, cardMismatches }));
    assert.equal(line.bounded, true);
    const kept = line.cardMismatches as J[];
    assert.equal(kept.length, HISTORY_LIMITS.cardMismatches);
    assert.equal(kept[0]!.field.length, 200);
    assert.equal(kept[0]!.card, small, 'a value whose JSON is at most textChars/2 characters is kept as it is');
    assert.equal(kept[0]!.live, null);
    for (const clipped of [kept[1]!.card, kept[1]!.live]) {
      assert.equal(typeof clipped, 'string');
      assert.equal(clipped.length, half, 'clipped to textChars/2 characters');
      assert.ok(clipped.startsWith('"') && clipped.endsWith('…'), 'its JSON text, clipped');
    }
    assert.deepEqual(kept.slice(2), cardMismatches.slice(2, 20));
    assert.deepEqual(parseHistory(`${runLine}\n${JSON.stringify({ ...line, run: AT1 })}\n${obsB}\n`).problems, []);
  });

  it('then free text is clipped, then the evidence loses the runs --matrix added, never anything inside them', () => {
    const run = EVIDENCE.deciding;
    const evidence: Evidence = {
      ...EVIDENCE,
      matrix: { diagnosis: null, others: { 'other-client': { ...run, error: 'm'.repeat(140_000) } } },
    };
    const line = split(
      runLines(
        recordedRun(AT1, [row('A', { tools, error: 'e'.repeat(5_000), location: 'l'.repeat(5_000), evidence })]),
      ),
    )[1]!;
    assert.ok(bytes(line) <= L);
    const obs = parse(line);
    assert.deepEqual(
      [obs.bounded, obs.error.length, obs.location.length],
      [true, HISTORY_LIMITS.textChars, HISTORY_LIMITS.textChars],
    );
    assert.deepEqual(obs.evidence, { ...EVIDENCE, matrix: null }, "the verdict's evidence kept exactly");
  });

  it('then the evidence goes whole ("evidence":null), and the rest of the row stays', () => {
    const cell = { works: false, verdict: 'drop', reason: 'http-404', tools: null } as const;
    const evidence: Evidence = { ...EVIDENCE, deciding: { ...EVIDENCE.deciding, error: 'd'.repeat(140_000) } };
    const line = split(
      runLines(
        recordedRun(AT1, [
          row('A', {
            tools,
            evidence,
            matrix: { other: cell },
            cardMismatches: [{ field: 'name', card: 'a', live: 'b' }],
          }),
        ]),
      ),
    )[1]!;
    assert.ok(bytes(line) <= L);
    const obs = parse(line);
    assert.equal('evidence' in obs && obs.evidence, null, 'written as null, not left out');
    assert.deepEqual(
      [obs.matrix, obs.cardMismatches, obs.url],
      [{ other: cell }, [{ field: 'name', card: 'a', live: 'b' }], 'https://a.example/mcp'],
    );
    const back = parseHistory(`${runLine}\n${JSON.stringify({ ...obs, run: AT1 })}\n${obsB}\n`);
    assert.deepEqual(back.problems, []);
    assert.equal(back.runs[0]!.rows[0]!.evidence, null);
  });

  it('whatever a server answered: a matrix of thousands of profiles still gives a line within the bound that reads back', () => {
    const matrix = Object.fromEntries(
      many(
        3_000,
        (i) =>
          [
            `profile-number-${i}`,
            { works: true, verdict: 'live' as const, reason: 'ok' as const, tools: null },
          ] as const,
      ),
    );
    const text = runLines(recordedRun(AT1, [row('A', { tools, matrix, evidence: EVIDENCE })]));
    const line = split(text)[1]!;
    assert.ok(bytes(line) <= L, `${bytes(line)} bytes`);
    assert.equal(parse(line).bounded, true);
    assert.deepEqual(parseHistory(text).problems, []);
  });

  it("a run's warnings: the first 20, each clipped, then how many more there were", () => {
    const warnings = [`w${'x'.repeat(5_000)}`, ...many(24, (i) => `warning ${i}`)];
    const text = runLines(recordedRun(AT1, [row('A')], { warnings }));
    const written = parse(split(text)[0]!).warnings as string[];
    assert.equal(written.length, 21);
    assert.equal(written[0]!.length, HISTORY_LIMITS.textChars);
    assert.deepEqual(written.slice(1, 20), warnings.slice(1, 20));
    assert.match(written[20]!, /\b5 more warnings/);
    assert.deepEqual(parseHistory(text).runs[0]!.run.warnings, written);
  });
});

describe('writing: an aborted run is one line, bounded the same way', () => {
  const aborted = (rows: PlanRow[], extra: J = {}) =>
    runLines(recordedRun(AT1, rows, { aborted: 'the local network looks down', applied: false, ...extra }));
  const withEvidence = (name: string, fields: Partial<Observation> = {}) =>
    row(name, { tools, evidence: EVIDENCE, ...fields });

  it('a line that fits is written as it is: no "bounded", every row with its evidence', () => {
    const line = parse(aborted([withEvidence('A'), withEvidence('B')]));
    assert.equal(line.bounded, undefined);
    assert.deepEqual(
      (line.plan as J[]).map((r) => [r.bounded, r.evidence]),
      [
        [undefined, EVIDENCE],
        [undefined, EVIDENCE],
      ],
    );
  });

  it('131071 bytes is written as it is; 131073 is bounded row by row, within the limit, every row kept', () => {
    const make = (k: number) => aborted([withEvidence('A', { error: 'x'.repeat(k) }), withEvidence('B')]).trimEnd();
    const fits = sized(make, L - 1);
    assert.equal(parse(fits).bounded, undefined);
    const bounded = make(parse(fits).plan[0].error.length + 2); // 131073 bytes as it is
    assert.ok(bytes(bounded) <= L);
    const line = parse(bounded);
    assert.equal(line.bounded, true);
    assert.equal(line.planRows, undefined, 'planRows says how many rows there were only when some were left out');
    assert.deepEqual(
      (line.plan as J[]).map((r) => r.url),
      ['https://a.example/mcp', 'https://b.example/mcp'],
    );
    const a = (line.plan as J[])[0]!;
    assert.deepEqual(
      [a.bounded, a.evidence, a.error.length, a.tools, a.toolCount],
      [true, null, HISTORY_LIMITS.textChars, null, 2],
    );
    const back = parseHistory(`${bounded}\n`);
    assert.deepEqual(back.problems, []);
    assert.deepEqual(
      back.runs[0]!.rows.map((r) => r.url),
      ['https://a.example/mcp', 'https://b.example/mcp'],
    );
  });

  it('a long row is bounded; a short one beside it keeps every value', () => {
    const small = row('S');
    const line = parse(
      aborted([
        row('A', { tools: bigList }, { toolChanges: { added: ['n'], removed: [], changed: ['c', 'd'] } }),
        small,
      ]),
    );
    assert.ok(bytes(JSON.stringify(line)) <= L);
    const [a, s] = line.plan as [J, J];
    assert.deepEqual(
      [a.bounded, a.tools, a.toolCount, a.toolChanges, a.toolChangesCount],
      [true, null, 10_000, null, { added: 1, removed: 0, changed: 2 }],
    );
    const { previous: _p, changed: _c, run: _r, ...fields } = small;
    const { bounded: _b, ...rest } = s;
    assert.deepEqual(rest, JSON.parse(JSON.stringify({ ...fields, observedAt: AT1 })), 'the short row loses nothing');
  });

  it('when the bounded rows still do not fit, the first rows that fit are kept and planRows counts them all', () => {
    const rows = many(120, (i) => row(`R${i}`, { tools, error: `${i} ${'e'.repeat(1_200)}` }));
    const warnings = many(20, (i) => `${i} ${'w'.repeat(990)}`);
    const text = aborted(rows, { warnings });
    assert.ok(bytes(text.trimEnd()) <= L, `${bytes(text)} bytes`);
    const line = parse(text);
    assert.deepEqual([line.bounded, line.planRows, line.observations], [true, 120, 0]);
    const kept = line.plan as J[];
    assert.ok(kept.length > 0 && kept.length < 120, `${kept.length} rows kept`);
    assert.deepEqual(
      kept.map((r) => r.url),
      rows.slice(0, kept.length).map((r) => r.url),
      'the first rows, in order',
    );
    const back = parseHistory(text);
    assert.deepEqual(back.problems, []);
    assert.equal(back.runs[0]!.rows.length, kept.length);
    assert.equal(back.runs[0]!.run.summary.total, 120, 'the summary still counts them all');
  });

  it('rows are kept only while the whole line stays within the bound, even when they end a few bytes short of it', () => {
    const rows = many(120, (i) => row(`R${String(i).padStart(3, '0')}`, { tools, error: 'e'.repeat(600) }));
    const make = (pad: number) => aborted(rows, { aborted: `down ${'x'.repeat(pad)}` }).trimEnd();
    const probe = make(100);
    const plan = parse(probe).plan as J[];
    const b = bytes(JSON.stringify(plan[0]));
    assert.ok(
      plan.every((r) => bytes(JSON.stringify(r)) === b),
      'bounded rows of one size',
    );
    const head = bytes(probe) - plan.length * (b + 1) + 1; // the line without its rows; one more byte per `x`
    // Hostile sizes: the head grown so that whole rows end exactly at, or a few bytes past, the bound plus a margin.
    for (const slack of [16, 8, 1]) {
      const pad = 100 + ((L - head + slack) % (b + 1));
      const line = make(pad);
      assert.ok(bytes(line) <= L, `${bytes(line)} bytes with ${pad}`);
      assert.ok((parse(line).plan as J[]).length >= plan.length - 2);
    }
  });

  it("an aborted run's rows may refer to a list written in full elsewhere in the file; their spans lie within the run line", () => {
    const first = runLines(recordedRun(AT1, [row('A', { tools })]));
    const ref = parse(split(runLines(recordedRun(AT2, [row('A', { tools })]), parseHistory(first).tools))[1]!)
      .tools as string;
    assert.match(ref, /^#[0-9a-f]{16}$/);
    const line = parse(
      runLines(recordedRun(AT2, [row('A', { tools }), row('B')], { aborted: 'down', applied: false })),
    );
    line.plan[0].tools = ref;
    const text = `${first}${JSON.stringify(line)}\n`;
    const parsed = parseHistory(text);
    assert.deepEqual(parsed.problems, []);
    const run = parsed.runs[1]!;
    assert.deepEqual(
      run.rows.map((r) => r.tools),
      [tools, null],
    );
    assert.deepEqual(run.bytes, [bytes(first), bytes(text)]);
    assert.ok(run.spans.length === 2 && run.spans.every(([s, e]) => s >= run.bytes[0] && e <= run.bytes[1] && s <= e));
  });
});

describe('reading: what is kept, what is skipped and why', () => {
  it('blank and whitespace-only lines are nothing: no problem, and an append keeps them', () => {
    const text = `\n${runLine}\n   \n${obsA}\n\n${obsB}\n\n`;
    const parsed = parseHistory(text);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(
      parsed.runs[0]!.rows.map((r) => r.url),
      ['https://a.example/mcp', 'https://b.example/mcp'],
    );
    assert.equal(parsed.wholeBytes, bytes(text));
    const torn = parseHistory(`${good}${runLine}\n${obsA}\n\n`);
    assert.equal(torn.wholeBytes, bytes(good), 'a blank line inside a torn run goes with it');
  });

  it('a "null" line is not a history line, and rowAt says null for it', () => {
    const parsed = parseHistory(`null\n${good}`);
    assert.deepEqual(parsed.problems, [{ line: 1, problem: 'not a history line (not a JSON object)' }]);
    assert.equal(parsed.runs.length, 1);
    const run = recordedRun(AT1, [row('A', { tools })]).run;
    assert.equal(rowAt(Buffer.from('null'), run, new Map()), null);
    assert.equal(
      rowAt(Buffer.from(JSON.stringify({ ...parse(obsA), v: 3 })), run, new Map()),
      null,
      'a line of another version does not read as a row',
    );
    assert.equal(rowAt(Buffer.from(JSON.stringify({ ...parse(obsA), type: 7 })), run, new Map()), null);
    assert.deepEqual(rowAt(Buffer.from(obsA), run, new Map())!.tools, tools);
  });

  it('only a number above 2 is a newer version; anything else without "v":1 or "v":2 is not a history line', () => {
    const cases: Array<[unknown, string]> = [
      ['3', 'not a history line (no "v":1 or "v":2)'],
      ['2', 'not a history line (no "v":1 or "v":2)'],
      [0, 'not a history line (no "v":1 or "v":2)'],
      [3.5, 'a line of version 3, newer than this onetap reads (2)'],
    ];
    for (const [v, problem] of cases)
      assert.deepEqual(
        parseHistory(`${JSON.stringify({ ...parse(runLine), v })}\n${good}`).problems,
        [{ line: 1, problem }],
        JSON.stringify(v),
      );
  });

  it("a line of another type inside a run is skipped alone and is not one of the run's observations", () => {
    const parsed = parseHistory(`${runLine}\n${JSON.stringify({ v: 2, type: 'note', run: AT1 })}\n${obsA}\n${obsB}\n`);
    assert.deepEqual(parsed.problems, [
      { line: 2, problem: 'not a history line (its "type" is neither run nor observation)' },
    ]);
    assert.deepEqual(
      parsed.runs[0]!.rows.map((r) => r.url),
      ['https://a.example/mcp', 'https://b.example/mcp'],
    );
  });

  it('an observation line of version 1 in a run of version 2 is skipped, and still counts towards the run', () => {
    const v1 = {
      ...JSON.parse(
        readFileSync(new URL('../../../test/fixtures/history-v1.jsonl', import.meta.url), 'utf8').split('\n')[1]!,
      ),
      at: AT1,
    };
    const parsed = parseHistory(`${runLine}\n${JSON.stringify(v1)}\n${obsB}\n${later}`);
    assert.deepEqual(parsed.problems, [
      { line: 2, problem: 'observation line: a line of version 1 in a run of version 2 (the observation is skipped)' },
    ]);
    assert.deepEqual(
      parsed.runs.map((r) => r.rows.map((x) => x.url)),
      [['https://b.example/mcp'], ['https://c.example/mcp']],
    );
    assert.equal(parsed.skipped, 1);
  });

  it('skipped counts the lines left out: a bad observation line, a torn run (run line and lines), a bad run at the end', () => {
    const badObs = JSON.stringify({ ...parse(obsB), verdict: 'gone' });
    assert.equal(parseHistory(`${runLine}\n${obsA}\n${badObs}\n`).skipped, 1);
    const torn = parseHistory(`${runLine}\n${obsA}\n${later}`);
    assert.deepEqual([torn.skipped, torn.runs.length], [2, 1]);
    const tornAtEnd = parseHistory(`${later}${runLine}\n${obsA}\n`);
    assert.deepEqual(tornAtEnd.problems, [
      { line: 3, problem: 'run incomplete: 1 of 2 observation lines (the run is skipped)' },
    ]);
    assert.equal(tornAtEnd.skipped, 2);
    const badAtEnd = parseHistory(`${later}${badRun({})}\n${obsA}\n`);
    assert.deepEqual(
      [badAtEnd.skipped, badAtEnd.problems.length, badAtEnd.wholeBytes],
      [2, 1, bytes(`${later}${badRun({})}\n${obsA}\n`)],
    );
  });

  it('what an append may keep: every whole line, but not a torn run nor what follows inside it', () => {
    const stray = `${good}not json\n`;
    assert.equal(parseHistory(stray).wholeBytes, bytes(stray));
    assert.equal(parseHistory(`${good}${runLine}\n${obsA}\nnot json\n`).wholeBytes, bytes(good));
    const badOnly = `${good}${badRun({})}\n`;
    assert.equal(parseHistory(badOnly).wholeBytes, bytes(badOnly), "a bad run's lines are whole lines: never cut");
  });

  describe('a bad run line skips its run: the lines it announced, and no more', () => {
    const problemsOf = (text: string) => parseHistory(text).problems.map((p) => [p.line, p.problem.replace(/:.*/, '')]);
    const RUN = [1, 'run line'];
    const OUTSIDE = 'observation line outside a run (no run line of its run before it)';

    it('its N observation lines are its own, then the next run is read', () => {
      const parsed = parseHistory(`${badRun({})}\n${obsA}\n${obsB}\n${later}`);
      assert.deepEqual(parsed.problems, [
        { line: 1, problem: 'run line: applied: expected true or false (its run is skipped)' },
      ]);
      assert.deepEqual([parsed.runs.map((r) => r.run.id), parsed.skipped], [[AT2], 3]);
    });

    it('a line beyond its N is outside any run; N = 0 means no line is its own', () => {
      assert.deepEqual(problemsOf(`${badRun({ observations: 1 })}\n${obsA}\n${obsB}\n`), [RUN, [3, OUTSIDE]]);
      assert.deepEqual(problemsOf(`${badRun({ observations: 0 })}\n${obsA}\n`), [RUN, [2, OUTSIDE]]);
    });

    it('an observation line of another run is not its own', () => {
      assert.deepEqual(problemsOf(`${badRun({})}\n${obsOf('another run')}\n`), [RUN, [2, OUTSIDE]]);
    });

    it('a stray line inside it does not end it', () => {
      assert.deepEqual(problemsOf(`${badRun({})}\nnot json\n${obsA}\n${obsB}\n${later}`), [RUN, [2, 'not JSON']]);
      assert.deepEqual(
        problemsOf(`${badRun({})}\n${JSON.stringify({ v: 2, type: 'note' })}\n${obsA}\n${obsB}\n${later}`),
        [RUN, [2, 'not a history line (its "type" is neither run nor observation)']],
      );
    });

    it('without a readable count (not a whole number >= 0) it ends at the first line that is not its own', () => {
      for (const observations of [-1, 'two', 1.5]) {
        assert.deepEqual(
          problemsOf(`${badRun({ observations })}\n${obsA}\n${obsB}\n${later}`),
          [RUN],
          `observations ${JSON.stringify(observations)}`,
        );
        const text = `${badRun({ observations })}\n${obsA}\n${JSON.stringify({ v: 2, type: 'note' })}\n`;
        assert.equal(
          parseHistory(text).wholeBytes,
          bytes(text),
          'its lines and the stray line after it are whole lines',
        );
      }
    });

    it('without a readable id, the observation lines that follow are its own, whatever run they name', () => {
      assert.deepEqual(problemsOf(`${badRun({ id: 5 })}\n${obsOf('x')}\n${obsOf('y')}\n${later}`), [RUN]);
      assert.deepEqual(
        problemsOf(`${badRun({ id: 5, observations: 'two' })}\n${obsOf('x')}\n${obsOf('y')}\n${later}`),
        [RUN],
      );
    });

    it('a line nested deeper than the format is a bad run line, even in a field the format does not have', () => {
      let deep: unknown = 'x';
      for (let i = 0; i < 40; i++) deep = { deep };
      const parsed = parseHistory(`${JSON.stringify({ ...parse(runLine), extra: deep })}\n${obsA}\n${obsB}\n${later}`);
      assert.deepEqual(parsed.problems, [
        { line: 1, problem: 'run line: nested deeper than 16 levels (its run is skipped)' },
      ]);
      assert.deepEqual(
        parsed.runs.map((r) => r.run.id),
        [AT2],
      );
    });

    it('"plan" belongs to an aborted run only', () => {
      const parsed = parseHistory(`${JSON.stringify({ ...parse(runLine), observations: 0, plan: [] })}\n${later}`);
      assert.deepEqual(parsed.problems, [
        { line: 1, problem: 'run line: plan: expected only on an aborted run (its run is skipped)' },
      ]);
    });
  });

  it('the tool lists of a file are the lists written in full in its whole runs, and nothing else', () => {
    const known = new Map<string, string[]>();
    const text =
      runLines(recordedRun(AT1, [row('A', { tools }), row('B'), row('E', { tools: [] })]), known) +
      runLines(recordedRun(AT2, [row('A', { tools })]), known);
    const parsed = parseHistory(text);
    assert.ok(
      [...parsed.tools.values()].every((l) => Array.isArray(l) && l.join() === tools.join()),
      JSON.stringify([...parsed.tools.values()]),
    );
    assert.ok(parsed.tools.size > 0);
  });

  it("a run read again from its own bytes, with the file's lists, is the run it was", () => {
    const known = new Map<string, string[]>();
    const first = runLines(recordedRun(AT1, [row('A', { tools })]), known);
    const text = first + runLines(recordedRun(AT2, [row('A', { tools }), row('B')]), known);
    const whole = parseHistory(text);
    const run = whole.runs[1]!;
    assert.deepEqual(run.bytes, [bytes(first), bytes(text)]);
    assert.equal(run.line, 3);
    const again = parseHistory(Buffer.from(text).subarray(run.bytes[0], run.bytes[1]), whole.tools).runs[0]!;
    assert.deepEqual(again.rows, run.rows);
    assert.deepEqual(again.rows[0]!.tools, tools, "a reference resolves through the file's lists");
    assert.deepEqual(
      parseHistory(Buffer.from(text).subarray(run.bytes[0], run.bytes[1])).runs[0]!.rows[0]!.tools,
      null,
      'without them it is no list',
    );
  });
});

describe('reading: lines longer than the read limit', () => {
  const R = HISTORY_LIMITS.readLineBytes;
  const tooLong = (n: number) => `${n} bytes, more than the ${R} a line may have (not read)`;

  it('a line of exactly the limit is read; one byte more is not, and the problem says how long it is', () => {
    const make = (k: number) => JSON.stringify({ ...parse(obsA), error: 'x'.repeat(k) });
    const exact = sized(make, R);
    const read = parseHistory(`${runLine}\n${exact}\n${obsB}\n`);
    assert.deepEqual(read.problems, []);
    assert.equal(read.runs[0]!.rows.length, 2);
    const over = sized(make, R + 1);
    // Another run before it (of its own id: a run id is recorded once).
    const skipped = parseHistory(
      `${runLines(recordedRun(AT2, [row('A', { tools }), row('B')]))}${runLine}\n${over}\n${obsB}\n`,
    );
    assert.deepEqual(skipped.problems, [
      { line: 5, problem: `observation line: ${tooLong(R + 1)} (the observation is skipped)` },
    ]);
    assert.deepEqual(
      skipped.runs.map((r) => r.rows.length),
      [2, 1],
    );
  });

  it("a long line that does not start as a history line is a stray line, even inside a run or with a history line's start further in", () => {
    const junk = `x${'y'.repeat(R + 10)}`;
    const disguised = `[${JSON.stringify({ ...parse(obsA), error: 'x'.repeat(R) })}]`;
    for (const long of [junk, disguised]) {
      const parsed = parseHistory(`${runLine}\n${long}\n${obsA}\n${obsB}\n`);
      assert.deepEqual(parsed.problems, [{ line: 2, problem: `line: ${tooLong(bytes(long))}` }]);
      assert.deepEqual(
        parsed.runs[0]!.rows.map((r) => r.url),
        ['https://a.example/mcp', 'https://b.example/mcp'],
      );
    }
    assert.deepEqual(parseHistory(`${junk}\n${good}`).runs.length, 1);
  });

  it('a long run line ends the run before it, which is then incomplete', () => {
    const longRun = JSON.stringify({ ...parse(runLine), id: AT2, catalog: 'c'.repeat(R) });
    const parsed = parseHistory(`${runLine}\n${obsA}\n${longRun}\n${later}`);
    assert.deepEqual(
      parsed.problems.map((p) => p.line),
      [1, 3],
    );
    assert.equal(parsed.problems[0]!.problem, 'run incomplete: 1 of 2 observation lines (the run is skipped)');
    assert.match(
      parsed.problems[1]!.problem,
      /^run line: \d+ bytes, more than the 147456 a line may have \(not read\) \(its run is skipped\)$/,
    );
    assert.deepEqual(
      parsed.runs.map((r) => r.run.id),
      [AT2],
    );
  });

  it('a long line of 0.1 still counts towards its 0.1 run', () => {
    const v1 = readFileSync(new URL('../../../test/fixtures/history-v1.jsonl', import.meta.url), 'utf8').split('\n');
    v1[5] = JSON.stringify({ ...JSON.parse(v1[5]!), error: 'e'.repeat(R) });
    const parsed = parseHistory(v1.join('\n'));
    assert.deepEqual(parsed.problems, [
      { line: 6, problem: `observation line: ${tooLong(bytes(v1[5]!))} (the observation is skipped)` },
    ]);
    assert.deepEqual(
      parsed.runs.map((r) => r.rows.map((x) => x.name)),
      [['Context7', 'Gone'], ['Context7'], ['Context7', 'Gone']],
    );
    v1[5] = `[${v1[5]}]`; // a 0.1 line's start further in is not a 0.1 line
    const disguised = parseHistory(v1.join('\n'));
    assert.deepEqual(disguised.problems, [
      { line: 6, problem: `line: ${tooLong(bytes(v1[5]))}` },
      { line: 4, problem: 'run incomplete: 1 of 2 observation lines (the run is skipped)' },
    ]);
    assert.deepEqual(
      disguised.runs.map((r) => r.run.id),
      [AT1, AT3],
    );
  });
});

describe("0.1's lines read into today's shape", () => {
  const v1Lines = readFileSync(new URL('../../../test/fixtures/history-v1.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(parse);
  const [v1Run, v1Obs] = [v1Lines[0]!, v1Lines[1]!];
  const read = (obs: J[], run: J = {}) =>
    parseHistory(
      `${JSON.stringify({ ...v1Run, observations: obs.length, ...run })}\n${obs.map((o) => JSON.stringify(o)).join('\n')}\n`,
    );
  const one = (o: J) => {
    const parsed = read([{ ...v1Obs, ...o }]);
    assert.deepEqual(parsed.problems, []);
    return parsed.runs[0]!.rows[0]!;
  };

  it('what 0.1 did not record reads as nothing recorded; the run has no warnings', () => {
    const { findings: _f, ...bare } = v1Obs;
    const parsed = read([{ ...bare, acceptedHash: undefined, firstUse: undefined, snapshotSha256: undefined }]);
    const r = parsed.runs[0]!.rows[0]!;
    assert.deepEqual(parsed.runs[0]!.run.warnings, []);
    assert.deepEqual(
      [
        r.sessionId,
        r.quirks,
        r.excludedTools,
        r.cutShort,
        r.findings,
        r.findingsSeen,
        r.cardMismatches,
        r.toolChanges,
        r.serverInfoChanged,
        r.firstUse,
        r.heldOut,
        r.snapshotSha256,
        r.toolsChanged,
        r.identityChanged,
      ],
      [false, [], [], false, [], 0, null, null, false, false, false, null, false, false],
    );
    assert.deepEqual([r.previous, r.changed], [null, true], 'as a version-2 row reads: recomputed by the index');
    assert.equal(r.toolCount, 2, 'the count of the list it wrote');
  });

  it('what 0.1 did record is kept', () => {
    const matrix = { 'other-client': { works: true, verdict: 'live', reason: 'ok', tools: ['a'] } };
    const findings = [{ tool: 'a', field: 'description', rule: 'r', excerpt: 'e' }];
    const toolChanges = { added: ['n'], removed: [], changed: [] };
    const r = one({
      matrix,
      findings,
      findingsSeen: 4,
      cardMismatches: [{ field: 'name', card: 'x', live: 'y' }],
      toolChanges,
      serverInfoChanged: true,
      firstUse: true,
      heldOut: true,
      reasons: ['ok', 'tools-changed', 'identity-changed'],
    });
    assert.deepEqual(
      [
        r.matrix,
        r.findings,
        r.findingsSeen,
        r.cardMismatches,
        r.toolChanges,
        r.serverInfoChanged,
        r.firstUse,
        r.heldOut,
        r.toolsChanged,
        r.identityChanged,
        r.snapshotSha256,
      ],
      [
        matrix,
        findings,
        4,
        [{ field: 'name', card: 'x', live: 'y' }],
        toolChanges,
        true,
        true,
        true,
        true,
        true,
        v1Obs.snapshotSha256,
      ],
    );
  });

  it('a decision 0.1 left null is the one its verdict implies; one it wrote is kept', () => {
    const cases: Array<[string, string]> = [
      ['live', 'keep'],
      ['review', 'review'],
      ['failed', 'keep-failed'],
      ['drop', 'drop'],
    ];
    for (const [verdict, decision] of cases) assert.equal(one({ verdict, decision: null }).decision, decision, verdict);
    assert.equal(one({ verdict: 'drop', reason: 'http-404', decision: 'keep-failed' }).decision, 'keep-failed');
  });

  it('a bounded 0.1 line keeps its tool count; its extra fields must still be of the format', () => {
    assert.equal(
      one({ tools: null, bounded: true, toolCount: 7, toolChangesCount: { added: 1, removed: 0, changed: 0 } })
        .toolCount,
      7,
    );
    const bad = read([
      { ...v1Obs, tools: null, bounded: true, toolCount: 7, toolChangesCount: { added: -1, removed: 0, changed: 0 } },
    ]);
    assert.equal(bad.runs[0]!.rows.length, 0);
    assert.match(bad.problems[0]!.problem, /^observation line: toolChangesCount\.added/);
  });

  it('a tools reference is "#" and 8 or 16 hex digits, nothing around them', () => {
    for (const ref of ['x#e8aa3597', '#e8aa3597x', '#0123456789abcdefzz']) {
      const parsed = read([{ ...v1Obs, tools: ref }]);
      assert.equal(parsed.runs[0]!.rows.length, 0, ref);
      assert.match(parsed.problems[0]!.problem, /^observation line: tools: /, ref);
    }
  });

  it('an aborted 0.1 run reads with its plan rows, bounded or not; a bad plan row skips the run', () => {
    const { at: _a, matrix: _m, ...outcome } = v1Obs;
    const planRow = {
      ...outcome,
      decision: 'keep',
      previous: { verdict: 'live', reason: 'ok', at: AT1 },
      changed: false,
      dropStreak: 0,
      note: null,
    };
    const abortedRun = { aborted: 'the local network looks down', observations: 0, applied: false };
    for (const extra of [{}, { bounded: true, planRows: 3 }]) {
      const parsed = read([], {
        ...abortedRun,
        plan: [planRow, { ...planRow, url: 'https://b.example/mcp', tools: null }],
        ...extra,
      });
      assert.deepEqual(parsed.problems, [], JSON.stringify(extra));
      const rows = parsed.runs[0]!.rows;
      assert.deepEqual(
        rows.map((r) => [r.url, r.tools, r.evidence, r.observedAt]),
        [
          [v1Obs.url, v1Obs.tools, null, v1Run.startedAt],
          ['https://b.example/mcp', null, null, v1Run.startedAt],
        ],
      );
    }
    for (const bad of [
      { ...planRow, verdict: 'gone' },
      { ...planRow, previous: { verdict: 'gone' } },
    ]) {
      const parsed = read([], { ...abortedRun, plan: [bad] });
      assert.equal(parsed.runs.length, 0);
      assert.match(parsed.problems[0]!.problem, /^run line: plan\[0\]\.(verdict|previous)/);
    }
    assert.match(
      read([], { plan: [planRow] }).problems[0]!.problem,
      /^run line: plan: expected only on an aborted run/,
    );
  });

  it('a bad 0.1 run line skips its run, and its observation lines with it', () => {
    const parsed = read([v1Obs, v1Lines[2]!], { applied: 'yes' });
    assert.deepEqual(parsed.problems, [
      { line: 1, problem: 'run line: applied: expected true or false (its run is skipped)' },
    ]);
    assert.deepEqual([parsed.runs.length, parsed.skipped], [0, 3]);
    const other = read([{ ...v1Obs, at: AT3 }], { applied: 'yes' });
    assert.deepEqual(
      other.problems.map((p) => p.line),
      [1, 2],
      'an observation of another 0.1 run is not its own',
    );
  });

  it("0.1's lists resolve by their 8 hex digits, and a row gets the count of its list", () => {
    const rows = parseHistory(
      readFileSync(new URL('../../../test/fixtures/history-v1.jsonl', import.meta.url)),
    ).runs.flatMap((r) => r.rows);
    assert.deepEqual(
      rows.filter((r) => r.name === 'Context7').map((r) => r.toolCount),
      [2, 2, 2],
    );
    assert.deepEqual(
      rows.filter((r) => r.name === 'Gone').map((r) => r.decision),
      ['keep', 'keep-failed', 'drop'],
    );
  });
});

describe('snapshot files read back as untrusted input', () => {
  const workspace = () => join(mkdtempSync(join(tmpdir(), 'onetap-mutants-')), 'catalog', 'servers.json');
  const snap = storedSnapshot(
    toolListSnapshot({ name: 'docs', version: '1.0.0' }, [
      { name: 'search', description: 'Search.' },
      { name: 'fetch' },
    ]),
  );
  const format1 = {
    hash: snap.hash,
    serverInfo: snap.serverInfo,
    tools: snap.tools,
    toolsSeen: 2,
    digests: { search: 'a'.repeat(12), fetch: 'b'.repeat(12) },
  };

  it('format 1: clipped only when it says true; digests of exactly 12 hex digits, all of them, as strings', () => {
    assert.equal(parseStoredSnapshot(format1, snap.hash)!.clipped, false);
    assert.equal(parseStoredSnapshot({ ...format1, clipped: false }, snap.hash)!.clipped, false);
    assert.equal(parseStoredSnapshot({ ...format1, clipped: true }, snap.hash)!.clipped, true);
    assert.equal(parseStoredSnapshot({ ...format1, clipped: 'yes' }, snap.hash)?.clipped, false);
    for (const digests of [
      { search: `${'a'.repeat(12)}0` },
      { search: `0${'a'.repeat(12)}` },
      { search: 'a'.repeat(12), fetch: 'nothex' },
      { search: 123456789012 },
    ]) {
      assert.equal(parseStoredSnapshot({ ...format1, digests }, snap.hash), null, JSON.stringify(digests));
    }
  });

  it("digests that are neither format's are no snapshot, and never a crash", () => {
    for (const digests of [null, 5, true, 'abc'])
      assert.equal(parseStoredSnapshot({ ...snap, digests }, snap.hash), null, JSON.stringify(digests));
    assert.equal(parseStoredSnapshot({ ...format1, digests: 5 }, snap.hash), null);
  });

  it('a file without "clipped" or "format" reads as format 1, not clipped', () => {
    const { clipped: _c, format: _f, ...rest } = snap;
    const read = parseStoredSnapshot(rest, snap.hash)!;
    assert.deepEqual([read.format, read.clipped], [1, false]);
  });

  it('a hash that is not exactly 16 hex digits names no file, even when one is there', async () => {
    const catalog = workspace();
    const dir = dirname(snapshotPath(catalog, snap.hash));
    await mkdir(dir, { recursive: true });
    await writeFile(snapshotPath(catalog, snap.hash), snapshotText(snap));
    await writeFile(join(dir, '..', `${snap.hash}.json`), snapshotText(snap));
    for (const hash of [`../${snap.hash}`, `${snap.hash}/../${snap.hash}`])
      assert.deepEqual(await readSnapshot(catalog, hash), { snapshot: null, warning: null }, hash);
  });

  it('a file it cannot read, or larger than 128 MiB, counts as missing with a warning', async () => {
    const catalog = workspace();
    const path = snapshotPath(catalog, snap.hash);
    await mkdir(path, { recursive: true }); // a folder where the file should be
    assert.match((await readSnapshot(catalog, snap.hash)).warning!, /: cannot be read \(EISDIR\); treated as missing$/);
    const big = snapshotPath(catalog, 'ffffffffffffffff');
    await writeFile(big, '');
    await truncate(big, 128 * 1024 * 1024 + 1); // sparse: nothing written
    assert.deepEqual(await readSnapshot(catalog, 'ffffffffffffffff'), {
      snapshot: null,
      warning: `${big}: larger than ${128 * 1024 * 1024} bytes; treated as missing`,
    });
  });

  it('a run rewrites a snapshot file that is not JSON, even when it only plans', async () => {
    const catalog = workspace();
    await mkdir(dirname(snapshotPath(catalog, snap.hash)), { recursive: true });
    await writeFile(snapshotPath(catalog, snap.hash), '{ not json');
    assert.equal((await snapshotFiles(catalog, [snap], false)).writes.length, 1);
  });
});
