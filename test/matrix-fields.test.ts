/**
 * `--matrix` adds the other profiles' outcomes and never changes the deciding client's fields: every field of
 * `probe --json` outside `diagnosis` and `matrix` is the same with and without it, for each deciding profile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe, probeResultJson } from '../src/index.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

let fleet: Fleet;
before(async () => { fleet = await startFleet(); });
after(async () => { await fleet.close(); });

const SCENARIOS = ['ok-json', 'ok-sse', 'sse-data-without-space', 'notification-406', 'era-2026-only', 'unsupported-version', 'zero-tools', 'tools-error', 'init-error', 'http-404', 'html-200', 'redirect', 'payment-402'];
const PROFILES = ['kai-9000', 'mcp-2025-11-25', 'mcp-2026-07-28'];

/** Timings differ between two probes; nothing else may. */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'durationMs').map(([k, v]) => [k, withoutTimings(v)]));
  return value;
}

const deciding = (r: ReturnType<typeof probeResultJson>) => {
  const { diagnosis: _d, matrix: _m, ...rest } = r as Record<string, unknown>;
  return withoutTimings(rest);
};

describe('--matrix never rewrites the deciding client\'s fields', () => {
  for (const profile of PROFILES) {
    it(`deciding profile ${profile}: every top-level field equal with and without --matrix`, async () => {
      for (const scenario of SCENARIOS) {
        const url = fleet.url(scenario);
        const [plain, matrix] = await Promise.all([probe(url, { profile, retryDelayMs: 10 }), probe(url, { profile, matrix: true, retryDelayMs: 10 })]);
        assert.ok(matrix.matrix, 'the matrix ran');
        assert.deepEqual(deciding(probeResultJson(matrix)), deciding(probeResultJson(plain)), `${scenario} under ${profile}`);
      }
    });
  }

  it('a 2026-07-28-only server decided by the 2026-07-28 profile: its own status, and no initialize error', async () => {
    const r = await probe(fleet.url('era-2026-only'), { profile: 'mcp-2026-07-28', matrix: true, retryDelayMs: 10 });
    assert.equal(`${r.verdict}/${r.reason}`, 'live/ok');
    assert.equal(r.httpStatus, 200);
    assert.equal(r.error, null);
    assert.equal(r.diagnosis?.httpStatus !== undefined, true, 'the diagnosis keeps its own status');
  });
});
