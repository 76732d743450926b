/**
 * Redaction over every output surface (issue 32): a loopback MCP server echoes the probe key it is sent every way
 * (the value; upper and lower case; base64 and base64url; a prefix and a middle slice; as a property name, nested
 * deep; as a tool's name, serverInfo's version and a JSON-RPC error), and no form of the key appears in any byte
 * of any output: probe --json and its table, refresh --json and its plan, the history lines, the snapshot files,
 * the lock, servers.md, log.md, the generated lists, report --json and --markdown, the site, and serve's API, its
 * pages and its log. (A worker records the same observation to the store; its log names verdicts, never text.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet, json, initResult, type Ctx, type Fleet } from './fleet/fleet.js';
import { BIN, catalogOf, runCli, server, workspace } from './helpers.js';

const KEY = 'k3y-Zq9vX2mP7rT4wY8uB1nC6dF0';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** What must never come out: the key and each form the server sends it in (base64: the key's own bytes' part). */
const NEEDLES: Array<[string, string]> = [
  ['the key', KEY],
  ['upper case', KEY.toUpperCase()],
  ['lower case', KEY.toLowerCase()],
  ['base64', b64(KEY).slice(0, 32)],
  ['base64url of x:key', b64url(`x:${KEY}`).slice(4, 36)],
  ['base64 of user:key', b64(`user:${KEY}`).slice(8, 36)],
  ['a prefix', KEY.slice(0, 12)],
  ['a middle slice', KEY.slice(9, 19)],
];

/** The keyed session's tools: the key in every form, in values and in property names, forty levels down. */
function echoedTools(k: string): unknown[] {
  let deep: Record<string, unknown> = { [`${k}_deep`]: { default: b64(k) } };
  for (let i = 0; i < 40; i++) deep = { properties: { [`level${i}`]: deep } };
  return [
    { name: 'search', description: 'Search the web.', inputSchema: { type: 'object' } },
    {
      name: 'echo',
      description:
        `value ${k}; upper ${k.toUpperCase()}; lower ${k.toLowerCase()}; base64 ${b64(k)}; base64url ` +
        `${b64url(`x:${k}`)}; basic ${b64(`user:${k}`)}; prefix ${k.slice(0, 12)}…; middle …${k.slice(9, 19)}…`,
      inputSchema: {
        type: 'object',
        properties: {
          [k]: { type: 'string' },
          [k.toUpperCase()]: { type: 'number' },
          [k.toLowerCase()]: { type: 'boolean' },
          [b64(k)]: { type: 'null' },
          nested: deep,
        },
      },
      annotations: { title: k.toLowerCase() },
    },
    { name: `tool_${k.slice(0, 12)}`, description: `middle ${k.slice(9, 19)}`, inputSchema: { type: 'object' } },
  ];
}

/**
 * Initializes without a key; with one, lists the echoing tools (`echo`) or fails tools/list quoting it (`echo-error`).
 */
const echoing =
  (failing: boolean) =>
  (c: Ctx): void => {
    const auth = String(c.req.headers.authorization ?? '');
    const k = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!c.msg || c.msg.id === undefined) {
      c.res.writeHead(202);
      c.res.end();
      return;
    }
    if (c.msg.method === 'initialize')
      return json(c.res, 200, {
        jsonrpc: '2.0',
        id: c.msg.id,
        result: {
          ...initResult(failing ? 'echo-error' : 'echo'),
          serverInfo: { name: 'echo', version: k ? `1.0-${k.slice(0, 12)}` : '1.0' },
        },
      });
    if (!k)
      return json(c.res, 200, {
        jsonrpc: '2.0',
        id: c.msg.id,
        result: { tools: [{ name: 'search', description: 'Search the web.', inputSchema: { type: 'object' } }] },
      });
    if (failing)
      return json(c.res, 200, {
        jsonrpc: '2.0',
        id: c.msg.id,
        error: { code: -32001, message: `key ${k.toUpperCase()} (${b64(k)}) is not allowed; ${k.slice(0, 12)}…` },
      });
    json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result: { tools: echoedTools(k) } });
  };

/** Each needle found in `bytes`, by name. */
const leaks = (bytes: Buffer | string) => NEEDLES.filter(([, n]) => bytes.includes(n)).map(([what]) => what);

async function filesLeaking(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    const l = leaks(await readFile(p));
    if (l.length) found.push(`${p}: ${l.join(', ')}`);
  }
  return found;
}

describe('a server that echoes the probe key every way: no output holds any form of it', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ echo: echoing(false), 'echo-error': echoing(true) });
  });
  after(async () => {
    await fleet.close();
  });

  it('probe, refresh, the history, snapshots, lock, Markdown, lists, report, site and serve', {
    timeout: 60_000,
  }, async () => {
    const probeHeaders = { Authorization: { env: 'ECHO_KEY', prefix: 'Bearer ' } };
    const ws = await workspace(
      catalogOf(
        [
          server('Echo', fleet.url('echo'), { requiresAuth: true, probeHeaders }),
          server('Echo Error', fleet.url('echo-error'), { requiresAuth: true, probeHeaders }),
        ],
        { policy: { authOptionalHosts: ['127.0.0.1'], sharedGatewayHosts: [new URL(fleet.origin).host] } },
      ),
    );
    const env = { ECHO_KEY: KEY };
    const outputs: Array<[string, string]> = [];
    const cli = async (label: string, args: string[]) => {
      const r = await runCli(args, { env });
      outputs.push([`${label} stdout`, r.stdout], [`${label} stderr`, r.stderr]);
      return r;
    };

    const written = await cli('refresh --write --json', [
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--write',
      '--allow-http',
      '--json',
    ]);
    assert.equal(written.code, 0, written.stderr);
    const [echo, failing] = JSON.parse(written.stdout).plan as Array<{ tools: string[]; redacted?: number }>;
    // The echoes happened and were redacted (a test that saw no echo would prove nothing).
    assert.deepEqual(echo!.tools, ['search', 'echo', '[redacted]'], 'tool_ and the prefix are one key-like run');
    assert.ok(echo!.redacted! >= 10, `redacted ${echo!.redacted}`);
    assert.ok(failing!.redacted! >= 1, "the keyed session's error");
    await cli('refresh (the plan)', ['refresh', '--catalog', ws.catalogPath, '--allow-http']);
    assert.match(outputs.at(-2)![1], /Echo Error: the keyed session listed no tools \(.*\[redacted\]/);
    await cli('probe --json', [
      'probe',
      '--requires-auth',
      '--probe-header',
      'Authorization: Bearer ${ECHO_KEY}',
      '--json',
      fleet.url('echo'),
      fleet.url('echo-error'),
    ]);
    await cli('probe', [
      'probe',
      '--requires-auth',
      '--probe-header',
      'Authorization: Bearer ${ECHO_KEY}',
      fleet.url('echo'),
      fleet.url('echo-error'),
    ]);
    await cli('report --json', ['report', '--json', '--catalog', ws.catalogPath]);
    await cli('report --markdown', ['report', '--markdown', '--catalog', ws.catalogPath]);
    assert.equal(
      (await cli('site', ['site', '--catalog', ws.catalogPath, '--out', join(ws.dir, 'site'), '--allow-http'])).code,
      0,
    );

    // serve: its API, its pages, and what it logs.
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--catalog', ws.catalogPath, '--allow-http'], {
      env: { ...process.env, ...env, NO_COLOR: '1' },
    });
    let log = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          log += d;
          const m = /serving (http:\/\/127\.0\.0\.1:\d+)\//.exec(log);
          if (m) resolve(m[1]!);
        });
        child.stderr.on('data', (d) => (log += d));
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${log}`)));
      });
      const model = (await (await fetch(`${url}/api/servers`)).json()) as { servers: Array<{ id: string }> };
      const paths = [
        '/',
        '/api/servers',
        '/api/refreshes/latest',
        ...model.servers.flatMap((s) => [`/servers/${s.id}`, `/api/servers/${s.id}/history`, `/badge/${s.id}.svg`]),
      ];
      for (const path of paths) {
        const res = await fetch(`${url}${path}`);
        assert.equal(res.status, 200, path);
        outputs.push([`serve ${path}`, await res.text()]);
      }
    } finally {
      child.kill();
    }
    outputs.push(['serve log', log]);

    const leaked = outputs.flatMap(([where, text]) =>
      leaks(text).length ? [`${where}: ${leaks(text).join(', ')}`] : [],
    );
    // And every file of the workspace: the catalog and lock, history/*.jsonl and history/snapshots/, servers.md,
    // log.md, the lists, the site.
    assert.deepEqual([...leaked, ...(await filesLeaking(ws.dir))], []);
    assert.ok((await readdir(join(ws.dir, 'catalog', 'history', 'snapshots'))).length > 0, 'a snapshot was written');
  });
});
