/**
 * What the prober does with screening: a list whose only problem is one finding holds the server for review, and
 * the live tool list of the npm server the interop tests start is screened with no finding. (The corpus itself:
 * test/fast/screen-fresh.test.ts.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { probe } from '../src/index.js';
import { screenTools, SCREEN_RULES, type Finding, type ToolSnapshot } from '../src/screen/screen.js';
import { serverEverything } from './interop/servers.js';
import { startFleet, json, type Ctx, type Fleet } from './fleet/fleet.js';

const corpus = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../test/screen/${name}`, import.meta.url), 'utf8'));
const poisoned: Array<{ tool: ToolSnapshot }> = corpus('fresh/poisoned.json').cases;
const honest: ToolSnapshot[] = corpus('fresh/honest.json').tools;
const show = (fs: Finding[]) => fs.map((f) => `${f.tool} ${f.field} ${f.rule}: ${f.excerpt}`).join('\n');

describe('a finding holds the server for review', () => {
  const served: { tools: ToolSnapshot[] } = { tools: [] };
  const handler = (c: Ctx): void => {
    if (!c.msg || c.msg.id === undefined) {
      c.res.writeHead(202);
      c.res.end();
      return;
    }
    const result =
      c.msg.method === 'initialize'
        ? {
            protocolVersion: '2024-11-05',
            capabilities: { tools: {} },
            serverInfo: { name: 'fresh', version: '1.0.0' },
          }
        : { tools: served.tools };
    json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result });
  };
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ fresh: handler });
  });
  after(async () => {
    await fleet.close();
  });

  it('a list whose only problem is one finding is review/suspicious-tools; every finding the prober adds is documented', async () => {
    const one = poisoned.find((c) => c.tool.name === 'create_task')!.tool; // one finding: "no need to bring it up"
    assert.equal(screenTools([one]).length, 1);
    served.tools = [...honest.slice(0, 8), one];
    const r = await probe(fleet.url('fresh'), { retryDelayMs: 10 });
    assert.equal(`${r.verdict}/${r.reason}`, 'review/suspicious-tools');
    assert.deepEqual(
      r.findings.map((f) => [f.tool, f.rule]),
      [['create_task', 'conceal-from-user']],
    );

    served.tools = honest.slice(0, 8);
    const clean = await probe(fleet.url('fresh'), { retryDelayMs: 10 });
    assert.equal(`${clean.verdict}/${clean.reason}`, 'live/ok');

    // A name served twice: whatever the prober reports, its rule id is one the documentation lists.
    served.tools = [...honest.slice(0, 2), { ...honest[0]!, description: 'Another text under the same name.' }];
    const twice = await probe(fleet.url('fresh'), { retryDelayMs: 10 });
    assert.ok(
      twice.findings.some((f) => f.rule === 'duplicate-name'),
      JSON.stringify(twice.findings),
    );
    const documented = new Set(SCREEN_RULES.map((d) => d.id));
    for (const f of twice.findings) assert.ok(documented.has(f.rule), `${f.rule} is documented`);
  });
});

describe('the live tool list of @modelcontextprotocol/server-everything (the npm server the interop tests start)', () => {
  it('is screened with no finding', async (t) => {
    const server = await serverEverything();
    const client = new Client({ name: 'onetap-screen-test', version: '1.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const tools: ToolSnapshot[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        tools.push(...(page.tools as ToolSnapshot[]));
        cursor = page.nextCursor;
      } while (cursor);
      t.diagnostic(`server-everything: ${tools.length} tools screened`);
      assert.ok(tools.length >= 10);
      const findings = screenTools(tools);
      assert.deepEqual(findings, [], show(findings));
    } finally {
      await client.close().catch(() => {});
      await server.close();
    }
  });
});
