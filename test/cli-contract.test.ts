/**
 * The CLI's contract with scripts and people: a catalog of the wrong types is a `file: place: message`
 * error (exit 1) in every command that loads it, never a TypeError; `--json` on lint, add and report;
 * every error on stderr as `onetap: …` (commander's own included); exit codes as the README states.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { catalogOf, runCli, server, workspace, type RunResult } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const shipped = async (): Promise<Raw> => JSON.parse(await readFile('catalog/servers.json', 'utf8'));

/** Each broken catalog, the place the error must name, and the message. */
const WRONG_TYPES: Array<{ label: string; edit: (c: Raw) => void; place: string; message: RegExp }> = [
  {
    label: 'removed[].url: 42',
    edit: (c) => {
      c.removed[0].url = 42;
    },
    place: 'removed[0] (Fetch).url',
    message: /must be a string \(got number 42\)/,
  },
  {
    label: 'policy.sharedGatewayHosts: "x"',
    edit: (c) => {
      c.policy.sharedGatewayHosts = 'x';
    },
    place: 'policy.sharedGatewayHosts',
    message: /must be an array \(got the string "x"\)/,
  },
  {
    label: 'a non-string header value',
    edit: (c) => {
      c.servers[0].headers = { 'X-Client': 5 };
    },
    place: 'servers[0] (Context7).headers.X-Client',
    message: /must be a string \(got number 5\)/,
  },
  {
    label: 'canaries: [1]',
    edit: (c) => {
      c.policy.canaries = [1];
    },
    place: 'policy.canaries[0]',
    message: /must be a string/,
  },
  {
    label: 'authOptionalHosts: [null]',
    edit: (c) => {
      c.policy.authOptionalHosts = [null];
    },
    place: 'policy.authOptionalHosts[0]',
    message: /must be a string \(got null\)/,
  },
  {
    label: 'decision.by: 3',
    edit: (c) => {
      c.servers[1].decision.by = 3;
    },
    place: 'servers[1] (MDN).decision.by',
    message: /must be a string/,
  },
  {
    label: 'requiresAuth: "yes"',
    edit: (c) => {
      c.servers[2].requiresAuth = 'yes';
    },
    place: 'servers[2] (DeepWiki).requiresAuth',
    message: /must be a boolean/,
  },
  {
    label: 'servers: {}',
    edit: (c) => {
      c.servers = {};
    },
    place: 'servers',
    message: /must be an array \(got an object\)/,
  },
  {
    label: 'removed[] without url',
    edit: (c) => {
      delete c.removed[1].url;
    },
    place: 'removed[1] (Sequential Thinking).url',
    message: /is required/,
  },
  {
    label: 'policy.timeoutMs beyond Node timers',
    edit: (c) => {
      c.policy.timeoutMs = 1e12;
    },
    place: 'policy.timeoutMs',
    message: /must be <= 2147483647/,
  },
  {
    label: 'name: 5',
    edit: (c) => {
      c.servers[3].name = 5;
    },
    place: 'servers[3] (?).name',
    message: /must be a string/,
  },
];

/** Every command that loads a catalog, run so that it could do nothing else first (no network). */
const COMMANDS: Array<{ name: string; args: (catalog: string, dir: string) => string[] }> = [
  { name: 'lint', args: (c) => ['lint', '--catalog', c] },
  { name: 'lint --json', args: (c) => ['lint', '--json', '--catalog', c] },
  {
    name: 'add',
    args: (c) => [
      'add',
      'https://new.example/mcp',
      '--name',
      'N',
      '--description',
      'd',
      '--decision',
      'me: why',
      '--catalog',
      c,
    ],
  },
  { name: 'refresh', args: (c, d) => ['refresh', '--catalog', c, '--state', join(d, 'h.db')] },
  { name: 'discover', args: (c) => ['discover', 'https://127.0.0.1:9/never', '--catalog', c] },
  { name: 'publish', args: (c, d) => ['publish', '--out', join(d, 'site'), '--catalog', c] },
  { name: 'serve', args: (c, d) => ['serve', '--port', '0', '--catalog', c, '--state', join(d, 'h.db')] },
  { name: 'report', args: (c, d) => ['report', '--markdown', '--catalog', c, '--state', join(d, 'h.db')] },
];

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function brokenCatalog(edit: (c: Raw) => void): Promise<{ dir: string; catalogPath: string }> {
  const c = await shipped();
  edit(c);
  const { dir, catalogPath } = await workspace(catalogOf([]));
  await writeFile(catalogPath, JSON.stringify(c, null, 2));
  return { dir, catalogPath };
}

/** Runs the jobs a few at a time: fast, yet gentle on a loaded two-core machine. */
async function inBatches<T>(jobs: Array<() => Promise<T>>, size = 4): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < jobs.length; i += size) out.push(...(await Promise.all(jobs.slice(i, i + size).map((j) => j()))));
  return out;
}

const everyStderrLine = (r: RunResult) => r.stderr.split('\n').filter((l) => l !== '');

describe('a catalog of the wrong types', () => {
  it('is `file: place: message`, exit 1, in every command that loads it (never a TypeError)', {
    timeout: 120_000,
  }, async () => {
    const jobs: Array<() => Promise<void>> = [];
    WRONG_TYPES.forEach((example, i) => {
      // The four examples through every command; the rest through lint and one other in turn (time).
      const commands = i < 4 ? COMMANDS : [COMMANDS[0]!, COMMANDS[2 + (i % 6)]!];
      for (const command of commands) {
        jobs.push(async () => {
          const { dir, catalogPath } = await brokenCatalog(example.edit);
          const r = await runCli(command.args(catalogPath, dir), { killAfterMs: 20_000 });
          const label = `${example.label} / ${command.name}`;
          assert.equal(r.code, 1, `${label}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
          assert.doesNotMatch(r.stdout + r.stderr, /TypeError|Cannot read|is not a function|at .*\.js:\d+/, label);
          if (command.name === 'lint --json') {
            const json = JSON.parse(r.stdout);
            assert.equal(json.servers, null);
            assert.ok(
              json.problems.some(
                (p: { where: string; message: string }) => p.where === example.place && example.message.test(p.message),
              ),
              `${label}: ${r.stdout}`,
            );
          } else {
            const stream = command.name === 'lint' ? r.stdout : r.stderr;
            const prefix = command.name === 'lint' ? '' : 'onetap: ';
            assert.match(
              stream,
              new RegExp(`^${esc(prefix)}${esc(catalogPath)}: ${esc(example.place)}: ${example.message.source}`, 'm'),
              `${label}:\n${stream}`,
            );
          }
          if (command.name !== 'lint --json')
            for (const line of everyStderrLine(r)) assert.match(line, /^onetap: /, label);
        });
      }
    });
    await inBatches(jobs);
  });
});

describe('--json', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet();
  });
  after(async () => {
    await fleet.close();
  });

  it('lint --json: findings as data; clean is exit 0 with no problems', async () => {
    const clean = await runCli(['lint', '--json']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.deepEqual(JSON.parse(clean.stdout), {
      catalog: 'catalog/servers.json',
      servers: 13,
      removed: 3,
      problems: [],
    });
    const { catalogPath } = await workspace(
      catalogOf([
        server('A', 'http://a.example/mcp'),
        server('B', 'https://a.example/mcp', { headers: { Authorization: 'Bearer sk-1' } }),
      ]),
    );
    const bad = await runCli(['lint', '--json', '--catalog', catalogPath]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, '');
    const json = JSON.parse(bad.stdout);
    assert.deepEqual(Object.keys(json), ['catalog', 'servers', 'removed', 'problems']);
    assert.equal(json.servers, 2);
    assert.ok(
      json.problems.some(
        (p: { where: string; message: string }) => p.where === 'servers[0] (A)' && /HTTPS only/.test(p.message),
      ),
    );
    assert.ok(
      json.problems.some(
        (p: { where: string; message: string }) =>
          p.where === 'servers[1] (B)' && /"Authorization" looks secret/.test(p.message),
      ),
    );
  });

  it('add --json: refused (rules, before any probe), not live (with the probe), and added', async () => {
    const base = catalogOf([server('Existing', 'https://existing.example/mcp')]);
    const { catalogPath } = await workspace(base);
    const refused = await runCli([
      'add',
      'https://existing.example/other',
      '--name',
      'N',
      '--description',
      'd',
      '--decision',
      'me: why',
      '--catalog',
      catalogPath,
      '--json',
    ]);
    assert.equal(refused.code, 1);
    const r1 = JSON.parse(refused.stdout);
    assert.deepEqual({ added: r1.added, entry: r1.entry, probe: r1.probe }, { added: false, entry: null, probe: null });
    assert.ok(r1.problems.some((p: string) => /duplicate host/.test(p)));

    const dead = await runCli([
      'add',
      fleet.url('http-404'),
      '--name',
      'N',
      '--description',
      'd',
      '--decision',
      'me: why',
      '--catalog',
      catalogPath,
      '--allow-http',
      '--json',
    ]);
    assert.equal(dead.code, 1);
    const r2 = JSON.parse(dead.stdout);
    assert.equal(r2.added, false);
    assert.deepEqual(
      { verdict: r2.probe.verdict, reason: r2.probe.reason, httpStatus: r2.probe.httpStatus },
      { verdict: 'drop', reason: 'http-404', httpStatus: 404 },
    );
    assert.match(r2.problems[0], /not attested live: drop\/http-404/);

    const ok = await runCli([
      'add',
      fleet.url('ok-json'),
      '--name',
      'Search',
      '--description',
      'Searches',
      '--decision',
      'Ada: users asked',
      '--catalog',
      catalogPath,
      '--allow-http',
      '--json',
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    const r3 = JSON.parse(ok.stdout);
    assert.equal(r3.added, true);
    assert.deepEqual(r3.problems, []);
    assert.equal(r3.entry.url, fleet.url('ok-json'));
    assert.equal(r3.entry.decision.by, 'Ada');
    assert.equal(r3.probe.verdict, 'live');
    assert.ok(r3.probe.tools.length > 0);
    assert.equal(JSON.parse(await readFile(catalogPath, 'utf8')).servers.length, 2);
  });

  it('report --json: the status model (the shape of GET /api/servers)', async () => {
    const { catalogPath, statePath } = await workspace(catalogOf([server('A', 'https://a.example/mcp')]));
    const r = await runCli(['report', '--json', '--catalog', catalogPath, '--state', statePath]);
    assert.equal(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(json), ['generatedAt', 'lastRefresh', 'servers', 'historyProblems', 'cost']);
    assert.deepEqual(json.historyProblems, { count: 0, first: [] });
    assert.equal(json.lastRefresh, null);
    assert.equal(json.servers[0].name, 'A');
    assert.equal(json.servers[0].days30.length, 30);
  });
});

// Catalogs whose policy asks for a run across vantages it cannot have: refused before any probe.
const policyDir = mkdtempSync(join(tmpdir(), 'onetap-policy-'));
for (const [file, policy] of [
  ['too-few.json', { vantages: ['a', 'b'], quorum: 3 }],
  ['no-store.json', { vantages: ['a', 'b'] }],
] as const) {
  writeFileSync(
    join(policyDir, file),
    JSON.stringify({ policy: { authOptionalHosts: [], sharedGatewayHosts: [], ...policy }, servers: [] }),
  );
}

describe('errors and exit codes', () => {
  const cases: Array<{ args: string[]; code: number; stderr: RegExp }> = [
    { args: [], code: 2, stderr: /^onetap: a command is needed/m },
    { args: ['nope'], code: 2, stderr: /^onetap: unknown command 'nope'$/m },
    { args: ['lint', '--nope'], code: 2, stderr: /^onetap: unknown option '--nope'$/m },
    { args: ['probe'], code: 2, stderr: /^onetap: missing required argument 'url'$/m },
    { args: ['lint', '--catalog'], code: 2, stderr: /^onetap: option '--catalog <file>' argument missing$/m },
    {
      args: ['add', 'https://x.example/mcp'],
      code: 2,
      stderr: /^onetap: required option '--name <name>' not specified$/m,
    },
    {
      args: ['probe', '--timeout', 'abc', 'https://x.example/mcp'],
      code: 2,
      stderr: /^onetap: --timeout: expected a positive whole number, got "abc"$/m,
    },
    {
      args: [
        'add',
        'https://x.example/mcp',
        '--name',
        'n',
        '--description',
        'd',
        '--decision',
        'a: b',
        '--timeout',
        '99999999999',
      ],
      code: 2,
      stderr: /^onetap: --timeout: at most 2147483647 ms .*largest timer/m,
    },
    {
      args: ['probe', '--header', 'no colon', 'https://x.example/mcp'],
      code: 2,
      stderr: /^onetap: --header: a header is "Name: value", got "no colon"$/m,
    },
    { args: ['report'], code: 2, stderr: /^onetap: --html, --markdown, --json: report needs one of them$/m },
    { args: ['report', '--json', '--markdown'], code: 2, stderr: /^onetap: --markdown, --json: both print on stdout/m },
    // One wording for a refused flag value, whichever command: `--flag: why, got "the value as given"`.
    {
      args: ['site', '--out', 'x', '--base-url', 'ftp:/x'],
      code: 2,
      stderr: /^onetap: --base-url: not an absolute http\(s\) URL, got "ftp:\/x"$/m,
    },
    {
      args: ['publish', '--out', 'x', '--base-url', 'ftp://x.example'],
      code: 2,
      stderr: /^onetap: --base-url: must be an http\(s\) URL, got "ftp:\/\/x.example"$/m,
    },
    {
      args: ['publish', '--out', 'x', '--base-url', 'https://x.example', '--publisher', 'not a domain'],
      code: 2,
      stderr: /^onetap: --publisher: must be a domain name \(example\.org\), got "not a domain"$/m,
    },
    {
      args: ['serve', '--port', '70000'],
      code: 2,
      stderr: /^onetap: --port: expected a port number from 0 to 65535, got "70000"$/m,
    },
    {
      args: ['mcp', '--http', '--port', 'x'],
      code: 2,
      stderr: /^onetap: --port: expected a port number from 0 to 65535, got "x"$/m,
    },
    {
      args: ['accept', 'https://x.example/mcp', '--decision', 'no colon'],
      code: 2,
      stderr: /^onetap: --decision: must read "who: why", got "no colon"$/m,
    },
    {
      args: ['accept', 'https://x.example/mcp', '--decision', 'a: b', '--snapshot', 'XYZ'],
      code: 2,
      stderr: /^onetap: --snapshot: expected 16 hex digits, got "XYZ"$/m,
    },
    {
      args: ['refresh', '--catalog', '/nonexistent/servers.json'],
      code: 2,
      stderr: /^onetap: --catalog: no such file, got "\/nonexistent\/servers\.json"$/m,
    },
    {
      args: ['refresh', '--kotlin-package', '1x'],
      code: 2,
      stderr: /^onetap: --kotlin-package: not a Kotlin package name, got "1x"$/m,
    },
    {
      args: ['refresh', '--vantages', 'a,b', '--quorum', '3'],
      code: 2,
      stderr: /^onetap: --quorum: more than the 2 vantages asked, got "3"$/m,
    },
    {
      args: ['refresh', '--quorum', '1'],
      code: 2,
      stderr: /^onetap: --quorum: only with --vantages \(or policy.vantages\)$/m,
    },
    {
      args: ['refresh', '--vantages', 'a,b'],
      code: 2,
      stderr: /^onetap: --vantages: needs a PostgreSQL store that the workers record to/m,
    },
    {
      args: ['refresh', '--vantages', 'a,A'],
      code: 2,
      stderr: /^onetap: --vantages: a vantage is a name of a-z, digits, _ and - \(up to 63\), got "A"$/m,
    },
    {
      args: ['refresh', '--run-id', 'week 1'],
      code: 2,
      stderr: /^onetap: --run-id: a run id is letters, digits and \. _ : \+ - \(up to 200\), got "week 1"$/m,
    },
    {
      args: ['refresh', '--catalog', join(policyDir, 'too-few.json')],
      code: 2,
      stderr: /^onetap: policy.quorum: more than the 2 vantages asked, got "3"$/m,
    },
    {
      args: ['refresh', '--catalog', join(policyDir, 'no-store.json')],
      code: 2,
      stderr: /^onetap: policy.vantages: needs a PostgreSQL store that the workers record to/m,
    },
    {
      args: ['lint', '--catalog', '/nonexistent/servers.json'],
      code: 1,
      stderr: /^onetap: \/nonexistent\/servers\.json: cannot read the catalog \(ENOENT\)$/m,
    },
    {
      args: ['validate', '/nonexistent/card.json'],
      code: 1,
      stderr: /^onetap: cannot read \/nonexistent\/card\.json/m,
    },
  ];
  it('every error is `onetap: …` on stderr with the README exit code; help and version exit 0', {
    timeout: 60_000,
  }, async () => {
    await inBatches(
      cases.map((c) => async () => {
        const r = await runCli(c.args);
        const label = `onetap ${c.args.join(' ')}`;
        assert.equal(r.code, c.code, `${label}: ${r.stderr}`);
        assert.match(r.stderr, c.stderr, label);
        assert.doesNotMatch(r.stderr, /^error:/m, label);
        if (c.args.length) for (const line of everyStderrLine(r)) assert.match(line, /^onetap: /, `${label}: ${line}`);
        assert.equal(r.stdout, '', label);
      }),
    );
    for (const args of [['--help'], ['--version'], ['help'], ['lint', '--help']]) {
      const r = await runCli(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.ok(r.stdout.length > 0);
    }
  });
});

describe('a reader that stops early', () => {
  it('`onetap probe --json ... | head` ends quietly: no EPIPE stack trace on stderr', async () => {
    // 400 refused loopback URLs: each ends at once, and their JSON is far more than a pipe holds.
    const urls = Array.from({ length: 400 }, (_, i) => `http://127.0.0.1:9/mcp?n=${i}`);
    const child = spawn(process.execPath, ['bin/onetap', 'probe', '--json', '--concurrency', '64', ...urls], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.stdout.once('data', () => child.stdout.destroy()); // what `head` does once it has its lines
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(stderr, '', 'nothing on stderr');
    assert.equal(code, 0);
  });
});
