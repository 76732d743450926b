/**
 * The GitHub Action and the example workflow: both validated against the official schemas with
 * action-validator, and the action's shell steps (action/run.sh, action/check.sh) run here with the inputs
 * GitHub would give them: a fresh clone of a local bare repository per simulated week as GITHUB_WORKSPACE,
 * GITHUB_OUTPUT in a temporary file, and the refresh against loopback servers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server } from './helpers.js';
import { GIT_ENV, ROOT, git, runAction } from './action-run.js';
import type { Catalog } from '../src/index.js';

const VALIDATOR = join(ROOT, 'node_modules', '.bin', 'action-validator');

let fleet: Fleet;
let tmp: string;
/** The text history in git (issue 11, item 1) is in this build: `refresh --record` exists. */
let historyInGit = false;

/** A bare repository holding `catalog/servers.json` on main, as the list's repository would. */
async function remoteWith(catalog: Catalog): Promise<string> {
  const remote = await mkdtemp(join(tmp, 'remote-'));
  git(remote, 'init', '--quiet', '--bare', '--initial-branch=main');
  const seed = await mkdtemp(join(tmp, 'seed-'));
  git(seed, 'init', '--quiet', '--initial-branch=main');
  await mkdir(join(seed, 'catalog'));
  await writeFile(join(seed, 'catalog', 'servers.json'), JSON.stringify(catalog, null, 2) + '\n');
  await writeFile(join(seed, '.gitignore'), '.onetap/\n');
  git(seed, 'add', '.');
  git(seed, 'commit', '--quiet', '-m', 'the list');
  git(seed, 'push', '--quiet', remote, 'main');
  return remote;
}

/** A fresh runner's checkout: nothing but what git holds. */
async function freshClone(remote: string): Promise<string> {
  const dir = await mkdtemp(join(tmp, 'week-'));
  git(tmp, 'clone', '--quiet', remote, dir);
  return dir;
}

const historyLines = (remote: string, branch: string) => {
  let files: string[];
  try {
    files = git(remote, 'ls-tree', '-r', '--name-only', branch, '--', 'catalog/history').split('\n').filter(Boolean);
  } catch {
    return [];
  }
  return files.flatMap((f) => git(remote, 'show', `${branch}:${f}`).split('\n').filter(Boolean));
};

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'onetap-action-'));
  fleet = await startFleet({ dying: (c) => (c.state.dead ? void c.res.writeHead(404).end('gone') : answer(c)) });
  historyInGit = (await runCli(['refresh', '--help'])).stdout.includes('--record');
});
after(async () => {
  await fleet.close();
});

describe('action.yml and the example workflow', () => {
  const validate = (file: string) => {
    try {
      return { code: 0, out: execFileSync(VALIDATOR, [file], { encoding: 'utf8', stdio: 'pipe' }) };
    } catch (err) {
      const e = err as { status: number; stdout: string; stderr: string };
      return { code: e.status, out: `${e.stdout}${e.stderr}` };
    }
  };

  it('validate against the official schemas (and a broken copy does not)', async () => {
    for (const file of ['action.yml', 'examples/github/onetap-weekly.yml']) {
      const r = validate(join(ROOT, file));
      assert.equal(r.code, 0, `${file}: ${r.out}`);
    }
    const broken = join(tmp, 'broken-action.yml');
    await writeFile(
      broken,
      (await readFile(join(ROOT, 'action.yml'), 'utf8')).replace('using: composite', 'using: compost'),
    );
    assert.notEqual(validate(broken).code, 0);
    const brokenWorkflow = join(tmp, 'broken-workflow.yml');
    await writeFile(
      brokenWorkflow,
      (await readFile(join(ROOT, 'examples/github/onetap-weekly.yml'), 'utf8')).replace('pages: write', 'pages: writ'),
    );
    assert.notEqual(validate(brokenWorkflow).code, 0);
  });

  it('the workflow: weekly and on demand, no permission by default, Pages with hidden files, a pull-request check', async () => {
    const wf = await readFile(join(ROOT, 'examples/github/onetap-weekly.yml'), 'utf8');
    assert.match(wf, /^ {2}schedule:\n {4}- cron: '[^']+'/m);
    assert.match(wf, /^ {2}workflow_dispatch:/m);
    assert.match(wf, /^ {2}pull_request:/m);
    assert.match(wf, /^permissions: \{\}$/m);
    assert.match(
      wf,
      /uses: actions\/upload-pages-artifact@[0-9a-f]{40} # v\d+\.\d+\.\d+\n\s+with:\n\s+path: _site\n\s+include-hidden-files: true/,
    );
    assert.match(wf, /uses: actions\/deploy-pages@[0-9a-f]{40} # v\d+\.\d+\.\d+\n/);
    assert.match(wf, /mode: check/);
    assert.ok(
      !existsSync(join(ROOT, '.github', 'workflows', 'onetap-weekly.yml')),
      "an example, not this repository's own workflow",
    );
    const action = await readFile(join(ROOT, 'action.yml'), 'utf8');
    assert.match(action, /uses: peter-evans\/create-pull-request@[0-9a-f]{40} # v\d+\.\d+\.\d+\n/);
    assert.match(action, /uses: actions\/setup-node@[0-9a-f]{40} # v\d+\.\d+\.\d+\n\s+with:\n\s+node-version: 20/);
  });
});

describe('action/run.sh: weekly refresh in fresh clones', () => {
  it(
    'commits only the history to the default branch, leaves the pull request content, and drops a dead server when ' +
      'its streak completes across clones',
    async () => {
      // Two servers of the loopback fleet share its host: declared, so the catalog passes lint and the site publishes.
      const policy = { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] };
      const remote = await remoteWith(
        catalogOf([server('Steady', fleet.url('ok-json')), server('Dying', fleet.url('dying'))], { policy }),
      );
      const inputs = {
        write: 'true',
        'allow-http': 'true',
        timeout: '2000',
        'confirm-drops': '2',
        'site-dir': '_site',
        'site-base-url': 'https://example.github.io/list',
      };
      const mainBefore = git(remote, 'rev-parse', 'main');

      // Week 1: everything live.
      const week1 = await freshClone(remote);
      const r1 = await runAction(tmp, 'run.sh', week1, inputs);
      assert.equal(r1.code, 0, r1.stdout + r1.stderr);
      assert.deepEqual(
        [
          r1.outputs.changed,
          r1.outputs.outage,
          r1.outputs.total,
          r1.outputs.keep,
          r1.outputs['keep-failed'],
          r1.outputs.review,
          r1.outputs.drop,
        ],
        ['true', 'false', '2', '2', '0', '0', '0'],
      );
      assert.deepEqual(r1.outputs['pr-paths']!.split('\n'), [
        'catalog/servers.json',
        'catalog/tools.lock.json',
        'catalog/generated/popular-servers.json',
        'catalog/generated/popular-servers.ts',
        'catalog/generated/PopularMcpServers.kt',
        'catalog/servers.md',
        'catalog/log.md',
      ]);
      assert.match(await readFile(r1.outputs['report-path']!, 'utf8'), /\| Steady \|/);
      assert.ok(
        existsSync(join(week1, '_site', 'index.html')) &&
          existsSync(join(week1, '_site', '.well-known', 'ai-catalog.json')),
      );
      assert.equal(r1.outputs['site-path'], '_site');
      // The pull request's content waits in the working tree for create-pull-request; the history is not part of it.
      const dirty = git(week1, 'status', '--porcelain', '--untracked-files=all').split('\n');
      assert.ok(
        dirty.some((l) => l.endsWith('catalog/servers.md')),
        dirty.join('\n'),
      );
      assert.ok(!dirty.some((l) => l.includes('catalog/history/')), dirty.join('\n'));
      assert.ok(
        !git(remote, 'ls-tree', '-r', '--name-only', 'main').includes('servers.md'),
        'generated files go through the pull request only',
      );
      if (historyInGit) {
        assert.match(r1.outputs['history-commit']!, /^[0-9a-f]{40}$/);
        assert.equal(git(remote, 'rev-parse', 'main'), r1.outputs['history-commit']);
        assert.equal(git(remote, 'rev-parse', 'main^'), mainBefore);
        // The month files and the tool snapshots (history/snapshots/<hash>.json) are history.
        assert.deepEqual(
          git(remote, 'diff', '--name-only', 'main^', 'main')
            .split('\n')
            .every((f) => /^catalog\/history\//.test(f)),
          true,
        );
        assert.equal(
          git(week1, 'rev-parse', 'HEAD'),
          r1.outputs['history-commit'],
          'the checkout stands on the pushed history',
        );
      }

      // Week 2: Dying answers 404; the pull request of week 1 was never merged. The first drop-class run is kept.
      fleet.state('dying').dead = true;
      const r2 = await runAction(tmp, 'run.sh', await freshClone(remote), inputs);
      assert.equal(r2.code, 0, r2.stdout + r2.stderr);
      assert.deepEqual([r2.outputs['keep-failed'], r2.outputs.drop], ['1', '0']);

      // Week 3: a new clone again, nothing outside git; the streak of two completes.
      const week3 = await freshClone(remote);
      const r3 = await runAction(tmp, 'run.sh', week3, inputs);
      assert.equal(r3.code, 0, r3.stdout + r3.stderr);
      if (historyInGit) {
        assert.equal(r3.outputs.drop, '1', 'the streak was read from the history in git');
        const catalog = JSON.parse(await readFile(join(week3, 'catalog', 'servers.json'), 'utf8')) as Catalog;
        assert.deepEqual(
          catalog.removed.map((r) => r.name),
          ['Dying'],
        );
        assert.equal(git(remote, 'rev-list', '--count', `${mainBefore}..main`), '3', 'one history commit per week');
      }
      fleet.state('dying').dead = false;
    },
  );

  it('a quiet week: nothing changed, no pull request, the history still grows; dates only when they would go stale', async () => {
    const remote = await remoteWith(catalogOf([server('Steady', fleet.url('ok-json'))]));
    const inputs = { write: 'true', 'allow-http': 'true', timeout: '2000', 'history-branch': 'onetap-history' };
    const week1 = await freshClone(remote);
    const r1 = await runAction(tmp, 'run.sh', week1, inputs);
    assert.equal(r1.outputs.changed, 'true');
    // The maintainer merges the pull request.
    git(week1, 'add', 'catalog');
    git(week1, 'commit', '--quiet', '-m', 'merge the refresh');
    git(week1, 'push', '--quiet', 'origin', 'HEAD:main');

    const week2 = await freshClone(remote);
    const r2 = await runAction(tmp, 'run.sh', week2, inputs);
    assert.equal(r2.code, 0, r2.stdout + r2.stderr);
    assert.equal(r2.outputs.changed, 'false');
    assert.equal(
      git(
        week2,
        'status',
        '--porcelain',
        '--untracked-files=all',
        '--',
        'catalog/servers.json',
        'catalog/generated',
        'catalog/servers.md',
        'catalog/log.md',
      ),
      '',
    );
    if (historyInGit)
      assert.equal(git(remote, 'rev-list', '--count', 'onetap-history'), '2', 'the quiet run is in the history');

    // The next run is 14 days away: the snapshot would go stale first, so only its dates are refreshed.
    const week3 = await freshClone(remote);
    const r3 = await runAction(tmp, 'run.sh', week3, { ...inputs, 'next-run-days': '14' });
    assert.equal(r3.outputs.changed, 'true');
    assert.deepEqual(
      git(week3, 'status', '--porcelain', '--untracked-files=all', '--', 'catalog', ':!catalog/history').split('\n'),
      ['M catalog/servers.md'],
    );
    const diff = git(week3, 'diff', '-U0', '--', 'catalog/servers.md')
      .split('\n')
      .filter((l) => /^[-+][^-+]/.test(l));
    assert.ok(
      diff.every((l) => /^[-+]- (generated|stale_after): /.test(l)),
      diff.join('\n'),
    );
    assert.match(
      await readFile(r3.outputs['report-path']!, 'utf8'),
      /^> Nothing changed this run: this pull request only refreshes the snapshot's dates/,
    );
  });

  it('a data branch holds only the history and grows week by week; the default branch is untouched', async () => {
    const remote = await remoteWith(
      catalogOf([server('Steady', fleet.url('ok-json')), server('Other', fleet.url('ok-sse'))]),
    );
    const mainBefore = git(remote, 'rev-parse', 'main');
    const inputs = { write: 'true', 'allow-http': 'true', timeout: '2000', 'history-branch': 'onetap-history' };
    for (let week = 1; week <= 2; week++) {
      const r = await runAction(tmp, 'run.sh', await freshClone(remote), inputs);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.outputs['history-branch'], 'onetap-history');
      assert.equal(r.outputs.changed, 'true');
      if (historyInGit) {
        assert.deepEqual(
          git(remote, 'ls-tree', '-r', '--name-only', 'onetap-history')
            .split('\n')
            .filter((f) => !f.startsWith('catalog/history/')),
          [],
        );
        assert.equal(git(remote, 'rev-list', '--count', 'onetap-history'), String(week));
      }
    }
    assert.equal(git(remote, 'rev-parse', 'main'), mainBefore);
    if (historyInGit) {
      const lines = historyLines(remote, 'onetap-history');
      assert.ok(lines.length >= 2, lines.join('\n'));
    }
  });

  it('the outage guard: exit 0 with a warning annotation, the aborted line committed, no pull request content', async () => {
    // Port 9 (discard): below the ephemeral range, so no test's listener takes it; nothing listens there.
    const remote = await remoteWith(
      catalogOf([server('A', 'http://127.0.0.1:9/a'), server('B', 'http://127.0.0.1:9/b')]),
    );
    const clone = await freshClone(remote);
    const r = await runAction(tmp, 'run.sh', clone, { write: 'true', 'allow-http': 'true', timeout: '2000' });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^::warning title=onetap outage guard::The refresh was stopped by the outage guard: .+/m);
    assert.deepEqual([r.outputs.outage, r.outputs.changed], ['true', 'false']);
    assert.ok(r.outputs.aborted);
    assert.equal(
      git(
        clone,
        'status',
        '--porcelain',
        '--',
        'catalog/servers.json',
        'catalog/generated',
        'catalog/servers.md',
        'catalog/log.md',
      ),
      '',
    );
    if (historyInGit) {
      const lines = historyLines(remote, 'main');
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /aborted/);
    }
  });

  it('bad inputs exit 2 and an unreadable catalog exits 1, each with an error annotation and nothing pushed', async () => {
    const remote = await remoteWith(catalogOf([server('Steady', fleet.url('ok-json'))]));
    const before = git(remote, 'rev-parse', 'main');
    const clone = await freshClone(remote);
    for (const [inputs, code, message] of [
      [{ write: 'maybe' }, 2, /input write must be true or false/],
      [{ 'confirm-drops': '0' }, 2, /input confirm-drops must be a positive whole number/],
      [{ 'history-branch': 'a..b' }, 2, /history-branch is not a branch name/],
      [{ catalog: 'nope/servers.json' }, 1, /no catalog at nope\/servers\.json/],
      [{ 'max-file-bytes': '0' }, 2, /input max-file-bytes must be a positive whole number/],
      [{ vantages: 'eu,US' }, 2, /input vantages must be vantage names/],
      [{ quorum: '0' }, 2, /input quorum must be a positive whole number/],
      [{ 'run-id': 'week 1' }, 2, /input run-id must be letters, digits/],
      // A file over the size limit is never pushed, whatever wrote it; the message names it and the limit.
      [
        { 'max-file-bytes': '200' },
        1,
        /refusing to commit catalog\/history\/\S+: \d+ bytes, over the limit of 200 \(input max-file-bytes\); nothing was pushed/,
      ],
    ] as const) {
      const r = await runAction(tmp, 'run.sh', clone, { 'allow-http': 'true', ...inputs });
      assert.equal(r.code, code, JSON.stringify(inputs) + r.stdout + r.stderr);
      assert.match(r.stdout, /^::error title=onetap::/m);
      assert.match(r.stdout, message);
    }
    assert.equal(git(remote, 'rev-parse', 'main'), before);
  });
});

/**
 * A stand-in for onetap whose refresh appends one history line and, while it runs, lets another runner push
 * a history commit first: run.sh's git logic on its own, whatever the real history format is. Its settings come
 * from run.json beside it: run.sh hands the refresh none of the job's environment but the catalog's keys.
 */
const FAKE_ONETAP = `
const fs = require('fs'); const { execFileSync } = require('child_process');
const a = process.argv.slice(2);
const run = JSON.parse(fs.readFileSync(__dirname + '/run.json', 'utf8'));
if (a[0] === 'refresh') {
  const dir = require('path').dirname(a[a.indexOf('--catalog') + 1]) + '/history';
  fs.mkdirSync(dir, { recursive: true });
  fs.appendFileSync(dir + '/2026-11.jsonl', JSON.stringify({ run: run.RUN }) + '\\n');
  if (run.RACE_CLONE) {
    const git = (...args) => execFileSync('git', ['-C', run.RACE_CLONE, ...args], { env: { ...process.env, ...run.GIT_ENV } });
    fs.appendFileSync(run.RACE_CLONE + '/catalog/history/2026-11.jsonl', JSON.stringify({ run: 'concurrent' }) + '\\n');
    git('add', '.'); git('commit', '-qm', 'concurrent history'); git('push', '-q', 'origin', run.RACE_BRANCH);
  }
  console.log(JSON.stringify({ plan: [], summary: { total: 0, keep: 0, keepFailed: 0, review: 0, drop: 0, changed: \
0 }, aborted: null, probedAt: '2026-11-30T06:00:00.000Z' }));
} else if (a[0] === 'report') console.log('# report');
`;

describe('action/run.sh: the history commit when runs overlap', () => {
  for (const branch of ['main', 'onetap-history']) {
    it(`appends this run's lines to the ${branch === 'main' ? 'default' : 'data'} branch as another run left it`, async () => {
      const fake = await mkdtemp(join(tmp, 'fake-'));
      await mkdir(join(fake, 'bin'));
      await writeFile(join(fake, 'bin', 'onetap'), FAKE_ONETAP);
      const remote = await remoteWith(catalogOf([server('Steady', fleet.url('ok-json'))]));
      const inputs = { 'history-branch': branch };
      await writeFile(join(fake, 'bin', 'run.json'), JSON.stringify({ RUN: 'first' }));
      const first = await runAction(tmp, 'run.sh', await freshClone(remote), inputs, { GITHUB_ACTION_PATH: fake });
      assert.equal(first.code, 0, first.stdout + first.stderr);
      const other = await freshClone(remote);
      git(other, 'checkout', '--quiet', branch);
      const mine = await freshClone(remote);
      await writeFile(
        join(fake, 'bin', 'run.json'),
        JSON.stringify({ RUN: 'second', RACE_CLONE: other, RACE_BRANCH: branch, GIT_ENV }),
      );
      const r = await runAction(tmp, 'run.sh', mine, inputs, { GITHUB_ACTION_PATH: fake });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual(
        historyLines(remote, branch).map((l) => (JSON.parse(l) as { run: string }).run),
        ['first', 'concurrent', 'second'],
      );
      assert.equal(git(remote, 'rev-parse', branch), r.outputs['history-commit']);
      assert.equal(
        git(remote, 'rev-parse', `${branch}^`),
        git(other, 'rev-parse', 'HEAD'),
        "on top of the other run's commit",
      );
      assert.equal(
        await readFile(join(mine, 'catalog', 'history', '2026-11.jsonl'), 'utf8'),
        git(remote, 'show', `${branch}:catalog/history/2026-11.jsonl`) + '\n',
        'the working tree holds what was committed',
      );
    });
  }
});

describe('action/check.sh: the pull-request check', () => {
  it('lints, and attests only the rows the pull request adds or changes', async () => {
    // The loopback fleet is one host: declare it a shared gateway so lint takes several rows on it.
    const remote = await remoteWith(
      catalogOf([server('Steady', fleet.url('ok-json'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] },
      }),
    );
    const clone = await freshClone(remote);
    git(clone, 'checkout', '--quiet', '-b', 'add-servers');
    const path = join(clone, 'catalog', 'servers.json');
    const catalog = JSON.parse(await readFile(path, 'utf8')) as Catalog;
    const write = (c: Catalog) => writeFile(path, JSON.stringify(c, null, 2) + '\n');
    const steadyHits = () => fleet.hits('ok-json').POST;

    await write({ ...catalog, servers: [...catalog.servers, server('Fresh', fleet.url('ok-sse'))] });
    let hits = steadyHits();
    const good = await runAction(tmp, 'check.sh', clone, { 'allow-http': 'true', 'base-ref': 'main', timeout: '2000' });
    assert.equal(good.code, 0, good.stdout + good.stderr);
    assert.match(good.stdout, /1 row\(s\) added or changed/);
    assert.match(good.stdout, /Fresh \(http:\/\/127\.0\.0\.1:\d+\/ok-sse\): live\/ok/);
    assert.equal(good.outputs.checked, '1');
    assert.equal(steadyHits(), hits, 'an unchanged row is not probed');

    await write({ ...catalog, servers: [...catalog.servers, server('Gone', fleet.url('http-404'))] });
    const bad = await runAction(tmp, 'check.sh', clone, { 'allow-http': 'true', 'base-ref': 'main', timeout: '2000' });
    assert.equal(bad.code, 1);
    assert.match(
      bad.stdout,
      /^::error file=catalog\/servers\.json,title=onetap: not one-tap ready::Gone .*drop\/http-404/m,
    );

    // Without allow-http the lint rejects http:// and no private address is probed.
    await write({ ...catalog, servers: [...catalog.servers, server('Inside', 'https://169.254.169.254/mcp')] });
    hits = steadyHits();
    const inside = await runAction(tmp, 'check.sh', clone, { 'base-ref': 'main', timeout: '2000' });
    assert.equal(inside.code, 1);
    assert.match(inside.stdout, /Inside \(https:\/\/169\.254\.169\.254\/mcp\): refused: .*private or reserved/);

    const missingBase = await runAction(tmp, 'check.sh', clone, { 'allow-http': 'true', 'base-ref': '' });
    assert.equal(missingBase.code, 2);
  });
});
