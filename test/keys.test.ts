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
import { freshSchema, postgresMissing } from './postgres.js';

const KEY = 'k3y-Zq9vX2mP7rT4wY8uB1nC6dF0';
const keyless = [{ name: 'search', description: 'Search the web.', inputSchema: { type: 'object' } }];
const keyed = (auth: string) => [
  ...keyless,
  { name: 'read_page', description: `Reads a page for the holder of ${auth}.`, inputSchema: { type: 'object' } },
  {
    name: 'deep_research',
    description: `Long research; your key is ${auth.slice(7)}.`,
    inputSchema: { type: 'object' },
  },
];

/** A server that initializes without a key, lists more tools with one, and echoes what it was sent everywhere. */
function echoing(c: Ctx): void {
  const auth = String(c.req.headers.authorization ?? '');
  const echo = { 'x-echo': auth || 'none' };
  if (!c.msg || c.msg.id === undefined) {
    c.res.writeHead(202, echo);
    c.res.end();
    return;
  }
  if (c.msg.method === 'initialize')
    return json(
      c.res,
      200,
      { jsonrpc: '2.0', id: c.msg.id, result: { ...initResult('echo'), instructions: `you sent ${auth}` } },
      echo,
    );
  if (c.msg.method === 'tools/list')
    return json(
      c.res,
      200,
      { jsonrpc: '2.0', id: c.msg.id, result: { tools: auth === `Bearer ${KEY}` ? keyed(auth) : keyless } },
      echo,
    );
  json(
    c.res,
    200,
    { jsonrpc: '2.0', id: c.msg.id, error: { code: -32601, message: `unknown method; you sent ${auth}` } },
    echo,
  );
}

/** Every header value the recording server received, in order. */
const received: string[] = [];

/** A server that records every header it is sent, then answers as a plain live server would. */
function recording(c: Ctx): void {
  for (const [name, value] of Object.entries(c.req.headers)) received.push(`${name}: ${String(value)}`);
  const tools = [{ name: 'lookup', description: 'Looks things up.', inputSchema: { type: 'object' } }];
  if (!c.msg || c.msg.id === undefined) {
    c.res.writeHead(202);
    c.res.end();
    return;
  }
  json(c.res, 200, {
    jsonrpc: '2.0',
    id: c.msg.id,
    result: c.msg.method === 'initialize' ? initResult('recording') : { tools },
  });
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
  before(async () => {
    fleet = await startFleet({ echo: echoing, recording });
  });
  after(async () => {
    await fleet.close();
  });

  const entry = () =>
    server('Echo', fleet.url('echo'), {
      requiresAuth: true,
      probeHeaders: { Authorization: { env: 'ECHO_KEY', prefix: 'Bearer ' } },
    });
  const catalog = () => catalogOf([entry()], { policy: { authOptionalHosts: ['127.0.0.1'], sharedGatewayHosts: [] } });

  it('refresh --write records the keyed tool list; the key is in no file, output or page', async () => {
    const ws = await workspace(catalog());
    const env = { ECHO_KEY: KEY };
    const refresh = await runCli(['refresh', '--catalog', ws.catalogPath, '--write', '--allow-http', '--json'], {
      env,
    });
    assert.equal(refresh.code, 0, refresh.stderr);
    const row = JSON.parse(refresh.stdout).plan[0];
    assert.equal(row.verdict, 'live');
    assert.deepEqual(row.tools, ['search', 'read_page', 'deep_research']);
    const human = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http'], { env });
    const site = await runCli(['site', '--catalog', ws.catalogPath, '--out', join(ws.dir, 'site'), '--allow-http'], {
      env,
    });
    assert.equal(site.code, 0, site.stderr);
    const probe = await runCli(
      ['probe', '--requires-auth', '--probe-header', 'Authorization: Bearer ${ECHO_KEY}', '--json', fleet.url('echo')],
      { env },
    );
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
    const json = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--json'], {
      env: { ECHO_KEY: '' },
    });
    assert.deepEqual(JSON.parse(json.stdout).plan[0].tools, ['search']);
  });

  it("a row naming the store's or the CI's variables: never read or sent (a recording server), the plan says so, lint names them", async (t) => {
    const missing = await postgresMissing();
    if (missing) return t.skip(missing);
    // The Action's environment: the store's URL with its password, the job's token; and a key the catalog may name.
    const store = await freshSchema('keys_refused');
    const storeUrl = store.url.replace('://postgres@', '://postgres:st0re-Pa55word-9x7@');
    const env = {
      ONETAP_STORE_URL: storeUrl,
      GITHUB_TOKEN: 'ghs_R3fusedT0kenValue0123456789',
      DB_PASSWORD: 'Db-Pa55word-0123456789',
      REC_KEY: 'rec-Allowed-K3y-0123456789',
    };
    const row = server('Rec', fleet.url('recording'), {
      requiresAuth: true,
      probeHeaders: {
        Authorization: { env: 'ONETAP_STORE_URL' },
        'X-Token': { env: 'GITHUB_TOKEN' },
        'X-Db': { env: 'DB_PASSWORD' },
        'X-Key': { env: 'REC_KEY', prefix: 'Key ' },
      },
    });
    const ws = await workspace(
      catalogOf([row], { policy: { authOptionalHosts: ['127.0.0.1'], sharedGatewayHosts: [] } }),
    );
    try {
      assert.equal((await runCli(['store', 'migrate'], { env })).code, 0);
      received.length = 0;
      const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http'], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(received.includes(`x-key: Key ${env.REC_KEY}`), 'the allowed key was sent (the recorder works)');
      for (const secret of [env.ONETAP_STORE_URL, 'st0re-Pa55word-9x7', env.GITHUB_TOKEN, env.DB_PASSWORD]) {
        assert.ok(!received.some((h) => h.includes(secret)), `${secret} reached the server`);
      }
      assert.match(
        r.stdout,
        /Rec: probed without its key \(DB_PASSWORD, GITHUB_TOKEN, ONETAP_STORE_URL refused, never read: not a variable a catalog may name/,
      );
      const lint = await runCli(['lint', '--catalog', ws.catalogPath, '--allow-http']);
      assert.equal(lint.code, 1);
      assert.match(
        lint.stdout + lint.stderr,
        /servers\[0\] \(Rec\): probeHeaders\.Authorization: ONETAP_STORE_URL is one of the store's or the CI's own variables/,
      );
      assert.match(
        lint.stdout + lint.stderr,
        /probeHeaders\.X-Token: GITHUB_TOKEN is one of the store's or the CI's own variables/,
      );
      assert.match(
        lint.stdout + lint.stderr,
        /probeHeaders\.X-Db: DB_PASSWORD ends in _PASSWORD: a probe key only when policy\.keyEnv lists it by its full name/,
      );
      assert.doesNotMatch(lint.stdout + lint.stderr, /REC_KEY/);
    } finally {
      await store.drop();
    }
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
    const r = await runCli([
      'probe',
      '--requires-auth',
      '--probe-header',
      `Authorization: Bearer ${KEY}`,
      fleet.url('echo'),
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^onetap: --probe-header: the value must end in \$\{VARIABLE\}/);
    assert.ok(!r.stderr.includes(KEY));
  });
});
