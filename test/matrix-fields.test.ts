/**
 * `--matrix` adds the other profiles' outcomes and never changes the deciding client's fields: every field of
 * `probe --json` outside `diagnosis` and `matrix` is the same with and without it, for each deciding profile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe, probeJson } from '../src/index.js';
import { json, startFleet, TOOLS, type Ctx, type Fleet } from './fleet/fleet.js';

/**
 * Classic clients are served; a 2026-07-28 client discovers fine and then gets an error to tools/list (-32022 once
 * first, with `refuseFirst`).
 */
const classicWith2026ToolsError = (refuseFirst: boolean) => {
  let refused = false;
  return (c: Ctx): void => {
    const meta = (c.msg?.params?._meta ?? {}) as Record<string, unknown>;
    if (c.msg?.id === undefined) {
      c.res.writeHead(202);
      c.res.end();
      return;
    }
    if (meta['io.modelcontextprotocol/protocolVersion']) {
      if (refuseFirst && !refused) {
        refused = true;
        json(c.res, 400, {
          jsonrpc: '2.0',
          id: c.msg.id,
          error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } },
        });
        return;
      }
      if (c.msg.method === 'server/discover') {
        json(c.res, 200, {
          jsonrpc: '2.0',
          id: c.msg.id,
          result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete' },
        });
        return;
      }
      json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, error: { code: -32603, message: 'Internal error' } });
      return;
    }
    const result =
      c.msg.method === 'initialize'
        ? { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'classic', version: '1' } }
        : { tools: TOOLS };
    json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result });
  };
};

let fleet: Fleet;
before(async () => {
  fleet = await startFleet({ 'split-eras': classicWith2026ToolsError(false) });
});
after(async () => {
  await fleet.close();
});

const SCENARIOS = [
  'ok-json',
  'ok-sse',
  'sse-data-without-space',
  'notification-406',
  'era-2026-only',
  'unsupported-version',
  'zero-tools',
  'tools-error',
  'init-error',
  'http-404',
  'html-200',
  'redirect',
  'payment-402',
  'wrong-id',
  'json-not-rpc',
  'split-eras',
];
const PROFILES = ['kai-9000', 'mcp-2025-11-25', 'mcp-2026-07-28'];

/** Timings differ between two probes; nothing else may. */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'durationMs' && k !== 'latencyMs' && k !== 'observedAt')
        .map(([k, v]) => [k, withoutTimings(v)]),
    );
  return value;
}

const deciding = (r: ReturnType<typeof probeJson>) => {
  const { diagnosis: _d, matrix: _m, ...rest } = r as Record<string, unknown>;
  return withoutTimings(rest);
};

describe("--matrix never rewrites the deciding client's fields", () => {
  for (const profile of PROFILES) {
    it(`deciding profile ${profile}: every top-level field equal with and without --matrix`, async () => {
      for (const scenario of SCENARIOS) {
        const url = fleet.url(scenario);
        const [plain, matrix] = await Promise.all([
          probe(url, { profile, retryDelayMs: 10 }),
          probe(url, { profile, matrix: true, retryDelayMs: 10 }),
        ]);
        assert.ok(matrix.matrix, 'the matrix ran');
        assert.deepEqual(deciding(probeJson(matrix)), deciding(probeJson(plain)), `${scenario} under ${profile}`);
        if (plain.verdict !== 'live')
          assert.ok(plain.error, `${scenario} under ${profile}: a row that is not live says what went wrong`);
      }
    });
  }

  it('a -32022 the 2026-07-28 profile corrected is not what decides: the tools/list error that followed is', async () => {
    const f = await startFleet({ corrected: classicWith2026ToolsError(true) });
    try {
      const r = await probe(f.url('corrected'), { profile: 'mcp-2026-07-28', retryDelayMs: 10 });
      assert.equal(`${r.verdict}/${r.reason}`, 'review/tools-error');
      assert.match(r.error ?? '', /tools\/list/);
      assert.ok(r.quirks.includes('version-corrected'));
    } finally {
      await f.close();
    }
  });

  it('a 2026-07-28-only server decided by the 2026-07-28 profile: its own status, and no initialize error', async () => {
    const r = await probe(fleet.url('era-2026-only'), { profile: 'mcp-2026-07-28', matrix: true, retryDelayMs: 10 });
    assert.equal(`${r.verdict}/${r.reason}`, 'live/ok');
    assert.equal(r.httpStatus, 200);
    assert.equal(r.error, null);
    assert.equal(r.diagnosis?.httpStatus !== undefined, true, 'the diagnosis keeps its own status');
  });
});
