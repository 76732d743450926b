/**
 * Markdown that GitHub renders (servers.md, log.md, `report --markdown` as a PR body) stays inert whatever a
 * catalog, a remote server or the history store says: rendered with micromark + GFM (autolink literals on,
 * raw HTML passed through as GitHub passes its allowed subset), no link, no HTML element of the input, no
 * mention or issue reference outside code, no math, cells intact, and no raw bidi control.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { logMarkdown, snapshotMarkdown } from '../src/outputs/snapshot.js';
import { markdownReport } from '../src/status/report.js';
import { md, mdText } from '../src/text/escape.js';
import type { StatusModel } from '../src/status/model.js';
import { catalogOf, observation, planOf, runCli, server, workspace } from './helpers.js';

/** What an attacker would put in a name, a description, a tool name, an error or a history row. */
export const HOSTILE_MD = [
  'https://evil.example/phish',
  'see www.evil.example now',
  'WWW.EVIL.EXAMPLE',
  'mail admin@evil.example today',
  'mailto:x@evil.example',
  'xmpp:x@evil.example',
  '@octocat please look',
  'cc @github/security-team,@ghost',
  '(@paren) and "@quoted"',
  'fixes #123, GH-7 and octo/repo#9',
  'commit 1a2b3c4d5e6f7a8b',
  '$\\sqrt{2}$ and $$x$$ and $`y`$',
  '<img src=x onerror=alert(1)> <b>bold</b> <!-- c --> <script>x</script> <details open>',
  '| cell | break |',
  'line\n# Heading\n- item\n> quote\n1. one\n\n---',
  '[link](https://evil.example) ![img](https://evil.example/x.png) <https://evil.example> [ref][1]\n[1]: https://evil.example',
  '**bold** _em_ ~~strike~~ ~one~ `code` ``double`` ```',
  'backslash \\ and at the end \\',
  '&amp; &lt; entities &#64;octocat &#x40;',
  '[^1] footnote\n\n[^1]: https://evil.example',
  '- leading dash',
  '1. leading list',
  '2) other list',
  '=== setext',
  '+ plus',
  '# hash',
  'https://a.example/`x`|y\\z',
  'http://127.0.0.1:9/mcp',
  ':+1: emoji and read_wiki_contents and snake_case_',
  'x\u00a0www.nbsp.example',
  'javascript:alert(1)',
];

const BIDI = [
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u202E',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200E',
  '\u200F',
  '\u061C',
];
const TROJAN = `access = "user\u202E \u2066// admin only\u2069 \u2066"\u200F\u061C`;
const RAW_BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;

const render = (markdown: string) =>
  micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });

/** The HTML's visible text outside <code>, entity-decoded: what GitHub's mention and reference filters read. */
function textOutsideCode(html: string): string {
  return decode(html.replace(/<code>[\s\S]*?<\/code>/g, ' ').replace(/<[^>]*>/g, ' '));
}
function decode(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, '&');
}
/** A cell's text as a reader sees it. */
const cellText = (cell: string) => decode(cell.replace(/<[^>]*>/g, '')).trim();
/** What a string should read as, on one line: line breaks as spaces, bidi controls as visible code points. */
function display(text: string): string {
  return text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/ +/g, ' ')
    .trim()
    .replace(
      /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g,
      (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`,
    );
}

/** A `$` outside code spans and not backslash-escaped (CommonMark's scan: escapes first, then backtick runs). */
function hasUnescapedDollar(src: string): boolean {
  for (let i = 0; i < src.length; ) {
    const c = src[i]!;
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(src.slice(i))![0].length;
      const close = new RegExp(`(?<!\`)\`{${run}}(?!\`)`, 'g');
      close.lastIndex = i + run;
      const m = close.exec(src);
      i = m ? m.index + run : i + run;
      continue;
    }
    if (c === '$') return true;
    i++;
  }
  return false;
}

const ALLOWED_TAGS = new Set([
  'h1',
  'h2',
  'p',
  'ul',
  'li',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'code',
  'strong',
  'blockquote',
  'hr',
]);

/** Everything a hostile string must not achieve once GitHub renders the document. */
function assertInert(markdown: string, label: string): string {
  const html = render(markdown);
  assert.ok(!/<a[\s>]/i.test(html), `${label}: a live link in\n${html}`);
  for (const [, tag] of html.matchAll(/<\/?([a-z0-9]+)/gi))
    assert.ok(ALLOWED_TAGS.has(tag!.toLowerCase()), `${label}: <${tag}> in the rendered HTML\n${html}`);
  assert.ok(!/<(img|script|b|details|em|del|sup|section|h[3-6]|ol|input)\b/i.test(html), label);
  const text = textOutsideCode(html);
  assert.ok(!/(^|[^\w`])@[a-z0-9]/i.test(text), `${label}: a mention GitHub would link: ${text}`);
  assert.ok(!/#\d|\bgh-\d/i.test(text), `${label}: an issue reference GitHub would link: ${text}`);
  assert.ok(
    !/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b/i.test(text),
    `${label}: a commit hash GitHub would link: ${text}`,
  );
  // GitHub math: every $ outside code must be escaped in the source.
  assert.ok(!hasUnescapedDollar(markdown), `${label}: an unescaped $ (GitHub math)`);
  assert.ok(!RAW_BIDI.test(markdown), `${label}: a raw bidi control`);
  return html;
}

describe('mdText', () => {
  it('every hostile string renders inert and reads as itself, alone, in a list item and in a table cell', () => {
    for (const text of [...HOSTILE_MD, TROJAN]) {
      const alone = assertInert(mdText(text), text);
      assert.equal(cellText(alone.replace(/^<p>|<\/p>\s*$/g, '')), display(text), `alone: ${text}`);
      const item = assertInert(md`- a ${text} b`.value, text);
      assert.match(item, /^<ul>\n<li>[\s\S]*<\/li>\n<\/ul>\n?$/, `one list item: ${text}`);
      const table = assertInert(md`| A | B | C |\n|---|---|---|\n| ${text} | ${text} | end |`.value, text);
      const cells = [...table.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => cellText(m[1]!));
      assert.deepEqual(cells, [display(text), display(text), 'end'], `table: ${text}`);
    }
  });

  it('bidi controls become visible code points', () => {
    for (const ch of BIDI) {
      const out = mdText(`a${ch}b`);
      assert.ok(!RAW_BIDI.test(out));
      assert.ok(out.includes(`⟨U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`), out);
    }
  });

  it('the escaping is not a no-op: unescaped, the same strings do link, mention and break cells', () => {
    // Guards the guard: the renderer and the checks would catch what mdText prevents.
    assert.match(render('see www.evil.example'), /<a /);
    assert.match(render('mail admin@evil.example'), /<a /);
    assert.throws(() => assertInert('@octocat', 'raw'));
    assert.throws(() => assertInert('fixes #123', 'raw'));
    assert.throws(() => assertInert('<img src=x>', 'raw'));
    assert.throws(() => assertInert('$x$', 'raw'));
  });
});

const hostileServers = [...HOSTILE_MD, TROJAN].map((text, i) =>
  server(text, `https://h${i}.example/mcp?q=${encodeURIComponent(text)}&raw=${text.replace(/\s/g, '')}`, {
    description: text,
  }),
);

/** The probe-outcome fields beyond the classic ones, filled with hostile text where they hold text. */
function outcomeExtras(text: string) {
  return {
    profile: 'kai-9000',
    reasons: ['ok' as const],
    appError: text,
    location: text,
    matrix: null,
    toolsHash: null,
    findings: [{ tool: text, field: text, rule: text, excerpt: text }],
    findingsSeen: 1,
  };
}

function hostilePlan(prevText: string) {
  return planOf(
    hostileServers.map((s, i) => ({
      name: s.name,
      observation: observation({
        url: s.url,
        verdict: (i % 3 ? 'live' : 'failed') as 'live',
        reason: (i % 3 ? 'ok' : 'timeout') as 'ok',
        attempts: 1 + (i % 2),
        tools: HOSTILE_MD.slice(0, 6),
        error: i % 3 ? null : s.name,
        ...outcomeExtras(s.name),
      }),
      // What an earlier version read back unchecked: words outside the policy reach the pages only escaped.
      history: [{ observedAt: '2026-11-29T00:00:00Z', verdict: prevText as 'live', reason: prevText as 'ok' }],
    })),
  );
}

describe('servers.md and log.md', () => {
  it('hostile catalog and remote text: no link, HTML, mention, math or bidi; five intact cells per row', () => {
    const catalog = catalogOf(hostileServers);
    const plan = hostilePlan('@octocat https://evil.example/prev');
    const model = { catalog, plan, probedAt: '2026-11-30T00:00:00Z', staleAfter: '2026-12-14' };
    const html = assertInert(snapshotMarkdown(model), 'servers.md');
    const rows = [...html.matchAll(/<tr>\n<td>([\s\S]*?)<\/tr>/g)].map((m) =>
      [...`<td>${m[1]}`.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((c) => cellText(c[1]!)),
    );
    assert.equal(rows.length, hostileServers.length);
    rows.forEach((cells, i) => {
      assert.equal(cells.length, 5, JSON.stringify(cells));
      assert.equal(cells[0], display(hostileServers[i]!.name));
      assert.equal(cells[1], display(hostileServers[i]!.url));
    });
    assertInert(logMarkdown(model, null), 'log.md');
  });
});

describe('report --markdown', () => {
  it('history-store text is untrusted: hostile plans, enums and observations render inert', () => {
    const evil = '@octocat <img src=x> https://evil.example $x$ #1 |';
    const model = {
      generatedAt: '2026-11-30T00:00:00Z',
      lastRefresh: {
        startedAt: evil,
        finishedAt: evil,
        applied: false,
        summary: { total: evil, keep: evil, keepFailed: 1, review: 0, drop: 1, changed: 1 },
        aborted: evil,
        plan: [
          {
            name: evil,
            url: evil,
            decision: 'drop',
            verdict: evil,
            reason: evil,
            attempts: 1,
            previous: null,
            changed: true,
            error: evil,
          },
          {
            name: evil,
            url: evil,
            decision: evil,
            verdict: evil,
            reason: evil,
            attempts: 1,
            previous: { verdict: evil, reason: evil, at: evil },
            changed: true,
            error: evil,
          },
          {
            name: evil,
            url: evil,
            decision: 'review',
            verdict: 'review',
            reason: 'suspicious-tools',
            attempts: 1,
            previous: null,
            changed: false,
            error: null,
            findingsSeen: 2,
            toolsHash: evil,
            findings: [{ tool: evil, field: evil, rule: evil, excerpt: evil }, 'not a finding'],
          },
          {
            name: evil,
            url: evil,
            decision: 'keep',
            verdict: 'live',
            reason: 'ok',
            attempts: 1,
            previous: null,
            changed: false,
            error: null,
            toolChanges: evil,
            findings: evil,
          },
        ],
      },
      servers: hostileServers.map((s, i) => ({
        id: `s${i}`,
        name: s.name,
        url: s.url,
        description: s.description,
        requiresAuth: false,
        decision: i % 2 ? evil : 'keep',
        verdict: evil,
        reason: evil,
        reasonText: evil,
        tools: [evil],
        lastProbeAt: evil,
        attempts: 1,
        durationMs: 1,
        httpStatus: 200,
        error: evil,
        uptime30: evil,
        uptime90: 0.5,
        appError: evil,
        matrix: i % 2 ? { [evil]: { works: true }, 'kai-9000': { works: false } } : evil,
        days30: [
          { date: evil, verdict: evil, observations: 1 },
          { date: '2026-11-30', verdict: 'live', observations: 1 },
        ],
        days90: [],
      })),
    } as unknown as StatusModel;
    const html = assertInert(markdownReport(model), 'report');
    const rows = [...html.matchAll(/<tr>\n<td>([\s\S]*?)<\/tr>/g)];
    assert.equal(rows.length, hostileServers.length);
    for (const row of rows) assert.equal([...`<td>${row[1]}`.matchAll(/<td>/g)].length, 8);
    assert.ok(html.includes('⬜🟩'), 'an unknown day verdict is a no-probe square');
  });

  it('CLI: a hostile text history (history/YYYY-MM.jsonl, edited in a PR) printed as a PR body renders inert', async () => {
    const servers = hostileServers.slice(0, 12);
    const { catalogPath, statePath } = await workspace(catalogOf(servers));
    const evil = '@octocat <script>alert(1)</script> www.evil.example $x$ #9 | \u202E';
    const now = new Date().toISOString();
    // Hostile text in every string field; a line whose verdict and reason are not words of the policy is skipped.
    const run = {
      v: 1,
      type: 'run',
      startedAt: now,
      finishedAt: now,
      catalog: 'servers.json',
      applied: true,
      aborted: null,
      observations: servers.length + 1,
      summary: { total: servers.length, keep: servers.length - 1, keepFailed: 0, review: 0, drop: 1, changed: 1 },
    };
    const observations: Array<Record<string, unknown>> = servers.map((s, i) => ({
      v: 1,
      type: 'observation',
      at: now,
      url: s.url,
      name: evil,
      verdict: i ? 'live' : 'review',
      reason: i ? 'ok' : 'handshake-error',
      attempts: 1,
      httpStatus: 200,
      durationMs: 3,
      tools: [evil],
      error: evil,
      ...outcomeExtras(evil),
      decision: i === 1 ? 'drop' : 'keep',
      dropStreak: 0,
      note: evil,
    }));
    observations.push({ ...observations[0]!, verdict: evil, reason: evil });
    const dir = join(dirname(catalogPath), 'history');
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, `${now.slice(0, 7)}.jsonl`),
      [run, ...observations].map((l) => JSON.stringify(l)).join('\n') + '\n',
    );
    const r = await runCli(['report', '--markdown', '--catalog', catalogPath, '--state', statePath]);
    assert.equal(r.code, 0, r.stderr);
    assertInert(r.stdout, 'report --markdown');
    assert.match(r.stdout, /⟨U\+202E⟩/, 'the hostile history was read (and its bidi control shown, not applied)');
    assert.match(r.stdout, /`@octocat`/);
    assert.match(r.stdout, /\*\*History:\*\* 1 line skipped/, 'the line of the wrong type is skipped and named');
  });
});
