/**
 * `onetap mcp` serves both protocol eras from one endpoint: a classic client (the v1 SDK client, initialize at
 * 2025-11-25, stateless) and a 2026-07-28 client (the v2 SDK client with `versionNegotiation: {mode: 'auto'}`,
 * which opens with `server/discover`) see the same tools and the same results, over HTTP and over stdio. An unknown
 * tool is a JSON-RPC error -32602 in both eras, and an error answer to a request that had an id carries that id.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client as ClassicClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as ClassicStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as ClassicHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport, type Progress } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { REASON_TEXT } from '../src/index.js';
import { BIN, catalogOf, workspace, startMcpHttp } from './helpers.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';

type Json = Record<string, unknown>;
interface ToolView {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

let ws: { dir: string };
let fleet: Fleet;
let url = '';
const children: ChildProcess[] = [];
const closers: Array<() => Promise<unknown>> = [];

const httpServer = (args: string[]) => startMcpHttp(ws.dir, args, children);

const classic = async (transport: ClassicHttp | ClassicStdio) => {
  const client = new ClassicClient({ name: 'eras-classic', version: '1.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  return client;
};

const modern = async (transport: StreamableHTTPClientTransport | StdioClientTransport) => {
  const client = new Client({ name: 'eras-modern', version: '1.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  closers.push(() => client.close());
  return client;
};

const stdioArgs = () => ({
  command: process.execPath,
  args: [BIN, 'mcp', '--allow-private'],
  cwd: ws.dir,
  stderr: 'ignore' as const,
});

/** What a tool's contract is: everything tools/list says about it, nothing the era adds around it. */
const view = (tools: ToolView[]) =>
  tools.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
    name,
    title,
    description,
    inputSchema,
    outputSchema,
    annotations,
  }));

/** The JSON-RPC error code a rejected call carries (v1 McpError and v2 ProtocolError both have `code`). */
async function errorCode(call: Promise<unknown>): Promise<number | string> {
  try {
    await call;
  } catch (err) {
    return (err as { code?: number }).code ?? String(err);
  }
  return 'resolved';
}

async function rawPost(headers: Record<string, string>, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: JSON.parse(await res.text()) as Json };
}

const envelope = (version: string) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});

before(async () => {
  fleet = await startFleet({
    slow: (c) => {
      setTimeout(() => answer(c), 700);
    },
  });
  ws = await workspace(catalogOf([]));
  url = await httpServer(['--allow-private']);
});

after(async () => {
  await Promise.all(closers.map((c) => c().catch(() => {})));
  for (const c of children) c.kill();
  await fleet.close();
});

describe('one --http endpoint, both eras', () => {
  let v1: ClassicClient;
  let v2: Client;
  before(async () => {
    v1 = await classic(new ClassicHttp(new URL(url)));
    v2 = await modern(new StreamableHTTPClientTransport(new URL(url)));
  });

  it('the classic client initializes at 2025-11-25; the v2 client negotiates 2026-07-28 through server/discover', () => {
    assert.equal((v1.transport as ClassicHttp).protocolVersion, '2025-11-25');
    assert.equal(v1.getServerVersion()?.name, 'onetap');
    assert.equal(v2.getProtocolEra(), 'modern');
    assert.equal(v2.getNegotiatedProtocolVersion(), '2026-07-28');
  });

  it('both list the same five tools, schemas and annotations unchanged', async () => {
    const a = view((await v1.listTools()).tools as ToolView[]);
    const b = view((await v2.listTools()).tools as ToolView[]);
    assert.deepEqual(
      a.map((t) => t.name),
      ['probe', 'lint', 'plan_refresh', 'discover', 'explain'],
    );
    assert.deepEqual(b, a);
  });

  it('tools/call explain: the same structuredContent and text under both', async () => {
    const a = await v1.callTool({ name: 'explain', arguments: { reason: 'drop/auth-required' } });
    const b = await v2.callTool({ name: 'explain', arguments: { reason: 'drop/auth-required' } });
    assert.equal((a.structuredContent as Json).meaning, REASON_TEXT['auth-required']);
    assert.deepEqual(b.structuredContent, a.structuredContent);
    assert.deepEqual(b.content, a.content);
    // Bad arguments stay a tool error (isError), in both eras.
    const bad = await v2.callTool({ name: 'explain', arguments: { reason: 'gremlins' } });
    assert.equal(bad.isError, true);
    assert.deepEqual(bad.content, (await v1.callTool({ name: 'explain', arguments: { reason: 'gremlins' } })).content);
  });

  it('an unknown tool is JSON-RPC error -32602 under both', async () => {
    assert.equal(await errorCode(v1.callTool({ name: 'nope', arguments: {} })), -32602);
    assert.equal(await errorCode(v2.callTool({ name: 'nope', arguments: {} })), -32602);
  });

  it('2026-07-28: progress arrives on the response stream before the result', async () => {
    const progress: Progress[] = [];
    const r = await v2.callTool(
      { name: 'probe', arguments: { urls: [fleet.url('ok-json'), fleet.url('slow')] } },
      { onprogress: (p) => progress.push(p) },
    );
    assert.deepEqual(
      (r.structuredContent as { results: Json[] }).results.map((x) => x.verdict),
      ['live', 'live'],
    );
    assert.deepEqual(progress[0], { progress: 1, total: 2, message: `1/2 probed; ${fleet.url('ok-json')}: live/ok` });
  });
});

describe('stdio, both eras', () => {
  it('the classic client and the v2 client (server/discover first) list the same tools and get the same explain', async () => {
    const v1 = await classic(new ClassicStdio(stdioArgs()));
    const v2 = await modern(new StdioClientTransport(stdioArgs()));
    assert.equal(v2.getProtocolEra(), 'modern');
    assert.equal(v2.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.deepEqual(
      view((await v2.listTools()).tools as ToolView[]),
      view((await v1.listTools()).tools as ToolView[]),
    );
    const a = await v1.callTool({ name: 'explain', arguments: { reason: 'ok' } });
    const b = await v2.callTool({ name: 'explain', arguments: { reason: 'ok' } });
    assert.deepEqual(b.structuredContent, a.structuredContent);
    assert.equal(await errorCode(v1.callTool({ name: 'nope', arguments: {} })), -32602);
    assert.equal(await errorCode(v2.callTool({ name: 'nope', arguments: {} })), -32602);
  });
});

/** Raw lines to `onetap mcp` over stdio; the answers, one JSON-RPC message a line, once stdin has ended. */
function stdioExchange(messages: unknown[]): Promise<Json[]> {
  const child = spawn(process.execPath, [BIN, 'mcp'], { cwd: ws.dir, stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stdin!.end(messages.map((m) => JSON.stringify(m) + '\n').join(''));
  return new Promise((resolve) =>
    child.once('close', () =>
      resolve(
        out
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Json),
      ),
    ),
  );
}

describe("errors on the wire carry the request's id", () => {
  it('stdio: a 2026-07-28 opening naming another version is -32022 with the id; classic and modern unknown tools -32602 with theirs', async () => {
    const [wrong] = await stdioExchange([
      { jsonrpc: '2.0', id: 's1', method: 'tools/list', params: { _meta: envelope('2099-01-01') } },
    ]);
    assert.equal((wrong!.error as Json).code, -32022);
    assert.equal(wrong!.id, 's1');
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const classicAnswers = await stdioExchange([
      init,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope', arguments: {} } },
    ]);
    assert.deepEqual(
      classicAnswers.map((a) => [a.id, (a.error as Json | undefined)?.code]),
      [
        [1, undefined],
        [2, -32602],
      ],
    );
    const modernAnswers = await stdioExchange([
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope('2026-07-28') } },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'nope', arguments: {}, _meta: envelope('2026-07-28') },
      },
    ]);
    assert.deepEqual((modernAnswers[0]!.result as Json).supportedVersions, ['2026-07-28']);
    assert.deepEqual(
      modernAnswers.map((a) => [a.id, (a.error as Json | undefined)?.code]),
      [
        [1, undefined],
        [2, -32602],
      ],
    );
  });

  it("a 2026-07-28 request naming another version: 400, -32022 with the supported list and the request's id", async () => {
    for (const id of [7, 'req-7']) {
      const r = await rawPost(
        { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
        { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: envelope('2099-01-01') } },
      );
      assert.equal(r.status, 400);
      assert.equal((r.body.error as Json).code, -32022);
      assert.deepEqual(((r.body.error as Json).data as Json).supported, ['2026-07-28']);
      assert.equal(r.body.id, id);
    }
  });

  it("a classic request with an unsupported MCP-Protocol-Version header: the request's id, not null", async () => {
    const r = await rawPost(
      { 'mcp-protocol-version': '1999-01-01' },
      { jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} },
    );
    assert.equal(r.status, 400);
    assert.equal(r.body.id, 8);
  });

  it('a raw 2026-07-28 unknown tool: -32602 with the id', async () => {
    const r = await rawPost(
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'nope' },
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'nope', arguments: {}, _meta: envelope('2026-07-28') },
      },
    );
    assert.equal((r.body.error as Json).code, -32602);
    assert.equal(r.body.id, 9);
  });

  it('answers given before the body is read (403, 404, 405) and to unparsable JSON have no id at all, never null', async () => {
    const port = new URL(url).port;
    const answers = [
      await fetch(url, {
        method: 'POST',
        headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
        body: '{}',
      }),
      await fetch(url.replace('/mcp', '/other'), { method: 'POST', body: '{}' }),
      await fetch(url, { method: 'GET' }),
      await fetch(url, { method: 'DELETE' }),
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{"jsonrpc":',
      }),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [403, 404, 405, 405, 400],
      port,
    );
    for (const a of answers) {
      const body = (await a.json()) as Json;
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(typeof (body.error as Json).code, 'number');
      assert.ok(!('id' in body), JSON.stringify(body));
    }
  });
});
