/**
 * Many vantages, one verdict, as the issue states the rules (not as the code reads them): a drop needs drop-class
 * evidence from at least the quorum of vantages and none that reached the server; reachable in some and drop-class
 * in others is review/vantage-split; reachable in some and only failed in others keeps the row with a note; fewer
 * answers than the quorum is keep-failed/vantage-incomplete, which neither extends nor resets a drop streak; a
 * vantage whose canaries fail, or where at least half (and two) of the servers others reached fail at the network
 * level, is left out; fewer vantages left than the quorum is the outage guard. One vantage: as before.
 */
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { combineVantages, majority, type VantageVerdict } from '../../src/policy/vantages.js';
import { decide, vantageOutages, type DecideInput } from '../../src/decide/decide.js';
import { rejudge } from '../../src/decide/rejudge.js';
import { parseHistory, runLines } from '../../src/store/lines.js';
import { EMPTY_LOCK } from '../../src/model/acceptance.js';
import type { Observation } from '../../src/model/observation.js';
import type { Reason, VerdictName } from '../../src/model/words.js';
import { catalogOf, observation, recordedRun, server } from '../helpers.js';
import { statusModel, vantagesLine } from '../../src/status/model.js';
import { attentionOrder, overviewPage, serverPage } from '../../src/status/page.js';
import { markdownReport } from '../../src/status/report.js';
import { lintCatalog } from '../../src/catalog/lint.js';
import { FIXTURE } from '../fixtures/record-observations.js';

/** Evidence of a live server as the prober recorded it (the recorded fleet's ok-json). */
const LIVE_EVIDENCE = (
  JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{
    scenario: string;
    evidence: NonNullable<Observation['evidence']>;
  }>
).find((r) => r.scenario === 'ok-json')!.evidence;

const ABC = ['a', 'b', 'c'];
const seen = (vantage: string, verdict: VerdictName, reason: Reason): VantageVerdict => ({ vantage, verdict, reason });
const live = (v: string) => seen(v, 'live', 'ok');
const refused = (v: string) => seen(v, 'drop', 'refused');
const timeout = (v: string) => seen(v, 'failed', 'timeout');

describe('the quorum when none is given: a majority of the vantages asked', () => {
  const rows: Array<[number, number]> = [
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [6, 4],
    [7, 4],
    [10, 6],
  ];
  for (const [vantages, quorum] of rows) {
    it(`${vantages} vantages: ${quorum}`, () => assert.equal(majority(vantages), quorum));
  }
});

describe('combineVantages: the rules of the issue, case by case', () => {
  const cases: Array<[string, VantageVerdict[], string[], number, VerdictName, Reason, RegExp | null]> = [
    ['one vantage, quorum 1: its own verdict, no note', [live('local')], ['local'], 1, 'live', 'ok', null],
    ['one vantage dead, quorum 1: drop as before', [refused('local')], ['local'], 1, 'drop', 'refused', null],
    [
      'refused in one of three: vantage-split naming each side',
      [live('a'), live('b'), refused('c')],
      ABC,
      2,
      'review',
      'vantage-split',
      /reachable from a \(live\/ok\), b \(live\/ok\); drop-class from c \(drop\/refused\)/,
    ],
    [
      'timing out in one of three: kept, with a note',
      [live('a'), timeout('b'), live('c')],
      ABC,
      2,
      'live',
      'ok',
      /failed from b \(failed\/timeout\)/,
    ],
    [
      'dead in two of three: drop',
      [refused('a'), refused('b'), live('c')].slice(0, 2).concat(timeout('c')),
      ABC,
      2,
      'drop',
      'refused',
      /drop-class from a .*, b .*; failed from c/,
    ],
    ['dead in all three: drop', [refused('a'), refused('b'), refused('c')], ABC, 2, 'drop', 'refused', null],
    [
      'dead in one, failed in two: not a drop (one is short of the quorum)',
      [refused('a'), timeout('b'), timeout('c')],
      ABC,
      2,
      'failed',
      'timeout',
      /drop-class from a \(drop\/refused\) only, the quorum is 2/,
    ],
    ['all up: live', [live('a'), live('b'), live('c')], ABC, 2, 'live', 'ok', null],
    [
      'a review in one vantage stands before live',
      [live('a'), seen('b', 'review', 'app-ua-blocked')],
      ['a', 'b'],
      2,
      'review',
      'app-ua-blocked',
      null,
    ],
    [
      'one answer of three with quorum 2: vantage-incomplete naming who is missing',
      [live('a')],
      ABC,
      2,
      'failed',
      'vantage-incomplete',
      /1 of 3 vantages answered, the quorum is 2: no answer from b, c/,
    ],
    ['no answer at all', [], ABC, 1, 'failed', 'vantage-incomplete', /0 of 3/],
  ];
  for (const [name, readings, asked, quorum, verdict, reason, note] of cases) {
    it(name, () => {
      const c = combineVantages(readings, asked, quorum);
      assert.deepEqual([c.verdict, c.reason], [verdict, reason]);
      if (note) assert.match(c.note ?? '', note);
      else assert.equal(c.note, null);
      if (readings.length) assert.ok(c.from !== null && readings[c.from] !== undefined, 'a reading stands for the row');
      else assert.equal(c.from, null);
    });
  }

  it("the standing reading is a reachable one when any is (its tools and evidence are the row's)", () => {
    const readings = [refused('a'), live('b')];
    assert.equal(readings[combineVantages(readings, ['a', 'b'], 2).from!]!.vantage, 'b');
  });
});

/** A run's input: per URL, per vantage, what each saw. */
function runInput(
  rows: Array<{
    name: string;
    seen: Array<[string, VerdictName, Reason]>;
    history?: DecideInput['rows'][number]['history'];
  }>,
  quorum: number,
  confirmDrops = 1,
  asked = ABC,
): DecideInput {
  return {
    rows: rows.map((r) => ({
      name: r.name,
      history: r.history ?? [],
      observations: r.seen.map(
        ([vantage, verdict, reason]): Observation =>
          observation({
            url: `https://${r.name}.example/mcp`,
            vantage,
            verdict,
            reason,
            reasons: [reason],
            durationMs: 40,
          }),
      ),
    })),
    lock: EMPTY_LOCK,
    snapshots: new Map(),
    confirmDrops,
    canaries: { configured: 0, reachable: 0 },
    vantages: { asked, quorum },
  };
}

describe('decide across vantages', () => {
  it('dead in two of three drops only once the confirm-drops streak completes; vantage-incomplete runs count for nothing', () => {
    const dead: Array<[string, VerdictName, Reason]> = [
      ['a', 'drop', 'refused'],
      ['b', 'drop', 'refused'],
      ['c', 'live', 'ok'],
    ].slice(0, 2) as Array<[string, VerdictName, Reason]>;
    const first = decide(runInput([{ name: 'gone', seen: [...dead, ['c', 'failed', 'timeout']] }], 2, 2));
    assert.deepEqual([first.rows[0]!.decision, first.rows[0]!.dropStreak], ['keep-failed', 1]);
    const history = [
      { verdict: 'failed' as const, reason: 'vantage-incomplete' as const, observedAt: '2026-11-29T00:00:00.000Z' },
      { verdict: 'drop' as const, reason: 'refused' as const, observedAt: '2026-11-28T00:00:00.000Z' },
    ];
    const second = decide(runInput([{ name: 'gone', seen: [...dead, ['c', 'failed', 'timeout']], history }], 2, 2));
    assert.deepEqual(
      [second.rows[0]!.decision, second.rows[0]!.dropStreak],
      ['drop', 2],
      'the incomplete run neither reset nor extended the streak',
    );
    assert.equal(second.quorum, 2);
  });

  it('plan rows list every vantage asked (one that gave no answer with a null verdict) and say why the verdict is combined', () => {
    const plan = decide(
      runInput(
        [
          {
            name: 'split',
            seen: [
              ['a', 'live', 'ok'],
              ['b', 'live', 'ok'],
              ['c', 'drop', 'refused'],
            ],
          },
          { name: 'short', seen: [['a', 'live', 'ok']] },
          {
            name: 'flaky',
            seen: [
              ['a', 'live', 'ok'],
              ['b', 'failed', 'timeout'],
              ['c', 'live', 'ok'],
            ],
          },
        ],
        2,
      ),
    );
    const [split, short, flaky] = plan.rows;
    assert.deepEqual([split!.verdict, split!.reason, split!.decision], ['review', 'vantage-split', 'review']);
    assert.deepEqual(
      split!.vantages!.map((v) => [v.vantage, v.verdict, v.reason, v.latencyMs, v.left]),
      [
        ['a', 'live', 'ok', 40, null],
        ['b', 'live', 'ok', 40, null],
        ['c', 'drop', 'refused', 40, null],
      ],
    );
    assert.match(split!.note!, /drop-class from c/);
    assert.deepEqual([short!.verdict, short!.reason, short!.decision], ['failed', 'vantage-incomplete', 'keep-failed']);
    assert.deepEqual(
      short!.vantages!.map((v) => v.verdict),
      ['live', null, null],
    );
    assert.deepEqual([flaky!.decision, flaky!.verdict], ['keep', 'live']);
    assert.match(flaky!.note!, /failed from b/);
  });

  it('a vantage where half the servers others reached fail at the network level is left out; too few left is the outage guard', () => {
    const rows = ['s1', 's2', 's3', 's4'].map((name) => ({
      name,
      seen: [
        ['a', 'live', 'ok'],
        ['b', 'live', 'ok'],
        ['c', 'failed', name === 's4' ? ('http-404' as Reason) : 'timeout'],
      ] as Array<[string, VerdictName, Reason]>,
    }));
    rows.push({
      name: 'dead',
      seen: [
        ['a', 'drop', 'refused'],
        ['b', 'drop', 'refused'],
        ['c', 'failed', 'network'],
      ],
    });
    const plan = decide(runInput(rows, 2));
    assert.equal(plan.aborted, null);
    assert.match(
      plan.warnings.join('\n'),
      /vantage c left out of this run: 3 of 4 servers other vantages reached failed there at the network level/,
    );
    assert.deepEqual(
      plan.rows.map((r) => r.decision),
      ['keep', 'keep', 'keep', 'keep', 'drop'],
    );
    assert.equal(plan.rows[0]!.note, null, 'a vantage left out is not a note on every row');
    assert.equal(
      plan.rows[0]!.vantages![2]!.left,
      '3 of 4 servers other vantages reached failed there at the network level',
    );
    const strict = decide(runInput(rows, 3));
    assert.match(strict.aborted ?? '', /too few vantages left to decide: 2 of 3 \(the quorum is 3\)/);
    assert.ok(
      strict.rows.every((r) => r.decision !== 'drop'),
      'the outage guard drops nothing',
    );
    // One server failing there is not an outage of the vantage (at least two must).
    assert.deepEqual(
      vantageOutages(
        [
          [
            observation({ url: 'x', vantage: 'a' }),
            observation({ url: 'x', vantage: 'c', verdict: 'failed', reason: 'dns' }),
          ],
        ],
        ABC,
      ),
      new Map(),
    );
  });

  it('a vantage whose canaries all failed is left out', () => {
    const input = runInput(
      [
        {
          name: 'one',
          seen: [
            ['a', 'live', 'ok'],
            ['b', 'live', 'ok'],
            ['c', 'drop', 'dns'],
          ],
        },
      ],
      2,
    );
    const plan = decide({
      ...input,
      vantages: {
        ...input.vantages!,
        canaries: new Map([
          ['c', { configured: 2, reachable: 0 }],
          ['a', { configured: 2, reachable: 1 }],
        ]),
      },
    });
    assert.deepEqual(
      [plan.rows[0]!.verdict, plan.rows[0]!.reason],
      ['live', 'ok'],
      "c's dns failure does not split the row",
    );
    assert.match(plan.warnings.join('\n'), /vantage c left out of this run: none of its 2 canary URL\(s\) answered/);
  });

  it('with one vantage asked, a run decides as without vantages', () => {
    const rows = [{ name: 'x', seen: [['local', 'drop', 'refused']] as Array<[string, VerdictName, Reason]> }];
    const one = decide(runInput(rows, 1, 1, ['local']));
    const plain = decide({ ...runInput(rows, 1, 1, ['local']), vantages: undefined });
    assert.deepEqual(one, plain);
    assert.equal(one.rows[0]!.vantages, undefined);
  });
});

describe('a run across vantages, recorded and judged again', () => {
  const plan = decide(
    runInput(
      [
        {
          name: 'split',
          seen: [
            ['a', 'live', 'ok'],
            ['b', 'live', 'ok'],
            ['c', 'drop', 'refused'],
          ],
        },
        { name: 'short', seen: [['b', 'live', 'ok']] },
      ],
      2,
    ),
  );

  it('history lines keep each vantage and the run its quorum', () => {
    const run = recordedRun('2026-12-01T00:00:00.000Z', plan.rows, { quorum: 2 });
    const parsed = parseHistory(runLines(run));
    assert.deepEqual(parsed.problems, []);
    assert.equal(parsed.runs[0]!.run.quorum, 2);
    assert.deepEqual(
      parsed.runs[0]!.rows.map((r) => r.vantages),
      run.rows.map((r) => r.vantages),
    );
  });

  it("rejudge combines the vantages again: unchanged rules judge the same; a row without the run's quorum is judged alone", () => {
    // The rows carry no evidence (observation() leaves it null): their standing readings were live, as this evidence
    // is.
    const withEvidence = plan.rows.map((r) => ({ ...r, evidence: LIVE_EVIDENCE }));
    const run = recordedRun('2026-12-01T00:00:00.000Z', withEvidence, { quorum: 2 });
    const same = rejudge([run], { profile: 'kai-9000', requiresAuth: () => false });
    assert.deepEqual(
      same.runs[0]!.rows.map((r) => [r.name, r.today]),
      [
        ['split', { verdict: 'review', reason: 'vantage-split' }],
        ['short', { verdict: 'failed', reason: 'vantage-incomplete' }],
      ],
    );
    assert.equal(same.differences, 0);
    const alone = rejudge([recordedRun('2026-12-01T00:00:00.000Z', withEvidence)], {
      profile: 'kai-9000',
      requiresAuth: () => false,
    });
    assert.equal(
      alone.differences,
      2,
      'without the quorum each row is its own evidence (live): a difference, as it should be',
    );
  });
});

describe('what people see of a run across vantages', () => {
  const plan = decide(
    runInput(
      [
        {
          name: 'steady',
          seen: [
            ['a', 'live', 'ok'],
            ['b', 'live', 'ok'],
            ['c', 'live', 'ok'],
          ],
        },
        {
          name: 'split',
          seen: [
            ['a', 'live', 'ok'],
            ['b', 'live', 'ok'],
            ['c', 'drop', 'refused'],
          ],
        },
        { name: 'short', seen: [['a', 'live', 'ok']] },
      ],
      2,
    ),
  );
  const run = recordedRun('2026-12-01T00:00:00.000Z', plan.rows, { quorum: 2 });
  const catalog = catalogOf(run.rows.map((r) => server(r.name, r.url)));
  const model = statusModel(
    catalog,
    (url) => {
      const last = run.rows.find((r) => r.url === url)!;
      return { points: [{ observedAt: last.observedAt, verdict: last.verdict, reason: last.reason }], last };
    },
    run,
    new Date('2026-12-01T12:00:00.000Z'),
  );

  it('the status model, the page and the report carry a line per vantage; a split row comes first', () => {
    const split = model.servers.find((s) => s.name === 'split')!;
    assert.deepEqual(
      split.vantages!.map((v) => [v.vantage, v.verdict, v.reason, v.latencyMs]),
      [
        ['a', 'live', 'ok', 40],
        ['b', 'live', 'ok', 40],
        ['c', 'drop', 'refused', 40],
      ],
    );
    assert.equal(vantagesLine(split.vantages!), 'a live/ok 40 ms · b live/ok 40 ms · c drop/refused 40 ms');
    assert.equal(
      vantagesLine(model.servers.find((s) => s.name === 'short')!.vantages!),
      'a live/ok 40 ms · b no answer · c no answer',
    );
    assert.deepEqual(
      attentionOrder(model.servers).map((s) => s.name),
      ['split', 'short', 'steady'],
    );
    const page = overviewPage(model, {});
    assert.ok(
      page.indexOf('id="server-split"') < page.indexOf('id="server-short"') && page.includes('c drop/refused 40 ms'),
      'the overview: split first, its vantages shown',
    );
    const report = markdownReport(model);
    assert.match(
      report,
      /\*\*Vantages\*\* \(what each saw\)\n\n- split: a live\/ok 40 ms · b live\/ok 40 ms · c drop\/refused 40 ms\n- steady: /,
    );
  });

  it("a server's own page has a row per vantage: verdict, latency, when; no answer said so", () => {
    const rowsOf = (name: string) => {
      const page = serverPage(model.servers.find((s) => s.name === name)!, [], '2026-12-01T12:00:00.000Z', {});
      const table = /<table id="vantages">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
      return [...table.matchAll(/<tr data-verdict="([a-z]+)"><td>([^<]*)<\/td><td>(.*?)<\/td><td>([^<]*)<\/td>/g)].map(
        (m) => [m[2], m[1], m[3]!.replace(/<[^>]+>/g, ''), m[4]],
      );
    };
    assert.deepEqual(rowsOf('split'), [
      ['a', 'live', 'live/ok', '40 ms'],
      ['b', 'live', 'live/ok', '40 ms'],
      ['c', 'drop', 'drop/refused', '40 ms'],
    ]);
    assert.deepEqual(rowsOf('short'), [
      ['a', 'live', 'live/ok', '40 ms'],
      ['b', 'none', 'no answer', '—'],
      ['c', 'none', 'no answer', '—'],
    ]);
  });
});

describe('policy.vantages and policy.quorum in the catalog', () => {
  const lint = (policy: Record<string, unknown>) =>
    lintCatalog(catalogOf([], { policy: { authOptionalHosts: [], sharedGatewayHosts: [], ...policy } }))
      .filter((p) => p.where.startsWith('policy'))
      .map((p) => `${p.where}: ${p.message}`);
  it('lint: a quorum needs vantages, at most as many as there are; names as a worker takes them, each once', () => {
    assert.deepEqual(lint({ vantages: ['a', 'b', 'c'], quorum: 2 }), []);
    assert.deepEqual(lint({ vantages: ['a', 'b'], quorum: 3 }), ['policy.quorum: 3 is more than the 2 vantages']);
    assert.deepEqual(lint({ quorum: 1 }), ['policy.quorum: only with policy.vantages']);
    assert.equal(lint({ vantages: ['a', 'A b'] }).length, 1);
    assert.equal(lint({ vantages: ['a', 'a'] }).length, 1);
    assert.equal(lint({ vantages: [] }).length, 1);
  });

  it('lint: a canary is asked as a job asks it, so an http one is never reached (loopback under --allow-http aside)', () => {
    assert.deepEqual(lint({ canaries: ['https://example.com/', 'http://example.com/'] }), [
      'policy.canaries[1]: HTTPS only (http:// is allowed with --allow-http on loopback addresses only): an http canary is never reached',
    ]);
    const loopback = catalogOf([], {
      policy: { authOptionalHosts: [], sharedGatewayHosts: [], canaries: ['http://127.0.0.1:9/'] },
    });
    assert.equal(lintCatalog(loopback).length, 1);
    assert.deepEqual(lintCatalog(loopback, { allowHttp: true }), []);
  });
});
