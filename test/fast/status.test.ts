/**
 * The status model (fast, pure): uptime counts usable observations (live, or in review only for what its tools say:
 * the deciding client listed them; an app-* review, failed and drop are not usable), a day's
 * bar is the worst verdict of the day, the latest row gives the details, and an unknown word colours nothing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { VerdictPoint } from '../../src/model/plan.js';
import { dayBars, statusModel } from '../../src/status/model.js';
import { catalogOf, recordedRow, server } from '../helpers.js';

const NOW = new Date('2026-11-30T12:00:00.000Z');
const day = (d: number, hour = 6) => new Date(Date.UTC(2026, 10, 30 - d, hour)).toISOString();
const REASON = { live: 'ok', review: 'app-incompatible', failed: 'timeout', drop: 'http-404' } as const;
const point = (
  d: number,
  verdict: VerdictPoint['verdict'],
  hour?: number,
  reason: VerdictPoint['reason'] = REASON[verdict],
): VerdictPoint => ({ observedAt: day(d, hour), verdict, reason });

describe('status model', () => {
  it('uptime is the share of usable observations: an app review, failed and drop are not usable', () => {
    const points = [point(3, 'live'), point(2, 'review'), point(1, 'failed'), point(0, 'drop')];
    const catalog = catalogOf([server('A', 'https://a.example/mcp')]);
    const last = recordedRow('A', {
      url: 'https://a.example/mcp',
      verdict: 'drop',
      reason: 'http-404',
      observedAt: day(0),
    });
    const [a] = statusModel(catalog, () => ({ points, last }), null, NOW).servers;
    assert.equal(a!.uptime30, 0.25);
    assert.equal(a!.uptime90, 0.25);
    assert.deepEqual([a!.verdict, a!.reason, a!.lastProbeAt], ['drop', 'http-404', day(0)]);
    const review = statusModel(
      catalog,
      () => ({ points: [point(1, 'review'), point(0, 'review')], last: null }),
      null,
      NOW,
    ).servers[0]!;
    assert.equal(review.uptime30, 0, 'a server in review all month was never up');
    const none = statusModel(catalog, () => ({ points: [], last: null }), null, NOW).servers[0]!;
    assert.deepEqual([none.uptime30, none.verdict, none.days30.every((b) => b.verdict === null)], [null, null, true]);
  });

  it('a server in review because its tools changed (or are flagged, or its identity) was usable: its tools were listed', () => {
    const catalog = catalogOf([server('A', 'https://a.example/mcp')]);
    const points = [
      point(4, 'review', 6, 'tools-changed'),
      point(3, 'review', 6, 'suspicious-tools'),
      point(2, 'review', 6, 'identity-changed'),
      point(1, 'review', 6, 'app-sse-format'),
      point(0, 'review', 6, 'zero-tools'),
    ];
    const [a] = statusModel(catalog, () => ({ points, last: null }), null, NOW).servers;
    assert.equal(a!.uptime30, 3 / 5);
  });

  it('uptime over 30 days leaves out what is older; over 90 it counts it', () => {
    const [a] = statusModel(
      catalogOf([server('A', 'https://a.example/mcp')]),
      () => ({ points: [point(40, 'failed'), point(0, 'live')], last: null }),
      null,
      NOW,
    ).servers;
    assert.deepEqual([a!.uptime30, a!.uptime90], [1, 0.5]);
  });

  it("a day's bar is the worst verdict that day, and counts its observations; days without one are empty", () => {
    const bars = dayBars(
      [
        point(1, 'live', 1),
        point(1, 'failed', 2),
        point(1, 'review', 3),
        point(0, 'review', 1),
        point(0, 'drop', 2),
        point(0, 'live', 3),
      ],
      3,
      NOW,
    );
    assert.deepEqual(
      bars.map((b) => [b.date, b.verdict, b.observations]),
      [
        ['2026-11-28', null, 0],
        ['2026-11-29', 'failed', 3],
        ['2026-11-30', 'drop', 3],
      ],
    );
    const odd = dayBars([{ observedAt: day(0), verdict: '<b>x</b>' as VerdictPoint['verdict'], reason: 'ok' }], 1, NOW);
    assert.deepEqual([odd[0]!.verdict, odd[0]!.observations], [null, 1], 'a word outside the policy colours nothing');
  });
});
