/**
 * `onetap census` against a loopback registry (test/fleet/registry.ts): 2,000 remotes over 200 hosts with cursor
 * paging and a realistic mix. Every remote is recorded once, also when the census is killed (SIGKILL) at a seeded
 * point and resumed, with at most --concurrency remotes probed twice; no host ever sees two requests at once; the
 * SSE-only, templated and older-version remotes are never contacted; the records validate against the registry's
 * schema and carry the golden token counts; an unreadable registry is exit 1, a bad flag exit 2.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runCli } from './helpers.js';
import { kindOf, startRegistry, TOKENS, type RegistryFixture } from './fleet/registry.js';
import { validateRegistryServer } from '../src/discover/card.js';
import { evidenceDigest } from '../src/census/records.js';
import { verificationSchema } from '../src/model/census.js';

const REMOTES = 2_000;
const HOSTS = 200;
/** Servers with a package and no remote, among the others: listed and recorded, never probed. */
const PACKAGE_ONLY = 300;
const SERVERS = REMOTES + PACKAGE_ONLY;
const CONCURRENCY = 16;

describe('onetap census', () => {
  let reg: RegistryFixture;
  let dir = '';
  before(async () => {
    reg = await startRegistry(REMOTES, HOSTS, PACKAGE_ONLY);
    dir = await mkdtemp(join(tmpdir(), 'onetap-census-'));
  });
  after(() => reg.close());

  const args = (out: string, ...extra: string[]) => [
    'census',
    '--registry',
    reg.url,
    '--publisher',
    'io.example',
    '--out',
    out,
    '--allow-private',
    '--allow-http',
    '--timeout',
    '3000',
    '--concurrency',
    String(CONCURRENCY),
    '--contact',
    'https://census.example/about',
    ...extra,
  ];

  it('killed at a seeded point and resumed: every remote recorded once, politely, and published as records that validate', {
    timeout: 120_000,
  }, async () => {
    const out = join(dir, 'census.json');
    const state = `${out}.state`;
    // Killed once 700 remotes are done (a seeded point: the same every run).
    const child = spawn(process.execPath, [BIN, ...args(out)], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const lines = existsSync(join(state, 'done.jsonl'))
        ? readFileSync(join(state, 'done.jsonl'), 'utf8').split('\n').length - 1
        : 0;
      if (lines >= 700) break;
    }
    child.kill('SIGKILL');
    await exited;
    const startedBefore = new Map(reg.initializes);
    assert.ok(!existsSync(out), 'nothing published by the killed run');

    const resumed = await runCli(args(out, '--resume'));
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /census: 2300 servers, 2000 remotes: \d+ probed \(\d+ in this run\)/);

    // Politeness: one request at a time per host; never a remote the census must not contact.
    assert.equal(reg.mostInFlight(), 1, 'never two requests in flight on one host');
    assert.equal(reg.forbidden(), 0, 'SSE-only, templated and older-version remotes are never contacted');
    assert.deepEqual(
      [...reg.agents].map((a) => a.replace(/\/[\d.]+ /, '/<version> ')),
      ['onetap-census/<version> (+https://census.example/about)'],
      'every request names onetap and the census page, the diagnosis and auth reads too',
    );
    const probedAgain = [...startedBefore].filter(([i, n]) => (reg.initializes.get(i) ?? 0) > n);
    assert.ok(
      probedAgain.length <= CONCURRENCY,
      `at most --concurrency remotes probed again after the kill: ${probedAgain.length}`,
    );

    // Recorded once each: done.jsonl holds every probed URL once (a line cut by the kill aside).
    const done = (await readFile(join(state, 'done.jsonl'), 'utf8')).split('\n').flatMap((l) => {
      try {
        return [JSON.parse(l).url as string];
      } catch {
        return [];
      }
    });
    const probeable = Array.from({ length: REMOTES }, (_, i) => i)
      .filter((i) => kindOf(i) !== 'sse' && kindOf(i) !== 'templated')
      .map(reg.remoteUrl);
    assert.deepEqual([...new Set(done)].sort(), [...probeable].sort());
    assert.ok(
      done.length - new Set(done).size <= CONCURRENCY,
      'a URL is recorded again only if it was in flight at the kill',
    );

    // The records: one list document, no cursor, each server valid against the registry's schema.
    const doc = JSON.parse(await readFile(out, 'utf8')) as {
      servers: Array<{ server: { name: string; version: string }; _meta: Record<string, any> }>;
      metadata: Record<string, unknown>;
    };
    assert.deepEqual(doc.metadata, { count: SERVERS, publisher: 'io.example' });
    assert.equal(doc.servers.length, SERVERS);
    assert.equal(doc.metadata.count, SERVERS);
    for (const item of doc.servers) {
      assert.ok(validateRegistryServer(item.server).valid, item.server.name);
      assert.equal(item._meta['io.modelcontextprotocol.registry/official'].isLatest, true, 'the latest version only');
      // Each record is what its published schema (docs/reference/schemas/Verification.schema.json) says, no more.
      const parsed = verificationSchema.safeParse(item._meta['io.example/verification']);
      assert.ok(parsed.success, `${item.server.name}: ${parsed.error?.message}`);
    }
    const byName = new Map(doc.servers.map((item) => [item.server.name, item]));
    const nameOf = (i: number) => `io.example.census/server-${String(i).padStart(5, '0')}`;
    const record = (i: number) => byName.get(nameOf(i))!._meta['io.example/verification'];
    assert.equal(byName.get(nameOf(0))!.server.version, '1.1.0', 'not the older version listed before it');
    const packaged = doc.servers.filter((item) => item.server.name.startsWith('io.example.packages/'));
    assert.equal(packaged.length, PACKAGE_ONLY);
    assert.ok(
      packaged.every((item) => item._meta['io.example/verification'].remotes.length === 0),
      'a server with no remote: recorded, with nothing to verify',
    );
    const v = record(0);
    assert.deepEqual(Object.keys(v), [
      'verifier',
      'verifiedAt',
      'expiresAt',
      'method',
      'remotes',
      'serverJson',
      'skipped',
    ]);
    assert.deepEqual(
      [v.serverJson, v.skipped],
      [{ schema: '2025-12-11', valid: true, why: null }, null],
      'validated against the vendored schema',
    );
    assert.equal(Date.parse(v.expiresAt) - Date.parse(v.verifiedAt), 14 * 86_400_000);
    assert.equal(v.method.signed, false);
    for (let i = 0; i < 40; i++) {
      const r = record(i).remotes[0];
      const kind = kindOf(i);
      if (TOKENS[kind] !== undefined) assert.equal(r.tokens, TOKENS[kind], `${i} (${kind}): golden tokens`);
      if (kind === 'sse' || kind === 'templated')
        assert.deepEqual([r.verdict, r.evidence, r.checks.reachable], ['not probed', null, 'not run']);
      if (kind === 'small')
        assert.deepEqual(r.checks, {
          reachable: 'passed',
          mcp: 'passed',
          tools: 'passed',
          auth: 'passed',
          'one-tap': 'passed',
        });
      if (kind === 'auth')
        assert.deepEqual([r.checks.reachable, r.checks.auth, r.checks['one-tap']], ['passed', 'failed', 'failed']);
      if (kind === 'missing') assert.deepEqual([r.verdict, r.checks.mcp], ['drop', 'failed']);
      if (kind === 'keyed')
        assert.equal(
          r.verdict,
          'live',
          'a remote declaring a required header is probed as auth-optional: the keyless handshake decides',
        );
      if (r.evidence) {
        const json = await readFile(join(dir, 'evidence', `${r.evidence}.json`), 'utf8');
        assert.equal(evidenceDigest(json), r.evidence, 'the evidence file is what its digest names');
      }
    }
    // The same tool set under other hosts: named (ten at most), and a renamed copy shares the name-blind digest.
    const at = (kind: string) => record([...Array(40).keys()].find((i) => kindOf(i) === kind)!).remotes[0];
    assert.equal(at('small').sameToolsAs.length, 10);
    assert.ok(
      at('small').sameToolsAs.every(
        (s: { name: string; digest: string }) => s.digest === 'tools' && s.name !== nameOf(0),
      ),
    );
    const observed = async (kind: string) =>
      JSON.parse(await readFile(join(dir, 'evidence', `${at(kind).evidence}.json`), 'utf8'));
    const [small, renamed] = [await observed('small'), await observed('renamed')];
    assert.equal(renamed.nameBlindDigest, small.nameBlindDigest);
    assert.notEqual(renamed.toolsDigest, small.toolsDigest);
  });

  it('the census page (site --census, in Chromium: counts, the tokens chart, hosts, search) and serve --census (/v0.1/servers page by page)', async (t) => {
    const out = join(dir, 'census.json');
    const site = join(dir, 'site');
    assert.equal((await runCli(['site', '--census', out, '--out', site])).code, 0);
    assert.equal(await readFile(join(site, 'v0.1', 'servers'), 'utf8'), await readFile(out, 'utf8'));

    const served = spawn(process.execPath, [BIN, 'serve', '--census', out, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const origin = await new Promise<string>((resolve) =>
        served.stdout!.once('data', (d) => resolve(/serving (\S+)\//.exec(String(d))![1]!)),
      );
      const names: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 30; pages++) {
        const page = (await (
          await fetch(`${origin}/v0.1/servers?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        ).json()) as { servers: Array<{ server: { name: string } }>; metadata: { count: number; nextCursor?: string } };
        names.push(...page.servers.map((x) => x.server.name));
        cursor = page.metadata.nextCursor;
        if (!cursor) break;
      }
      assert.equal(names.length, SERVERS);
      assert.equal(new Set(names).size, SERVERS, 'each server once across the pages');
      assert.equal((await fetch(`${origin}/v0.1/servers?cursor=nope`)).status, 400);
      assert.match(await (await fetch(`${origin}/census`)).text(), /<h1>MCP Registry census<\/h1>/);
    } finally {
      served.kill('SIGTERM');
    }

    if (!existsSync('/usr/bin/chromium')) {
      if (process.env.CI) assert.fail('Chromium is missing on CI: .ci/run installs the Debian package chromium');
      return t.skip('no /usr/bin/chromium');
    }
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await page.goto(`file://${join(site, 'index.html')}`);
      const counts = await page.$$eval('#verdicts li', (lis) => lis.map((li) => li.textContent));
      assert.ok(
        counts.some((c) => /^1,\d{3} live$/.test(c ?? '')),
        counts.join(' | '),
      );
      assert.equal(await page.$$eval('#tokens .hist i', (bars) => bars.length), 7, 'the tokens chart: seven ranges');
      assert.equal(await page.$$eval('#hosts tbody tr', (rows) => rows.length), 20);
      const visible = () =>
        page.$$eval('#remotes tbody tr', (rows) => rows.filter((r) => !(r as HTMLElement).hidden).length);
      assert.equal(await visible(), REMOTES);
      await page.fill('#q', 'http-404');
      const shown = await visible();
      assert.ok(shown > 0 && shown < REMOTES / 5, `the search filters the rows (${shown} shown)`);
      assert.deepEqual(errors, [], "no error, and no script refused by the page's policy");
    } finally {
      await browser.close();
    }
  });

  it('an unreadable registry is exit 1 and nothing is written; a bad flag is exit 2 before any work', async () => {
    const out = join(dir, 'none.json');
    const r = await runCli([
      'census',
      '--registry',
      'http://127.0.0.1:9/',
      '--publisher',
      'io.example',
      '--out',
      out,
      '--allow-private',
      '--allow-http',
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^onetap: the registry could not be read/m);
    assert.ok(!existsSync(out));
    const bad = await runCli(['census', '--registry', reg.url, '--publisher', 'not a domain', '--out', out]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^onetap: --publisher: must be a reverse-domain name/m);
    const noState = await runCli([
      'census',
      '--registry',
      reg.url,
      '--publisher',
      'io.example',
      '--out',
      join(dir, 'other.json'),
      '--resume',
    ]);
    assert.equal(noState.code, 2);
    assert.match(noState.stderr, /^onetap: --resume: no census in /m);
    // A state directory whose registry is not what a census wrote: a clear error, nothing probed or published.
    const odd = join(dir, 'odd.state');
    await mkdir(odd, { recursive: true });
    await writeFile(join(odd, 'registry.jsonl'), '{"not":"a header"}\n');
    const oddRun = await runCli([
      'census',
      '--registry',
      reg.url,
      '--publisher',
      'io.example',
      '--out',
      join(dir, 'odd.json'),
      '--state-dir',
      odd,
      '--resume',
    ]);
    assert.equal(oddRun.code, 1, oddRun.stderr);
    assert.match(oddRun.stderr, /^onetap: .*registry\.jsonl: not the registry as a census read it/m);
    assert.ok(!existsSync(join(dir, 'odd.json')));
  });
});
