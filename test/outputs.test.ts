/** Generated outputs stay valid code and inert text whatever a server's name or description says. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { runtimeJson, runtimeKotlin, runtimeTypeScript, type PopularMcpServer } from '../src/outputs/runtime-list.js';
import { snapshotMarkdown } from '../src/outputs/snapshot.js';
import { catalogOf, observation, planOf, server } from './helpers.js';
import { OrderedJsonArray } from '../src/cli/render.js';
import { jsonInvisibleEscaped } from '../src/text/escape.js';

const HOSTILE = [
  'Quote " and \\ backslash',
  '"; System.exit(1); val pwned = "',
  'Kotlin ${System.exit(1)} and $name templates',
  '`${process.exit(1)}` template literal',
  'new\nline\r\nand\ttab',
  '*/ /* comment */ </script><img src=x onerror=alert(1)>',
  'separators \u2028 \u2029 and nul \u0000 and bell \u0007',
  'emoji 🚀 and ünïcödé | pipe',
  // Trojan Source: bidi controls that reorder what a reviewer sees, and invisible characters.
  'access = "user\u202E \u2066// admin only\u2069 \u2066"',
  'all bidi \u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C zero-width \u200B\u200C\u200D\u2060\uFEFF',
];

/** Bidi controls and zero-width characters: never raw in a generated file. */
const RAW_INVISIBLE = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u200B-\u200D\u2060\uFEFF\u2028\u2029]/;

const servers: PopularMcpServer[] = HOSTILE.map((text, i) => ({
  name: text,
  url: `https://h${i}.example/mcp?q=${encodeURIComponent(text)}`,
  description: text,
  headers: (i % 2 ? { 'X-Label': text } : {}) as Record<string, string>,
  requiresAuth: i === 3,
}));

describe('generated runtime lists', () => {
  it('JSON round-trips exactly', () => {
    const json = runtimeJson(servers);
    assert.ok(!RAW_INVISIBLE.test(json), 'no raw bidi or invisible character in the JSON');
    assert.deepEqual(JSON.parse(json), servers);
  });

  it('TypeScript parses without diagnostics and evaluates to exactly the same values', async () => {
    const source = runtimeTypeScript(servers);
    assert.ok(!RAW_INVISIBLE.test(source), 'no raw bidi or invisible character in the TypeScript');
    assert.match(source, /\\u202e/);
    const parsed = ts.transpileModule(source, {
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    assert.deepEqual(parsed.diagnostics, []);
    const mod = await import(`data:text/javascript;base64,${Buffer.from(parsed.outputText).toString('base64')}`);
    assert.deepEqual(mod.popularMcpServers, servers);
  });

  it('Kotlin compiles with kotlinc and holds exactly the same strings', { timeout: 120_000 }, async (t) => {
    if (spawnSync('kotlinc', ['-version']).error) {
      if (process.env.CI) assert.fail('kotlinc is missing on CI: .ci/run installs the Debian package kotlin');
      t.skip('kotlinc not installed (apt-get install kotlin)');
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), 'onetap-kt-'));
    const kotlin = runtimeKotlin(servers, 'app.generated');
    assert.ok(!RAW_INVISIBLE.test(kotlin), 'no raw bidi or invisible character in the Kotlin');
    assert.match(kotlin, /\\u202e/);
    await writeFile(join(dir, 'PopularMcpServers.kt'), kotlin);
    await writeFile(
      join(dir, 'Main.kt'),
      `package app.generated
fun main() {
    for (s in popularMcpServers) {
        val fields = listOf(s.name, s.url, s.description) + s.headers.flatMap { listOf(it.key, it.value) } + listOf(s.requiresAuth.toString())
        for (f in fields) println(f.map { it.toInt() }.joinToString(","))
    }
}
`,
    );
    execFileSync(
      'kotlinc',
      [join(dir, 'PopularMcpServers.kt'), join(dir, 'Main.kt'), '-include-runtime', '-d', join(dir, 'out.jar')],
      { stdio: 'pipe' },
    );
    const printed = execFileSync('java', ['-jar', join(dir, 'out.jar')], { encoding: 'utf8' })
      .trimEnd()
      .split('\n');
    const expected = servers
      .flatMap((s) => [s.name, s.url, s.description, ...Object.entries(s.headers).flat(), String(s.requiresAuth)])
      .map((f) =>
        [...f].flatMap((ch) => (ch.length === 2 ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [ch.charCodeAt(0)])).join(','),
      );
    assert.deepEqual(printed, expected);
  });
});

describe('snapshot Markdown', () => {
  it('hostile names keep the table at five cells per row and carry no live HTML', () => {
    const catalog = catalogOf(servers.map((s) => server(s.name, s.url)));
    const plan = planOf(
      catalog.servers.map((s) => ({
        name: s.name,
        observation: observation({ url: s.url, tools: ['a|b', '<script>x</script>'] }),
      })),
    );
    const md = snapshotMarkdown({ catalog, plan, probedAt: '2026-11-30T00:00:00Z', staleAfter: '2026-12-14' });
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Name'));
    assert.equal(rows.length, servers.length);
    for (const row of rows) assert.equal(row.replace(/\\\|/g, '').split('|').length - 2, 5, row);
    assert.ok(!/<script|<img/i.test(md));
  });
});

describe('probe --json streamed in input order', () => {
  it('items put out of order make exactly the text of JSON.stringify(items, null, 2), escaped', () => {
    const items = [{ a: 1, b: [1, { c: 'x\ny \u202E' }] }, { z: null }, [], {}, 'last'];
    let out = '';
    const array = new OrderedJsonArray((text) => {
      out += text;
    }, jsonInvisibleEscaped);
    for (const i of [3, 1, 0, 4, 2]) array.put(i, items[i]);
    array.end();
    assert.equal(out, jsonInvisibleEscaped(JSON.stringify(items, null, 2)) + '\n');
    assert.deepEqual(JSON.parse(out), items);
  });
});
