/**
 * Keys for probing (issue 21 item 4): a requiresAuth entry's probeHeaders are read from the environment, the
 * keyless handshake decides the verdict, the keyed session supplies the tool list, and the key reaches no file,
 * no output and no page, even when the server echoes it in every answer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet, json, initResult, type Ctx, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

const KEY = 'k3y-Zq9vX2mP7rT4wY8uB1nC6dF0';
const keyless = [{ name: 'search', description: 'Search the web.', inputSchema: { type: 'object' } }];
const keyed = (auth: string) => [
  ...keyless,
  { name: 'read_page', description: `Reads a page for the holder of ${auth}.`, inputSchema: { type: 'object' } },
  { name: 'deep_research', description: `Long research; your key is ${auth.slice(7)}.`, inputSchema: { type: 'object' } },
];

/** A server that initializes without a key, lists more tools with one, and echoes what it was sent everywhere. */
function echoing(c: Ctx): void {
  const auth = String(c.req.headers.authorization ?? '');
  const echo = { 'x-echo': auth || 'none' };
  if (!c.msg || c.msg.id === undefined) { c.res.writeHead(202, echo); c.res.end(); return; }
  if (c.msg.method === 'initialize') return json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result: { ...initResult('echo'), instructions: `you sent ${auth}` } }, echo);
  if (c.msg.method === 'tools/list') return json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, result: { tools: auth === `Bearer ${KEY}` ? keyed(auth) : keyless } }, echo);
  json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, error: { code: -32601, message: `unknown method; you sent ${auth}` } }, echo);
}

/** Every file under dir whose bytes hold `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    if ((await readFile(p)).includes(needle)) found.push(p);
  }
  return found;
}

describe('keys for probing', () => {
  let fleet: Fleet;
  before(async () => { fleet = await startFleet({ echo: echoing }); });
  after(async () => { await fleet.close(); });

  const entry = () => server('Echo', fleet.url('echo'), { requiresAuth: true, probeHeaders: { Authorization: { env: 'ECHO_KEY', prefix: 'Bearer ' } } });
  const catalog = () => catalogOf([entry()], { policy: { authOptionalHosts: ['127.0.0.1'], sharedGatewayHosts: [] } });

  it('refresh --write records the keyed tool list; the key is in no file, output or page', async () => {
    const ws = await workspace(catalog());
    const env = { ECHO_KEY: KEY };
    const refresh = await runCli(['refresh', '--catalog', ws.catalogPath, '--write', '--allow-http', '--json'], { env });
    assert.equal(refresh.code, 0, refresh.stderr);
    const row = JSON.parse(refresh.stdout).plan[0];
    assert.equal(row.verdict, 'live');
    assert.deepEqual(row.tools, ['search', 'read_page', 'deep_research']);
    const human = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http'], { env });
    const site = await runCli(['site', '--catalog', ws.catalogPath, '--out', join(ws.dir, 'site'), '--allow-http'], { env });
    assert.equal(site.code, 0, site.stderr);
    const probe = await runCli(['probe', '--requires-auth', '--probe-header', 'Authorization: Bearer ${ECHO_KEY}', '--json', fleet.url('echo')], { env });
    assert.deepEqual(JSON.parse(probe.stdout)[0].tools, ['search', 'read_page', 'deep_research']);
    for (const r of [refresh, human, site, probe]) {
      assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), `the key was printed:\n${r.stdout}\n${r.stderr}`);
    }
    assert.deepEqual(await filesHolding(ws.dir, KEY), [], 'files under the workspace (.onetap/ and the site included)');
    const saved = JSON.parse(await readFile(ws.catalogPath, 'utf8')).servers[0];
    assert.deepEqual(saved.probeHeaders, { Authorization: { env: 'ECHO_KEY', prefix: 'Bearer ' } });
  });

  it('a missing variable: probed without the key, and the plan says so', async () => {
    const ws = await workspace(catalog());
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http'], { env: { ECHO_KEY: '' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Echo: probed without its key \(ECHO_KEY not set\)/);
    const json = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--json'], { env: { ECHO_KEY: '' } });
    assert.deepEqual(JSON.parse(json.stdout).plan[0].tools, ['search']);
  });

  it('lint refuses probeHeaders without requiresAuth, and a literal secret anywhere', async () => {
    const plain = server('Plain', 'https://plain.example/mcp', { probeHeaders: { Authorization: { env: 'K' } } });
    const literal = server('Literal', 'https://literal.example/mcp', { headers: { 'X-Client': `Bearer ${KEY}` } });
    const ws = await workspace(catalogOf([plain, literal]));
    const r = await runCli(['lint', '--catalog', ws.catalogPath]);
    assert.equal(r.code, 1);
    assert.match(r.stdout + r.stderr, /servers\[0\] \(Plain\): probeHeaders need requiresAuth: true/);
    assert.match(r.stdout + r.stderr, /servers\[1\] \(Literal\)\.headers\.X-Client: looks like a literal secret/);
    assert.ok(!(r.stdout + r.stderr).includes(KEY), 'lint does not repeat the secret');
  });

  it('probe --probe-header refuses a value without ${VARIABLE} and does not echo it', async () => {
    const r = await runCli(['probe', '--requires-auth', '--probe-header', `Authorization: Bearer ${KEY}`, fleet.url('echo')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^onetap: --probe-header: the value must end in \$\{VARIABLE\}/);
    assert.ok(!r.stderr.includes(KEY));
  });
});
