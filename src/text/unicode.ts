/**
 * Which characters an output shows escaped: one decision for every format, each format only chooses the
 * notation (`\uXXXX` in Kotlin, TypeScript and JSON, where the value is unchanged; `⟨U+XXXX⟩` in Markdown,
 * HTML and the terminal, where the reader sees it).
 *
 * Shown escaped: every format character (Unicode category Cf: bidi controls, zero-width characters, the soft
 * hyphen, U+2060–U+2064, U+FEFF, interlinear annotation, Unicode tag characters U+E0000–U+E007F…), the
 * Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner, variation selectors
 * (U+FE00–U+FE0F, U+E0100–U+E01EF), the line and paragraph separators, DEL and the C1 controls, and lone
 * surrogates. Left as they are, the sequences the screening scanner (src/screen/rules.ts) treats as honest,
 * taken a little more strictly because here each one must be typography, not merely plausible:
 * - a flag tag sequence (🏴 + tag letters + CANCEL TAG: England, Scotland, Wales);
 * - one variation selector that picks a glyph: VS15/VS16 (U+FE0E/U+FE0F) after an emoji (an ASCII digit,
 *   `#` or `*` only as a keycap, before U+20E3), the others after a CJK ideograph; a run of two is data;
 * - a ZWJ (U+200D) joining two emoji (👨‍👩‍👧, 🏳️‍🌈, 👩🏽‍💻);
 * - a ZWNJ or ZWJ (U+200C, U+200D) between two letters of a script that uses them to shape words: Persian and
 *   Arabic, Syriac, Thaana, N'Ko, Mongolian, the Indic scripts, Tibetan, Myanmar, Khmer.
 * Other control characters (C0) are each format's own business (escaped in code, U+FFFD in prose).
 */

/** Every character the decision looks at. */
const CANDIDATES =
  /[\u007f-\u009f\u00ad\u034f\u115f\u1160\u2028\u2029\u3164\ufe00-\ufe0f\uffa0\p{Cf}\p{Cs}\u{e0000}-\u{e01ef}]/gu;

const NON_ASCII = /[^\x00-\x7e]/g;

/**
 * Whether the text may hold a character of CANDIDATES: a superset, decided by code unit, so that text with none
 * of them (nearly all) costs one quick scan. Printable ASCII is skipped by a regular expression (V8 runs a long
 * character class an order of magnitude slower); from the first other character on, a plain loop: the BMP
 * format characters and the rest by code unit, astral ones by their lead surrogate (U+110BD/U+110CD, U+1343x,
 * U+1BCAx, U+1D17x, the U+E00xx and U+E01xx tags and selectors), and lone surrogates.
 * test/hostile-text.test.ts checks that it misses no code point.
 */
export function maybeHidden(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x7f) {
      NON_ASCII.lastIndex = i; // on to the next character that is not printable ASCII
      if (!NON_ASCII.test(text)) return false;
      i = NON_ASCII.lastIndex - 2;
      continue;
    }
    if (c <= 0x9f || c === 0xad || c === 0x34f) return true;
    if (c < 0x600) continue;
    if (
      c <= 0x605 ||
      c === 0x61c ||
      c === 0x6dd ||
      c === 0x70f ||
      c === 0x890 ||
      c === 0x891 ||
      c === 0x8e2 ||
      c === 0x115f ||
      c === 0x1160 ||
      c === 0x180e
    )
      return true;
    if (c < 0x200b) continue;
    if (
      c <= 0x200f ||
      (c >= 0x2028 && c <= 0x202e) ||
      (c >= 0x2060 && c <= 0x206f) ||
      c === 0x3164 ||
      (c >= 0xfe00 && c <= 0xfe0f) ||
      c === 0xfeff ||
      c === 0xffa0 ||
      (c >= 0xfff9 && c <= 0xfffb)
    )
      return true;
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c >= 0xdc00) return true; // a trail surrogate without its lead
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true; // a lead surrogate without its trail
      if (c === 0xd804 || c === 0xd80d || c === 0xd82f || c === 0xd834 || c === 0xdb40) return true;
      i++;
    }
  }
  return false;
}

/** England, Scotland, Wales: a black flag followed by tag letters or digits and CANCEL TAG. */
const FLAG_TAG_SEQUENCE = /\u{1f3f4}[\u{e0030}-\u{e0039}\u{e0061}-\u{e007a}]{2,6}\u{e007f}/gu;
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
/** What may stand before a ZWJ inside an emoji sequence: a pictograph, a skin tone, VS16, a keycap. */
const EMOJI_BEFORE_ZWJ = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f\u20e3]/u;
const IDEOGRAPH = /\p{Ideographic}/u;
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
const JOINING_SCRIPT = new RegExp(
  String.raw`[\p{scx=Arab}\p{scx=Syrc}\p{scx=Thaa}\p{scx=Nkoo}\p{scx=Mong}\p{scx=Deva}\p{scx=Beng}\p{scx=Guru}\p{scx` +
    String.raw`=Gujr}\p{scx=Orya}\p{scx=Taml}\p{scx=Telu}\p{scx=Knda}\p{scx=Mlym}\p{scx=Sinh}\p{scx=Tibt}\p{scx=Mymr}\p{scx=Khmr}]`,
  'u',
);

const isVariationSelector = (cp: number) => (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
const isTag = (cp: number) => cp >= 0xe0000 && cp <= 0xe007f;
const joiningLetter = (ch: string) => ch !== '' && LETTER_OR_MARK.test(ch) && JOINING_SCRIPT.test(ch);

export interface HiddenOptions {
  /** The text is JSON text: a character written as a `\uXXXX` escape is not a base a selector may follow. */
  json?: boolean;
}

/** Whether the text holds any character that an output would show escaped (cheap: one scan, no allocation). */
export function hasHidden(text: string, opts: HiddenOptions = {}): boolean {
  if (!maybeHidden(text)) return false;
  return firstHidden(text, opts) !== null;
}

/** The first character an output would show escaped, or null. */
export function firstHidden(text: string, opts: HiddenOptions = {}): { index: number; char: string } | null {
  let found: { index: number; char: string } | null = null;
  forEachHidden(text, opts, (index, char) => {
    found = { index, char };
    return false;
  });
  return found;
}

/** Every character an output would show escaped, in order (at most `max`). */
export function hiddenCharacters(text: string, max = Infinity): Array<{ index: number; char: string }> {
  const out: Array<{ index: number; char: string }> = [];
  forEachHidden(text, {}, (index, char) => {
    out.push({ index, char });
    return out.length < max;
  });
  return out;
}

/**
 * The text with every character to be shown escaped replaced by `notation(char)`, and every run of other
 * text by `plain(run)` (default: as it is). The one place the decision is made.
 */
export function escapeHidden(
  text: string,
  notation: (ch: string) => string,
  plain: (run: string) => string = (run) => run,
  opts: HiddenOptions = {},
): string {
  if (!maybeHidden(text)) return plain(text);
  let out = '';
  let last = 0;
  forEachHidden(text, opts, (index, char) => {
    out += plain(text.slice(last, index)) + notation(char);
    last = index + char.length;
    return true;
  });
  return out + plain(text.slice(last));
}

/** `\uXXXX` for each UTF-16 unit (an astral character as its two surrogates), lowercase hex. */
export function uEscapes(ch: string): string {
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** `U+XXXX`: a character's code point, uppercase hex, as Unicode names it. */
export function codePointName(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * `⟨U+XXXX⟩`: plain, inert text that is easy to spot in review (how every page, Markdown file and terminal shows one).
 */
export function visibleCodePoint(ch: string): string {
  return `⟨${codePointName(ch)}⟩`;
}

/** Calls `visit` for each character to be shown escaped until it returns false. */
function forEachHidden(text: string, opts: HiddenOptions, visit: (index: number, char: string) => boolean): void {
  if (!maybeHidden(text)) return;
  let flags: Set<number> | null = null;
  if (text.includes('\u{1f3f4}')) {
    flags = new Set();
    for (const m of text.matchAll(FLAG_TAG_SEQUENCE))
      for (let i = m.index! + 2; i < m.index! + m[0].length; i += 2) flags.add(i);
  }
  for (const m of text.matchAll(CANDIDATES)) {
    // matchAll works on a copy: a visit may run this again
    const index = m.index!;
    const char = m[0];
    if (shownEscaped(text, index, char, flags, opts) && !visit(index, char)) return;
  }
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function shownEscaped(
  text: string,
  index: number,
  char: string,
  flags: Set<number> | null,
  opts: HiddenOptions,
): boolean {
  const cp = char.codePointAt(0)!;
  if (isTag(cp)) return !flags?.has(index);
  if (isVariationSelector(cp)) {
    const next = charAt(text, index + char.length);
    if (next !== '' && isVariationSelector(next.codePointAt(0)!)) return true; // a run of selectors is data
    const prev = baseBefore(text, index, opts);
    if (cp === 0xfe0e || cp === 0xfe0f) {
      if (prev === '' || !EMOJI.test(prev)) return true;
      return prev.codePointAt(0)! < 0x80 && next !== '\u20e3'; // 1️⃣ #️⃣: an ASCII base only as a keycap
    }
    return prev === '' || !IDEOGRAPH.test(prev);
  }
  if (cp === 0x200d || cp === 0x200c) {
    const prev = charBefore(text, index);
    const next = charAt(text, index + 1);
    if (cp === 0x200d && EMOJI_BEFORE_ZWJ.test(prev) && PICTOGRAPH.test(next)) return false;
    return !(joiningLetter(prev) && joiningLetter(next));
  }
  return true;
}

/** The character a selector follows; in JSON text, one written as a `\uXXXX` escape counts as none. */
function baseBefore(text: string, index: number, opts: HiddenOptions): string {
  const prev = charBefore(text, index);
  if (opts.json && /[0-9a-f]/i.test(prev) && index >= 6 && /\\u[0-9a-f]{4}$/i.test(text.slice(index - 6, index))) {
    let slashes = 0;
    for (let i = index - 6; i >= 0 && text[i] === '\\'; i--) slashes++;
    if (slashes % 2 === 1) return '';
  }
  return prev;
}

/** The whole code point that ends just before `index` ('' at the start). */
function charBefore(text: string, index: number): string {
  if (index <= 0) return '';
  const low = text.charCodeAt(index - 1);
  if (index >= 2 && low >= 0xdc00 && low <= 0xdfff) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(index - 2, index);
  }
  return text.slice(index - 1, index);
}

/** The whole code point starting at `index` ('' at the end). */
function charAt(text: string, index: number): string {
  const cp = text.codePointAt(index);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** What kind of hidden character this is, in a few words (for lint messages). */
export function hiddenKind(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (isTag(cp)) return 'tag character';
  if (isVariationSelector(cp)) return 'variation selector outside an emoji or ideograph sequence';
  if (cp === 0x115f || cp === 0x1160 || cp === 0x3164 || cp === 0xffa0) return 'Hangul filler';
  if (
    cp === 0x061c ||
    cp === 0x200e ||
    cp === 0x200f ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069)
  )
    return 'bidi control';
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return 'control character';
  if (cp === 0x2028 || cp === 0x2029) return 'line separator';
  if (cp >= 0xd800 && cp <= 0xdfff) return 'lone surrogate';
  return 'invisible format character';
}
