/**
 * Hidden characters in catalog text and server text (issue item 5): `lint` names every invisible, tag, stray
 * variation-selector and Hangul-filler character; every output format shows them escaped (`\uXXXX` in Kotlin,
 * TypeScript and JSON, where the value is unchanged; `⟨U+XXXX⟩` in Markdown, HTML and the terminal), and
 * leaves the sequences the screening scanner treats as honest (ZWJ emoji, ZWNJ in Persian text) as they are.
 * And the protected-resource-metadata GET after a 401 obeys the address rule on the server's own origin too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import dnsPromises from 'node:dns/promises';
import { syncBuiltinESMExports } from 'node:module';
import { isIP, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { lintCatalog } from '../src/index.js';
import { runtimeJson, runtimeKotlin, runtimeTypeScript, type PopularMcpServer } from '../src/outputs/runtime-list.js';
import { entryProblems } from '../src/catalog/lint.js';
import { escapeHtml, jsonInvisibleEscaped, kotlinString, mdText, tsString } from '../src/text/escape.js';
import { hiddenCharacters, maybeHidden } from '../src/text/unicode.js';
import { snapshotMarkdown } from '../src/outputs/snapshot.js';
import { inert } from '../src/text/escape.js';
import { authEvidence } from '../src/attest/auth.js';
import type { LiveExchange } from '../src/attest/live.js';
import type { Resolver } from '../src/net/fetcher.js';
import { BIN, catalogOf, observation, planOf, runCli, server, workspace } from './helpers.js';

const hex = (cp: number) => cp.toString(16).toUpperCase().padStart(4, '0');

/** Text that hides something, and the first code point lint must name. */
const HIDDEN: ReadonlyArray<readonly [label: string, text: string, cp: number]> = [
  ['tag characters spelling "Ignore"', 'Reads a file.\u{E0049}\u{E0067}\u{E006E}\u{E006F}\u{E0072}\u{E0065}', 0xe0049],
  ['one tag character', 'Search\u{E0041} the web', 0xe0041],
  ['CANCEL TAG without a flag', 'Search\u{E007F}', 0xe007f],
  ['VS16 after a Latin letter', 'Search\uFE0F the web', 0xfe0f],
  ['VS15 at the start', '\uFE0ESearch', 0xfe0e],
  ['VS16 after a digit that is no keycap', 'Top 5\uFE0F results', 0xfe0f],
  ['an ideographic selector after a Latin letter', 'a\u{E0101}b', 0xe0101],
  ['selectors as a run after an emoji', 'ok 😀\uFE0F\uFE0E\uFE0F', 0xfe0f],
  ['a selector after a space', 'Search \uFE01', 0xfe01],
  ['Hangul choseong filler U+115F', 'Docs\u115F', 0x115f],
  ['Hangul jungseong filler U+1160', 'Do\u1160cs', 0x1160],
  ['Hangul filler U+3164', 'a\u3164b', 0x3164],
  ['halfwidth Hangul filler U+FFA0', '\uFFA0Search', 0xffa0],
  ['soft hyphen', 'pass\u00ADword', 0x00ad],
  ['word joiner', 'pass\u2060word', 0x2060],
  ['invisible plus U+2064', 'a\u2064b', 0x2064],
  ['zero-width no-break space', 'Search\uFEFF', 0xfeff],
  ['zero-width space', 'Sea\u200Brch', 0x200b],
  ['ZWNJ between Latin letters', 'Sea\u200Crch', 0x200c],
  ['ZWJ between Latin letters', 'Sea\u200Drch', 0x200d],
  ['Mongolian vowel separator', 'Sea\u180Erch', 0x180e],
  ['right-to-left override', 'Deletes nothing \u202Eselif lla', 0x202e],
  ['first strong isolate', 'x\u2068y', 0x2068],
  ['interlinear annotation anchor', 'a\uFFF9b', 0xfff9],
];

/** Honest typography that must pass lint and reach every output exactly as it is. */
const HONEST = [
  'family 👨‍👩‍👧 emoji',
  'rainbow 🏳️‍🌈 flag',
  'coder 👩🏽‍💻 at work',
  'Persian می‌خواهم and خانه‌ها',
  'Hindi क्‍ष',
  'keycaps 1️⃣ and 9️⃣',
  'heart ❤️ and smile ☺︎',
  'England 🏴󠁧󠁢󠁥󠁮󠁧󠁿 flag',
  'Japanese 葛󠄀城',
];

/** Raw code points that must never survive into an output (the honest sequences removed first). */
const RAW_HIDDEN = new RegExp(
  String.raw`[\u{E0000}-\u{E007F}\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u115F\u1160\u3164\uFFA0\u00AD\u034F\u061C\u180E\u2` +
    String.raw`00B-\u200F\u202A-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]`,
  'u',
);
const withoutHonest = (text: string) => HONEST.reduce((t, h) => t.split(h).join(' '), text);
const assertNoRawHidden = (text: string, what: string) => {
  const m = RAW_HIDDEN.exec(withoutHonest(text));
  assert.equal(m, null, `${what}: raw U+${m ? hex(m[0].codePointAt(0)!) : ''}`);
};

describe('lint: hidden characters in catalog text', () => {
  for (const [label, text, cp] of HIDDEN) {
    it(`${label}: a problem naming U+${hex(cp)}, wherever the text is`, () => {
      const catalog = catalogOf(
        [
          server('Plain', 'https://plain.example/mcp', { description: text }),
          server(`Name ${text}`, 'https://name.example/mcp'),
          server('Header', 'https://header.example/mcp', { headers: { 'X-Client': text } }),
          server('Why', 'https://why.example/mcp', { decision: { by: 'ada', at: '2026-11-30', why: text } }),
        ],
        { removed: [{ name: 'Gone', url: 'https://gone.example/mcp', reason: text }] },
      );
      const problems = lintCatalog(catalog).map((p) => `${p.where}: ${p.message}`);
      const named = new RegExp(`hidden characters? U\\+${hex(cp)}\\b`);
      for (const place of [
        /^servers\[0\] \(Plain\): description: /,
        /^servers\[1\] \(Name .*\): name: /,
        /^servers\[2\] \(Header\): headers\.X-Client: /,
        /^servers\[3\] \(Why\): decision\.why: /,
        /^removed\[0\] \(Gone\): reason: /,
      ]) {
        assert.ok(
          problems.some((p) => place.test(p) && named.test(p)),
          `${place} ${named} in ${JSON.stringify(problems, null, 1)}`,
        );
      }
      // `add` applies the same rule before it writes.
      assert.ok(
        entryProblems(server('New', 'https://new.example/mcp', { description: text }), catalogOf([])).some((m) =>
          named.test(m),
        ),
      );
    });
  }

  it('a header name with a hidden character is named too', () => {
    const problems = lintCatalog(
      catalogOf([server('H', 'https://h.example/mcp', { headers: { 'X-\u200BClient': 'kai' } })]),
    ).map((p) => p.message);
    assert.ok(
      problems.some((m) => /^headers\["X-⟨U\+200B⟩Client"\] \(the name\): hidden character U\+200B/.test(m)),
      JSON.stringify(problems),
    );
  });

  it('honest sequences pass: ZWJ emoji, ZWNJ and ZWJ in Persian and Indic words, keycaps, VS16 emoji, flag tags, ideographic variants', () => {
    const catalog = catalogOf(
      HONEST.map((text, i) => server(text, `https://h${i}.example/mcp`, { description: text })),
    );
    assert.deepEqual(lintCatalog(catalog), []);
  });

  it('the CLI: exit 1, the problem printed with visible code points and no raw hidden character, in text and --json', async () => {
    const { catalogPath } = await workspace(
      catalogOf([server('Tagged\u{E0041}', 'https://t.example/mcp', { description: HIDDEN[0]![1] })]),
    );
    const text = await runCli(['lint', '--catalog', catalogPath]);
    assert.equal(text.code, 1, text.stderr);
    assert.match(
      text.stdout,
      /servers\[0\] \(Tagged⟨U\+E0041⟩\): description: hidden characters U\+E0049 U\+E0067 U\+E006E U\+E006F …/,
    );
    assertNoRawHidden(text.stdout + text.stderr, 'lint');
    const json = await runCli(['lint', '--catalog', catalogPath, '--json']);
    assert.equal(json.code, 1);
    assertNoRawHidden(json.stdout, 'lint --json');
    assert.match(json.stdout, /\\udb40\\udc41/);
    const parsed = JSON.parse(json.stdout) as { problems: Array<{ where: string; message: string }> };
    assert.ok(parsed.problems.some((p) => p.where === 'servers[0] (Tagged\u{E0041})' && /U\+E0049/.test(p.message)));
  });
});

describe('catalog text in the terminal: one line per problem, nothing raw', () => {
  // A name that would end its own line and begin a forged one, with a bidi override to hide it.
  const forged = (path: string) => `Evil\u202E\n${path}: servers[7] (Forged): all good`;

  it('lint: a newline in a name cannot forge a line; each problem is one line', async () => {
    const { catalogPath } = await workspace(catalogOf([]));
    await writeFile(catalogPath, JSON.stringify(catalogOf([server(forged(catalogPath), 'https://t.example/mcp')])));
    const json = JSON.parse((await runCli(['lint', '--catalog', catalogPath, '--json'])).stdout) as {
      problems: unknown[];
    };
    const text = await runCli(['lint', '--catalog', catalogPath]);
    assert.equal(text.code, 1);
    const lines = text.stdout.trimEnd().split('\n');
    assert.equal(lines.length, json.problems.length, text.stdout);
    assert.ok(
      lines.every((l) => l.startsWith(`${catalogPath}: servers[0] (Evil⟨U+202E⟩\uFFFD${catalogPath}: servers[7]`)),
      text.stdout,
    );
    assertNoRawHidden(text.stdout + text.stderr, 'lint');
  });

  it('serve: a catalog that fails lint is logged inert, one line per problem', async () => {
    const { catalogPath, dir } = await workspace(catalogOf([]));
    await writeFile(catalogPath, JSON.stringify(catalogOf([server(forged(catalogPath), 'https://t.example/mcp')])));
    const problems = (
      JSON.parse((await runCli(['lint', '--catalog', catalogPath, '--json'])).stdout) as { problems: unknown[] }
    ).problems.length;
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', '0', '--catalog', catalogPath, '--state', join(dir, 'h.db')],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      let err = '';
      child.stderr!.on('data', (d) => (err += d));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
          out += d;
          const m = /serving (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
      });
      await (await fetch(`${url}/`)).text();
      for (const end = Date.now() + 10_000; err.split('\n').length <= problems && Date.now() < end; )
        await new Promise((r) => setTimeout(r, 20));
      const lines = err.trimEnd().split('\n');
      assert.equal(lines.filter((l) => l.startsWith(`${catalogPath}: `)).length, problems, err);
      assert.ok(
        lines.every(
          (l) => l.startsWith('onetap serve: ') || l.startsWith(`${catalogPath}: servers[0] (Evil⟨U+202E⟩\uFFFD`),
        ),
        err,
      );
      assertNoRawHidden(err, 'serve');
    } finally {
      child.kill();
    }
  });
});

describe('every output format: hidden characters escaped, honest sequences unchanged', () => {
  const texts = [...HIDDEN.map(([, text]) => text), ...HONEST];
  const servers: PopularMcpServer[] = texts.map((text, i) => ({
    name: text,
    url: `https://h${i}.example/mcp`,
    description: `${text} | ${text}`,
    headers: (i % 2 ? { 'X-Label': text } : {}) as Record<string, string>,
    requiresAuth: false,
  }));

  it('the quick pre-check misses no code point the decision looks at (every format character, selector, filler, lone surrogate)', () => {
    const looked =
      /[\u007f-\u009f\u00ad\u034f\u115f\u1160\u2028\u2029\u3164\ufe00-\ufe0f\uffa0\p{Cf}\p{Cs}\u{e0000}-\u{e01ef}]/u;
    const missed: string[] = [];
    for (let cp = 0x7f; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      if (looked.test(ch) && ![ch, `ab${ch}`, `${ch}cd`, `é${ch}x`, `x${ch}é`].every(maybeHidden)) missed.push(hex(cp));
    }
    assert.deepEqual(missed, []);
    assert.equal(maybeHidden('plain ASCII, ünïcödé, 検索, 😀'), false);
  });

  it('the decision: each hidden case is found, no honest one is', () => {
    for (const [label, text, cp] of HIDDEN) assert.equal(hiddenCharacters(text)[0]?.char.codePointAt(0), cp, label);
    for (const text of HONEST) assert.deepEqual(hiddenCharacters(text), [], text);
  });

  it('JSON: parses to exactly the same values, hidden characters as \\u escapes (astral ones as two)', () => {
    const json = runtimeJson(servers);
    assertNoRawHidden(json, 'JSON');
    assert.deepEqual(JSON.parse(json), servers);
    assert.match(json, /Reads a file\.\\udb40\\udc49\\udb40\\udc67/);
    assert.match(json, /Docs\\u115f/);
    for (const h of HONEST) assert.ok(json.includes(h), `honest text raw in the JSON: ${h}`);
    // A selector after a character written as a \u escape in the JSON text is no keycap.
    assert.equal(jsonInvisibleEscaped(JSON.stringify('\u0001\uFE0F\u20E3')), '"\\u0001\\ufe0f\u20E3"');
    assert.equal(jsonInvisibleEscaped(JSON.stringify('\\u0001\uFE0F\u20E3')), JSON.stringify('\\u0001\uFE0F\u20E3'));
  });

  it('TypeScript: no diagnostics, evaluates to exactly the same values', async () => {
    const source = runtimeTypeScript(servers);
    assertNoRawHidden(source, 'TypeScript');
    assert.match(source, /\\udb40\\udc49/);
    for (const h of HONEST) assert.ok(source.includes(h), `honest text raw in the TypeScript: ${h}`);
    const out = ts.transpileModule(source, {
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    assert.deepEqual(out.diagnostics, []);
    const mod = (await import(`data:text/javascript;base64,${Buffer.from(out.outputText).toString('base64')}`)) as {
      popularMcpServers: PopularMcpServer[];
    };
    assert.deepEqual(mod.popularMcpServers, servers);
    assert.equal(tsString('a\u{E0041}'), '"a\\udb40\\udc41"');
  });

  it('Kotlin: compiles with kotlinc and holds exactly the same UTF-16 strings', { timeout: 180_000 }, async (t) => {
    const kotlin = runtimeKotlin(servers, 'app.generated');
    assertNoRawHidden(kotlin, 'Kotlin');
    assert.match(kotlin, /\\udb40\\udc49/);
    assert.equal(kotlinString('a\u{E0041}\u3164$'), '"a\\udb40\\udc41\\u3164\\$"');
    for (const h of HONEST) assert.ok(kotlin.includes(h), `honest text raw in the Kotlin: ${h}`);
    if (spawnSync('kotlinc', ['-version']).error) {
      if (process.env.CI) assert.fail('kotlinc is missing on CI: .ci/run installs the Debian package kotlin');
      t.skip('kotlinc not installed (apt-get install kotlin)');
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), 'onetap-kt-hidden-'));
    await writeFile(join(dir, 'PopularMcpServers.kt'), kotlin);
    await writeFile(
      join(dir, 'Main.kt'),
      `package app.generated
fun main() {
    for (s in popularMcpServers) {
        val fields = listOf(s.name, s.url, s.description) + s.headers.flatMap { listOf(it.key, it.value) }
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
    const units = (s: string) => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i)).join(',');
    assert.deepEqual(
      printed,
      servers.flatMap((s) => [s.name, s.url, s.description, ...Object.entries(s.headers).flat()]).map(units),
    );
  });

  it('Markdown (micromark + GFM, as GitHub renders it): ⟨U+XXXX⟩ for each hidden character, honest text as it is', () => {
    const catalog = catalogOf(servers.map((s) => server(s.name, s.url)));
    const plan = planOf(
      catalog.servers.map((s) => ({ name: s.name, observation: observation({ url: s.url, tools: [s.name] }) })),
    );
    const markdown = snapshotMarkdown({ catalog, plan, probedAt: '2026-11-30T00:00:00Z', staleAfter: '2026-12-14' });
    const html = micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
    assertNoRawHidden(markdown, 'Markdown source');
    assertNoRawHidden(html, 'rendered Markdown');
    for (const [label, , cp] of HIDDEN) assert.ok(html.includes(`⟨U+${hex(cp)}⟩`), `${label}: ⟨U+${hex(cp)}⟩ shown`);
    assert.ok(html.includes('Reads a file.⟨U+E0049⟩⟨U+E0067⟩⟨U+E006E⟩⟨U+E006F⟩⟨U+E0072⟩⟨U+E0065⟩'));
    for (const h of HONEST) assert.ok(html.includes(h), `honest text as it is in the rendered Markdown: ${h}`);
    assert.equal(mdText('x\u{E0041}\uFE0F'), 'x⟨U+E0041⟩⟨U+FE0F⟩');
  });

  it('HTML and the terminal: ⟨U+XXXX⟩; honest text as it is; controls in the terminal still U+FFFD', () => {
    for (const [label, text, cp] of HIDDEN) {
      for (const [format, out] of [
        ['html', escapeHtml(text)],
        ['terminal', inert(text)],
      ] as const) {
        assertNoRawHidden(out, `${format}: ${label}`);
        assert.ok(out.includes(`⟨U+${hex(cp)}⟩`), `${format}: ${label}`);
      }
    }
    for (const h of HONEST) {
      assert.equal(inert(h), h);
      assert.equal(escapeHtml(h), h);
    }
    assert.equal(inert('a\u001b[31m\nb\u202E'), 'a\uFFFD[31m\uFFFDb⟨U+202E⟩');
  });
});

describe('auth metadata after a 401: the address rule on every URL a server supplies, its own origin included', () => {
  /** A protected-resource-metadata document on loopback: a GET that reaches it counts. */
  let prm: Server;
  let port = 0;
  let hits = 0;
  const realLookup = dnsPromises.lookup;
  const challenge = (base: string): LiveExchange => ({
    step: 'initialize',
    status: 401,
    contentType: 'application/json',
    body: null,
    bodySnippet: null,
    response: null,
    problem: null,
    errorCode: null,
    error: 'HTTP 401',
    durationMs: 1,
    headers: { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` },
  });

  before(async () => {
    prm = createServer((req, res) => {
      hits++;
      if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ resource: 'x', authorization_servers: ['https://auth.example'] }));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => prm.listen(0, '127.0.0.1', r));
    port = (prm.address() as AddressInfo).port;
    // The system resolver, as a probe uses it: rebind.example answers a loopback address (a rebinding name on its
    // second lookup).
    (dnsPromises as { lookup: unknown }).lookup = async (host: string, opts: unknown) =>
      host === 'rebind.example' ? [{ address: '127.0.0.1', family: 4 }] : realLookup(host, opts as never);
    syncBuiltinESMExports();
  });
  after(() => {
    (dnsPromises as { lookup: unknown }).lookup = realLookup;
    syncBuiltinESMExports();
    prm.close();
  });

  it("a rebinding name: the GET to the server's own origin is refused, nothing reaches the private address", async () => {
    hits = 0;
    const base = `http://rebind.example:${port}`;
    const kind = await authEvidence(`${base}/mcp`, challenge(base), { timeoutMs: 2_000 });
    assert.notEqual(kind, 'oauth');
    assert.equal(hits, 0, 'no GET reached the loopback listener');
  });

  it('the same with an injected resolver; with allowPrivate (tests, fixtures) the document is read', async () => {
    const resolver: Resolver = async (host) =>
      host === 'inward.example' ? [{ address: '127.0.0.1', family: isIP('127.0.0.1') }] : [];
    const base = `http://inward.example:${port}`;
    hits = 0;
    assert.notEqual(await authEvidence(`${base}/mcp`, challenge(base), { timeoutMs: 2_000, resolver }), 'oauth');
    assert.equal(hits, 0);
    assert.equal(
      await authEvidence(`${base}/mcp`, challenge(base), { timeoutMs: 2_000, resolver, allowPrivate: true }),
      'oauth',
    );
    assert.ok(hits > 0, 'the control: the resolver is the one used');
  });

  it("a typed IP literal is the maintainer's own address: its origin is read; another origin a server names is not", async () => {
    hits = 0;
    const base = `http://127.0.0.1:${port}`;
    assert.equal(await authEvidence(`${base}/mcp`, challenge(base), { timeoutMs: 2_000 }), 'oauth');
    assert.ok(hits > 0);
    hits = 0;
    // A server on a public name that points its metadata at the loopback listener: another origin, refused.
    const elsewhere = challenge(base);
    const kind = await authEvidence('https://public.example/mcp', elsewhere, {
      timeoutMs: 2_000,
      resolver: async () => [],
    });
    assert.notEqual(kind, 'oauth');
    assert.equal(hits, 0);
  });
});
