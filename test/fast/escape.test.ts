/**
 * Escaping of untrusted text (what a remote server or a catalog entry says) into every output format onetap
 * writes (src/text/escape.ts), and the one decision of which characters are shown escaped (src/text/unicode.ts).
 *
 * The expectations come from the formats, not from the code: the Kotlin specification's line string literal
 * (checked by a decoder written from its grammar: `\t \b \n \r \' \" \\ \$ \uXXXX`, no raw `"`, `\` or line
 * break, no `$` before an identifier, a backtick or `{`), ECMAScript/TypeScript string literals (evaluated with
 * `new Function`; no raw line terminator, U+2028/U+2029 included), JSON (RFC 8259, JSON.parse), the HTML Living
 * Standard (text and quoted attribute values: `&`, `<`, `>`, `"`, `'`; the fragment serializer's `&amp;`,
 * `&lt;`, `&gt;`, `&quot;`), CommonMark/GFM as rendered by micromark + micromark-extension-gfm (plus GitHub's
 * documented mentions, issue and commit references and `$` math), and Unicode general categories (`\p{Cf}`,
 * `\p{Cs}`, emoji ZWJ, flag tag and variation sequences of UTS #51, ZWNJ/ZWJ in joining scripts). From the code
 * only the notations its comments promise: `\uXXXX` in code formats, `⟨U+XXXX⟩` in Markdown, HTML and the
 * terminal, U+FFFD for control characters in prose and the terminal, and its header's list of what is shown
 * escaped.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compile, micromark, parse, postprocess, preprocess } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import {
  escapeHtml,
  inert,
  jsonInvisibleEscaped,
  kotlinString,
  md,
  mdCodeWord,
  mdText,
  mdTrusted,
  SafeText,
  tsString,
} from '../../src/text/escape.js';
import {
  codePointName,
  escapeHidden,
  hasHidden,
  hiddenCharacters,
  maybeHidden,
  uEscapes,
  visibleCodePoint,
} from '../../src/text/unicode.js';

// ---------------------------------------------------------------------------------------------------------
// Characters, from Unicode and the header of unicode.ts

const hex = (cp: number) => cp.toString(16).toUpperCase().padStart(4, '0');
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i));
const C0 = range(0x00, 0x1f);
const C1 = range(0x80, 0x9f);
const DEL = '\u007f';
/** Line terminators of Unicode (UAX #14 mandatory breaks) other than CR/LF/VT/FF: NEL, LS, PS. */
const LINE_SEPARATORS = ['\u0085', '\u2028', '\u2029'];
/** What breaks a line somewhere: prose formats may write these as a space. */
const LINE_BREAKING = ['\t', '\n', '\u000b', '\u000c', '\r', ...LINE_SEPARATORS];
/** Every code point but the surrogates, as one string (UTF-16 code units decoded at once). */
const EVERY_CODE_POINT = (() => {
  const units = new Uint16Array(0x10000 - 0x800 + 2 * 0x100000);
  let n = 0;
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (c < 0x10000) units[n++] = c;
    else {
      units[n++] = 0xd800 + ((c - 0x10000) >> 10);
      units[n++] = 0xdc00 + ((c - 0x10000) & 0x3ff);
    }
  }
  return new TextDecoder('utf-16le').decode(units);
})();
/** Every code point of General_Category Cf (Unicode, as this Node's regular expressions know it). */
const FORMAT_CHARACTERS = EVERY_CODE_POINT.match(/\p{Cf}/gu)!;
const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00'];
const HANGUL_FILLERS = ['\u115f', '\u1160', '\u3164', '\uffa0'];
const VARIATION_SELECTORS = [...range(0xfe00, 0xfe0f), ...range(0xe0100, 0xe01ef)];
/** The header's list: Cf, Hangul fillers, CGJ, variation selectors, LS/PS, DEL and C1, lone surrogates. */
const SHOWN = [
  ...FORMAT_CHARACTERS,
  ...HANGUL_FILLERS,
  '\u034f',
  ...VARIATION_SELECTORS,
  '\u2028',
  '\u2029',
  DEL,
  ...C1,
];
const SHOWN_CLASS =
  '\\p{Cf}\\u115f\\u1160\\u3164\\uffa0\\u034f\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}\\u2028\\u2029\\u007f-\\u009f';

/** One character of each class, for the per-format tables. */
const CLASSES: Array<[string, string]> = [
  ['tag LATIN CAPITAL A (ASCII smuggling)', '\u{e0041}'],
  ['LANGUAGE TAG', '\u{e0001}'],
  ['CANCEL TAG alone', '\u{e007f}'],
  ['RIGHT-TO-LEFT OVERRIDE (Trojan Source)', '\u202e'],
  ['LEFT-TO-RIGHT EMBEDDING', '\u202a'],
  ['POP DIRECTIONAL FORMATTING', '\u202c'],
  ['RIGHT-TO-LEFT ISOLATE', '\u2067'],
  ['POP DIRECTIONAL ISOLATE', '\u2069'],
  ['RIGHT-TO-LEFT MARK', '\u200f'],
  ['ARABIC LETTER MARK', '\u061c'],
  ['ZERO WIDTH SPACE', '\u200b'],
  ['ZWNJ between Latin letters', '\u200c'],
  ['ZWJ between Latin letters', '\u200d'],
  ['WORD JOINER', '\u2060'],
  ['INVISIBLE TIMES', '\u2062'],
  ['BYTE ORDER MARK', '\ufeff'],
  ['SOFT HYPHEN', '\u00ad'],
  ['MONGOLIAN VOWEL SEPARATOR', '\u180e'],
  ['INTERLINEAR ANNOTATION ANCHOR', '\ufff9'],
  ['ARABIC NUMBER SIGN', '\u0600'],
  ['SHORTHAND FORMAT LETTER OVERLAP', '\u{1bca0}'],
  ['MUSICAL SYMBOL BEGIN BEAM', '\u{1d173}'],
  ['EGYPTIAN HIEROGLYPH VERTICAL JOINER', '\u{13430}'],
  ['COMBINING GRAPHEME JOINER', '\u034f'],
  ['VS16 after a Latin letter', '\ufe0f'],
  ['VS1 after a Latin letter', '\ufe00'],
  ['VS17 after a Latin letter', '\u{e0100}'],
  ['HANGUL CHOSEONG FILLER', '\u115f'],
  ['HANGUL JUNGSEONG FILLER', '\u1160'],
  ['HANGUL FILLER', '\u3164'],
  ['HALFWIDTH HANGUL FILLER', '\uffa0'],
  ['LINE SEPARATOR', '\u2028'],
  ['PARAGRAPH SEPARATOR', '\u2029'],
  ['DELETE', DEL],
  ['NEXT LINE (C1)', '\u0085'],
  ['CSI (C1)', '\u009b'],
  ['lone lead surrogate', '\ud800'],
  ['lone trail surrogate', '\udfff'],
];

/** Text that must come out as it is everywhere (no character any of the formats has to escape). */
const HONEST: Array<[string, string]> = [
  ['Japanese', '日本語のテキスト'],
  ['Chinese', '简体中文说明'],
  ['Korean', '한국어 설명'],
  ['Arabic', 'مرحبا بالعالم'],
  ['Hebrew', 'שלום עולם'],
  ['Persian with ZWNJ', 'می\u200cخواهم کتاب\u200cها را بخوانم'],
  ['Hindi', 'नमस्ते दुनिया'],
  ['Devanagari half form with ZWJ', 'क्\u200dष'],
  ['Devanagari explicit virama with ZWNJ', 'क्\u200cष'],
  ['Bengali ya-phala with ZWJ', 'র\u200d্য'],
  ['Tamil', 'தமிழ்'],
  ['Thai', 'ภาษาไทย'],
  ['Greek', 'Ελληνικά'],
  ['Cyrillic', 'Русский текст'],
  ['Vietnamese', 'Tiếng Việt'],
  ['combining acute', 'cafe\u0301'],
  ['Ethiopic', 'ኢትዮጵያ'],
  ['Georgian', 'ქართული'],
  ['Mongolian', 'ᠮᠣᠩᠭᠣᠯ'],
  ['emoji', '😀 👍🏽 🚀'],
  ['emoji ZWJ family', '👨\u200d👩\u200d👧'],
  ['rainbow flag (VS16 + ZWJ)', '🏳\ufe0f\u200d🌈'],
  ['technologist with skin tone', '👩🏽\u200d💻'],
  ['heart on fire', '❤\ufe0f\u200d🔥'],
  ['red heart with VS16', '❤\ufe0f'],
  ['smiley with VS15', '☺\ufe0e'],
  ['keycap one', '1\ufe0f\u20e3'],
  ['England flag', '🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}'],
  ['Scotland flag', '🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}'],
  ['Wales flag', '🏴\u{e0067}\u{e0062}\u{e0077}\u{e006c}\u{e0073}\u{e007f}'],
  ['ideographic variation sequence', '葛\u{e0100}城'],
  ['CJK standardized variation', '\u349e\ufe00'],
  ['mathematical Fraktur', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'],
  ['CJK extension B', '𠀀𠮷'],
  ['private use', '\ue000'],
  ['plain ASCII words', 'Weather forecast for Paris'],
];

const cp = (ch: string) => ch.codePointAt(0)!;
const named = (ch: string) => `U+${hex(cp(ch))}`;
/** The `\uXXXX` form of a character: one escape per UTF-16 unit, the only `\u` notation Kotlin, JS and JSON have. */
const u = (ch: string) =>
  Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
/** Hex digits of `\uXXXX` escapes in lowercase (the formats accept either case). */
const lowerU = (s: string) => s.replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => `\\u${h.toLowerCase()}`);
/** No lone surrogate: the text can be written as UTF-8 (a .kt/.ts/.json/.md/.html file, a terminal). */
const wellFormed = (s: string) => !/\p{Cs}/u.test(s);
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const SHOWN_SET = new Set(SHOWN);
/** Whether a character of the header's list (or a lone surrogate) is in the text raw. */
function hasRawShown(text: string): boolean {
  for (const ch of text) if (SHOWN_SET.has(ch) || (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff')) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------------------
// Decoders written from each format's rules

const KOTLIN_ESCAPES: Record<string, string> = {
  t: '\t',
  b: '\b',
  n: '\n',
  r: '\r',
  "'": "'",
  '"': '"',
  '\\': '\\',
  $: '$',
};

/**
 * The value of a Kotlin line string literal (Kotlin specification, "String literals": LineStrText,
 * LineStrEscapedChar, LineStrRef, LineStrExprStart). Fails where the literal would not compile (a raw `"`,
 * `\` or line break, an unknown escape, a lone surrogate in a UTF-8 source file) or would interpolate (`$`
 * before an identifier, a backticked identifier or `{`).
 */
function kotlinValue(literal: string): string {
  assert.ok(
    literal.length >= 2 && literal.startsWith('"') && literal.endsWith('"'),
    `not a string literal: ${literal.slice(0, 60)}`,
  );
  assert.ok(wellFormed(literal), 'a .kt file is UTF-8: no lone surrogate');
  const end = literal.length - 1;
  let out = '';
  let i = 1;
  while (i < end) {
    const ch = literal[i]!;
    if (ch === '\\') {
      const e = literal[i + 1]!;
      if (e === 'u') {
        const digits = literal.slice(i + 2, i + 6);
        if (i + 6 > end || !/^[0-9a-fA-F]{4}$/.test(digits)) assert.fail(`\\u needs four hex digits at ${i}`);
        out += String.fromCharCode(parseInt(digits, 16));
        i += 6;
      } else {
        if (i + 1 >= end || !Object.hasOwn(KOTLIN_ESCAPES, e)) assert.fail(`not a Kotlin escape: \\${e} at ${i}`);
        out += KOTLIN_ESCAPES[e];
        i += 2;
      }
      continue;
    }
    if (ch === '"') assert.fail(`a raw " ends the literal at ${i}`);
    if (ch === '\n' || ch === '\r') assert.fail(`a line string literal holds no line break (at ${i})`);
    if (ch === '$' && i + 1 < end && /[{`_\p{L}\p{Nl}]/u.test(String.fromCodePoint(literal.codePointAt(i + 1)!))) {
      assert.fail(`$ starts a template at ${i}: ${literal.slice(i, i + 8)}`);
    }
    out += ch;
    i++;
  }
  assert.equal(i, end, 'the closing quote is escaped');
  return out;
}

/**
 * The value of a TypeScript/JavaScript double-quoted string literal: one token (no raw `"`, no raw line
 * terminator LF/CR/U+2028/U+2029, which TypeScript rejects in a string), evaluated in strict mode (no legacy
 * octal escapes).
 */
function tsValue(literal: string): string {
  assert.ok(
    literal.length >= 2 && literal.startsWith('"') && literal.endsWith('"'),
    `not a string literal: ${literal.slice(0, 60)}`,
  );
  assert.ok(wellFormed(literal), 'a .ts file is UTF-8: no lone surrogate');
  const end = literal.length - 1;
  let i = 1;
  for (; i < end; i++) {
    const ch = literal[i]!;
    if (ch === '\n' || ch === '\r' || ch === '\u2028' || ch === '\u2029')
      assert.fail(`raw line terminator U+${hex(ch.charCodeAt(0))} at ${i}`);
    if (ch === '"') assert.fail(`a raw " ends the literal at ${i}`);
    if (ch === '\\') {
      i++;
      if (i >= end || '\n\r\u2028\u2029'.includes(literal[i]!))
        assert.fail(`escape at ${i - 1} runs into the end or a line break`);
    }
  }
  assert.equal(i, end, 'the closing quote is escaped');
  return (new Function(`"use strict"; return ${literal};`) as () => string)();
}

/** JSON text (RFC 8259) parsed; JSON exchanged between systems is UTF-8, so no lone surrogate. */
function jsonValue(json: string): unknown {
  assert.ok(wellFormed(json), 'JSON text is UTF-8: no lone surrogate');
  assert.ok(!RAW_CONTROL.test(json.replace(/[\n\r\t]/g, '')), 'no raw control character');
  return JSON.parse(json);
}

const HTML_REFERENCE = /&(?:(amp|lt|gt|quot|apos)|#([0-9]+)|#[xX]([0-9a-fA-F]+));/g;
const HTML_NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * The text an HTML parser gets from escaped text placed in content or in a double- or single-quoted attribute
 * value: nothing may start a tag or end the attribute (`<`, `>`, `"`, `'`), and every `&` starts a complete
 * character reference.
 */
function htmlValue(html: string): string {
  assert.ok(wellFormed(html), 'an HTML document is UTF-8: no lone surrogate');
  const bare = html.replace(HTML_REFERENCE, '');
  const bad = /[&<>"']/.exec(bare);
  assert.equal(bad, null, `raw ${bad?.[0]} in ${html.slice(0, 80)}`);
  return html.replace(
    HTML_REFERENCE,
    (_m, name: string | undefined, dec: string | undefined, hx: string | undefined) =>
      name ? HTML_NAMED[name]! : String.fromCodePoint(dec ? parseInt(dec, 10) : parseInt(hx!, 16)),
  );
}

const GFM = { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] };
/** micromark(markdown, GFM) with the parser's extensions combined once (definitions reset for each document). */
const PARSER = parse(GFM);
function render(markdown: string): string {
  PARSER.defined.length = 0;
  return compile(GFM)(postprocess(PARSER.document().write(preprocess()(markdown, undefined, true))));
}
const decodeMicromark = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
/** The text a reader sees: inline tags vanish, block tags separate. */
const textOf = (html: string) =>
  decodeMicromark(html.replace(/<\/?(?:code|strong|em|a)\b[^>]*>/g, '').replace(/<[^>]*>/g, ' '));
const squash = (s: string) => s.replace(/[ \t\n\r]+/g, ' ').trim();

/** The HTML's tag names (raw HTML passes through: allowDangerousHtml), comments and declarations included. */
function tagsOf(html: string): string[] {
  return [...html.matchAll(/<(\/?[a-z][a-z0-9-]*|!--|!|\?)/gi)].map((m) => m[1]!.replace('/', '').toLowerCase());
}

/**
 * What GitHub turns into a link or notification after rendering (docs: "Autolinked references and URLs",
 * "Mentioning people"): `@name`, `#12`, `GH-12`, `owner/repo#12`, a commit SHA (7+ hex digits), outside code.
 */
function assertNoGithubReference(html: string, input: string): void {
  const outside = decodeMicromark(html.replace(/<code>[^]*?<\/code>/g, ' '));
  assert.doesNotMatch(outside, /[@\uff20][\p{L}\p{N}_-]/u, `a mention outside code: ${input}`);
  assert.doesNotMatch(outside, /#\d/, `an issue reference outside code: ${input}`);
  assert.doesNotMatch(outside, /\bgh-\d/i, `a GH- reference outside code: ${input}`);
  assert.doesNotMatch(
    outside,
    /(?<![0-9a-z])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9a-z])/i,
    `a commit SHA outside code: ${input}`,
  );
}

/** A `$` that GitHub's math could take as a delimiter: unescaped and outside a code span. */
function unescapedDollar(markdown: string): number {
  let inCode = false;
  for (let i = 0; i < markdown.length; i++) {
    const c = markdown[i];
    if (!inCode && c === '\\') {
      i++;
      continue;
    }
    if (c === '`') inCode = !inCode;
    else if (c === '$' && !inCode) return i;
  }
  return -1;
}

/** Where a template puts a value: around it only the template's constructs, each exactly once (`count`). */
interface MdContext {
  name: string;
  wrap: (m: string) => string;
  tags: string[];
  prefix: string;
  count: string[];
  empty?: boolean;
}
const PARAGRAPH: MdContext = { name: 'paragraph', wrap: (m) => m, tags: ['p', 'code'], prefix: '', count: ['p'] };
const TABLE_CELL: MdContext = {
  name: 'table cell',
  wrap: (m) => `| h |\n| --- |\n| ${m} |`,
  tags: ['table', 'thead', 'tbody', 'tr', 'th', 'td', 'code'],
  prefix: 'h ',
  count: ['td'],
  empty: true,
};
const LIST_ITEM: MdContext = {
  name: 'list item',
  wrap: (m) => `- ${m}`,
  tags: ['ul', 'li', 'code'],
  prefix: '',
  count: ['li'],
  empty: true,
};
const MD_CONTEXTS: MdContext[] = [
  PARAGRAPH,
  TABLE_CELL,
  {
    name: 'line after a paragraph line',
    wrap: (m) => `first\n${m}`,
    tags: ['p', 'code'],
    prefix: 'first ',
    count: ['p'],
    empty: true,
  },
  {
    name: 'inside strong and underscore emphasis',
    wrap: (m) => `**_${m}_**`,
    tags: ['p', 'strong', 'em', 'code'],
    prefix: '',
    count: ['strong', 'em'],
  },
  {
    name: 'link text',
    wrap: (m) => `[${m}](https://example.org/)`,
    tags: ['p', 'a', 'code'],
    prefix: '',
    count: ['a'],
    empty: true,
  },
];
/** Where a character or its notation could break a line, an item or a cell. */
const LINE_CONTEXTS = [PARAGRAPH, TABLE_CELL, LIST_ITEM];

/**
 * Renders mdText(input) in every context: only the context's own constructs, the expected text (or text matching
 * a pattern), no GitHub reference, no math delimiter, one line.
 */
function assertMdInert(input: string, expected: string | RegExp = squash(input), contexts = MD_CONTEXTS): void {
  const markdown = mdText(input);
  assert.doesNotMatch(markdown, /[\n\r\u2028\u2029\u0085]/, `one line: ${JSON.stringify(input)}`);
  assert.equal(unescapedDollar(markdown), -1, `unescaped $ (GitHub math) in ${markdown}`);
  for (const ctx of contexts) {
    if (expected === '' && !ctx.empty) continue; // nothing: no paragraph, or `**__**` as text
    const html = render(ctx.wrap(markdown));
    const what = `${ctx.name}: ${JSON.stringify(input)} → ${markdown} → ${html}`;
    const tags = tagsOf(html);
    for (const t of tags) assert.ok(ctx.tags.includes(t), `<${t}> in ${what}`);
    for (const c of ctx.count) assert.equal(tags.filter((t) => t === c).length, 2, `one ${c} in ${what}`);
    if (ctx.name === 'link text')
      assert.equal([...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]).join(' '), 'https://example.org/', what);
    const text = squash(textOf(html));
    if (typeof expected === 'string') assert.equal(text, squash(ctx.prefix + expected), `text in ${what}`);
    else {
      assert.ok(text.startsWith(ctx.prefix), what);
      assert.match(text.slice(ctx.prefix.length), expected, `text in ${what}`);
    }
    assertNoGithubReference(html, input);
  }
}

/** The text with a character put between two Latin letters (no emoji, ideograph or joining script around it). */
const between = (ch: string) => `a${ch}b`;

// ---------------------------------------------------------------------------------------------------------

describe('Kotlin string literals (Kotlin specification: escapes, templates, no line break)', () => {
  it('quotes, backslashes and the escapes the specification names come out as those escapes', () => {
    const table: Array<[string, string]> = [
      ['"', '"\\""'],
      ['\\', '"\\\\"'],
      ['\n', '"\\n"'],
      ['\r', '"\\r"'],
      ['\t', '"\\t"'],
      ["'", `"'"`],
      ['say "hi"\\n', '"say \\"hi\\"\\\\n"'],
      ['C:\\dir\\"x"', '"C:\\\\dir\\\\\\"x\\""'],
      ['\\u0041 is A', '"\\\\u0041 is A"'],
      ['line 1\r\nline 2', '"line 1\\r\\nline 2"'],
    ];
    for (const [input, literal] of table) {
      assert.equal(kotlinString(input), literal, JSON.stringify(input));
      assert.equal(kotlinValue(kotlinString(input)), input);
    }
  });

  it('$ never starts a template: $name and ${…} come out as \\$', () => {
    const table: Array<[string, string]> = [
      ['$', '"\\$"'],
      ['$name', '"\\$name"'],
      ['${x}', '"\\${x}"'],
      ['${System.exit(1)}', '"\\${System.exit(1)}"'],
      ['$$x', '"\\$\\$x"'],
      ['$_', '"\\$_"'],
      ['$é', '"\\$é"'],
      ['$Ω', '"\\$Ω"'],
      ['$`x y`', '"\\$`x y`"'],
      ['price: 5$', '"price: 5\\$"'],
      ['\\$x', '"\\\\\\$x"'],
      ['"${"$"}"', '"\\"\\${\\"\\$\\"}\\""'],
    ];
    for (const [input, literal] of table) {
      assert.equal(kotlinString(input), literal, input);
      assert.equal(kotlinValue(kotlinString(input)), input);
    }
  });

  it('every C0 control is an escape (\\b either way; the rest have only \\uXXXX)', () => {
    for (const ch of C0) {
      const out = kotlinString(between(ch));
      assert.doesNotMatch(out, RAW_CONTROL, `U+${hex(cp(ch))} raw`);
      assert.equal(kotlinValue(out), between(ch));
      const named = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b' }[ch];
      const inner = lowerU(out.slice(2, -2));
      if (ch === '\b') assert.ok(inner === '\\b' || inner === '\\u0008', inner);
      else assert.equal(inner, named ?? u(ch), `U+${hex(cp(ch))}`);
    }
  });

  it('DEL, C1 controls, NEL, U+2028/U+2029, lone surrogates and each hidden class as \\uXXXX (astral: two)', () => {
    for (const ch of [DEL, ...C1, ...LINE_SEPARATORS, ...LONE_SURROGATES, ...CLASSES.map(([, c]) => c)]) {
      const out = kotlinString(between(ch));
      assert.equal(lowerU(out), `"a${u(ch)}b"`, `U+${hex(cp(ch))}`);
      assert.equal(kotlinValue(out), between(ch));
    }
    assert.equal(lowerU(kotlinString('\u{e0041}')), '"\\udb40\\udc41"');
  });

  it('astral characters and honest non-Latin text stay as they are', () => {
    for (const [name, text] of HONEST) {
      assert.equal(kotlinString(text), `"${text}"`, name);
      assert.equal(kotlinValue(kotlinString(text)), text, name);
    }
  });

  it('empty and long inputs', () => {
    assert.equal(kotlinString(''), '""');
    assert.equal(kotlinValue(kotlinString('')), '');
    const long = 'a"b\\c$d${e}\n\t\u0001\u202e😀日\u{e0041}\ud800'.repeat(1_000);
    assert.equal(kotlinValue(kotlinString(long)), long);
    assert.ok(!hasRawShown(kotlinString(long)));
  });
});

describe('TypeScript/JavaScript string literals (ECMAScript StringLiteral; TypeScript rejects raw line terminators)', () => {
  it('quotes, backslashes, template-looking text and the controls evaluate back to the input', () => {
    const table = [
      '"',
      '\\',
      "'",
      '`',
      '${x}',
      '`${process.exit(1)}`',
      '"; process.exit(1); "',
      '</script>',
      '\\u0041',
      '\\',
      'a\\',
      '\\\\"',
      '\0',
      '\u00001',
      '\x1b[31m',
    ];
    for (const input of table) assert.equal(tsValue(tsString(input)), input, JSON.stringify(input));
    assert.equal(tsString('"'), '"\\""');
    assert.equal(tsString('\\'), '"\\\\"');
  });

  it('every C0 control is an escape and evaluates back', () => {
    for (const ch of C0) {
      const out = tsString(between(ch));
      assert.doesNotMatch(out, RAW_CONTROL, `U+${hex(cp(ch))} raw`);
      assert.equal(tsValue(out), between(ch));
    }
  });

  it('U+2028, U+2029, NEL, DEL, C1, lone surrogates and each hidden class as \\uXXXX', () => {
    for (const ch of [DEL, ...C1, ...LINE_SEPARATORS, ...LONE_SURROGATES, ...CLASSES.map(([, c]) => c)]) {
      const out = tsString(between(ch));
      assert.equal(lowerU(out), `"a${u(ch)}b"`, `U+${hex(cp(ch))}`);
      assert.equal(tsValue(out), between(ch));
    }
  });

  it('astral characters and honest non-Latin text stay as they are', () => {
    for (const [name, text] of HONEST) assert.equal(tsString(text), `"${text}"`, name);
  });

  it('empty and long inputs', () => {
    assert.equal(tsString(''), '""');
    const long = 'a"b\\c${d}\n\u2028\u2029\u0085\u0001\u202e😀日\u{e0041}\udc00'.repeat(1_000);
    const out = tsString(long);
    assert.equal(tsValue(out), long);
    assert.ok(!hasRawShown(out));
  });
});

describe('JSON text with hidden characters as \\uXXXX (RFC 8259: the value is unchanged)', () => {
  it('each hidden class, U+2028/U+2029, DEL, C1, lone surrogates: \\uXXXX, and JSON.parse gives the value back', () => {
    for (const ch of [DEL, ...C1, ...LINE_SEPARATORS, ...LONE_SURROGATES, ...CLASSES.map(([, c]) => c)]) {
      const out = jsonInvisibleEscaped(JSON.stringify(between(ch)));
      assert.equal(lowerU(out), `"a${u(ch)}b"`, `U+${hex(cp(ch))}`);
      assert.equal(jsonValue(out), between(ch));
    }
  });

  it('a raw lone surrogate inside a JSON string (text not made by JSON.stringify) is escaped', () => {
    for (const s of LONE_SURROGATES) {
      const out = jsonInvisibleEscaped(`{"k":"x${s}y"}`);
      assert.equal(lowerU(out), `{"k":"x${u(s)}y"}`);
      assert.deepEqual(jsonValue(out), { k: `x${s}y` });
    }
  });

  it('keys and values at any depth, pretty-printed or not, round-trip; the C0 escapes JSON requires stay', () => {
    const value = {
      'na\u202eme': [
        '\u200b',
        { deep: ['x\u{e0041}\u{e0042}y', '\u2028', '\ufeff', 'tab\there', 'nul\u0000', '"q"\\'] },
      ],
      flags: HONEST.map(([, t]) => t),
      n: 1,
      t: true,
      z: null,
    };
    for (const json of [JSON.stringify(value), JSON.stringify(value, null, 2), JSON.stringify(value, null, '\t')]) {
      const out = jsonInvisibleEscaped(json);
      assert.doesNotMatch(out, /[\u202e\u200b\u2028\ufeff]|\u{e0041}|\u{e0042}/u, 'no raw hidden character');
      assert.deepEqual(jsonValue(out), value);
    }
  });

  it('JSON text without hidden characters is returned as it is (honest text, emoji, flags, controls already escaped)', () => {
    for (const [name, text] of HONEST) {
      const json = JSON.stringify({ [text]: [text, 1] });
      assert.equal(jsonInvisibleEscaped(json), json, name);
    }
    const c0 = JSON.stringify(C0.join(''));
    assert.equal(jsonInvisibleEscaped(c0), c0);
    assert.equal(jsonInvisibleEscaped('""'), '""');
    assert.equal(jsonInvisibleEscaped(''), '');
  });

  it('a selector after a character written as \\uXXXX has no base in the text: shown escaped (HiddenOptions.json)', () => {
    const escapedBase = '"\\u0023\ufe0f\u20e3"'; // JSON text: an escape, then a raw VS16 and a raw keycap
    assert.equal(lowerU(jsonInvisibleEscaped(escapedBase)), '"\\u0023\\ufe0f\u20e3"');
    assert.equal(jsonValue(jsonInvisibleEscaped(escapedBase)), '#\ufe0f\u20e3');
    assert.equal(hasHidden(escapedBase), false, 'as plain text, 3 + VS16 + keycap is a keycap');
    assert.equal(hasHidden(escapedBase, { json: true }), true);
    const literalBackslash = '"\\\\u0023\ufe0f\u20e3"'; // an escaped backslash: the 3 is a real character
    assert.equal(hasHidden(literalBackslash, { json: true }), false);
    assert.equal(jsonInvisibleEscaped(literalBackslash), literalBackslash);
  });

  it('long JSON', () => {
    const value = Array.from({ length: 1_000 }, (_, i) => ({ [`k${i}\u202e`]: `v\u200b${i}\u2028😀\u{e0041}` }));
    const out = jsonInvisibleEscaped(JSON.stringify(value));
    assert.ok(!hasRawShown(out));
    assert.deepEqual(jsonValue(out), value);
  });
});

describe('Markdown (CommonMark/GFM as micromark renders it; GitHub references and math)', () => {
  const HOSTILE = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<!-- hidden -->',
    '<a href="https://evil.example">x</a>',
    '<details open>',
    'x<br>y',
    '[click](javascript:alert(1))',
    '[click](https://evil.example "t")',
    '![img](https://evil.example/i.png)',
    '[x][r]',
    '[r]: https://evil.example',
    '[^1]',
    '[^1]: note',
    '<https://evil.example>',
    'https://evil.example/a_(b)_c*d',
    'https://evil.example/a|b',
    '| https://evil.example/|x |',
    'https://evil.example/`x`',
    'https://evil.example/a\\b',
    'a@b|c',
    'see http://evil.example.',
    'www.evil.example',
    'mail@evil.example',
    'mailto:a@b.example',
    'xmpp:a@b.example',
    '@octocat',
    '\uff20octocat',
    'cc @octocat please',
    'org/repo#12',
    '#12',
    'fixes #12',
    'GH-12',
    'a5c3785ed8d6a35868bc169f07e40e889087fd2e',
    'a5c3785',
    '# heading',
    '###### h6',
    '#hashtag',
    'a | b | c',
    '|',
    '| a |',
    '```js',
    '~~~',
    '``x``',
    '`code`',
    'a ` b',
    '> quote',
    '>> nested',
    '- item',
    '+ item',
    '* item',
    '1. item',
    '1) item',
    '123456789. item',
    '- [x] task',
    '***',
    '---',
    '___',
    '===',
    '- - -',
    ':-:',
    ':-',
    ':--',
    ':---:',
    '-:',
    ':-: | :-',
    '$x$',
    '$$',
    '$$x$$',
    '$`x`$',
    'costs $5 and $6',
    '**bold**',
    '*em*',
    '_em_',
    '__strong__',
    '~~del~~',
    '~del~',
    '&amp;',
    '&copy;',
    '&#60;script&#62;',
    '&#x3C;',
    'a\\',
    '\\',
    '\\*',
    '\\$',
    'trailing backslash\\',
    '*',
    '_',
    '**',
    'snake_case_name',
    '_leading',
    'trailing_',
    'word_ then_ more',
    'a*b*c',
    ':smile:',
    'x](https://evil.example)',
    '](javascript:x)',
    'emoji 😀 text',
    '<',
    '>',
    '&',
    '"quoted"',
    "'single'",
  ];

  it('hostile inputs render as exactly their text in every context: no link, image, HTML, heading, list, table, code, emphasis, math, reference', () => {
    assert.match(render('[a][r]\n\n[r]: https://example.org/'), /<a href/, 'the renderer links a defined reference');
    assert.equal(render('[a][r]'), micromark('[a][r]', GFM), 'and forgets the definition in the next document');
    for (const input of HOSTILE) assertMdInert(input);
  });

  it('spaces, leading indentation (indented code) and blank input', () => {
    for (const input of ['    indented code', '        deeper', '  two  spaces  ', ' ', '']) assertMdInert(input);
    assert.equal(mdText(''), '');
  });

  it('each hidden class shows as ⟨U+XXXX⟩ (a notation, not the character) in every context', () => {
    for (const [name, ch] of CLASSES) {
      if (LINE_SEPARATORS.includes(ch)) continue; // a line break: see below
      assert.equal(mdText(between(ch)), `a⟨${named(ch)}⟩b`, name);
      assertMdInert(between(ch), `a⟨${named(ch)}⟩b`, LINE_CONTEXTS);
    }
  });

  it('every C0 control that breaks no line shows as U+FFFD', () => {
    for (const ch of C0.filter((c) => !LINE_BREAKING.includes(c))) {
      assert.equal(mdText(between(ch)), 'a\ufffdb', `U+${hex(cp(ch))}`);
      assertMdInert(between(ch), 'a\ufffdb', LINE_CONTEXTS);
    }
  });

  it('line breaks (LF, CR, CRLF, VT, FF, tab, NEL, U+2028, U+2029) never end the line: the text stays one paragraph, one cell, one item', () => {
    for (const ch of [...LINE_BREAKING, '\r\n', '\n\n', '\n---\n', '\n# h\n', '\n| a |\n']) {
      const input = `first${ch}second`;
      const out = mdText(input);
      assert.doesNotMatch(out, /[\n\r\u000b\u000c\u0085\u2028\u2029]/, JSON.stringify(input));
      assert.ok(!RAW_CONTROL.test(out), JSON.stringify(out));
      assertMdInert(
        input,
        /^first(?:[ \ufffd]|⟨U\+[0-9A-F]{4}⟩)+(?:(?:---|# h|\| a \|)(?:[ \ufffd]|⟨U\+[0-9A-F]{4}⟩)+)?second$/u,
        LINE_CONTEXTS,
      );
    }
  });

  it('lone surrogates as ⟨U+XXXX⟩; the Markdown is well-formed', () => {
    for (const s of LONE_SURROGATES) {
      assert.equal(mdText(`x${s}y`), `x⟨${named(s)}⟩y`);
      assert.ok(wellFormed(mdText(`x${s}y`)));
    }
  });

  it('honest non-Latin text, emoji, flags and joiners in scripts that need them stay as they are', () => {
    for (const [name, text] of HONEST) {
      assert.equal(mdText(text), text, name);
      assertMdInert(text, squash(text), LINE_CONTEXTS);
    }
  });

  it('long input: one line, its text, no construct', () => {
    const words = [
      '[a](https://x.example)',
      '*b*',
      '<i>',
      '@me',
      '#1',
      '$x$',
      '|',
      'plain',
      'www.x.example',
      '\u202e',
      '日本語',
      '`c`',
      '\n',
    ];
    const input = Array.from({ length: 800 }, (_, i) => words[i % words.length]).join(' ');
    const out = mdText(input);
    assert.doesNotMatch(out, /\n/);
    const html = render(out);
    assert.deepEqual([...new Set(tagsOf(html))].sort(), ['code', 'p']);
    assertNoGithubReference(html, 'long');
    assert.equal(unescapedDollar(out), -1);
    assert.equal(squash(textOf(html)), squash(input.replace(/\u202e/g, '⟨U+202E⟩')));
  });

  it('md`…` escapes every interpolation; mdTrusted and md results pass as they are; arrays join; null, undefined, false vanish', () => {
    const bold = md`**${'a*b_c'}**`;
    assert.equal(render(bold.value), '<p><strong>a*b_c</strong></p>');
    assert.equal(String(bold), bold.value);
    assert.equal(md`${mdTrusted('**b**')}`.value, '**b**');
    assert.equal(md`a${null}b${undefined}c${false}d`.value, 'abcd');
    assert.equal(md`a${0}b`.value, 'a0b');
    const inner = md`*${'x_'}*`;
    assert.equal(md`[${inner}]`.value, `[${inner.value}]`, 'an md result is not escaped again');
    assert.equal(md`${['*', mdTrusted('**b**'), null, ['@x']]}`.value, `${mdText('*')}**b**${mdText('@x')}`);
    assert.equal(render(md`${['*', mdTrusted('**b**')]}`.value), '<p>*<strong>b</strong></p>');
    for (const input of HOSTILE) assert.equal(md`x ${input} y`.value, `x ${mdText(input)} y`);
  });

  it("md`…`: what only looks safe is escaped (another format's SafeText, an object with a value)", () => {
    const html = new SafeText('**x** <b>');
    assert.equal(md`${html}`.value, mdText('**x** <b>'));
    const lookalike = { value: '**x**', toString: () => '**x**' };
    assert.equal(md`${lookalike}`.value, mdText('**x**'));
  });

  it('mdCodeWord: a plain machine word as inline code; anything else as inert text', () => {
    for (const w of ['live/ok', 'keep-failed', 'review/suspicious-tools', 'v1.2.3_x'])
      assert.equal(mdCodeWord(w).value, `\`${w}\``);
    assert.equal(mdCodeWord(42).value, '`42`');
    for (const w of [
      'a b',
      '*x*',
      'a`b',
      '``',
      '@user',
      'https://x.example',
      'www.x.example',
      'a5c3785ed8',
      '#12',
      '<b>',
      '$x$',
      '|',
      'x'.repeat(65),
      '\u202e',
      '-rf',
      '1.',
      '',
    ]) {
      const out = mdCodeWord(w).value;
      const html = render(`| h |\n| --- |\n| ${out} |`);
      for (const t of tagsOf(html))
        assert.ok(['table', 'thead', 'tbody', 'tr', 'th', 'td', 'code'].includes(t), `<${t}> from ${w}`);
      assert.equal(tagsOf(html).filter((t) => t === 'td').length, 2, `one cell from ${w}: ${html}`);
      assert.equal(squash(textOf(html)), squash(`h ${w.replace(/\u202e/g, '⟨U+202E⟩')}`), w);
      assertNoGithubReference(html, w);
      assert.equal(unescapedDollar(out), -1, w);
    }
  });
});

describe('HTML text and attribute values (HTML Living Standard)', () => {
  it('& < > " as the serializer writes them; \' as a character reference', () => {
    assert.equal(escapeHtml('&'), '&amp;');
    assert.equal(escapeHtml('<'), '&lt;');
    assert.equal(escapeHtml('>'), '&gt;');
    assert.equal(escapeHtml('"'), '&quot;');
    assert.match(escapeHtml("'"), /^&(?:#39|#x27|apos);$/i);
    assert.equal(escapeHtml('&amp;'), '&amp;amp;', 'an entity in the input is text, not a reference');
  });

  it('nothing ends a double- or single-quoted attribute or starts a tag; the parsed value is the input', () => {
    const table = [
      '2024-01-01T00:00:00Z" onmouseover="alert(1)',
      "drop' onclick='alert(1)",
      '"><script>alert(1)</script>',
      "'><img src=x onerror=alert(1)>",
      '</time><script>',
      '<!--',
      '-->',
      '<![CDATA[x]]>',
      '&lt;',
      '&#60;',
      '&#x3c;',
      '&notin;',
      'a&b=c',
      '&amp',
      'AT&T',
      'x > y < z',
      '`',
      '=',
      'tab\there',
      'line\nbreak',
      ...HONEST.map(([, t]) => t),
    ];
    for (const input of table) {
      const out = escapeHtml(input);
      assert.equal(htmlValue(out), input, JSON.stringify(input));
      for (const doc of [`<time datetime="${out}">`, `<td data-verdict='${out}'>`]) {
        const attr = /^<\w+ [\w-]+=(["'])([^"']*)\1>$/.exec(doc);
        assert.ok(attr, `the attribute value ends where the template ends: ${doc}`);
      }
    }
  });

  it('each hidden class, DEL, C1, U+2028/U+2029 and lone surrogates as ⟨U+XXXX⟩', () => {
    for (const ch of [DEL, ...C1, ...LINE_SEPARATORS, ...LONE_SURROGATES, ...CLASSES.map(([, c]) => c)]) {
      assert.equal(escapeHtml(between(ch)), `a⟨${named(ch)}⟩b`, `U+${hex(cp(ch))}`);
    }
  });

  it('the other C0 controls (a parse error; a NUL is dropped from text) show as U+FFFD, as in the terminal', () => {
    for (const ch of C0.filter((c) => !'\t\n\f\r'.includes(c)))
      assert.equal(escapeHtml(between(ch)), 'a\uFFFDb', `U+${hex(cp(ch))}`);
  });

  it('the ASCII whitespace controls tab, LF and FF are left to HTML, which allows them', () => {
    for (const ch of ['\t', '\n', '\u000c']) assert.equal(htmlValue(escapeHtml(between(ch))), between(ch));
  });

  it('honest text stays as it is; empty and long inputs', () => {
    for (const [name, text] of HONEST) assert.equal(escapeHtml(text), text, name);
    assert.equal(escapeHtml(''), '');
    const long = `<a href="x" title='y'>&amp;\u202e😀日\u{e0041}</a>`.repeat(1_000);
    const out = escapeHtml(long);
    assert.equal(htmlValue(out), long.replace(/\u202e/g, '⟨U+202E⟩').replace(/\u{e0041}/gu, '⟨U+E0041⟩'));
  });
});

describe('the terminal: inert (no control character or line separator reaches it raw)', () => {
  it('every C0 control, DEL, every C1 control, U+2028 and U+2029 become U+FFFD', () => {
    for (const ch of [...C0, DEL, ...C1, '\u2028', '\u2029'])
      assert.equal(inert(between(ch)), 'a\ufffdb', `U+${hex(cp(ch))}`);
  });

  it('escape sequences lose their introducer (CSI, OSC 8 hyperlink, 8-bit CSI, title change)', () => {
    assert.equal(inert('\x1b[2J\x1b[31mred'), '\ufffd[2J\ufffd[31mred');
    assert.equal(
      inert('\x1b]8;;https://evil.example\x07click\x1b]8;;\x07'),
      '\ufffd]8;;https://evil.example\ufffdclick\ufffd]8;;\ufffd',
    );
    assert.equal(inert('\x9b31m'), '\ufffd31m');
    assert.equal(inert('\x1b]0;title\x1b\\'), '\ufffd]0;title\ufffd\\');
    assert.equal(inert('ok\rFAIL'), 'ok\ufffdFAIL');
  });

  it('each hidden class (other than the controls and line separators) and lone surrogates as ⟨U+XXXX⟩', () => {
    for (const [name, ch] of CLASSES) {
      if (RAW_CONTROL.test(ch) || ch === '\u2028' || ch === '\u2029') continue;
      assert.equal(inert(between(ch)), `a⟨${named(ch)}⟩b`, name);
    }
    for (const s of LONE_SURROGATES) assert.equal(inert(s), `⟨${named(s)}⟩`);
  });

  it('honest text stays as it is; empty and long inputs', () => {
    for (const [name, text] of HONEST) assert.equal(inert(text), text, name);
    assert.equal(inert(''), '');
    const long = 'ok\x1b[0m\n\u2028\u202e😀日'.repeat(2_000);
    assert.equal(inert(long), 'ok\ufffd[0m\ufffd\ufffd⟨U+202E⟩😀日'.repeat(2_000));
  });
});

describe('which characters are shown escaped (one decision for every format)', () => {
  it('every Cf format character (all 170-odd code points) alone between letters', () => {
    assert.ok(FORMAT_CHARACTERS.length >= 160);
    for (const ch of FORMAT_CHARACTERS) {
      assert.deepEqual(hiddenCharacters(between(ch)), [{ index: 1, char: ch }], named(ch));
      assert.equal(hasHidden(between(ch)), true, named(ch));
      assert.equal(maybeHidden(between(ch)), true, named(ch));
    }
  });

  it('every other character of the list: Hangul fillers, CGJ, all 256 variation selectors, LS/PS, DEL, C1, lone surrogates', () => {
    for (const ch of [
      ...HANGUL_FILLERS,
      '\u034f',
      ...VARIATION_SELECTORS,
      '\u2028',
      '\u2029',
      DEL,
      ...C1,
      ...LONE_SURROGATES,
    ]) {
      assert.deepEqual(hiddenCharacters(between(ch)), [{ index: 1, char: ch }], named(ch));
      assert.equal(hasHidden(between(ch)), true, named(ch));
    }
  });

  it('nothing else: no other code point (assigned or not; default-ignorable unassigned ones aside) is shown escaped', () => {
    const text = EVERY_CODE_POINT.replace(
      new RegExp(`[\\u0000-\\u001f\\p{Default_Ignorable_Code_Point}${SHOWN_CLASS}]`, 'gu'),
      '',
    );
    assert.ok(text.length > 2_000_000);
    assert.deepEqual(hiddenCharacters(text), []);
  });

  it("C0 controls are each format's own business, not the shared decision", () => {
    assert.deepEqual(hiddenCharacters(C0.join('')), []);
  });

  it('left alone: flag tag sequences, emoji ZWJ sequences, emoji/keycap/ideographic variation sequences, ZWNJ/ZWJ in joining scripts', () => {
    for (const [name, text] of HONEST) {
      assert.deepEqual(hiddenCharacters(text), [], name);
      assert.equal(hasHidden(text), false, name);
      assert.equal(
        escapeHidden(text, () => '!'),
        text,
        name,
      );
    }
    const more: Array<[string, string]> = [
      ['keycap #', '#\ufe0f\u20e3'],
      ['keycap *', '*\ufe0f\u20e3'],
      ['copyright emoji style', '\u00a9\ufe0f'],
      ['kiss ZWJ sequence', '👩\u200d❤\ufe0f\u200d💋\u200d👨'],
      ['people holding hands', '🧑\u200d🤝\u200d🧑'],
      ['Persian ZWJ', 'ه\u200dا'],
      ['Arabic ZWNJ', 'لا\u200cلا'],
      ['Malayalam conjunct with ZWNJ', 'ക്\u200cക'],
      ['IVS on another ideograph', '辻\u{e0101}'],
      ['flags inside a sentence', `go 🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}!`],
    ];
    for (const [name, text] of more) assert.deepEqual(hiddenCharacters(text), [], name);
  });

  it('shown escaped in context: stray selectors, selector runs, stray or misused joiners, tags outside a flag', () => {
    const F = '🏴'; // U+1F3F4, two UTF-16 units
    const tags = (s: string) => [...s].map((c) => String.fromCodePoint(0xe0000 + cp(c))).join('');
    const table: Array<[string, string, number[]]> = [
      ['VS16 at the start', '\ufe0fa', [0]],
      ['VS16 after a space', 'a \ufe0f', [2]],
      ['VS16 after a Latin letter', 'x\ufe0f', [1]],
      ['VS16 after a digit that is no keycap', '1\ufe0f', [1]],
      ['VS16 after #, no keycap', '#\ufe0f', [1]],
      ['two VS16 after an emoji: a run is data', '❤\ufe0f\ufe0f', [1, 2]],
      ['VS1 after an emoji (not an ideograph)', '❤\ufe00', [1]],
      ['VS16 after an ideograph (not an emoji)', '葛\ufe0f', [1]],
      ['VS17 after an emoji', '😀\u{e0100}', [2]],
      ['VS17 after a Latin letter', 'a\u{e0100}', [1]],
      ['emoji smuggling: selector run after an emoji', `😀${'\u{e0148}\u{e0149}\u{e0121}'}`, [2, 4, 6]],
      ['selector run after an ideograph', '葛\u{e0100}\u{e0101}', [1, 3]],
      ['ZWJ at the end of an emoji', '👨\u200d', [2]],
      ['ZWJ before an emoji, at the start', '\u200d👩', [0]],
      ['ZWJ between emoji and letter', '👨\u200da', [2]],
      ['two ZWJ between emoji', '👨\u200d\u200d👩', [2, 3]],
      ['ZWNJ between emoji', '👨\u200c👩', [2]],
      ['ZWNJ in a Latin word (homograph)', 'pay\u200cpal', [3]],
      ['ZWJ in a Latin word', 'pay\u200dpal', [3]],
      ['ZWNJ between ideographs', '日\u200c本', [1]],
      ['ZWNJ between a Persian letter and a space', 'می\u200c ', [2]],
      ['ZWNJ between a Persian and a Latin letter', 'ی\u200ca', [1]],
      ['ZWNJ at the start of Persian', '\u200cمی', [0]],
      ['bidi override inside Hebrew', 'שלום\u202eabc', [4]],
      ['bidi override inside Arabic', 'مرحبا\u2067بالعالم\u2069', [5, 13]],
      ['tag characters after a letter (ASCII smuggling)', `a${tags('ignore')}\u{e007f}`, [1, 3, 5, 7, 9, 11, 13]],
      ['black flag with tags but no CANCEL TAG', `${F}${tags('gbeng')}`, [2, 4, 6, 8, 10]],
      [
        'black flag with too long a tag run (no subdivision id)',
        `${F}${tags('ignoreprevious')}\u{e007f}`,
        Array.from({ length: 15 }, (_, i) => 2 + 2 * i),
      ],
      ['CANCEL TAG alone after a black flag', `${F}\u{e007f}`, [2]],
      ['tags after a flag, outside the sequence', `${F}${tags('gbeng')}\u{e007f}${tags('x')}`, [14]],
      ['a flag sequence without its black flag', `${tags('gbeng')}\u{e007f}`, [0, 2, 4, 6, 8, 10]],
      ['two lone trail surrogates', 'a\udc00\udc01b', [1, 2]],
      ['two lone lead surrogates', 'a\ud800\ud801b', [1, 2]],
      ['a pair backwards', '\ude00\ud83d', [0, 1]],
    ];
    for (const [name, text, indices] of table) {
      assert.deepEqual(
        hiddenCharacters(text).map((h) => h.index),
        indices,
        name,
      );
      for (const h of hiddenCharacters(text))
        assert.equal(h.char, String.fromCodePoint(text.codePointAt(h.index)!), name);
      assert.equal(hasHidden(text), true, name);
    }
  });

  it('a Hangul filler inside Korean text is still shown escaped', () => {
    for (const f of HANGUL_FILLERS)
      assert.deepEqual(
        hiddenCharacters(`한${f}글`).map((h) => h.index),
        [1],
        named(f),
      );
  });

  it('hiddenCharacters: UTF-16 indices, the whole character, in order, at most max', () => {
    const text = 'ab\u{e0041}c\u202e\ud800d\u200b';
    assert.deepEqual(hiddenCharacters(text), [
      { index: 2, char: '\u{e0041}' },
      { index: 5, char: '\u202e' },
      { index: 6, char: '\ud800' },
      { index: 8, char: '\u200b' },
    ]);
    assert.deepEqual(hiddenCharacters(text, 2), [
      { index: 2, char: '\u{e0041}' },
      { index: 5, char: '\u202e' },
    ]);
    assert.deepEqual(hiddenCharacters(text, 1), [{ index: 2, char: '\u{e0041}' }]);
    assert.deepEqual(hiddenCharacters(''), []);
    const run = '\u200b'.repeat(50_000);
    assert.equal(hiddenCharacters(run).length, 50_000);
    assert.deepEqual(
      hiddenCharacters(run, 3),
      [0, 1, 2].map((index) => ({ index, char: '\u200b' })),
    );
  });

  it('maybeHidden: false for printable ASCII; true wherever a shown character sits (after ASCII runs of any length, after other non-ASCII)', () => {
    const ascii = range(0x20, 0x7e).join('');
    assert.equal(maybeHidden(''), false);
    assert.equal(maybeHidden(ascii), false);
    assert.equal(maybeHidden(ascii.repeat(1_000)), false);
    const samples = [
      ...SHOWN,
      ...CLASSES.map(([, c]) => c),
      ...LONE_SURROGATES,
      '\udbff\udbff',
      '\udc00\ud800',
      '\udc00\udc00',
      '\ude00\ude00',
    ];
    for (const ch of samples) {
      for (const before of [
        '',
        'a',
        'ab',
        'abc',
        'abcd',
        'x'.repeat(1_000),
        'é',
        'éa',
        '日本',
        '😀',
        'a😀b',
        'é'.repeat(100) + 'abc',
      ]) {
        assert.equal(maybeHidden(before + ch), true, `${named(ch)} after ${before.slice(0, 10)}`);
        assert.equal(maybeHidden(before + ch + 'tail'), true, `${named(ch)} after ${before.slice(0, 10)}, before text`);
      }
    }
  });

  it('maybeHidden is a superset and hasHidden agrees with hiddenCharacters', () => {
    const texts = [
      ...HONEST.map(([, t]) => t),
      ...CLASSES.map(([, c]) => between(c)),
      'plain',
      '',
      '\ud83d\ude00',
      '\ude00\ud83d',
    ];
    for (const t of texts) {
      const found = hiddenCharacters(t).length > 0;
      assert.equal(hasHidden(t), found, JSON.stringify(t));
      if (found) assert.equal(maybeHidden(t), true, JSON.stringify(t));
    }
  });

  it('escapeHidden: notation for each shown character, plain for each run between them', () => {
    const notation = (ch: string) => `[${codePointName(ch)}]`;
    const plain = (run: string) => run.toUpperCase();
    assert.equal(escapeHidden('ab\u202ecd\u{e0041}ef', notation, plain), 'AB[U+202E]CD[U+E0041]EF');
    assert.equal(escapeHidden('abc', notation, plain), 'ABC');
    assert.equal(escapeHidden('\u202e\u200b', notation), '[U+202E][U+200B]');
    assert.equal(escapeHidden('x\u202ey', notation), 'x[U+202E]y');
    assert.equal(escapeHidden('', notation, plain), '');
    for (const [name, text] of HONEST) assert.equal(escapeHidden(text, notation, plain), text.toUpperCase(), name);
    const json = '"\\u0023\ufe0f\u20e3"';
    assert.equal(escapeHidden(json, notation), json);
    assert.equal(escapeHidden(json, notation, undefined, { json: true }), '"\\u0023[U+FE0F]\u20e3"');
  });

  it('notations: codePointName U+XXXX (4–6 uppercase hex digits), visibleCodePoint ⟨U+XXXX⟩, uEscapes \\uXXXX per UTF-16 unit', () => {
    const table: Array<[string, string, string]> = [
      ['\u0000', 'U+0000', '\\u0000'],
      ['\u00ad', 'U+00AD', '\\u00ad'],
      ['\u202e', 'U+202E', '\\u202e'],
      ['\ufeff', 'U+FEFF', '\\ufeff'],
      ['\ud800', 'U+D800', '\\ud800'],
      ['\u{e0041}', 'U+E0041', '\\udb40\\udc41'],
      ['\u{e01ef}', 'U+E01EF', '\\udb40\\uddef'],
      ['\u{10ffff}', 'U+10FFFF', '\\udbff\\udfff'],
      ['😀', 'U+1F600', '\\ud83d\\ude00'],
    ];
    for (const [ch, name, escapes] of table) {
      assert.equal(codePointName(ch), name);
      assert.equal(visibleCodePoint(ch), `⟨${name}⟩`);
      assert.equal(uEscapes(ch), escapes);
      assert.equal(JSON.parse(`"${uEscapes(ch)}"`), ch);
    }
  });
});

describe('empty strings in every format', () => {
  it('render nothing (a code format: an empty literal)', () => {
    assert.equal(kotlinString(''), '""');
    assert.equal(tsString(''), '""');
    assert.equal(jsonInvisibleEscaped('""'), '""');
    assert.equal(mdText(''), '');
    assert.equal(md``.value, '');
    assert.equal(md`${''}`.value, '');
    assert.equal(escapeHtml(''), '');
    assert.equal(inert(''), '');
    assert.deepEqual(hiddenCharacters(''), []);
    assert.equal(hasHidden(''), false);
    assert.equal(
      escapeHidden('', () => '!'),
      '',
    );
  });
});
