/**
 * Hostile input in, nothing bad out (issue 9, security part). Each test observes what an attacker or a user
 * would: a decoy listener on another loopback address that must see no connection, exit codes, the bytes of
 * published documents, status codes and bodies, and how long idle sockets live.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, isIP, type AddressInfo, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { request as undiciRequest } from 'undici';
import {
  assertPublicTarget,
  checkUrl,
  FetchRefused,
  guardedDispatcher,
  guardedGet,
  type Resolver,
} from '../src/net/fetcher.js';
import { discover } from '../src/discover/discover.js';
import { validateDocument } from '../src/discover/card.js';
import { publication, UnpublishableCatalog } from '../src/publish/publish.js';
import { startServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { BIN, catalogOf, runCli, server, snapshotDir, workspace } from './helpers.js';
import type { Catalog } from '../src/index.js';

/** A listener on 127.0.0.2 that counts every connection: whatever the code does, it must see none. */
let decoy: Server;
let decoyPort = 0;
let decoyConnections = 0;
/** A fixture on 127.0.0.1 (trusted in these tests) serving catalogs, cards and redirects. */
let fixture: Server;
let origin = '';
const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();

/** Test DNS: names the tests own, resolved without touching real DNS. */
const NAMES: Record<string, string> = {};
const resolver: Resolver = async (host) => {
  const address = NAMES[host];
  if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [{ address, family: isIP(address) }];
};

const listen = (s: Server, host: string) =>
  new Promise<number>((resolve) => s.listen(0, host, () => resolve((s.address() as AddressInfo).port)));
const json = (body: unknown) => (_req: IncomingMessage, res: ServerResponse) =>
  void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

before(async () => {
  decoy = createServer((_req, res) => res.end('decoy'));
  decoy.on('connection', () => decoyConnections++);
  decoyPort = await listen(decoy, '127.0.0.2');
  fixture = createServer((req, res) => {
    const route = routes.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (route) return route(req, res);
    res.writeHead(404).end();
  });
  origin = `http://127.0.0.1:${await listen(fixture, '127.0.0.1')}`;
  NAMES['decoy.example'] = '127.0.0.2';
  NAMES['mapped.example'] = '::ffff:127.0.0.2';
});

after(() => {
  decoy.closeAllConnections();
  decoy.close();
  fixture.closeAllConnections();
  fixture.close();
});

const refusedAs = (code: string) => (err: unknown) => err instanceof FetchRefused && err.code === code;

describe("the address rule: literals before connecting, names in the connection's own lookup", () => {
  it('refuses every private, reserved and transition IPv6 form the issue lists, and still accepts public addresses', () => {
    const refused = [
      '127.0.0.2',
      '10.1.2.3',
      '100.64.0.1',
      '169.254.169.254',
      '192.88.99.1',
      '0.0.0.0',
      '2130706433',
      '0x7f.1',
      '[::1]',
      '[::]',
      '[::127.0.0.1]',
      '[::8.8.8.8]',
      '[::ffff:127.0.0.1]',
      '[::ffff:0:10.0.0.1]',
      '[::ffff:0:8.8.8.8]',
      '[64:ff9b::10.0.0.1]',
      '[64:ff9b::127.0.0.1]',
      '[64:ff9b:1::8.8.8.8]',
      '[2002:7f00:1::1]',
      '[2002:808:808::1]',
      '[fec0::1]',
      '[fe80::1]',
      '[fc00::1]',
      '[fd12:3456::1]',
      '[ff02::1]',
      '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
      '[100::1]',
      '[2001:db8::1]',
      '[3fff::1]',
      'localhost',
      'api.localhost',
      'localhost.',
    ];
    for (const host of refused)
      assert.throws(() => checkUrl(`https://${host}/mcp`), refusedAs('private-address'), host);
    for (const host of ['8.8.8.8', '[2606:4700:4700::1111]', '[64:ff9b::8.8.8.8]', '[::ffff:8.8.8.8]', 'example.org']) {
      assert.equal(checkUrl(`https://${host}/mcp`).protocol, 'https:', host);
    }
  });

  it('a NAME that resolves to a private address is refused in the real fetch path: the decoy sees no connection', async () => {
    const before = decoyConnections;
    await assert.rejects(
      guardedGet(`https://decoy.example:${decoyPort}/card`, 'application/json', { resolver }),
      refusedAs('private-address'),
    );
    await assert.rejects(
      guardedGet(`https://mapped.example:${decoyPort}/card`, 'application/json', { resolver }),
      refusedAs('private-address'),
    );
    assert.equal(decoyConnections, before, 'no connection may reach the decoy');
    // The control: the same name and resolver with private addresses allowed does reach the decoy, so the
    // refusal above is the rule at work, not a name that never resolved.
    const got = await guardedGet(`http://decoy.example:${decoyPort}/card`, 'application/json', {
      resolver,
      allowPrivate: true,
    });
    assert.equal(got.text, 'decoy');
    assert.ok(decoyConnections > before);
  });

  it('DNS rebinding: a name that passes the up-front check and answers private on connection is still refused', async () => {
    let calls = 0;
    const rebinding: Resolver = async () =>
      calls++ === 0 ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '127.0.0.2', family: 4 }];
    const url = `https://rebind.example:${decoyPort}/card`;
    await assertPublicTarget(url, { resolver: rebinding });
    const before = decoyConnections;
    await assert.rejects(guardedGet(url, 'application/json', { resolver: rebinding }), refusedAs('private-address'));
    assert.equal(decoyConnections, before);
  });

  it('redirects to a private literal or to a name resolving to one are refused before connecting', async () => {
    routes.set(
      '/to-literal',
      (_q, res) => void res.writeHead(302, { location: `http://127.0.0.2:${decoyPort}/x` }).end(),
    );
    routes.set(
      '/to-name',
      (_q, res) => void res.writeHead(302, { location: `https://decoy.example:${decoyPort}/x` }).end(),
    );
    routes.set(
      '/to-compat',
      (_q, res) => void res.writeHead(302, { location: `https://[::127.0.0.2]:${decoyPort}/x` }).end(),
    );
    const before = decoyConnections;
    for (const path of ['/to-literal', '/to-name', '/to-compat']) {
      await assert.rejects(
        guardedGet(`${origin}${path}`, 'application/json', { trustedAddresses: ['127.0.0.1'], resolver }),
        refusedAs('private-address'),
        path,
      );
    }
    assert.equal(decoyConnections, before);
  });

  it('guardedDispatcher, for any other caller: literals and names refused on connect, the decoy sees nothing', async () => {
    const dispatcher = guardedDispatcher({ trustedAddresses: ['127.0.0.1'], resolver });
    try {
      const before = decoyConnections;
      for (const url of [
        `http://127.0.0.2:${decoyPort}/`,
        `http://[::ffff:127.0.0.2]:${decoyPort}/`,
        `http://decoy.example:${decoyPort}/`,
      ]) {
        await assert.rejects(
          undiciRequest(url, { dispatcher }),
          (e: unknown) => refusedAs('private-address')(e) || refusedAs('private-address')((e as Error).cause),
          url,
        );
      }
      assert.equal(decoyConnections, before);
      routes.set('/ok', json({ ok: true }));
      assert.equal(
        (await undiciRequest(`${origin}/ok`, { dispatcher })).statusCode,
        200,
        'a trusted address is reached',
      );
    } finally {
      await dispatcher.close();
    }
  });

  it('assertPublicTarget: names are resolved with the injected resolver; scheme and URL errors have their own codes', async () => {
    NAMES['nat64.example'] = '64:ff9b::a00:1';
    NAMES['public.example'] = '93.184.215.14';
    await assert.rejects(assertPublicTarget('https://decoy.example/mcp', { resolver }), refusedAs('private-address'));
    await assert.rejects(assertPublicTarget('https://nat64.example/mcp', { resolver }), /resolves to 64:ff9b::a00:1/);
    await assert.rejects(
      assertPublicTarget('https://[::ffff:0:7f00:1]/mcp', { resolver }),
      refusedAs('private-address'),
    );
    await assert.rejects(assertPublicTarget('ftp://public.example/x', { resolver }), refusedAs('scheme'));
    await assert.rejects(assertPublicTarget('http://public.example/x', { resolver }), refusedAs('scheme'));
    await assert.rejects(assertPublicTarget('not a url', { resolver }), refusedAs('bad-url'));
    await assertPublicTarget('https://public.example/mcp', { resolver });
    await assertPublicTarget('http://decoy.example/mcp', { resolver, allowPrivate: true });
  });

  it('discover --probe never probes a remote on a private literal or name: the decoy sees no connection', async () => {
    const remotes = [
      `https://127.0.0.2:${decoyPort}/mcp`,
      `https://[::ffff:127.0.0.2]:${decoyPort}/mcp`,
      `https://decoy.example:${decoyPort}/mcp`,
    ];
    const card = (url: string, i: number) => ({
      $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
      name: `org.example/decoy-${i}`,
      version: '1.0.0',
      title: `Decoy ${i}`,
      description: 'A remote on a private address',
      remotes: [{ type: 'streamable-http', url }],
    });
    remotes.forEach((url, i) => routes.set(`/cards/${i}.json`, json(card(url, i))));
    assert.ok(
      validateDocument(card(remotes[0]!, 0)).valid,
      'the fixture cards are valid, so only the address rule can stop the probe',
    );
    routes.set(
      '/catalog.json',
      json({
        specVersion: '1.0',
        host: { displayName: 'hostile', identifier: 'example.org' },
        entries: remotes.map((_u, i) => ({
          identifier: `urn:air:example.org:mcp:d${i}`,
          type: 'application/mcp-server-card+json',
          url: `${origin}/cards/${i}.json`,
        })),
      }),
    );
    const before = decoyConnections;
    const result = await discover(`${origin}/catalog.json`, {
      catalog: catalogOf([]),
      probe: true,
      trustedAddresses: ['127.0.0.1'],
      resolver,
      probeTimeoutMs: 3_000,
    });
    assert.equal(result.candidates.length, 3);
    assert.equal(decoyConnections, before, 'the probe reached the decoy');
    for (const c of result.candidates.slice(0, 2)) {
      assert.equal(c.eligible, false);
      assert.match(c.why, /remote refused: .* is a private or reserved address/);
      assert.equal(c.verdict, null);
    }
    assert.notEqual(result.candidates[2]!.verdict, 'live', "the name was refused in the probe's lookup");
  });
});

const LEAKY: Catalog = catalogOf([
  server('Keyed', 'https://keyed.example.org/mcp', { headers: { Authorization: 'Bearer sk-live-SECRET-123' } }),
  server('Creds', 'https://user:hunter2@creds.example.org/mcp'),
  server('Script', 'javascript:alert(1)//mcp'),
  server('Local file', 'file:///etc/passwd'),
]);
const CLEAN: Catalog = catalogOf([
  server('Clean', 'https://clean.example.org/mcp', { headers: { 'X-Client': 'onetap' } }),
]);

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  return (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('publishing never carries a secret, credentials or a non-http(s) URL', () => {
  it('publish refuses a catalog that fails lint: exit 1, the findings on stderr, nothing written', async () => {
    const ws = await workspace(LEAKY);
    const out = join(ws.dir, 'site');
    const r = await runCli(['publish', '--catalog', ws.catalogPath, '--out', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /servers\[0\] \(Keyed\): default header "Authorization" looks secret/);
    assert.match(r.stderr, /servers\[1\] \(Creds\): credentials in the URL/);
    assert.match(r.stderr, /servers\[2\] \(Script\): HTTPS only, got javascript:/);
    assert.match(r.stderr, /servers\[3\] \(Local file\): HTTPS only, got file:/);
    assert.match(r.stderr, /onetap: the catalog fails lint .*nothing is published/);
    assert.deepEqual(await filesUnder(out), []);
    assert.doesNotMatch(
      r.stdout + r.stderr,
      /sk-live-SECRET-123|hunter2/,
      'the findings name the problem, not the secret',
    );
  });

  it('serve refuses it too, before listening', async () => {
    const ws = await workspace(LEAKY);
    const r = await runCli(['serve', '--catalog', ws.catalogPath, '--port', '0', '--state', join(ws.dir, 'none.db')], {
      killAfterMs: 10_000,
    });
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.stdout, /serving/);
    assert.match(r.stderr, /credentials in the URL/);
  });

  it('the library cannot publish a leak either: publication() throws, whatever lint says', () => {
    assert.throws(
      () => publication(LEAKY),
      (e: unknown) => e instanceof UnpublishableCatalog && e.problems.length === 4,
    );
    for (const s of LEAKY.servers) assert.throws(() => publication(catalogOf([s])), UnpublishableCatalog, s.name);
  });

  it('the bytes of a clean publication hold no secret, credentials or script URL', async () => {
    const ws = await workspace(CLEAN);
    const out = join(ws.dir, 'site');
    const r = await runCli([
      'publish',
      '--catalog',
      ws.catalogPath,
      '--out',
      out,
      '--base-url',
      'https://lists.example.org/one-tap/',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const files = await filesUnder(out);
    assert.equal(files.length, 4, 'two catalogs, one card, the manifest of cards written (checked too)');
    for (const f of files) {
      const bytes = await readFile(f, 'utf8');
      assert.doesNotMatch(bytes, /javascript:|file:|data:|@|sk-|hunter2/i, f);
      assert.doesNotMatch(bytes, /one-tap\/\//, 'the base URL is joined with one slash');
    }
  });

  it('a catalog edited into a leaking one while serving is not served: the last good bytes stay, the log says why', async () => {
    const ws = await workspace(CLEAN);
    const logged: string[] = [];
    const s = await startServer({ catalogPath: ws.catalogPath, port: 0, lint: {}, log: (l) => logged.push(l) });
    try {
      const first = await (await fetch(`${s.url}/.well-known/ai-catalog.json`)).text();
      await writeFile(ws.catalogPath, JSON.stringify(LEAKY, null, 2));
      const again = await fetch(`${s.url}/.well-known/ai-catalog.json`);
      assert.equal(again.status, 200);
      assert.equal(await again.text(), first);
      for (const path of ['/cards/keyed.json', '/cards/creds.json'])
        assert.equal((await fetch(`${s.url}${path}`)).status, 404);
      assert.match(logged.join('\n'), /is not served \(the last good one stays\)[\s\S]*credentials in the URL/);
    } finally {
      await s.close();
    }
  });
});

/** `onetap serve` as a process; resolves once it prints its URL. */
async function serveCli(
  args: string[],
): Promise<{ url: string; child: ChildProcess; stderr: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /serving (http:\/\/[^/\s]+)\//.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url, child, stderr: () => stderr, stop };
}

/** A raw GET (fetch would normalise the path). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/`, { path }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens n sockets that never finish a request (half send nothing, half a partial head); reports when each closes. */
async function idleSockets(
  url: string,
  n: number,
): Promise<{ sockets: Socket[]; closedAfter: number[]; openedAt: number }> {
  const { hostname, port } = new URL(url);
  const closedAfter: number[] = [];
  const openedAt = Date.now();
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      (_v, i) =>
        new Promise<Socket>((resolve) => {
          const s = connect(Number(port), hostname, () => {
            if (i % 2) s.write('GET / HTTP/1.1\r\nHost: x\r\n');
            resolve(s);
          });
          s.resume(); // read what the server sends (a 408), so a close by the server is seen here
          s.on('error', () => {});
          s.on('close', () => closedAfter.push(Date.now() - openedAt));
        }),
    ),
  );
  return { sockets, closedAfter, openedAt };
}

describe('serve: bounded, and says nothing internal', () => {
  it('many idle sockets: a normal request is still answered, connections stay capped, idle ones close within the header timeout', async () => {
    const ws = await workspace(CLEAN);
    const s = await startServer({
      catalogPath: ws.catalogPath,
      port: 0,
      maxConnections: 32,
      headersTimeoutMs: 1_000,
      log: () => {},
    });
    try {
      const idle = await idleSockets(s.url, 100);
      const open = await new Promise<number>((resolve) => s.server.getConnections((_e, n) => resolve(n)));
      assert.ok(open <= 32, `${open} connections open, over the cap of 32`);
      const res = await fetch(`${s.url}/.well-known/ai-catalog.json`);
      assert.equal(res.status, 200);
      // Order, not elapsed time: answered before the header timeout freed the idle sockets the cap let in.
      const held = idle.sockets.filter((x) => !x.closed).length;
      assert.ok(held > 0, `answered while idle sockets are held (${held})`);
      const deadline = Date.now() + 4_000;
      while (idle.closedAfter.length < 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(idle.closedAfter.length, 100, 'every idle socket is closed');
      const slowest = Math.max(...idle.closedAfter);
      assert.ok(slowest <= 2_500, `the last idle socket closed after ${slowest} ms (header timeout 1,000 ms)`);
    } finally {
      await s.close();
    }
  });

  it('onetap serve with its defaults: 300 idle sockets do not lock out a normal client', async () => {
    const ws = await workspace(CLEAN);
    const cli = await serveCli(['--catalog', ws.catalogPath, '--state', join(ws.dir, 'none.db')]);
    try {
      const idle = await idleSockets(cli.url, 300);
      const res = await fetch(`${cli.url}/.well-known/ai-catalog.json`);
      assert.equal(res.status, 200);
      for (const sock of idle.sockets) sock.destroy();
    } finally {
      await cli.stop();
    }
  });

  it("an unreadable history (history/ is a file): a generic 503, the cause only on the operator's stderr; a malformed % escape is a 400", async () => {
    const ws = await workspace(CLEAN);
    await writeFile(join(dirname(ws.catalogPath), 'history'), 'not a folder of month files');
    const cli = await serveCli(['--catalog', ws.catalogPath]);
    try {
      for (const path of ['/', '/api/servers', '/api/refreshes/latest', '/servers/clean']) {
        const r = await rawGet(cli.url, path);
        assert.equal(r.status, 503, path);
        assert.deepEqual(JSON.parse(r.body), { error: 'service unavailable' });
        assert.doesNotMatch(r.body, /ENOTDIR|history|[A-Z][a-z]+Error/i);
      }
      assert.match(cli.stderr(), /ENOTDIR/);
      for (const path of ['/%zz', '/servers/%E0%A4%A', '/api/servers/%/history']) {
        const r = await rawGet(cli.url, path);
        assert.equal(r.status, 400, path);
        assert.doesNotMatch(r.body, /URIError|malformed URI sequence/);
      }
      assert.equal(
        (await rawGet(cli.url, '/.well-known/ai-catalog.json')).status,
        200,
        'the documents are still served',
      );
    } finally {
      await cli.stop();
    }
  });

  it('the status page keeps its ETag while nothing changes: a poll 30 s later gets 304; new content gets a new tag', async () => {
    const ws = await workspace(CLEAN);
    let clock = new Date('2026-11-30T12:01:10Z');
    const s = await startServer({
      catalogPath: ws.catalogPath,
      port: 0,
      routes: statusRoutes({ catalogPath: ws.catalogPath, now: () => clock }),
    });
    try {
      for (const path of ['/', '/api/servers', '/servers/clean']) {
        const first = await fetch(`${s.url}${path}`);
        assert.equal(first.status, 200, path);
        const etag = first.headers.get('etag')!;
        clock = new Date(clock.getTime() + 30_000);
        const poll = await fetch(`${s.url}${path}`, { headers: { 'if-none-match': etag } });
        assert.equal(poll.status, 304, `${path}: a 30 s poll of unchanged content`);
        clock = new Date('2026-11-30T12:01:10Z');
      }
      const before = (await fetch(`${s.url}/`)).headers.get('etag');
      await writeFile(
        ws.catalogPath,
        JSON.stringify(catalogOf([...CLEAN.servers, server('Second', 'https://second.example.org/mcp')]), null, 2),
      );
      const changed = await fetch(`${s.url}/`, { headers: { 'if-none-match': before! } });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.get('etag'), before);
    } finally {
      await s.close();
    }
  });
});

describe('flags of publish and serve are checked before any work (exit 2, naming the flag)', () => {
  const bad: Array<[string[], RegExp]> = [
    [['serve', '--port', '65536'], /--port/],
    [['serve', '--port', '-1'], /--port/],
    [['serve', '--port', '80.5'], /--port/],
    [['serve', '--port', 'http'], /--port/],
    [['serve', '--base-url', 'ftp://lists.example.org'], /--base-url/],
    [['serve', '--base-url', 'https://u:pw@lists.example.org'], /--base-url/],
    [['serve', '--base-url', 'not a url'], /--base-url/],
    [['serve', '--host', ' '], /--host/],
    [['publish', '--out', 'OUT', '--base-url', 'javascript:alert(1)'], /--base-url/],
    [['publish', '--out', 'OUT', '--publisher', 'a b/c'], /--publisher/],
  ];
  it('bad values of --port, --base-url, --host, --publisher (run side by side)', async () => {
    const ws = await workspace(CLEAN);
    await Promise.all(
      bad.map(async ([args, flag]) => {
        const out = join(ws.dir, `site-${args.join('-').replace(/[^a-z0-9]/gi, '')}`);
        // A missing catalog would be exit 1: exit 2 shows the flag was checked first.
        const r = await runCli(
          [...args.map((a) => (a === 'OUT' ? out : a)), '--catalog', join(ws.dir, 'missing.json')],
          { killAfterMs: 15_000 },
        );
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`onetap: ${flag.source}`), args.join(' '));
        assert.equal(existsSync(out), false);
      }),
    );
  });
  it('--out at an existing file, --state at a directory', async () => {
    const ws = await workspace(CLEAN);
    const file = join(ws.dir, 'a-file');
    await writeFile(file, 'keep me');
    const before = await snapshotDir(ws.dir);
    const out = await runCli(['publish', '--catalog', ws.catalogPath, '--out', file]);
    assert.equal(out.code, 2);
    assert.match(out.stderr, /^onetap: --out: must be a directory/);
    const state = await runCli(['serve', '--catalog', ws.catalogPath, '--state', ws.dir], { killAfterMs: 10_000 });
    assert.equal(state.code, 2);
    assert.match(state.stderr, /--state: must be a file, not a directory/);
    assert.deepEqual(await snapshotDir(ws.dir), before);
  });
});
