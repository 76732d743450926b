/**
 * The GitHub Action against hostile text and a hostile supply chain (issue item 5): no line it prints from
 * text it does not control (a server's JSON-RPC error, a pull request's catalog, onetap's own output quoting
 * them) reads as a workflow command; third-party actions pinned by commit; dependency lifecycle scripts off
 * in the install; the example workflow's pull_request paths cover every file under the catalog's directory.
 *
 * The action's scripts run here as in test/action.test.ts: a bare repository as origin, a fresh clone as
 * GITHUB_WORKSPACE, GITHUB_OUTPUT in a file, the servers on a loopback fleet.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { answer, json, startFleet, type Ctx, type Fleet } from './fleet/fleet.js';
import { catalogOf, server } from './helpers.js';
import { ROOT, git, runAction, type ActionRun } from './action-run.js';
import type { Catalog } from '../src/index.js';

/**
 * What servers and pull requests write where the action prints: modern and legacy workflow commands, line breaks of
 * every kind.
 */
const HOSTILE_MESSAGE =
  'first line\n::error::injected\r::add-mask::x\r\n  ::set-output name=changed::true\u2028::notice::ls\n##[warning]legacy ##[stop-commands]tok';
const rpcError = (message: string, on: 'initialize' | 'tools/list') => (c: Ctx) => {
  if (!c.msg || c.msg.id === undefined || c.msg.method !== on) return answer(c);
  json(c.res, 200, { jsonrpc: '2.0', id: c.msg.id, error: { code: -32602, message } });
};

let fleet: Fleet;
let tmp: string;

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'onetap-action-hardening-'));
  fleet = await startFleet({
    'rpc-stop-commands': rpcError('::stop-commands::x', 'initialize'),
    'rpc-warning': rpcError('::warning::from the server', 'tools/list'),
    'rpc-multi-line': rpcError(HOSTILE_MESSAGE, 'initialize'),
    'http-500-multi-line': (c) =>
      json(c.res, 500, { jsonrpc: '2.0', id: c.msg?.id ?? null, error: { code: -32000, message: HOSTILE_MESSAGE } }),
  });
});
after(async () => {
  await fleet.close();
});

async function cloneWith(catalog: Catalog): Promise<string> {
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
  const clone = await mkdtemp(join(tmp, 'clone-'));
  git(tmp, 'clone', '--quiet', remote, clone);
  return clone;
}

/** The action's own workflow commands; any other line that reads as a command is an injection. */
const OWN = [
  /^::error file=catalog\/servers\.json,title=onetap: not one-tap ready::/,
  /^::warning file=catalog\/servers\.json,title=onetap: probe failed::/,
  /^::error title=onetap::/,
  /^::warning title=onetap outage guard::/,
  /^::group::onetap refresh /,
  /^::endgroup::$/,
];

/**
 * Every line as the runner reads it (ended by CR, LF or CRLF; leading whitespace trimmed as .NET trims it):
 * a line that starts with `::` is one of the action's own commands, and no line holds the legacy `##[`.
 */
function assertNoInjectedCommand(run: ActionRun): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    for (const raw of run[stream].split(/\r\n|\r|\n/)) {
      const line = raw.replace(/^[\s\u0085]+/u, '');
      if (line.startsWith('::'))
        assert.ok(
          OWN.some((re) => re.test(line)),
          `${stream}: a workflow command the action did not write: ${JSON.stringify(raw)}`,
        );
      assert.ok(!raw.includes('##['), `${stream}: a legacy workflow command: ${JSON.stringify(raw)}`);
    }
  }
}

describe('action/check.sh: server and pull-request text never becomes a workflow command', () => {
  it('JSON-RPC errors that are commands (::stop-commands::, ::warning::, a multi-line \\n::error::) and names that are', {
    timeout: 60_000,
  }, async () => {
    const gateway = { policy: { authOptionalHosts: [], sharedGatewayHosts: [new URL(fleet.origin).host] } };
    const clone = await cloneWith(catalogOf([], gateway));
    git(clone, 'checkout', '--quiet', '-b', 'hostile');
    await writeFile(
      join(clone, 'catalog', 'servers.json'),
      JSON.stringify(
        catalogOf(
          [
            server('Stop', fleet.url('rpc-stop-commands')),
            server('Warn', fleet.url('rpc-warning')),
            server('Multi', fleet.url('rpc-multi-line')),
            server('Five hundred', fleet.url('http-500-multi-line')),
            server('::warning title=pwned::from the name', fleet.url('ok-json')),
            server('Line\n::error::from a name ##[error]legacy', fleet.url('ok-sse')),
          ],
          gateway,
        ),
        null,
        2,
      ) + '\n',
    );
    const r = await runAction(tmp, 'check.sh', clone, { 'allow-http': 'true', 'base-ref': 'main', timeout: '2000' });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /6 row\(s\) added or changed/);
    assertNoInjectedCommand(r);
    // The text is still there to read, on one line and visibly defused.
    assert.match(
      r.stdout,
      /^ {2}\\::warning title=pwned::from the name \(http:\/\/127\.0\.0\.1:\d+\/ok-json\): live\/ok/m,
    );
    assert.match(
      r.stdout,
      new RegExp(
        String.raw`^ {2}Multi \(.*\): review\/handshake-error.*first line ::error::injected ::add-mask::x +::set-out` +
          String.raw`put name=changed::true ::notice::ls #\\#\[warning\]legacy #\\#\[stop-commands\]tok`,
        'm',
      ),
    );
    assert.match(r.stdout, /^::error file=catalog\/servers\.json,title=onetap: not one-tap ready::Multi \(/m);
    assert.match(r.stdout, /^ {2}Stop \(.*\): review\/handshake-error/m);
  });
});

/** A stand-in for onetap whose refresh, report and site write hostile text on stderr and stdout. */
const FAKE_ONETAP = `
const a = process.argv.slice(2);
const hostile = ${JSON.stringify(`::stop-commands::tok\n  ::warning::from stderr\r::add-mask::x\n##[error]legacy\n${HOSTILE_MESSAGE}\n`)};
process.stderr.write(hostile);
if (a[0] === 'refresh') {
  console.log(JSON.stringify({ plan: [], summary: { total: 0, keep: 0, keepFailed: 0, review: 0, drop: 0, changed: \
0 }, aborted: null, probedAt: '2026-11-30T06:00:00.000Z' }));
} else if (a[0] === 'report') console.log('# report');
else if (a[0] === 'site') process.stdout.write(hostile);
`;

describe('action/run.sh: what onetap prints reaches the log through the filter', () => {
  it('stderr of refresh and report, and the output of site: no line is a workflow command', {
    timeout: 60_000,
  }, async () => {
    const fake = await mkdtemp(join(tmp, 'fake-'));
    await mkdir(join(fake, 'bin'));
    await writeFile(join(fake, 'bin', 'onetap'), FAKE_ONETAP);
    const clone = await cloneWith(catalogOf([server('Steady', fleet.url('ok-json'))]));
    const r = await runAction(
      tmp,
      'run.sh',
      clone,
      { write: 'false', 'site-dir': '_site' },
      { GITHUB_ACTION_PATH: fake },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assertNoInjectedCommand(r);
    assert.match(r.stderr, /^\\::stop-commands::tok$/m, 'the text is in the log, defused');
    assert.match(r.stdout, /^#\\#\[error\]legacy$/m, 'site output too');
  });
});

describe('action/log-safe.mjs', () => {
  type LogSafe = {
    logLine: (t: string) => string;
    commandData: (t: string) => string;
    commandProperty: (t: string) => string;
  };
  let safe: LogSafe;
  before(async () => {
    safe = (await import(pathToFileURL(join(ROOT, 'action', 'log-safe.mjs')).href)) as LogSafe;
  });

  it('one line, no leading ::, no ##[, hidden characters visible; command data and properties escaped', () => {
    assert.equal(safe.logLine('::stop-commands::x'), '\\::stop-commands::x');
    assert.equal(safe.logLine(' \u00a0\t::warning::x'), ' \u00a0\t\\::warning::x');
    assert.equal(safe.logLine('a\n::error::b\r\nc\u2028d'), 'a ::error::b c d');
    assert.equal(safe.logLine('x ##[warning]y ###[z'), 'x #\\#[warning]y ##\\#[z');
    assert.equal(safe.logLine('\u200B::warning::hidden in front'), '⟨U+200B⟩::warning::hidden in front');
    assert.equal(safe.logLine('bell\u0007 esc\u001b[2J'), 'bell\uFFFD esc\uFFFD[2J');
    assert.equal(safe.commandData('50% done\n::error::x'), '50%25 done ::error::x');
    assert.equal(safe.commandProperty('a:b,c'), 'a%3Ab%2Cc');
    assert.equal(safe.logLine('family 👨‍👩‍👧 and می‌خواهم'), 'family 👨‍👩‍👧 and می‌خواهم');
  });

  it('as a filter: every line of stdin, ended by CR, LF or CRLF', () => {
    const out = execFileSync(process.execPath, [join(ROOT, 'action', 'log-safe.mjs')], {
      input: 'ok\n::warning::a\r::error::b\r\n  ##[group]c\n',
      encoding: 'utf8',
    });
    assert.equal(out, 'ok\n\\::warning::a\n\\::error::b\n  #\\#[group]c\n');
  });
});

// ---------------------------------------------------------------------------------------------------------
// Supply chain: pins, install scripts, the example workflow's paths.

/** Every workflow and action file of this repository (the example, action.yml, and any .github workflow). */
function workflowFiles(): string[] {
  const files = [
    join(ROOT, 'action.yml'),
    ...readdirSync(join(ROOT, 'examples', 'github'))
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => join(ROOT, 'examples', 'github', f)),
  ];
  const own = join(ROOT, '.github', 'workflows');
  if (existsSync(own))
    files.push(
      ...readdirSync(own)
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => join(own, f)),
    );
  return files;
}

describe('third-party actions pinned by commit', () => {
  it('every uses: is owner/repo@<40-hex commit> # vX.Y.Z (local actions and the placeholder for onetap itself aside)', async () => {
    let pinned = 0;
    for (const file of workflowFiles()) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/gm)) {
        const [ref, rest] = [m[1]!, m[2]!];
        if (ref.startsWith('./') || ref.startsWith('your-org/onetap@')) continue;
        assert.match(ref, /^[\w.-]+\/[\w.-]+(?:\/[\w./-]+)?@[0-9a-f]{40}$/, `${file}: ${m[0].trim()}`);
        assert.match(rest, /^ # v\d+\.\d+\.\d+$/, `${file}: the tag as a comment: ${m[0].trim()}`);
        pinned++;
      }
    }
    assert.ok(pinned >= 6, `pins found: ${pinned}`);
    // The example tells its reader to pin onetap's own action the same way.
    assert.match(await readFile(join(ROOT, 'examples', 'github', 'onetap-weekly.yml'), 'utf8'), /pinned by commit/);
  });

  it('one commit per action and tag across the files', async () => {
    const seen = new Map<string, string>();
    for (const file of workflowFiles()) {
      for (const m of (await readFile(file, 'utf8')).matchAll(
        /uses:\s*([\w.-]+\/[\w.-]+)@([0-9a-f]{40}) # (v[\d.]+)/g,
      )) {
        const key = `${m[1]}@${m[3]}`;
        assert.equal(seen.get(key) ?? m[2], m[2], `${key}: two different commits`);
        seen.set(key, m[2]!);
      }
    }
  });
});

describe('the install runs no dependency lifecycle script but the ones it names', () => {
  it('a release: npm ci --omit=dev --ignore-scripts; elsewhere npm ci --ignore-scripts, then the build', async () => {
    const action = await readFile(join(ROOT, 'action.yml'), 'utf8');
    const step = /- name: Install onetap\n(?: {6}.*\n)+/.exec(action)?.[0] ?? '';
    assert.match(step, /run: '"\$GITHUB_ACTION_PATH\/action\/install\.sh"'/);
    const install = await readFile(join(ROOT, 'action', 'install.sh'), 'utf8');
    const commands = install
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^(?:npm|npx|yarn|pnpm)\b/.test(l));
    assert.deepEqual(commands, [
      'npm ci --omit=dev --no-audit --no-fund --ignore-scripts',
      'npm ci --no-audit --no-fund --ignore-scripts',
      'npm run build --ignore-scripts',
    ]);
    for (const text of [action, install])
      assert.ok(!/\bnpm (?:i|install|ci)\b(?![^\n]*--ignore-scripts)/.test(text), 'no other install with scripts on');
  });

  it('every runtime dependency with an install script is one the step rebuilds by name', async () => {
    const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean; dev?: boolean; optional?: boolean }>;
    };
    // Optional native speedups whose package works without them (never built by the Action: --ignore-scripts).
    const optionalSpeedups = new Set(['msgpackr-extract']); // msgpackr (BullMQ's) encodes in JavaScript without it
    const scripted = Object.entries(lock.packages)
      .filter(([path, p]) => path && p.hasInstallScript && !p.dev)
      .map(([path]) => path.replace(/^.*node_modules\//, ''))
      .filter((name) => !(optionalSpeedups.has(name) && lock.packages[`node_modules/${name}`]?.optional));
    assert.deepEqual(
      scripted,
      [],
      'a new dependency needs its install script: rebuild it by name in action.yml (and say why)',
    );
  });
});

describe("the example workflow runs its pull-request check on every file under the catalog's directory", () => {
  /** GitHub's path filter, as far as these patterns need it: `**` any depth, `*` within a segment. */
  const glob = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*/g, '\u0000')
        .replace(/\*/g, '[^/]*')
        .replace(/\u0000/g, '.*')}$`,
    );

  it('catalog/servers.json, tools.lock.json, the history and its snapshots, the generated files', async () => {
    const wf = await readFile(join(ROOT, 'examples', 'github', 'onetap-weekly.yml'), 'utf8');
    const block = /^ {2}pull_request:\n {4}paths:\n((?: {6}- .*\n)+)/m.exec(wf)?.[1] ?? '';
    const patterns = [...block.matchAll(/- '?([^'\s#]+)'?/g)].map((m) => m[1]!);
    assert.ok(patterns.length > 0, wf);
    for (const file of [
      'catalog/servers.json',
      'catalog/tools.lock.json',
      'catalog/history/2026-11.jsonl',
      'catalog/history/snapshots/0123abcd.json',
      'catalog/generated/PopularMcpServers.kt',
      'catalog/servers.md',
    ]) {
      assert.ok(
        patterns.some((p) => glob(p).test(file)),
        `${file} is not covered by ${JSON.stringify(patterns)}`,
      );
    }
  });
});
