/**
 * What a server costs and whether it is a copy, through the commands, against loopback servers whose tool lists
 * are the fixed lists of test/fixtures/tool-lists.ts (their o200k counts written down once from the tokenizer):
 * `probe` records the count (the keyed list when a key supplied it); `refresh` shows it, puts a list over
 * `policy.maxToolTokens` in review and flags entries serving the same set; `add` refuses a copy of a curated or a
 * removed entry unless `--allow-same-tools` (a reworded interface is reported, not refused); the report and the
 * status page show the list's total, its largest servers and its change since the run before.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';
import { AWKWARD, MANY, SMALL } from './fixtures/tool-lists.js';

const GOLDEN = { SMALL: 92, AWKWARD: 126, MANY: 3002 };
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** `node <args>` with NO_COLOR and `env` over this process's. */
function runNode(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, NO_COLOR: '1', ...env } });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('context cost and fingerprints through the commands', () => {
  let fleet: Fleet;
  let grown = false;
  before(async () => {
    const renamed = SMALL.map((t, i) => ({ ...t, name: `renamed_${i}` }));
    const reworded = SMALL.map((t) => ({ ...t, description: `In other words: ${t.description}` }));
    fleet = await startFleet({
      'small-a': (c) => answer(c, 'json', SMALL),
      'small-b': (c) => answer(c, 'sse', SMALL),
      'small-renamed': (c) => answer(c, 'json', renamed),
      'small-reworded': (c) => answer(c, 'json', reworded),
      awkward: (c) => answer(c, 'json', AWKWARD),
      many: (c) => answer(c, 'json', MANY),
      // Keyless, it lists the small set; with its key, the large one (the keyed list is what is counted).
      keyed: (c) => answer(c, 'json', c.req.headers['x-api-key'] === 'k-123' ? MANY : SMALL),
      growing: (c) => answer(c, 'json', grown ? [...SMALL, ...AWKWARD] : SMALL),
    });
  });
  after(() => fleet.close());

  it('probe records the o200k count of the list (the keyed one when a key supplied it), and none without a list', async () => {
    const r = await runCli([
      'probe',
      '--json',
      fleet.url('small-a'),
      fleet.url('awkward'),
      fleet.url('many'),
      fleet.url('http-404'),
    ]);
    const results = JSON.parse(r.stdout) as Array<{ tokens: number | null }>;
    assert.deepEqual(
      results.map((x) => x.tokens),
      [GOLDEN.SMALL, GOLDEN.AWKWARD, GOLDEN.MANY, null],
    );
    const table = await runCli(['probe', fleet.url('many')]);
    assert.match(table.stdout.split('\n')[0]!, /TOKENS$/);
    assert.match(table.stdout, /3,002\s*$/m);
    const keyed = await runCli(
      ['probe', '--json', '--requires-auth', '--probe-header', 'X-Api-Key: ${TEST_KEY}', fleet.url('keyed')],
      { env: { TEST_KEY: 'k-123' } },
    );
    assert.equal((JSON.parse(keyed.stdout) as Array<{ tokens: number }>)[0]!.tokens, GOLDEN.MANY, keyed.stderr);
  });

  it(
    'refresh: tokens per row, a list over policy.maxToolTokens in review, entries serving the same set flagged; ' +
      'the report and page show the total',
    async () => {
      const ws = await workspace(
        catalogOf(
          [
            server('Small A', fleet.url('small-a')),
            server('Small B', fleet.url('small-b')),
            server('Renamed', fleet.url('small-renamed')),
            server('Reworded', fleet.url('small-reworded')),
            server('Many', fleet.url('many')),
            server('Growing', fleet.url('growing')),
          ],
          { policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host], maxToolTokens: 1_000 } },
        ),
      );
      const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write', '--json']);
      assert.equal(r.code, 0, r.stderr);
      type Row = {
        name: string;
        decision: string;
        reason: string;
        tokens: number | null;
        sameToolsAs: Array<{ name: string; digest: string }>;
      };
      const plan = (JSON.parse(r.stdout) as { plan: Row[] }).plan;
      const by = Object.fromEntries(plan.map((x) => [x.name, x]));
      assert.deepEqual(
        plan.map((x) => x.tokens),
        [GOLDEN.SMALL, GOLDEN.SMALL, by.Renamed!.tokens, by.Reworded!.tokens, GOLDEN.MANY, GOLDEN.SMALL],
      );
      assert.deepEqual([by.Many!.decision, by.Many!.reason], ['review', 'context-budget']);
      assert.deepEqual([by['Small A']!.decision, by['Small A']!.reason], ['keep', 'ok']);
      const same = (name: string) => by[name]!.sameToolsAs.map((s) => `${s.name}:${s.digest}`);
      assert.deepEqual(same('Small A'), [
        'Small B:tools',
        'Growing:tools',
        'Renamed:name-blind',
        'Reworded:description-blind',
      ]);
      assert.deepEqual(same('Renamed'), ['Small A:name-blind', 'Small B:name-blind', 'Growing:name-blind']);
      assert.deepEqual(same('Many'), []);

      grown = true;
      const second = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write', '--json']);
      const tokens = (JSON.parse(second.stdout) as { plan: Row[] }).plan.map((x) => x.tokens!);
      const total = tokens.reduce((a, b) => a + b, 0);
      const change = total - plan.reduce((a, x) => a + x.tokens!, 0);
      assert.ok(change > GOLDEN.AWKWARD / 2, 'Growing grew');
      const md = await runCli(['report', '--markdown', '--catalog', ws.catalogPath]);
      assert.match(
        md.stdout,
        new RegExp(
          `\\*\\*Context cost\\*\\*: ${total.toLocaleString('en')} tokens for 6 servers' tools \\(largest: Many ` +
            `3,002, Growing ${tokens[5]!.toLocaleString('en')}, Reworded [\\d,]+\\); \\+${change.toLocaleString('en')} since the run before\\.`,
        ),
      );
      assert.match(md.stdout, /\*\*Same tool set as another server\*\*/);
      const html = `${ws.dir}/report.html`;
      assert.equal((await runCli(['report', '--html', html, '--catalog', ws.catalogPath])).code, 0);
      const page = await readFile(html, 'utf8');
      assert.match(page, new RegExp(`<strong>${total.toLocaleString('en')}</strong> tokens of tool definitions`));
      assert.equal((page.match(/<i style="height:\d+%" data-id=/g) ?? []).length, 6, 'one bar per server');
    },
  );

  it('add refuses a copy of a curated or a removed entry (naming it) unless --allow-same-tools; a reworded interface is reported, not refused', async () => {
    const ws = await workspace(
      catalogOf([server('Small A', fleet.url('small-a')), server('Gone', fleet.url('awkward'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] },
      }),
    );
    assert.equal((await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write'])).code, 0);
    // "Gone" leaves the list; what it served is still in the history.
    const catalog = JSON.parse(await readFile(ws.catalogPath, 'utf8'));
    catalog.removed = [
      { name: 'Gone', url: catalog.servers[1].url, reason: 'http-404', removedAt: '2026-12-01', description: 'x' },
    ];
    catalog.servers = catalog.servers.slice(0, 1);
    await writeFile(ws.catalogPath, JSON.stringify(catalog, null, 2));
    const add = (path: string, ...extra: string[]) =>
      runCli([
        'add',
        fleet.url(path),
        '--name',
        `Copy of ${path}`,
        '--description',
        'd',
        '--decision',
        'Ada: asked for',
        '--catalog',
        ws.catalogPath,
        '--allow-http',
        ...extra,
      ]);

    const renamed = await add('small-renamed');
    assert.equal(renamed.code, 1);
    assert.match(
      renamed.stderr,
      /refused .*: serves the same tool set as servers\[0\] \(Small A\): the same tools, renamed \(its name-blind digest matched\); --allow-same-tools/,
    );
    const copyOfRemoved = await runCli([
      'add',
      `${fleet.url('awkward')}?copy=1`,
      '--name',
      'Awkward copy',
      '--description',
      'd',
      '--decision',
      'Ada: asked',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--json',
    ]);
    assert.equal(copyOfRemoved.code, 1);
    const refused = JSON.parse(copyOfRemoved.stdout) as {
      problems: string[];
      sameToolsAs: Array<{ name: string; digest: string }>;
    };
    assert.match(refused.problems[0]!, /same tool set as removed\[0\] \(Gone\)/);
    assert.deepEqual(
      refused.sameToolsAs.map((s) => [s.name, s.digest]),
      [['Gone', 'tools']],
    );

    const allowed = await add('small-renamed', '--allow-same-tools');
    assert.equal(allowed.code, 0, allowed.stderr);
    const written = JSON.parse(await readFile(ws.catalogPath, 'utf8')).servers.at(-1);
    assert.match(
      written.decision.why,
      /^asked for; serves the same tool set as servers\[0\] \(Small A\) \(name-blind\): added with --allow-same-tools$/,
    );

    const reworded = await add('small-reworded');
    assert.equal(reworded.code, 0, reworded.stderr);
    assert.match(
      reworded.stderr,
      /onetap: note: Copy of small-reworded serves the same interface, reworded as Small A/,
    );
  });

  it('a run where no tool list changed loads no tokenizer and records the same counts (kept in the user cache)', async () => {
    // The same CLI installed without its tokenizer's code: a run that needs it cannot count (the first check shows it).
    const root = await mkdtemp(join(tmpdir(), 'onetap-no-tokenizer-'));
    try {
      const pkg = join(root, 'pkg');
      await mkdir(join(pkg, 'node_modules'), { recursive: true });
      for (const name of ['package.json', 'bin', 'dist']) await symlink(join(REPO, name), join(pkg, name));
      for (const name of await readdir(join(REPO, 'node_modules')))
        if (name !== 'gpt-tokenizer') await symlink(join(REPO, 'node_modules', name), join(pkg, 'node_modules', name));
      // Its package.json (the counter's identity reads the version) and none of its code.
      await mkdir(join(pkg, 'node_modules', 'gpt-tokenizer'));
      await copyFile(
        join(REPO, 'node_modules', 'gpt-tokenizer', 'package.json'),
        join(pkg, 'node_modules', 'gpt-tokenizer', 'package.json'),
      );
      const withoutTokenizer = (args: string[], cache: string) =>
        runNode(['--preserve-symlinks', '--preserve-symlinks-main', join(pkg, 'bin', 'onetap'), ...args], {
          ONETAP_CACHE_DIR: cache,
        });
      const urls = [fleet.url('small-a'), fleet.url('awkward'), fleet.url('many')];
      const tokensOf = (stdout: string) =>
        (JSON.parse(stdout) as Array<{ tokens: number | null; tokensError: string | null }>).map((x) => x.tokens);

      const never = await withoutTokenizer(['probe', '--json', ...urls], join(root, 'empty-cache'));
      assert.deepEqual(tokensOf(never.stdout), [null, null, null], 'without its tokenizer and no kept count, none');

      const cache = join(root, 'cache');
      const first = await runCli(['probe', '--json', ...urls], { env: { ONETAP_CACHE_DIR: cache } });
      assert.deepEqual(tokensOf(first.stdout), [GOLDEN.SMALL, GOLDEN.AWKWARD, GOLDEN.MANY], first.stderr);
      const again = await withoutTokenizer(['probe', '--json', ...urls], cache);
      assert.deepEqual(tokensOf(again.stdout), tokensOf(first.stdout), again.stderr);

      const off = await withoutTokenizer(['probe', '--json', ...urls], '');
      assert.deepEqual(tokensOf(off.stdout), [null, null, null], 'ONETAP_CACHE_DIR empty: no kept count is read');
      const file = join(root, 'not-a-folder');
      await writeFile(file, '');
      const bad = await runCli(['probe', '--json', urls[0]!], { env: { ONETAP_CACHE_DIR: file } });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /ONETAP_CACHE_DIR: .* is not a folder/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
