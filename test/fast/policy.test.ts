/**
 * The pure core as a specification, fast (no network): the classifier on recorded observation records
 * (test/fixtures/observations.json, one per fleet behaviour, recorded by test/fixtures/record-observations.ts), and the
 * decider and the outage guard on tables written from docs/one-tap-policy.md (shared/spec/ of the planning repository):
 * never drop on one flake, drop only after the confirm-drops streak of consecutive drop-class runs, drop nothing when
 * this machine's network is down.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { classify, evidenceSchema, type Evidence, type Reason, type VerdictName } from '../../src/index.js';
import { isNetworkLevel, NETWORK_LEVEL, networkLooksDown } from '../../src/policy/policy.js';
import { REASONS } from '../../src/model/words.js';
import { decideRow, detectOutage } from '../../src/decide/decide.js';
import { FIXTURE } from '../fixtures/record-observations.js';
import { observation, planOf } from '../helpers.js';

interface Recorded {
  scenario: string;
  entry: { requiresAuth: boolean };
  expected: string;
  evidence: Evidence;
}
const recorded = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Recorded[];

describe('classify: recorded observations → the verdict the policy gives', () => {
  it('every recorded fleet behaviour (48 records)', () => {
    assert.ok(recorded.length >= 48);
    for (const r of recorded) {
      const v = classify(evidenceSchema.parse(r.evidence), r.entry);
      assert.equal(`${v.verdict}/${v.reason}`, r.expected, r.scenario);
      assert.equal(v.reasons[0], v.reason, `${r.scenario}: reason first in reasons`);
    }
  });
  it('every verdict class is covered by the records', () => {
    assert.deepEqual([...new Set(recorded.map((r) => r.expected.split('/')[0]))].sort(), [
      'drop',
      'failed',
      'live',
      'review',
    ]);
  });
  it('an observation that could not be processed is review/unprocessable, whatever its steps say', () => {
    const ok = recorded.find((r) => r.scenario === 'ok-json')!;
    const v = classify({ ...ok.evidence, unprocessable: { stage: 'nesting', error: 'deep' } }, ok.entry);
    assert.equal(`${v.verdict}/${v.reason}`, 'review/unprocessable');
  });
  it('one screening finding on a live list is enough for review/suspicious-tools', () => {
    const ok = recorded.find((r) => r.scenario === 'ok-json')!;
    const v = classify(ok.evidence, { ...ok.entry, flagged: true });
    assert.equal(`${v.verdict}/${v.reason}`, 'review/suspicious-tools');
    assert.ok(v.reasons.includes('ok'), 'what the row would otherwise be follows');
  });
});

type Verdict = VerdictName;
/** A probed row: this run's observation and the earlier rows, newest first. */
const row = (verdict: Verdict, reason: Reason, history: Array<[Verdict, Reason]> = []) => ({
  name: 'A',
  observation: observation({ url: 'https://a.example/mcp', verdict, reason }),
  history: history.map(([v, r]) => ({ verdict: v, reason: r, observedAt: '2026-11-01T00:00:00.000Z' })),
});

describe('decideRow: verdict + history → decision', () => {
  const table: Array<[string, ReturnType<typeof row>, number, boolean, string, number]> = [
    // name, row, confirmDrops, outage, decision, dropStreak
    ['live is kept', row('live', 'ok'), 1, false, 'keep', 0],
    ['review goes to a human', row('review', 'zero-tools'), 1, false, 'review', 0],
    ['a flake is kept and marked', row('failed', 'timeout'), 1, false, 'keep-failed', 0],
    ['a drop with confirm-drops 1 drops', row('drop', 'dns'), 1, false, 'drop', 1],
    ['one drop-class run of 2 does not drop', row('drop', 'dns'), 2, false, 'keep-failed', 1],
    ['two consecutive drop-class runs drop', row('drop', 'dns', [['drop', 'refused']]), 2, false, 'drop', 2],
    [
      'a live run between two drops breaks the streak',
      row('drop', 'dns', [
        ['live', 'ok'],
        ['drop', 'dns'],
      ]),
      2,
      false,
      'keep-failed',
      1,
    ],
    [
      'a flake between two drops breaks the streak',
      row('drop', 'dns', [
        ['failed', 'timeout'],
        ['drop', 'dns'],
      ]),
      2,
      false,
      'keep-failed',
      1,
    ],
    [
      'the streak counts only consecutive runs',
      row('drop', 'http-404', [
        ['drop', 'http-404'],
        ['live', 'ok'],
        ['drop', 'http-404'],
      ]),
      3,
      false,
      'keep-failed',
      2,
    ],
    ['the outage guard drops nothing', row('drop', 'dns', [['drop', 'dns']]), 1, true, 'keep-failed', 2],
  ];
  for (const [name, r, confirmDrops, outage, decision, streak] of table) {
    it(name, () => {
      const d = decideRow(r.observation, r.history, confirmDrops, outage);
      assert.equal(d.decision, decision);
      assert.equal(d.dropStreak, streak);
      if (r.observation.verdict === 'drop' && decision !== 'drop') assert.ok(d.note, 'a drop not carried out says why');
    });
  }
});

describe('network-level failures: before any HTTP answer', () => {
  const network: Reason[] = ['dns', 'refused', 'timeout', 'network', 'tls'];
  for (const reason of REASONS) {
    const want = network.includes(reason);
    it(`${reason}: ${want ? 'network-level' : 'not network-level'}`, () => {
      assert.equal(NETWORK_LEVEL.has(reason), want);
      assert.equal(isNetworkLevel(reason), want);
    });
  }
  it('a reason read from a file that is no reason is not network-level', () =>
    assert.equal(isNetworkLevel('DNS'), false));
});

describe('networkLooksDown: at least half failing at the network level, of at least the fewest probed', () => {
  const table: Array<[failing: number, probed: number, fewest: number | undefined, down: boolean]> = [
    [0, 0, undefined, false], // nothing probed: no outage
    [1, 1, undefined, true],
    [0, 1, undefined, false],
    [1, 2, undefined, true], // exactly half
    [1, 3, undefined, false], // one short of half
    [2, 4, undefined, true],
    [19, 19, 20, false], // the census: fewer than 20 hosts never stop it
    [10, 20, 20, true],
    [9, 20, 20, false],
    [20, 20, 20, true],
    [15, 30, 20, true],
    [14, 30, 20, false],
  ];
  for (const [failing, probed, fewest, down] of table) {
    it(`${failing} of ${probed}${fewest === undefined ? '' : ` (at least ${fewest})`}: ${down ? 'down' : 'not down'}`, () =>
      assert.equal(networkLooksDown(failing, probed, fewest), down));
  }
});

describe('detectOutage: the local network, not the servers', () => {
  const rows = (reasons: Reason[]) => reasons.map((reason) => ({ reason }));
  const table: Array<[string, Reason[], { configured: number; reachable: number }, boolean]> = [
    [
      'no canaries, half the rows fail at the network level: outage',
      ['dns', 'timeout', 'ok', 'ok'],
      { configured: 0, reachable: 0 },
      true,
    ],
    ['no canaries, fewer than half: no outage', ['dns', 'ok', 'ok'], { configured: 0, reachable: 0 }, false],
    [
      "no canaries, HTTP failures are the servers', not the network",
      ['http-404', 'http-404', 'http-410'],
      { configured: 0, reachable: 0 },
      false,
    ],
    [
      'canaries decide: all unreachable is an outage, whatever the rows',
      ['ok', 'ok'],
      { configured: 2, reachable: 0 },
      true,
    ],
    [
      'canaries decide: one reachable is no outage, even if every row failed',
      ['dns', 'dns'],
      { configured: 2, reachable: 1 },
      false,
    ],
    ['an empty catalog is no outage', [], { configured: 0, reachable: 0 }, false],
  ];
  for (const [name, reasons, canaries, outage] of table) {
    it(name, () => assert.equal(detectOutage(rows(reasons), canaries) !== null, outage));
  }
  it('an outage plan decides nothing as drop', () => {
    const plan = planOf([row('drop', 'dns'), row('drop', 'refused'), row('live', 'ok')]);
    assert.ok(plan.aborted);
    assert.equal(plan.summary.drop, 0);
  });
});
