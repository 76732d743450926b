/**
 * String escaping per output language: one function per format, applied to every untrusted string (names,
 * descriptions, URLs, tool names, errors, anything read back from the history store).
 *
 * Invisible characters that reorder or hide text (bidi controls: the "Trojan Source" trick; zero-width and
 * tag characters; stray variation selectors; Hangul fillers) never reach a generated file raw. Which ones is
 * decided once, in ./unicode.ts; code gets `\u` escapes (the value round-trips), Markdown, HTML and the
 * terminal a visible `⟨U+XXXX⟩`.
 */
import { escapeHidden, uEscapes, visibleCodePoint } from './unicode.js';

export { visibleCodePoint } from './unicode.js';

/** One character of a Kotlin string literal that is not shown escaped by the shared decision. */
function kotlinRun(run: string): string {
  let out = '';
  for (const ch of run) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '$') out += '\\$';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20) out += uEscapes(ch);
    else out += ch;
  }
  return out;
}

/**
 * A Kotlin string literal: `"…"` with `\`, `"`, `$`, every control character and every character the shared
 * decision shows escaped written as `\uXXXX` (an astral one as its two surrogates, which Kotlin joins again).
 */
export function kotlinString(text: string): string {
  return `"${escapeHidden(text, uEscapes, kotlinRun)}"`;
}

/** A TypeScript/JavaScript string literal: JSON's escaping, plus `\u` for line separators and invisible characters. */
export function tsString(text: string): string {
  return jsonInvisibleEscaped(JSON.stringify(text));
}

/**
 * JSON text with the characters the shared decision shows escaped written as `\u` escapes. Such characters
 * only occur inside JSON strings, where `\uXXXX` means the same character, so the value is unchanged.
 */
export function jsonInvisibleEscaped(json: string): string {
  return escapeHidden(json, uEscapes, undefined, { json: true });
}

// ---------------------------------------------------------------------------------------------------------
// Markdown (GitHub Flavored, as github.com renders servers.md, log.md and pull request bodies)

/**
 * A word GitHub would turn into a link or a notification: a URL (`://`), a `www.` name, an email or
 * `@mention` (GitHub links mentions after rendering, so a backslash does not stop them), an issue reference
 * (`#12`, `GH-12`, `owner/repo#12`), a commit hash. Such words are written as code spans, which nothing links.
 */
const LINKISH = /[@\uFF20]|:\/\/|www\.|#\d|\bgh-\d|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])\b[0-9a-f]{7,40}\b/i;

/** Characters that end a code-span run inside a link-like word (they cannot sit inside one). */
const CODE_BREAK = /[`|\\]/;

/** Control characters left after the shared decision (C0) are shown as U+FFFD. */
// eslint-disable-next-line no-control-regex
const MD_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function escapeMdChar(ch: string, prev: string, next: string): string {
  if (MD_CONTROL.test(ch)) return '\uFFFD';
  switch (ch) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;';
    case '_':
      return /[\p{L}\p{N}]/u.test(prev) && /[\p{L}\p{N}]/u.test(next) ? '_' : '\\_'; // intraword _ never emphasises
    case '\\':
    case '`':
    case '*':
    case '[':
    case ']':
    case '|':
    case '~':
    case '$':
    case '#':
    case '@':
      return `\\${ch}`;
    default:
      return ch;
  }
}

function escapeMdRun(text: string): string {
  const chars = [...text];
  return chars.map((ch, i) => escapeMdChar(ch, chars[i - 1] ?? '', chars[i + 1] ?? '')).join('');
}

/** A link-like word as code spans; the characters a code span cannot hold are escaped between them. */
function codeWord(word: string): string {
  let out = '';
  let run = '';
  const flush = () => {
    if (run) out += `\`${run}\``;
    run = '';
  };
  for (const ch of word) {
    if (CODE_BREAK.test(ch) || MD_CONTROL.test(ch)) {
      flush();
      out += escapeMdChar(ch, '', '');
    } else run += ch;
  }
  flush();
  return out;
}

/**
 * Inline Markdown text that renders as exactly these characters and nothing else: on one line (safe in a
 * table cell and a list item), no HTML, no emphasis, links, images, math, headings, lists or table breaks,
 * no autolinked URL/`www.`/email, no `@mention` or issue reference, and no invisible character: what the
 * shared decision shows escaped is written as a visible `⟨U+XXXX⟩` before anything else is escaped.
 */
export function mdText(text: string): string {
  const line = escapeHidden(text.replace(/[\r\n\t\u000b\u000c\u0085\u2028\u2029]+/g, ' '), visibleCodePoint).trim();
  let out = line
    .split(/( +)/)
    .map((word, i) => (i % 2 ? ' ' : LINKISH.test(word) ? codeWord(word) : escapeMdRun(word)))
    .join('');
  // Block markers only count at the start of a line; an interpolated value may start one.
  // A leading `:` may start a table's delimiter row (`:-:`) under a line of text, as `-` may.
  out = out.replace(/^([-+=:])/, '\\$1').replace(/^(\d{1,9})([.)])(?= |$)/, '$1\\$2');
  return out;
}

/** Text already safe for one output format: constants of this code base, or what that format's template made. */
export class SafeText {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * A tagged template for one format: every interpolation is escaped with `escape` unless it is already `Kind`
 * (arrays are joined, null/undefined/false render nothing). Safe by construction: nothing reaches the output
 * unescaped but constants and the template's own results.
 */
export function escapingTemplate<T extends SafeText>(
  Kind: new (value: string) => T,
  escapeText: (text: string) => string,
): (strings: TemplateStringsArray, ...values: unknown[]) => T {
  const render = (v: unknown): string => {
    if (v instanceof Kind) return v.value;
    if (Array.isArray(v)) return v.map(render).join('');
    if (v === null || v === undefined || v === false) return '';
    return escapeText(String(v));
  };
  return (strings, ...values) => {
    let out = strings[0]!;
    values.forEach((v, i) => {
      out += render(v) + strings[i + 1]!;
    });
    return new Kind(out);
  };
}

/** Markdown that is already safe: constants of this code base, or the result of `md`. */
export class Md extends SafeText {}

/** Trusted Markdown (only for constants written in this code base). */
export const mdTrusted = (markdown: string) => new Md(markdown);

/** A tagged template that escapes every interpolation with `mdText` unless it is already `Md`. */
export const md = escapingTemplate(Md, mdText);

/** A short machine word (`live/ok`, `keep-failed`) as inline code when it is plainly one; anything else as text. */
export function mdCodeWord(text: unknown): Md {
  const s = String(text);
  return new Md(/^[a-z0-9][a-z0-9/._-]{0,63}$/i.test(s) && !LINKISH.test(s) ? `\`${s}\`` : mdText(s));
}

/**
 * HTML text and attribute values; what the shared decision shows escaped as a visible `⟨U+XXXX⟩`, and the C0
 * controls HTML calls a parse error (a NUL is dropped from text) as U+FFFD, as in the terminal.
 */
export function escapeHtml(text: string): string {
  // eslint-disable-next-line no-control-regex
  return escapeHidden(text.replace(/[\u0000-\u0008\u000b\u000e-\u001f]/g, '\uFFFD'), visibleCodePoint)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Server-supplied text must not drive, hide or reorder the terminal: control characters and line separators
 * become U+FFFD, and what the shared decision shows escaped (bidi controls, zero-width, tag and other
 * invisible characters, stray variation selectors) a visible `⟨U+XXXX⟩`.
 */
export function inert(text: string): string {
  // eslint-disable-next-line no-control-regex
  return escapeHidden(text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '\uFFFD'), visibleCodePoint);
}
