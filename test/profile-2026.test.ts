/**
 * The `mcp-2026-07-28` profile as a conformant client of that revision. Every expectation is written from the
 * official client (`@modelcontextprotocol/client` 2.4.0, `versionNegotiation` and `scanXMcpHeaderDeclarations`,
 * read for this), never from the prober: on -32022 it retries `server/discover` once with the first version of
 * its own that the error's `data.supported` lists, else it stops; it sends `io.modelcontextprotocol/clientInfo`;
 * it leaves out tools with an invalid `x-mcp-header` declaration.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../src/index.js';
import { json, startFleet, type Ctx, type Fleet } from './fleet/fleet.js';

interface Seen {
  method: string | undefined;
  header: string | undefined;
  meta: Record<string, unknown>;
}
const seen = new Map<string, Seen[]>();

const TOOLS = [
  {
    name: 'valid_tool',
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
  },
  { name: 'plain', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'empty_name', inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': '' } } } },
  { name: 'object_type', inputSchema: { type: 'object', properties: { a: { type: 'object', 'x-mcp-header': 'A' } } } },
  { name: 'number_type', inputSchema: { type: 'object', properties: { a: { type: 'number', 'x-mcp-header': 'A' } } } },
  {
    name: 'duplicate_case',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'string', 'x-mcp-header': 'Dup' }, b: { type: 'string', 'x-mcp-header': 'dup' } },
    },
  },
  {
    name: 'space_in_name',
    inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'My Header' } } },
  },
  {
    name: 'under_items',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } },
    },
  },
  { name: 'on_root', inputSchema: { type: 'object', 'x-mcp-header': 'Root', properties: {} } },
];

/** A 2026-07-28 server; `supported` is what it lists in its -32022 to the first POST (null: no refusal). */
const modern =
  (name: string, supported: string[] | null, refuseAlways = false) =>
  (c: Ctx): void => {
    const meta = (c.msg?.params?._meta ?? {}) as Record<string, unknown>;
    const log = seen.get(name) ?? [];
    seen.set(name, log);
    log.push({ method: c.msg?.method, header: c.req.headers['mcp-protocol-version'] as string | undefined, meta });
    if (supported && (log.length === 1 || refuseAlways)) {
      json(c.res, 400, {
        jsonrpc: '2.0',
        id: c.msg?.id ?? null,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported, requested: c.req.headers['mcp-protocol-version'] },
        },
      });
      return;
    }
    if (c.msg?.method === 'server/discover') {
      json(c.res, 200, {
        jsonrpc: '2.0',
        id: c.msg.id,
        result: {
          supportedVersions: ['2026-07-28'],
          capabilities: { tools: {} },
          serverInfo: { name: 'm', version: '1' },
          resultType: 'complete',
          ttlMs: 0,
          cacheScope: 'private',
        },
      });
      return;
    }
    json(c.res, 200, {
      jsonrpc: '2.0',
      id: c.msg?.id ?? null,
      result: { tools: TOOLS, resultType: 'complete', ttlMs: 0, cacheScope: 'private' },
    });
  };

let fleet: Fleet;
before(async () => {
  fleet = await startFleet({
    'refuse-once': modern('refuse-once', ['2026-07-28']),
    'refuse-other': modern('refuse-other', ['2027-01-01', '2025-11-25']),
    'refuse-always': modern('refuse-always', ['2026-07-28'], true),
    headers: modern('headers', null),
  });
});
after(async () => {
  await fleet.close();
});

const opts = { profile: 'mcp-2026-07-28', retryDelayMs: 10 } as const;

describe('mcp-2026-07-28 as a conformant client of its revision', () => {
  it('-32022 listing a version it speaks: server/discover again with that version, then tools/list, every POST with header and _meta agreeing', async () => {
    const r = await probe(fleet.url('refuse-once'), opts);
    assert.equal(r.verdict, 'live');
    const log = seen.get('refuse-once')!;
    assert.deepEqual(
      log.map((s) => s.method),
      ['server/discover', 'server/discover', 'tools/list'],
    );
    for (const s of log) {
      assert.equal(s.header, '2026-07-28');
      assert.equal(s.meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
      assert.deepEqual(s.meta['io.modelcontextprotocol/clientInfo'], { name: 'onetap', version: '0.1.0' });
      assert.ok(
        s.meta['io.modelcontextprotocol/clientCapabilities'] &&
          typeof s.meta['io.modelcontextprotocol/clientCapabilities'] === 'object',
      );
    }
  });

  it('-32022 listing none of its versions: it stops after one request', async () => {
    const r = await probe(fleet.url('refuse-other'), opts);
    assert.notEqual(r.verdict, 'live');
    // The profile's own requests carry the 2026-07-28 _meta (the diagnosis that explains the failure does not).
    const own = seen
      .get('refuse-other')!
      .filter((s) => s.meta['io.modelcontextprotocol/protocolVersion'] !== undefined);
    assert.deepEqual(
      own.map((s) => s.method),
      ['server/discover'],
    );
    assert.match(r.error ?? '', /-32022/);
  });

  it('a second -32022: it stops (one retry only)', async () => {
    const r = await probe(fleet.url('refuse-always'), opts);
    assert.notEqual(r.verdict, 'live');
    const discovers = seen
      .get('refuse-always')!
      .filter((s) => s.method === 'server/discover' && s.header === '2026-07-28').length;
    assert.ok(discovers <= 4, `at most two discovers per attempt (two attempts), got ${discovers}`);
  });

  it('tools with an invalid x-mcp-header are left out of the count, the digest and `tools`, and named', async () => {
    const r = await probe(fleet.url('headers'), opts);
    assert.equal(`${r.verdict}/${r.reason}`, 'live/ok');
    assert.deepEqual(r.tools, ['valid_tool', 'plain']);
    assert.deepEqual(
      r.excludedTools.map((e) => e.name),
      ['empty_name', 'object_type', 'number_type', 'duplicate_case', 'space_in_name', 'under_items', 'on_root'],
    );
    assert.ok(r.quirks.includes('invalid-tool-headers'));
    assert.deepEqual(
      r.snapshot?.digests.map((d) => d.name),
      ['plain', 'valid_tool'],
      'the snapshot (and its digests) holds only what this client lists',
    );
    assert.equal(r.snapshot?.toolsSeen, 2);
  });
});
