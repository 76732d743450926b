/**
 * Bounded work in discovery and validation (issue 9): hostile cards, catalog fan-out, per-origin limits;
 * `discover --probe` eligibility and its `onetap add` hint; exit codes. Loopback fixtures only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { discover } from '../src/discover/discover.js';
import { MAX_ERRORS, validateDocument } from '../src/discover/card.js';
import { addCommand } from '../src/discover/eligibility.js';
import { parseCatalog } from '../src/index.js';
import { BIN, catalogOf, runCli, workspace } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

const EMPTY = parseCatalog('{"servers":[]}');
const CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
const card = (name: string, url: string, extra: object = {}) => ({
  $schema: CARD_SCHEMA,
  name,
  version: '1.0.0',
  description: 'Searches the docs',
  remotes: [{ type: 'streamable-http', url }],
  ...extra,
});
/** A card of `n` empty remotes: 85,000 of them is just under the 256 KiB card cap. */
const emptyRemotes = (n: number) =>
  JSON.stringify({
    $schema: CARD_SCHEMA,
    name: 'a.b/c',
    version: '1.0.0',
    description: 'x',
    remotes: Array.from({ length: n }, () => ({})),
  });

type Route = (req: IncomingMessage, res: ServerResponse, path: string) => void;
interface Fixture {
  origin: string;
  hits: string[];
  routes: Map<string, Route>;
  fallback?: Route;
  server: Server;
}

async function fixture(): Promise<Fixture> {
  const f: Fixture = { origin: '', hits: [], routes: new Map(), server: null as unknown as Server };
  f.server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    f.hits.push(path);
    const route = f.routes.get(path) ?? f.fallback;
    if (route) return route(req, res, path);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((r) => f.server.listen(0, '127.0.0.1', () => r()));
  f.origin = `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`;
  return f;
}
const send = (res: ServerResponse, type: string, body: unknown) => {
  res.writeHead(200, { 'content-type': type });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};
const catalogDoc = (entries: object[]) => ({ specVersion: '1.0', entries });
const cardEntry = (id: string, url: string) => ({ identifier: id, type: 'application/mcp-server-card+json', url });
const catalogEntry = (id: string, url: string) => ({ identifier: id, type: 'application/ai-catalog+json', url });

let a: Fixture;
let b: Fixture;
let fleet: Fleet;
let tmp: string;
before(async () => {
  [a, b, fleet] = await Promise.all([fixture(), fixture(), startFleet()]);
  tmp = await mkdtemp(join(tmpdir(), 'onetap-limits-'));
  await writeFile(join(tmp, 'card85k.json'), emptyRemotes(85_000));
  await writeFile(join(tmp, 'card400k.json'), emptyRemotes(400_000));
  // Fan-out: every catalog under /fan/ lists 40 nested catalogs and one card, to depth 4 (40^4 documents).
  a.fallback = (_q, res, path) => {
    const m = /^\/fan\/([\d-]+)\.json$/.exec(path);
    if (m)
      return send(
        res,
        'application/ai-catalog+json',
        catalogDoc([
          cardEntry(`c${m[1]}`, `/cards/${m[1]}`),
          ...Array.from({ length: 40 }, (_, i) => catalogEntry(`n${m[1]}-${i}`, `/fan/${m[1]}-${i}.json`)),
        ]),
      );
    if (path.startsWith('/cards/'))
      return send(res, 'application/mcp-server-card+json', card(`x.fan/${path.slice(7)}`, 'https://fan.example/mcp'));
    res.writeHead(404).end();
  };
  b.fallback = (_q, res, path) =>
    send(
      res,
      'application/mcp-server-card+json',
      card(`x.third/${path.split('/').pop()}`, `https://third.example${path}`),
    );
  // A catalog on A pointing at 30 cards on B (a third party), and one listing the same card 50 times.
  a.routes.set('/third.json', (_q, res) =>
    send(
      res,
      'application/ai-catalog+json',
      catalogDoc(Array.from({ length: 30 }, (_, i) => cardEntry(`t${i}`, `${b.origin}/card/${i}`))),
    ),
  );
  a.routes.set('/same.json', (_q, res) =>
    send(
      res,
      'application/ai-catalog+json',
      catalogDoc(Array.from({ length: 50 }, (_, i) => cardEntry(`s${i}`, `${b.origin}/same-card`))),
    ),
  );
  a.routes.set('/big/server-card', (_q, res) => send(res, 'application/mcp-server-card+json', emptyRemotes(85_000)));
  a.routes.set('/bigcat.json', (_q, res) =>
    send(res, 'application/ai-catalog+json', catalogDoc([cardEntry('big', '/big/server-card')])),
  );
  a.routes.set('/nocards.json', (_q, res) =>
    send(
      res,
      'application/ai-catalog+json',
      catalogDoc([{ identifier: 'agent', type: 'application/a2a-agent-card+json', url: '/agent.json' }]),
    ),
  );
  a.routes.set('/legacy.json', (_q, res) =>
    send(
      res,
      'application/ai-catalog+json',
      catalogDoc([
        {
          identifier: 'old',
          type: 'application/mcp-server+json',
          data: card('x.old/seed', fleet.url('ok-json'), {
            $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server.schema.json',
          }),
        },
      ]),
    ),
  );
  a.routes.set('/probe.json', (_q, res) =>
    send(
      res,
      'application/ai-catalog+json',
      catalogDoc([
        {
          identifier: 'live',
          type: 'application/mcp-server-card+json',
          data: card('x.probe/live', fleet.url('ok-json'), { title: 'Docs Search' }),
        },
        {
          identifier: 'gone',
          type: 'application/mcp-server-card+json',
          data: card('x.probe/gone', fleet.url('http-404'), { title: 'Gone' }),
        },
        {
          identifier: 'html',
          type: 'application/mcp-server-card+json',
          data: card('x.probe/html', fleet.url('html-200'), { title: 'Web Page' }),
        },
      ]),
    ),
  );
});
after(async () => {
  for (const f of [a, b]) {
    f.server.closeAllConnections();
    f.server.close();
  }
  await fleet.close();
});

const cardHits = (f: Fixture) => f.hits.length;

describe('bounded validation', () => {
  // Quick: within a minute (the time limit, generous for a loaded machine); it was ~40 s before errors were bounded.
  it('85,000 empty remotes (256 KiB): validate is quick, prints at most 100 errors and a count', {
    timeout: 60_000,
  }, async () => {
    const r = await runCli(['validate', join(tmp, 'card85k.json')]);
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.ok(lines.length <= MAX_ERRORS + 5, `${lines.length} lines`);
    assert.equal(
      lines.filter((l) => /^ {2}\/remotes\/\d+: must have required property '(type|url)'$/.test(l)).length,
      MAX_ERRORS,
    );
    assert.match(r.stdout, /… \d+ more errors \(\d+ found, the first 100 shown\)/);
    assert.match(r.stdout, /warning: the error list covers the first 2000 values of a large document/);
    const json = JSON.parse((await runCli(['validate', join(tmp, 'card85k.json'), '--json'])).stdout);
    assert.equal(json.valid, false);
    assert.equal(json.errors.length, MAX_ERRORS);
    assert.ok(json.errorCount > MAX_ERRORS);
    assert.equal(json.errorsComplete, false);
  });

  it('400,000 empty remotes (1.2 MB): no stack overflow, same bounded answer', async () => {
    const r = await runCli(['validate', join(tmp, 'card400k.json')]);
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.stdout + r.stderr, /Maximum call stack/);
    assert.ok(r.stdout.split('\n').length <= MAX_ERRORS + 5);
  });

  it('the library call costs milliseconds, and a valid document is unaffected', () => {
    const value = JSON.parse(emptyRemotes(85_000));
    validateDocument(value); // compiles the validators
    const v = validateDocument(value);
    assert.ok(v.elapsedMs < 1_000, `${v.elapsedMs} ms`);
    const valid = validateDocument(card('x.ok/fine', 'https://ok.example/mcp'));
    assert.deepEqual([valid.valid, valid.schema, valid.errorCount, valid.errorsComplete], [true, 'current', 0, true]);
  });

  it('with the time budget of the document spent, only the verdict and its first error are given', () => {
    const v = validateDocument(JSON.parse(emptyRemotes(85_000)), { budgetMs: 0 });
    assert.deepEqual([v.valid, v.errors.length, v.errorCount, v.errorsComplete], [false, 1, 1, false]);
    assert.match(v.warnings[0]!, /there may be more errors/);
  });

  it('an error beyond the part searched for the list is still listed (the verdict covers the whole card)', () => {
    const value = {
      $schema: CARD_SCHEMA,
      name: 'a.b/c',
      version: '1',
      description: 'x',
      remotes: [
        ...Array.from({ length: 5_000 }, () => ({ type: 'streamable-http', url: 'https://x.example/mcp' })),
        { type: 7 },
      ],
    };
    const v = validateDocument(value);
    assert.equal(v.valid, false);
    assert.ok(
      v.errors.some((e) => e.pointer.startsWith('/remotes/5000')),
      JSON.stringify(v.errors),
    );
  });

  it('discover: the same card served, its errors bounded and the run quick', { timeout: 60_000 }, async () => {
    const r = await discover(`${a.origin}/bigcat.json`, { catalog: EMPTY, allowPrivate: true });
    const c = r.candidates[0]!;
    assert.equal(c.valid, false);
    assert.ok(c.errors.length <= MAX_ERRORS, `${c.errors.length}`);
    assert.ok(c.errorCount > MAX_ERRORS);
  });
});

describe('document limits', () => {
  it('a fan-out of nested catalogs stops at the per-origin limit (100), and says what it left unread', async () => {
    a.hits.length = 0;
    const r = await discover(`${a.origin}/fan/0.json`, { catalog: EMPTY, allowPrivate: true });
    assert.ok(cardHits(a) <= 100, `${cardHits(a)} fetches`);
    assert.ok(cardHits(a) >= 90, 'the limit is used, not undershot');
    assert.ok(r.unreadCount > 0);
    assert.equal(r.unread.length, 51, 'the first 50 are listed, and the first of the other reason');
    assert.match(r.unread[0]!.why, /^nested deeper than 4 levels$/);
    assert.deepEqual(
      r.unread.slice(50).map((u) => u.why),
      [`over the limit of 100 documents from ${a.origin} (--max-per-origin)`],
    );
  });

  it('and at the per-run limit (catalogs and cards together)', async () => {
    a.hits.length = 0;
    const r = await discover(`${a.origin}/fan/0.json`, {
      catalog: EMPTY,
      allowPrivate: true,
      maxPerOrigin: 10_000,
      maxDocuments: 150,
    });
    assert.ok(cardHits(a) <= 150 && cardHits(a) >= 140, `${cardHits(a)} fetches`);
    assert.ok(r.catalogs.length + r.candidates.length <= 150);
    assert.match(r.unread.at(-1)!.why, /^over the limit of 150 documents per run \(--max-documents\)$/);
  });

  it('a third-party origin gets at most --max-per-origin fetches', async () => {
    b.hits.length = 0;
    const r = await discover(`${a.origin}/third.json`, { catalog: EMPTY, allowPrivate: true, maxPerOrigin: 10 });
    assert.equal(cardHits(b), 10);
    assert.equal(r.candidates.length, 10);
    assert.equal(r.unreadCount, 20);
    assert.match(r.unread[0]!.url, /\/card\/10$/);
  });

  it('a card listed 50 times is fetched once', async () => {
    b.hits.length = 0;
    const r = await discover(`${a.origin}/same.json`, { catalog: EMPTY, allowPrivate: true });
    assert.deepEqual(b.hits, ['/same-card']);
    assert.equal(r.candidates.length, 1);
  });

  it('CLI: the table and --json say what was left unread; the limits are flags', async () => {
    const r = await runCli(['discover', `${a.origin}/fan/0.json`, '--allow-private', '--max-documents', '20']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\nLeft unread: \d+ documents \(the first 51 listed\)\n {2}- http:\/\/127\.0\.0\.1:\d+\/fan\/[\d-]+\.json: nested deeper than 4 levels\n/,
    );
    assert.match(
      r.stdout,
      /\n {2}- http:\/\/127\.0\.0\.1:\d+\/[a-z]+\/[\d-]+(\.json)?: over the limit of 20 documents per run \(--max-documents\)\n/,
    );
    const json = JSON.parse(
      (await runCli(['discover', `${a.origin}/fan/0.json`, '--allow-private', '--json', '--max-per-origin', '5']))
        .stdout,
    );
    assert.equal(json.catalogs.length + json.candidates.length, 5);
    assert.ok(json.unreadCount > 40);
    assert.deepEqual(Object.keys(json.unread[0]), ['url', 'why']);
    const bad = await runCli(['discover', 'example.com', '--max-documents', '0']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^onetap: --max-documents: expected a positive whole number, got "0"/);
  });
});

describe('the legacy reading in discovery', () => {
  it('a seed-era card (v1 server.schema.json) is valid with a warning, and eligible', async () => {
    const r = await discover(`${a.origin}/legacy.json`, { catalog: EMPTY, allowPrivate: true });
    const c = r.candidates[0]!;
    assert.deepEqual([c.valid, c.schema, c.eligible, c.errors], [true, 'legacy', true, []]);
    assert.match(c.warnings[0]!, /passes only the earlier \(seed-era\) Server Card schema/);
    const cli = await runCli(['discover', `${a.origin}/legacy.json`, '--allow-private']);
    assert.match(cli.stdout, /\nold\s+legacy\s+eligible/);
    assert.match(cli.stdout, /\n {4}warning: passes only the earlier/);
  });
});

/** Runs `command` in sh with `onetap` bound to a function; returns what it did. */
function sh(command: string, onetap: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', `onetap() { ${onetap}; }\n${command}`], {
      env: { ...process.env, NODE: process.execPath, BIN, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('discover --probe and its hint', () => {
  it('only candidates that attest live stay eligible; the others show their verdict', async () => {
    const r = await discover(`${a.origin}/probe.json`, { catalog: EMPTY, allowPrivate: true, probe: true });
    const by = Object.fromEntries(r.candidates.map((c) => [c.identifier, c]));
    assert.deepEqual([by.live!.eligible, by.live!.verdict, by.live!.reason], [true, 'live', 'ok']);
    assert.deepEqual([by.gone!.eligible, by.gone!.verdict, by.gone!.reason], [false, 'drop', 'http-404']);
    assert.match(by.gone!.why, /^not attested live: drop\/http-404/);
    assert.equal(by.html!.eligible, false);
    assert.match(by.html!.why, /^not attested live: /);
    assert.ok(by.live!.addCommand);
    assert.equal(by.gone!.addCommand, null);
    const cli = await runCli(['discover', `${a.origin}/probe.json`, '--allow-private', '--probe']);
    assert.match(cli.stdout, /Gone\s+valid\s+no\s+drop\/http-404/);
    assert.match(cli.stdout, /3 candidates, 1 new and eligible \(attested live\)\./);
  });

  it('the hint is a complete onetap add command: run as printed, it adds the server', async () => {
    const ws = await workspace(catalogOf([]));
    const r = await runCli([
      'discover',
      `${a.origin}/probe.json`,
      '--allow-private',
      '--probe',
      '--catalog',
      ws.catalogPath,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const hints = r.stdout.split('\n').filter((l) => l.startsWith('  onetap add '));
    assert.equal(hints.length, 1, r.stdout);
    const ran = await sh(hints[0]!.trim(), '"$NODE" "$BIN" "$@"');
    assert.equal(ran.code, 0, ran.stdout + ran.stderr);
    assert.match(ran.stdout, /^added Docs Search \(http:\/\/127\.0\.0\.1:\d+\/ok-json\): live\/ok/);
    const saved = JSON.parse(await readFile(ws.catalogPath, 'utf8'));
    assert.deepEqual(
      [saved.servers[0].name, saved.servers[0].description, saved.servers[0].decision.by],
      ['Docs Search', 'Searches the docs', 'YOUR NAME'],
    );
  });

  it('hostile card text is quoted for the shell: it arrives as one argument each and runs nothing', async () => {
    const marker = join(tmp, 'pwned');
    const title = `Bob's "tools" $(touch ${marker}) \`touch ${marker}\` ; rm -rf ~ \u202Eevil\n& more`;
    const cmd = addCommand({
      url: 'https://x.example/mcp?a=1&b=$(id)',
      title,
      name: null,
      description: "it's\u0007 a 'test'",
      requiresAuth: true,
    });
    assert.doesNotMatch(cmd, /[\u0000-\u001f\u202a-\u202e]/);
    const ran = await sh(cmd, 'for a in "$@"; do printf "%s\\n" "$a"; done');
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(ran.stdout.trimEnd().split('\n'), [
      'add',
      'https://x.example/mcp?a=1&b=$(id)',
      '--name',
      `Bob's "tools" $(touch ${marker}) \`touch ${marker}\` ; rm -rf ~ evil & more`,
      '--description',
      "it's a 'test'",
      '--decision',
      'YOUR NAME: why this server belongs in the list',
      '--requires-auth',
    ]);
    await assert.rejects(readFile(marker), { code: 'ENOENT' });
  });
});

describe('exit codes (README)', () => {
  it('validate: an unreadable file is a clear error, exit 1', async () => {
    const missing = await runCli(['validate', join(tmp, 'nope.json')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^onetap: cannot read .*nope\.json: no such file\n$/);
    assert.equal(missing.stdout, '');
    const dir = await runCli(['validate', tmp]);
    assert.equal(dir.code, 1);
    assert.match(dir.stderr, /^onetap: cannot read .*: a directory\n$/);
  });

  it('validate: not JSON is an invalid document, exit 1, also as data', async () => {
    await writeFile(join(tmp, 'text.json'), 'hello');
    const r = await runCli(['validate', join(tmp, 'text.json'), '--json']);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout);
    assert.equal(out.valid, false);
    assert.match(out.errors[0].message, /^not JSON/);
  });

  it('discover: no Server Card found is exit 1 (an endpoint without a card; a catalog listing no card)', async () => {
    const endpoint = await runCli(['discover', `${a.origin}/no-such-endpoint`, '--allow-private']);
    assert.equal(endpoint.code, 1, endpoint.stdout);
    assert.match(endpoint.stdout, /No Server Card found\./);
    const empty = await runCli(['discover', `${a.origin}/nocards.json`, '--allow-private', '--json']);
    assert.equal(empty.code, 1);
    assert.equal(JSON.parse(empty.stdout).candidates.length, 0);
    const found = await runCli(['discover', `${a.origin}/legacy.json`, '--allow-private']);
    assert.equal(found.code, 0);
  });

  it('discover: a --timeout above what Node timers allow is a usage error before any fetch', async () => {
    a.hits.length = 0;
    const r = await runCli(['discover', `${a.origin}/legacy.json`, '--allow-private', '--timeout', '9999999999']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^onetap: --timeout: at most 2147483647 ms/);
    assert.equal(a.hits.length, 0);
  });
});
