/**
 * Adopting onetap in another list's repository (issue 21): the packed package installs with its runtime
 * dependencies only and no install script, `init` starts a list, a week that changes nothing writes nothing but
 * the history; `restore` puts a recovered server back; badges; a catalog that fails lint is still shown.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { BIN, catalogOf, launchChromium, runCli, server, snapshotDir, workspace } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let fleet: Fleet;
let browser: Browser | null = null;
const cleanup: string[] = [];
before(async () => {
  fleet = await startFleet();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await fleet.close();
  for (const d of cleanup) await rm(d, { recursive: true, force: true });
});

/** Runs a command in `cwd`, resolving with its exit code and output (never throws). */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, NO_COLOR: '1', ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe("the package in another list's repository", () => {
  it('packs, installs with --ignore-scripts, inits a list; an unchanged second week changes no file but the history', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'onetap-adopt-'));
    cleanup.push(tmp);
    // The build is the one npm test made (prepack would run tsc again).
    const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp, '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const tarball = join(tmp, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
    const list = join(tmp, 'our-list');
    execFileSync('git', ['init', '--quiet', list]);
    await writeFile(join(list, 'package.json'), '{"name":"our-list","private":true}\n');
    // The runtime dependencies come from the npm cache `npm ci` filled (the registry only for what it lacks); nothing
    // is compiled or run.
    const install = await run(
      'npm',
      ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '-D', tarball],
      list,
    );
    assert.equal(install.code, 0, install.out);
    assert.ok(!existsSync(join(list, 'node_modules', 'typescript')), 'no dev dependency installed');

    const init = await run('npx', ['--no-install', 'onetap', 'init'], list);
    assert.equal(init.code, 0, init.out);
    assert.match(init.out, /Next:\n {2}npx onetap add /);
    const again = await run('npx', ['--no-install', 'onetap', 'init'], list);
    assert.equal(again.code, 1);
    assert.match(again.out, /catalog\/servers\.json exists: init never overwrites a file/);
    assert.equal(
      (await run('npx', ['--no-install', 'onetap', 'lint'], list)).code,
      0,
      'lint of what init wrote is clean',
    );

    // A loopback server into the list (the catalog allows http:// on loopback for this test only).
    const add = await run(
      'npx',
      [
        '--no-install',
        'onetap',
        'add',
        fleet.url('ok-json'),
        '--name',
        'Steady',
        '--description',
        'Answers every week',
        '--decision',
        'test: a loopback fixture',
        '--allow-http',
      ],
      list,
    );
    assert.equal(add.code, 0, add.out);
    const first = await run('npx', ['--no-install', 'onetap', 'refresh', '--write', '--allow-http'], list);
    assert.equal(first.code, 0, first.out);
    const before = await snapshotDir(list);
    const second = await run('npx', ['--no-install', 'onetap', 'refresh', '--write', '--allow-http', '--json'], list);
    assert.equal(second.code, 0, second.out);
    const plan = JSON.parse(second.out.slice(second.out.indexOf('{')));
    assert.equal(plan.quiet, true);
    const after = await snapshotDir(list);
    const changed = Object.keys(after)
      .filter((p) => after[p] !== before[p])
      .map((p) => p.slice(list.length + 1));
    assert.deepEqual(
      changed,
      ['catalog/history/' + new Date().toISOString().slice(0, 7) + '.jsonl'],
      'only the history grew',
    );
    assert.deepEqual(
      plan.written,
      changed.map((p) => join('catalog', p.slice('catalog/'.length))),
    );

    // The agent config of docs/agents.md, as a client runs it in the list's directory.
    const client = new Client({ name: 'onetap-adopt-test', version: '1.0' });
    await client.connect(
      new StdioClientTransport({
        command: 'npx',
        args: ['--no-install', 'onetap', 'mcp'],
        cwd: list,
        stderr: 'ignore',
      }),
    );
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('lint'), tools.join(', '));
      const lint = await client.callTool({ name: 'lint', arguments: {} });
      assert.equal(lint.isError ?? false, false, JSON.stringify(lint));
    } finally {
      await client.close();
    }
  });
});

describe('restore', () => {
  it('puts a recovered server back with its description and a new decision; refuses a permanent one', async () => {
    const ws = await workspace(
      catalogOf([], {
        removed: [
          {
            name: 'Back',
            url: fleet.url('ok-json'),
            description: 'It recovered',
            reason: 'http-404',
            removedAt: '2026-11-01',
          },
          { name: 'Gone', url: 'https://gone.example/mcp', reason: 'dead', removedAt: null, permanent: true },
        ],
      }),
    );
    const refused = await runCli([
      'restore',
      'Gone',
      '--decision',
      'me: try',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /marked permanent: it is never added back/);
    const restored = await runCli([
      'restore',
      'back',
      '--decision',
      'me: it answers again',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--json',
    ]);
    assert.equal(restored.code, 0, restored.stderr);
    const catalog = JSON.parse(await readFile(ws.catalogPath, 'utf8'));
    assert.deepEqual(
      catalog.removed.map((r: { name: string }) => r.name),
      ['Gone'],
    );
    assert.deepEqual(
      [
        catalog.servers[0].name,
        catalog.servers[0].description,
        catalog.servers[0].decision.by,
        catalog.servers[0].decision.why,
      ],
      ['Back', 'It recovered', 'me', 'it answers again'],
    );
    const none = await runCli(['restore', 'Nobody', '--decision', 'me: x', '--catalog', ws.catalogPath]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no removed entry is named "Nobody"/);
  });

  it('a dropped row keeps its description and the decision that added it', async () => {
    const ws = await workspace(catalogOf([server('Dying', fleet.url('http-410'))]));
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--write', '--allow-http']);
    assert.equal(r.code, 0, r.stderr);
    const removed = JSON.parse(await readFile(ws.catalogPath, 'utf8')).removed[0];
    assert.equal(removed.description, 'Dying does a real job');
    assert.deepEqual(removed.added, { by: 'test', at: '2026-11-30', why: 'fixture' });
  });
});

/** `onetap serve` on a free port: its URL, and a stop. */
async function serve(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /serving (http:\/\/[^/\s]+)\//.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { url, child };
}

describe('badges and a catalog that fails lint', () => {
  it("a badge per server and one for the list, the same from serve and site; a removed server's answers 404", async () => {
    const ws = await workspace(
      catalogOf([server('Up', fleet.url('ok-json')), server('Down', fleet.url('http-500'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] },
        removed: [{ name: 'Old', url: 'https://old.example/mcp', reason: 'dead', removedAt: null }],
      }),
    );
    await runCli(['refresh', '--catalog', ws.catalogPath, '--record', '--allow-http']);
    const { url, child } = await serve(['--catalog', ws.catalogPath, '--allow-http']);
    try {
      const up = await fetch(`${url}/badge/up.svg`);
      assert.equal(up.status, 200);
      assert.equal(up.headers.get('content-type'), 'image/svg+xml');
      const svg = await up.text();
      assert.match(svg, /<text[^>]*>one-tap<\/text><text[^>]*>live<\/text>/);
      assert.match(svg, /fill="#1a7f37"/, 'the live colour of the status page');
      assert.doesNotMatch(svg, /@import|url\(|href=|<link|@font-face/, 'nothing fetched: no external font or image');
      assert.match(
        await (await fetch(`${url}/badge/down.svg`)).text(),
        /fill="#cf222e"[\s\S]*<text[^>]*>drop<\/text>/,
        'a 500 is drop-class (policy)',
      );
      assert.match(await (await fetch(`${url}/badge/list.svg`)).text(), /1\/2 live/);
      assert.equal((await fetch(`${url}/badge/old.svg`)).status, 404);
      const out = join(ws.dir, 'site');
      const site = await runCli(['site', '--catalog', ws.catalogPath, '--out', out, '--allow-http']);
      assert.equal(site.code, 0, site.stderr);
      assert.equal(readFileSync(join(out, 'badge', 'up.svg'), 'utf8'), svg);
      assert.ok(!existsSync(join(out, 'badge', 'old.svg')));
    } finally {
      child.kill();
    }
  });

  it('serve shows the status page of a catalog that fails lint, with its findings, in Chromium; published documents 503', async (t) => {
    if (!browser) {
      if (process.env.CI) assert.fail('Chromium is missing on CI: .ci/run installs the Debian package chromium');
      return t.skip('no /usr/bin/chromium (apt-get install chromium)');
    }
    const ws = await workspace(
      catalogOf([
        server('No Decision', 'https://nodecision.example/mcp', { decision: undefined }),
        server('Fine', 'https://fine.example/mcp'),
      ]),
    );
    const { url, child } = await serve(['--catalog', ws.catalogPath]);
    try {
      const page = await browser.newPage();
      await page.goto(`${url}/`);
      const banner = page.locator('#lint-problems');
      assert.match(await banner.innerText(), /The catalog fails lint \(2 findings\)/);
      assert.match(await banner.innerText(), /servers\[0\] \(No Decision\)\s+no decision record/);
      assert.equal((await page.locator('.servers').getByText('Fine').count()) > 0, true, 'the servers are listed');
      await page.close();
      const doc = await fetch(`${url}/.well-known/ai-catalog.json`);
      assert.equal(doc.status, 503);
      assert.match(JSON.stringify(await doc.json()), /no decision record/);
    } finally {
      child.kill();
    }
    const site = await runCli(['site', '--catalog', ws.catalogPath, '--out', join(ws.dir, 'site')]);
    assert.equal(site.code, 0, 'the site is written, as serve still serves');
    assert.match(
      site.stderr,
      /no decision record[\s\S]*the published documents are not/,
      'the findings are named, as publish names them',
    );
    assert.ok(
      existsSync(join(ws.dir, 'site', 'index.html')) &&
        !existsSync(join(ws.dir, 'site', '.well-known', 'ai-catalog.json')),
    );
  });
});
