/**
 * The golden test: what `npm start` (the offline demo) prints and writes, what site, report, publish and serve make
 * of its workspace, `probe --json` and `refresh --json` over a fixed loopback fleet, and every command's `--help`,
 * compared byte for byte with the files under test/golden/ (each named as the output it holds, plus `.golden`, so
 * that no compiler, formatter or link checker reads them as sources).
 *
 * Only what legitimately varies between runs is normalised, by the regular expressions of `normalise` below, each
 * stated where it is applied: temporary paths, ports, instants and the dates counted from them, measured durations,
 * the relative ages of the status pages, two orders that follow ports or probe completion, and hashes of bytes that
 * hold ports (checked against those bytes first). Every other byte is the product's. A difference fails the test
 * with a unified diff per file; `UPDATE_GOLDEN=1` rewrites the fixtures (then read `git diff test/golden/` before
 * committing them).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, catalogOf, runCli, server, type RunResult } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { buildProgram } from '../src/cli/main.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GOLDEN = join(ROOT, 'test', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
/** A CLI run may take this long on a loaded machine: a guard against a hang, not a measure. */
const PROCESS_LIMIT_MS = 120_000;

// ---------------------------------------------------------------------------------------------------------------
// Normalisation: what varies between two runs of the same code, and nothing else.
// ---------------------------------------------------------------------------------------------------------------

interface Context {
  /** Absolute paths (longest first) and their placeholders: the demo's workspace, this test's temporary folder. */
  paths: Array<[string, string]>;
  /** Port numbers on 127.0.0.1 and their placeholders (the demo's fleet, this test's fleet, serve's own port). */
  ports: Map<string, string>;
  /** The UTC date of the demo's recorded run, YYYY-MM-DD: the dates its outputs count from. */
  runDate: string;
}

const DAY = 86_400_000;

/** A date counted from the run's: `<run-date>`, `<run-date-89d>`, `<run-date+14d>`. */
function relativeDate(date: string, runDate: string): string {
  const days = Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${runDate}T00:00:00Z`)) / DAY);
  return days === 0 ? '<run-date>' : `<run-date${days > 0 ? '+' : ''}${days}d>`;
}

export function normalise(text: string, ctx: Context): string {
  let s = text;
  // 1. Temporary paths (mkdtemp's random suffix): the demo's workspace → <workspace>, this test's folder → <tmp>.
  for (const [path, placeholder] of ctx.paths) s = s.split(path).join(placeholder);
  // 2. Ports of 127.0.0.1 that the OS picked (listen on port 0): `127.0.0.1:<port-3>` for the demo's third server
  //    (catalog order), `<fleet-port>` for this test's fleet, `<serve-port>` for `onetap serve`. Other numbers after
  //    127.0.0.1: (the fixed 8787 of the demo's closing hint) stay.
  s = s.replace(/127\.0\.0\.1:(\d+)/g, (all, port: string) => {
    const placeholder = ctx.ports.get(port);
    return placeholder ? `127.0.0.1:${placeholder}` : all;
  });
  // 3. Instants: ISO timestamps (2026-12-03T16:53:25.750Z) and the pages' human ones (2026-12-03 16:53:25, and
  //    2026-12-03 16:53 before " UTC") → <time>.
  s = s.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g, '<time>');
  s = s.replace(/\b\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?\b/g, '<time>');
  // 4. Dates counted from the run's day, written relative to it (so a window's length and a staleness offset stay
  //    pinned): the history API's day buckets ("date": "…"), the pages' day bars (title="…: live"), the
  //    snapshot's stale_after, the log's heading (## … (), a row the run dropped (removedAt). Fixed dates (the
  //    shipped catalog's decisions, protocol versions, profile ids) are in none of these places and stay.
  const rel = (d: string) => relativeDate(d, ctx.runDate);
  s = s.replace(/("date": ?")(\d{4}-\d\d-\d\d)"/g, (_, pre: string, d: string) => `${pre}${rel(d)}"`);
  s = s.replace(
    /(title=")(\d{4}-\d\d-\d\d)(: )/g,
    (_, pre: string, d: string, post: string) => `${pre}${rel(d)}${post}`,
  );
  s = s.replace(/(stale_after: )(\d{4}-\d\d-\d\d)\b/g, (_, pre: string, d: string) => `${pre}${rel(d)}`);
  // A row the demo's run dropped says the run's day; the shipped catalog's earlier removals keep their dates.
  s = s.split(`"removedAt": "${ctx.runDate}"`).join('"removedAt": "<run-date>"');
  s = s.replace(
    /^(## )(\d{4}-\d\d-\d\d)( \()/gm,
    (_, pre: string, d: string, post: string) => `${pre}${rel(d)}${post}`,
  );
  // 5. The month of the history file the run went to (history/2026-12.jsonl) → history/<run-month>.jsonl.
  s = s.split(`history/${ctx.runDate.slice(0, 7)}.jsonl`).join('history/<run-month>.jsonl');
  // 6. Measured durations: "durationMs" and "latencyMs" in JSON; "· 84 ms" and "<td>84 ms</td>" on the pages.
  s = s.replace(/("(?:durationMs|latencyMs)": ?)\d+/g, '$1<ms>');
  s = s.replace(/(· |<td>)\d+ ms\b/g, '$1<ms> ms');
  // 7. The status pages' relative ages (page.ts `ago`: just now, 3 min ago, 2 h ago, 4 days ago): the time between
  //    the run and the page.
  s = s.replace(/>(?:just now|\d+ min ago|\d+ h ago|\d+ days ago)<\/time>/g, '><age></time>');
  // 8. `probe`'s table: the MS column holds a duration, and its width follows the widest → `<ms>`, padded to 6.
  s = normaliseMsColumn(s);
  // 9. `refresh --write`'s "Wrote:" list names the tool snapshots in the order their probes finished → sorted.
  s = sortSnapshotLines(s);
  return s;
}

function normaliseMsColumn(text: string): string {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const header = /^VERDICT .* MS +URL/.exec(lines[i]!);
    if (!header) continue;
    const from = lines[i]!.indexOf(' MS ') + 1;
    const to = lines[i]!.indexOf('URL', from);
    for (let j = i; j < lines.length && lines[j] !== ''; j++) {
      const line = lines[j]!;
      lines[j] = line.slice(0, from) + (j === i ? 'MS' : '<ms>').padEnd(6) + line.slice(to);
    }
  }
  return lines.join('\n');
}

function sortSnapshotLines(text: string): string {
  const lines = text.split('\n');
  const isSnapshot = (l: string | undefined) =>
    l !== undefined && /^ {2}\S*\/history\/snapshots\/[0-9a-f]+\.json$/.test(l);
  for (let i = 0; i < lines.length; i++) {
    if (!isSnapshot(lines[i])) continue;
    let j = i;
    while (isSnapshot(lines[j])) j++;
    lines.splice(i, j - i, ...lines.slice(i, j).sort());
    i = j;
  }
  return lines.join('\n');
}

/**
 * tools.lock.json keys its entries by URL and sorts them: with ports the OS picked, the order follows the ports.
 * The test checks that the raw file is sorted and is exactly JSON.stringify(…, null, 2) plus a newline, then
 * reorders the entries by their placeholders (catalog order), so that only the order the ports caused changes.
 */
function normaliseLock(raw: string, ctx: Context): string {
  const lock = JSON.parse(raw) as { servers: Record<string, unknown> };
  assert.equal(JSON.stringify(lock, null, 2) + '\n', raw, 'tools.lock.json is written as JSON.stringify(…, null, 2)');
  const urls = Object.keys(lock.servers);
  assert.deepEqual(urls, [...urls].sort(), 'tools.lock.json lists its servers sorted by URL');
  const rank = (url: string) => Number(/<port-(\d+)>/.exec(normalise(url, ctx))?.[1] ?? Infinity);
  const servers = Object.fromEntries(Object.entries(lock.servers).sort(([a], [b]) => rank(a) - rank(b)));
  return normalise(JSON.stringify({ ...lock, servers }, null, 2) + '\n', ctx);
}

/**
 * publish's card manifest holds the sha256 of each card it wrote, and the cards hold ports. The test checks each
 * hash against the raw card, then writes it as `<sha256 of NAME>`.
 */
function normaliseManifest(raw: string, rawCards: Map<string, string>, ctx: Context): string {
  const manifest = JSON.parse(raw) as { cards: Record<string, string> };
  let text = raw;
  for (const [name, hash] of Object.entries(manifest.cards)) {
    const card = rawCards.get(name);
    assert.ok(card !== undefined, `the manifest names cards/${name}, which publish wrote`);
    assert.equal(
      hash,
      createHash('sha256').update(card).digest('hex'),
      `the manifest holds the sha256 of cards/${name}`,
    );
    text = text.split(`"${hash}"`).join(`"<sha256 of ${name}>"`);
  }
  return normalise(text, ctx);
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison with test/golden/ and a readable diff.
// ---------------------------------------------------------------------------------------------------------------

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    out.set(relative(dir, path).split('\\').join('/'), await readFile(path, 'utf8'));
  }
  return out;
}

/** A unified diff of two texts by lines (3 lines of context), with the first differing column of changed lines. */
export function unifiedDiff(expected: string, actual: string, name: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) endA--, endB--;
  // Longest common subsequence of the middle part, then a walk that emits ' ', '-', '+' lines.
  const n = endA - start;
  const m = endB - start;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[start + i] === b[start + j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Array<[' ' | '-' | '+', string]> = a.slice(0, start).map((l) => [' ', l]);
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) ops.push([' ', a[start + i++]!]), j++;
    else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push(['-', a[start + i++]!]);
    else ops.push(['+', b[start + j++]!]);
  }
  for (let k = endA; k < a.length; k++) ops.push([' ', a[k]!]);
  const out = [`--- test/golden/${name}.golden (expected)`, `+++ ${name} (this run)`];
  const changed = ops.map((o, k) => (o[0] === ' ' ? -1 : k)).filter((k) => k >= 0);
  let shown = -1;
  for (const k of changed) {
    if (k <= shown) continue;
    let end = k;
    while (changed.some((c) => c > end && c <= end + 6)) end = changed.find((c) => c > end && c <= end + 6)!;
    const from = Math.max(0, k - 3);
    const to = Math.min(ops.length - 1, end + 3);
    out.push(`@@ line ${ops.slice(0, from).filter((o) => o[0] !== '+').length + 1} @@`);
    for (let x = from; x <= to; x++) out.push(`${ops[x]![0]}${clipLine(ops[x]![1])}`);
    const minus = ops.slice(k, end + 1).filter((o) => o[0] === '-');
    const plus = ops.slice(k, end + 1).filter((o) => o[0] === '+');
    if (minus.length === 1 && plus.length === 1) out.push(firstDifference(minus[0]![1], plus[0]![1]));
    shown = to;
    if (out.length > 120) return [...out, `… (diff cut at 120 lines)`].join('\n');
  }
  return out.join('\n');
}

const clipLine = (line: string) => (line.length > 300 ? `${line.slice(0, 300)}… (${line.length} characters)` : line);

function firstDifference(expected: string, actual: string): string {
  let c = 0;
  while (c < expected.length && expected[c] === actual[c]) c++;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, c - 60), c + 60));
  return `  first difference at column ${c + 1}:\n    expected …${around(expected)}…\n    actual   …${around(actual)}…`;
}

/** Compares `actual` (golden name → text) with test/golden/<group>/, or rewrites that folder under UPDATE_GOLDEN=1. */
async function matchGolden(group: string, actual: Map<string, string>): Promise<void> {
  const dir = join(GOLDEN, group);
  if (UPDATE) {
    await rm(dir, { recursive: true, force: true });
    for (const [name, text] of actual) {
      const path = join(dir, `${name}.golden`);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
    }
    return;
  }
  const expected = new Map([...(await filesUnder(dir))].map(([name, text]) => [name.replace(/\.golden$/, ''), text]));
  const problems: string[] = [];
  for (const name of expected.keys())
    if (!actual.has(name)) problems.push(`missing: ${group}/${name} (expected, not produced)`);
  for (const name of actual.keys())
    if (!expected.has(name)) problems.push(`new: ${group}/${name} (produced, no golden file)`);
  for (const [name, text] of actual) {
    const want = expected.get(name);
    if (want !== undefined && want !== text) problems.push(unifiedDiff(want, text, `${group}/${name}`));
  }
  assert.ok(
    problems.length === 0,
    `${group}: ${problems.length} difference(s) from test/golden/${group}/ ` +
      `(UPDATE_GOLDEN=1 rewrites it when the change is intended):\n\n${problems.join('\n\n')}`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Running the CLI.
// ---------------------------------------------------------------------------------------------------------------

const cli = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<RunResult> =>
  runCli(args, { cwd: opts.cwd ?? ROOT, env: opts.env, killAfterMs: PROCESS_LIMIT_MS });

/** What a run printed, for a golden file: its exit code, stdout and stderr (normalised by the caller). */
const transcript = (r: RunResult) =>
  `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;

/** GET without compression: status, the headers that do not vary, the body. */
function get(origin: string, path: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { headers: { 'accept-encoding': 'identity' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Response headers kept in a golden answer. Left out: date (the wall clock), connection and keep-alive (the client's),
 * content-length and etag (they follow the body's bytes, which hold times, ports and durations).
 */
const VARYING_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'etag', 'transfer-encoding']);

function startServe(args: string[]): Promise<{ origin: string; child: ChildProcess; stdout: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}${err}`)), PROCESS_LIMIT_MS);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m && out.includes('\n')) {
        clearTimeout(timer);
        resolve({ origin: m[0], child, stdout: () => out });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code}: ${out}${err}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The runs.
// ---------------------------------------------------------------------------------------------------------------

describe("golden: the demo's outputs and the CLI's, byte for byte (test/golden/; UPDATE_GOLDEN=1 rewrites)", () => {
  let tmp = '';
  let workspace = '';
  let ctx: Context;
  let demo: RunResult;
  const children: ChildProcess[] = [];
  const fleets: Fleet[] = [];

  before(
    async () => {
      tmp = await mkdtemp(join(tmpdir(), 'onetap-golden-'));
      // What `npm start` runs, as a process in the checkout (so its hints name ./bin/onetap); its temporary workspace
      // goes into this test's folder (TMPDIR), to be found and removed.
      demo = await cli(['demo'], { env: { TMPDIR: tmp } });
      workspace = /^workspace: (\S+)$/m.exec(demo.stdout)?.[1] ?? '';
      assert.ok(workspace.startsWith(tmp), `the demo names its workspace under ${tmp}:\n${demo.stdout}${demo.stderr}`);
      const ports = new Map<string, string>();
      // The demo's first table lists its servers in catalog order, one URL each.
      const table = demo.stdout.split('\n\n').find((block) => block.startsWith('DECISION')) ?? '';
      for (const m of table.matchAll(/http:\/\/127\.0\.0\.1:(\d+)\//g)) ports.set(m[1]!, `<port-${ports.size + 1}>`);
      assert.equal(ports.size, 13, `the demo's plan lists its 13 servers: ${table}`);
      const history = await readdir(join(workspace, 'catalog', 'history'));
      const month = history.find((f) => f.endsWith('.jsonl'))!;
      const run = JSON.parse(
        (await readFile(join(workspace, 'catalog', 'history', month), 'utf8')).split('\n')[0]!,
      ) as { startedAt: string };
      ctx = {
        paths: [
          [workspace, '<workspace>'],
          [tmp, '<tmp>'],
        ],
        ports,
        runDate: run.startedAt.slice(0, 10),
      };
    },
    { timeout: 10 * 60_000 },
  );

  after(async () => {
    for (const c of children) c.kill();
    await Promise.all(fleets.map((f) => f.close()));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("npm start: the demo's stdout and every file it writes (catalog, generated lists, snapshot, log, lock, history)", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node bin/onetap demo', 'npm start runs the demo as this test does');
    assert.equal(demo.code, 0, demo.stderr);
    assert.equal(demo.stderr, '', 'the demo writes nothing to stderr');
    const actual = new Map([['stdout', normalise(demo.stdout, ctx)]]);
    for (const [name, text] of await filesUnder(workspace)) {
      const golden = `workspace/${normalise(name, ctx)}`;
      actual.set(golden, name === 'catalog/tools.lock.json' ? normaliseLock(text, ctx) : normalise(text, ctx));
    }
    await matchGolden('demo', actual);
  });

  it("over the demo's workspace: site, report --json/--markdown/--html, publish, and serve's answers", async () => {
    const catalog = join(workspace, 'catalog', 'servers.json');
    const actual = new Map<string, string>();
    const site = await cli(['site', '--out', join(tmp, 'site'), '--catalog', catalog, '--allow-http']);
    actual.set('site.run', normalise(transcript(site), ctx));
    const siteFiles = await filesUnder(join(tmp, 'site'));
    for (const [name, text] of siteFiles) actual.set(`site/${name}`, normalise(text, ctx));
    for (const flag of ['--json', '--markdown']) {
      actual.set(`report${flag}.run`, normalise(transcript(await cli(['report', flag, '--catalog', catalog])), ctx));
    }
    const html = await cli(['report', '--html', join(tmp, 'report.html'), '--catalog', catalog]);
    actual.set('report--html.run', normalise(transcript(html), ctx));
    actual.set('report--html/report.html', normalise(await readFile(join(tmp, 'report.html'), 'utf8'), ctx));
    const publish = await cli(['publish', '--out', join(tmp, 'publish'), '--catalog', catalog, '--allow-http']);
    actual.set('publish.run', normalise(transcript(publish), ctx));
    const published = await filesUnder(join(tmp, 'publish'));
    const cards = new Map([...published].filter(([n]) => n.startsWith('cards/')).map(([n, t]) => [n.slice(6), t]));
    for (const [name, text] of published) {
      const manifest = name === 'cards/.onetap-manifest.json';
      actual.set(`publish/${name}`, manifest ? normaliseManifest(text, cards, ctx) : normalise(text, ctx));
    }

    // serve: every route the site holds a file for, and two refusals.
    const serve = await startServe(['--catalog', catalog, '--allow-http']);
    children.push(serve.child);
    const servePorts = new Map(ctx.ports).set(new URL(serve.origin).port, '<serve-port>');
    const serveCtx = { ...ctx, ports: servePorts };
    const routes = [...siteFiles.keys()]
      .filter((p) => p !== '.nojekyll')
      .map((p) =>
        p
          .replace(/^index\.html$/, '')
          .replace(/^api\/servers\/([^/]+)\/history-(\d+)\.json$/, 'api/servers/$1/history?days=$2')
          .replace(/^(api\/.*|servers\/.*)\.(json|html)$/, '$1'),
      );
    routes.push('api/servers/context7/history', 'servers/no-such-server', 'api/servers/context7/history?days=0');
    for (const route of routes.sort()) {
      const r = await get(serve.origin, `/${route}`);
      const headers = Object.entries(r.headers)
        .filter(([k]) => !VARYING_HEADERS.has(k))
        .sort(([a], [b]) => a.localeCompare(b));
      const text = `GET /${route}\nHTTP ${r.status}\n${headers.map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${r.body}`;
      actual.set(`serve/${route === '' ? 'index' : route.replace(/[/?=]/g, '_')}`, normalise(text, serveCtx));
    }
    actual.set('serve.stdout', normalise(serve.stdout(), serveCtx));
    for (const r of [site, html, publish]) assert.equal(r.code, 0, r.stderr);
    await matchGolden('demo-surfaces', actual);
  });

  it('probe --json and refresh --json over a fixed loopback fleet', async () => {
    const fleet = await startFleet();
    fleets.push(fleet);
    const fleetCtx = { ...ctx, ports: new Map([[new URL(fleet.origin).port, '<fleet-port>']]) };
    // Answers that do not depend on timing: no hangs, no retries after a pause.
    const scenarios = [
      'ok-json',
      'ok-sse',
      'auth-optional',
      'session-required',
      'zero-tools',
      'edge-526',
      'http-404',
      'init-401',
      'payment-402',
      'unsupported-version',
      'html-200',
    ];
    const actual = new Map<string, string>();
    const probe = await cli(['probe', '--json', ...scenarios.map((s) => fleet.url(s))]);
    actual.set('probe--json.run', normalise(transcript(probe), fleetCtx));
    const matrix = await cli(['probe', '--json', '--matrix', fleet.url('ok-json'), fleet.url('ok-sse')]);
    actual.set('probe--json--matrix.run', normalise(transcript(matrix), fleetCtx));
    const text = await cli(['probe', ...scenarios.map((s) => fleet.url(s))]);
    actual.set('probe.run', normalise(transcript(text), fleetCtx));

    const dir = join(tmp, 'fleet-catalog');
    await mkdir(join(dir, 'catalog'), { recursive: true });
    const catalogPath = join(dir, 'catalog', 'servers.json');
    const catalog = catalogOf(scenarios.map((s) => server(s, fleet.url(s))));
    await writeFile(catalogPath, JSON.stringify(catalog, null, 2) + '\n');
    const refresh = await cli(['refresh', '--json', '--catalog', catalogPath, '--allow-http']);
    actual.set('refresh--json.run', normalise(transcript(refresh), fleetCtx));
    await matchGolden('fleet', actual);
  });

  it('--help of every command (and of onetap itself, and onetap without a command)', async () => {
    const commands: string[][] = [[]];
    const walk = (c: ReturnType<typeof buildProgram>, path: string[]) => {
      for (const sub of c.commands) {
        commands.push([...path, sub.name()]);
        walk(sub, [...path, sub.name()]);
      }
    };
    walk(buildProgram(), []);
    const actual = new Map<string, string>();
    // Two at a time: each is a process of its own.
    for (let i = 0; i < commands.length; i += 2) {
      await Promise.all(
        commands.slice(i, i + 2).map(async (path) => {
          actual.set(`${path.length ? path.join('-') : 'onetap'}--help`, transcript(await cli([...path, '--help'])));
        }),
      );
    }
    actual.set('onetap-without-a-command', transcript(await cli([])));
    await matchGolden('help', actual);
  });
});
