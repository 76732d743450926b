/**
 * Screening of tool lists for poisoned descriptions: pure, local, deterministic. Reads every string a client
 * would show the model (name, title, description, annotations, and every string in inputSchema: property
 * descriptions, titles, enum/const/default/examples values) in full, and reports each rule once per field.
 */
import { MAX_NESTING } from '../util/json.js';
import { visibleCodePoint } from '../text/unicode.js';
import { clipText } from '../text/clip.js';
import { PROBE_RULES, RULES, type CharRule, type Clause, type TextRule } from './rules.js';
import type { Finding, ScreenRuleDoc, ToolSnapshot } from './types.js';

export type { Finding, ToolSnapshot, ScreenRuleDoc } from './types.js';

/**
 * The rules as documented (README table): id, title, why, example. The screening rules, then the findings the
 * prober adds itself (PROBE_RULES: it sees the whole list, screening one tool at a time does not).
 */
export const SCREEN_RULES: ReadonlyArray<ScreenRuleDoc> = [...RULES, ...PROBE_RULES].map(
  ({ id, title, why, example }) => ({ id, title, why, example }),
);

const EXCERPT_MAX = 120;

const TEXT_RULES = RULES.filter((r): r is TextRule => r.kind === 'text');
const CHAR_RULES = RULES.filter((r): r is CharRule => r.kind === 'chars');
const RULE_ORDER = new Map(RULES.map((r, i) => [r.id, i]));

/** Screens every tool; findings in tool order, then field order, then rule order. Never throws on odd input. */
export function screenTools(tools: readonly ToolSnapshot[]): Finding[] {
  const findings: Finding[] = [];
  // One reporter for the whole list; a tool's own state is made only once it has a finding (most have none).
  let name = '';
  let perTool: Finding[] = [];
  let seen: Set<string> | null = null;
  const report = (path: FieldPath, rule: string, excerpt: string) => {
    const field = pathText(path);
    const key = `${field}\u0000${rule}`;
    seen ??= new Set();
    if (seen.has(key)) return;
    seen.add(key);
    perTool.push({ tool: name, field: excerptText(field, Infinity), rule, excerpt });
  };
  const visit: Visit = (text, path, kind, inSchema) => screenText(text, path, kind, inSchema, name, report);
  for (const tool of tools) {
    if (tool === null || typeof tool !== 'object') continue;
    name = typeof tool.name === 'string' ? tool.name : String(tool.name ?? '');
    visitFields(tool, name, visit);
    if (perTool.length === 0) continue;
    // Within one field, the table's order; fields keep the order they were met in.
    const fieldOrder = new Map<string, number>();
    for (const f of perTool) if (!fieldOrder.has(f.field)) fieldOrder.set(f.field, fieldOrder.size);
    perTool.sort(
      (a, b) =>
        fieldOrder.get(a.field)! - fieldOrder.get(b.field)! || RULE_ORDER.get(a.rule)! - RULE_ORDER.get(b.rule)!,
    );
    findings.push(...perTool);
    perTool = [];
    seen = null;
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------------------
// Fields.

/** 'prose' strings get every rule; 'value' strings (enum, default…) also the value rule; 'key' only characters. */
type FieldKind = 'prose' | 'value' | 'key';

/**
 * Where a string sits in a tool ('description', 'inputSchema.properties.q'): a chain of steps, made into text
 * only when a finding names it (most strings have none, and paths were most of the walk's cost).
 */
type FieldPath = string | { parent: FieldPath; step: string | number };

function pathText(path: FieldPath): string {
  if (typeof path === 'string') return path;
  const steps: Array<string | number> = [];
  let at: FieldPath = path;
  for (; typeof at !== 'string'; at = at.parent) steps.push(at.step);
  let text = at;
  for (let i = steps.length - 1; i >= 0; i--)
    text += typeof steps[i] === 'number' ? `[${steps[i]}]` : segment(steps[i] as string);
  return text;
}

/** `inSchema`: the string is inside inputSchema (a parameter's text), where Clause.where 'schema' applies. */
type Visit = (text: string, path: FieldPath, kind: FieldKind, inSchema: boolean) => void;

/** Schema keywords whose children are names chosen by the author, not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Schema keywords whose content is data, not documentation. */
const VALUE_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

function visitFields(tool: ToolSnapshot, name: string, visit: Visit): void {
  visit(name, 'name', 'prose', false);
  if (typeof tool.title === 'string') visit(tool.title, 'title', 'prose', false);
  if (typeof tool.description === 'string') visit(tool.description, 'description', 'prose', false);
  if (tool.annotations !== undefined) walk(tool.annotations, 'annotations', visit, false);
  if (tool.inputSchema !== undefined) walk(tool.inputSchema, 'inputSchema', visit, true);
}

type Mode = 'schema' | 'names' | 'value';

/**
 * Every string in a JSON value, depth-first in document order, without recursion. Levels are counted as
 * nestsDeeperThan (src/util/json.ts) counts them over the whole tool: the tool is level 1, its inputSchema
 * or annotations object level 2. An object or array deeper than MAX_NESTING is not walked (the prober refuses such
 * a list before screening; here it only bounds the work), so every list the prober accepts is screened whole.
 */
function walk(root: unknown, rootPath: string, visit: Visit, inSchema: boolean): void {
  const stack: Array<{ value: unknown; path: FieldPath; mode: Mode; depth: number }> = [
    { value: root, path: rootPath, mode: 'schema', depth: 2 },
  ];
  const visited = new Set<object>();
  while (stack.length) {
    const { value, path, mode, depth } = stack.pop()!;
    if (typeof value === 'string') {
      visit(value, path, mode === 'value' ? 'value' : 'prose', inSchema);
      continue;
    }
    if (value === null || typeof value !== 'object' || visited.has(value) || depth > MAX_NESTING) continue;
    visited.add(value);
    const first = stack.length;
    if (Array.isArray(value)) {
      const childMode = mode === 'names' ? 'schema' : mode;
      for (let i = 0; i < value.length; i++)
        stack.push({ value: value[i], path: { parent: path, step: i }, mode: childMode, depth: depth + 1 });
    } else {
      for (const k in value) {
        if (!Object.hasOwn(value, k)) continue;
        const childPath = { parent: path, step: k };
        visit(k, childPath, 'key', inSchema);
        const childMode: Mode =
          mode === 'value'
            ? 'value'
            : mode === 'names'
              ? 'schema'
              : NAME_MAPS.has(k)
                ? 'names'
                : VALUE_KEYWORDS.has(k)
                  ? 'value'
                  : 'schema';
        stack.push({
          value: (value as Record<string, unknown>)[k],
          path: childPath,
          mode: childMode,
          depth: depth + 1,
        });
      }
    }
    // Children were pushed in order; reversed, the first is popped first (document order).
    for (let i = first, j = stack.length - 1; i < j; i++, j--) {
      const x = stack[i]!;
      stack[i] = stack[j]!;
      stack[j] = x;
    }
  }
}

/** One path step; an author's key is clipped so a hostile key cannot make the path huge. */
function segment(key: string): string {
  return /^[A-Za-z_$][\w$-]{0,63}$/.test(key) ? `.${key}` : `[${JSON.stringify(clip(key, 64))}]`;
}

// ---------------------------------------------------------------------------------------------------------
// One string.

/** Values of these parameters are meant to be prose for a model (a default system prompt), not tokens. */
const PROSE_EXPECTED = /prompt|instruction|template/i;

/**
 * Every character a character rule looks at or normalization drops, as one plain class (astral ones by their
 * lead surrogate: U+110BD, U+1343x, U+1BCAx, U+1D17x, U+E00xx tags and selectors). Must stay a superset of
 * both; most text has none, and then both are skipped.
 */
const ODD_CHARACTER = new RegExp(
  String.raw`[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u` +
    String.raw`115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\ud804\ud80d\ud82f\ud834\udb40]`,
);

type Report = (path: FieldPath, rule: string, excerpt: string) => void;

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function screenText(
  raw: string,
  field: FieldPath,
  kind: FieldKind,
  inSchema: boolean,
  toolName: string,
  report: Report,
): void {
  // Printable ASCII (most text) can hold no odd character; otherwise one scan decides whether a character rule
  // can fire (almost never, on honest text).
  const plain = !NOT_PLAIN_ASCII.test(raw);
  const odd = !plain && ODD_CHARACTER.test(raw);
  if (odd) {
    for (const rule of CHAR_RULES) {
      const hit = rule.scan(raw);
      if (hit) report(field, rule.id, excerptAround(raw, hit.index, hit.length));
    }
  }
  if (kind === 'key') return;
  const normalized = plain ? spacesJoined(raw) : normalize(raw, odd);
  for (const { rule, at, sentence } of textHits(
    normalized,
    kind === 'value' && !PROSE_EXPECTED.test(pathText(field)),
    inSchema,
    toolName,
    plain,
  )) {
    report(field, rule.id, excerptAround(sentence, at, 0));
  }
  const blob = encodedInstructions(normalized, toolName);
  if (blob) report(field, 'encoded-instructions', blob);
}

const NO_HITS: ReadonlyArray<{ rule: TextRule; at: number; sentence: string }> = [];

/** Each text rule that fires on the text, once, with the sentence and the place where it fired. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function textHits(
  normalized: string,
  isValue: boolean,
  inSchema: boolean,
  toolName: string,
  ascii = !NON_ASCII.test(normalized),
): ReadonlyArray<{ rule: TextRule; at: number; sentence: string }> {
  if (!isValue && ascii && !KEY_SCANS_ANY_CASE[0]!.test(normalized) && !KEY_SCANS_ANY_CASE[1]!.test(normalized))
    return NO_HITS; // most strings: no lowercase copy, no word set
  const hits: Array<{ rule: TextRule; at: number; sentence: string }> = [];
  const lower = normalized.toLowerCase();
  // Lowercasing keeps offsets for nearly all text; when it does not, quote the lowercased sentence.
  const quoted = lower.length === normalized.length ? normalized : lower;
  const words = gateWordsIn(lower);
  if (words.size === 0 && !isValue) return hits; // most short strings ("string", "Path to the file")
  const open = openClauses(words);
  const paragraphs = new Map<number, Paragraph>(); // split once, shared by every clause
  for (const rule of TEXT_RULES) {
    if (rule.scope === 'values' && !isValue) continue;
    for (const clause of rule.clauses) {
      if (clause.where === 'schema' && !inSchema) continue;
      if (!open(clause)) continue;
      const hit = firstHit(clause, rule, lower, quoted, paragraphs, toolName);
      if (hit === undefined) continue;
      hits.push({ rule, ...hit });
      break;
    }
  }
  return hits;
}

/**
 * The clauses whose every group of gate words (Clause.needs) has one present. Worked out from the words found,
 * through an index from each word to the groups it opens, so the cost follows the few words a text has, not the
 * clauses times their (long) word lists. A stamp per call saves clearing the counters.
 */
const CLAUSES = TEXT_RULES.flatMap((r) => r.clauses);
const CLAUSE_INDEX = new Map(CLAUSES.map((c, i) => [c, i]));
const GROUPS_NEEDED = Int32Array.from(CLAUSES, (c) => c.needs.length);
const GROUP_CLAUSE: number[] = [];
const GROUPS_OF_WORD = new Map<string, number[]>();
for (const [i, clause] of CLAUSES.entries()) {
  for (const group of clause.needs) {
    const g = GROUP_CLAUSE.push(i) - 1;
    for (const w of new Set(group)) {
      let list = GROUPS_OF_WORD.get(w);
      if (!list) GROUPS_OF_WORD.set(w, (list = []));
      list.push(g);
    }
  }
}
const groupStamp = new Uint32Array(GROUP_CLAUSE.length);
const clauseStamp = new Uint32Array(CLAUSES.length);
const groupsOpen = new Int32Array(CLAUSES.length);
let stamp = 0;

function openClauses(words: Set<string>): (clause: Clause) => boolean {
  const now = ++stamp;
  for (const w of words) {
    for (const g of GROUPS_OF_WORD.get(w) ?? []) {
      if (groupStamp[g] === now) continue;
      groupStamp[g] = now;
      const c = GROUP_CLAUSE[g]!;
      if (clauseStamp[c] !== now) {
        clauseStamp[c] = now;
        groupsOpen[c] = 0;
      }
      groupsOpen[c]!++;
    }
  }
  return (clause) => {
    const c = CLAUSE_INDEX.get(clause)!;
    return GROUPS_NEEDED[c] === 0 || (clauseStamp[c] === now && groupsOpen[c] === GROUPS_NEEDED[c]);
  };
}

/**
 * The first sentence where the clause matches, and the index in it. The clause's first pattern scans the whole
 * text in one call (per-call overhead dominated when patterns ran per sentence); a candidate's paragraph is then
 * split into sentences and checked one by one, so a match can never span two sentences.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function firstHit(
  clause: Clause,
  rule: TextRule,
  lower: string,
  quoted: string,
  paragraphs: Map<number, Paragraph>,
  toolName: string,
): { at: number; sentence: string } | undefined {
  const scan = wholeTextVersion(clause.all[0]!);
  scan.lastIndex = 0;
  for (let m = scan.exec(lower); m; m = scan.exec(lower)) {
    const [start, end] = paragraphAround(lower, m.index);
    let paragraph = paragraphs.get(start);
    if (!paragraph) paragraphs.set(start, (paragraph = { sentences: sentencesOf(lower.slice(start, end)) }));
    const { sentences } = paragraph;
    for (let i = 0; i < sentences.length; i++) {
      const at = matchClause(clause, sentences[i]!, rule, toolName);
      if (at === undefined) continue;
      const originals = sentencesOf(quoted.slice(start, end));
      return {
        at,
        sentence:
          originals.length === sentences.length && originals[i]!.length === sentences[i]!.length
            ? originals[i]!
            : sentences[i]!,
      };
    }
    if (end >= lower.length) return undefined;
    scan.lastIndex = end; // that paragraph is settled; a bogus match may have run past its end
  }
  return undefined;
}

interface Paragraph {
  sentences: string[];
}

/** The paragraph (between blank lines) that holds `index`: [start, end). */
function paragraphAround(text: string, index: number): [number, number] {
  let start = 0;
  for (let nl = text.lastIndexOf('\n', index - 1); nl > 0; nl = text.lastIndexOf('\n', nl - 1)) {
    if (text[nl - 1] === '\n' || (text[nl - 1] === ' ' && text[nl - 2] === '\n')) {
      start = nl + 1;
      break;
    }
  }
  let end = text.length;
  for (let nl = text.indexOf('\n', index); nl >= 0; nl = text.indexOf('\n', nl + 1)) {
    if (text[nl + 1] === '\n' || (text[nl + 1] === ' ' && text[nl + 2] === '\n')) {
      end = nl;
      break;
    }
  }
  return [start, end];
}

const WHOLE_TEXT = new Map<RegExp, RegExp>();
/** The same pattern for the whole text: global, and ^ matching at every line start. */
function wholeTextVersion(re: RegExp): RegExp {
  let g = WHOLE_TEXT.get(re);
  if (!g) WHOLE_TEXT.set(re, (g = new RegExp(re.source, re.flags + 'gm')));
  return g;
}

/**
 * The gate words (Clause.needs), in two one-pass scans. Words that start with a letter are looked for only at
 * word starts (three times faster; every pattern that needs such a word has it after a \\b), the others
 * ('.ssh', '<', '@', 'http' which may follow anything in a URL, …) anywhere.
 */
const GATE_WORDS = [...new Set(TEXT_RULES.flatMap((r) => r.clauses.flatMap((c) => c.needs.flat())))];
const AT_WORD_START = GATE_WORDS.filter((w) => /^[a-z]/.test(w) && w !== 'http');
const ANYWHERE = GATE_WORDS.filter((w) => !AT_WORD_START.includes(w));
const GATE_SCANS = [new RegExp(`\\b(${trieSource(AT_WORD_START)})`, 'g'), new RegExp(`(${trieSource(ANYWHERE)})`, 'g')];
/** Each gate word with the shorter gate words it starts with (a longer word hides them at the same place). */
const GATE_PREFIXES = new Map(GATE_WORDS.map((w) => [w, GATE_WORDS.filter((v) => w.startsWith(v))]));

/**
 * A pattern for a set of words as a trie, so each position costs one branch per character instead of one try
 * per word; optional tails are greedy, so the longest word at a position matches.
 */
function trieSource(words: readonly string[]): string {
  interface Node {
    end: boolean;
    next: Map<string, Node>;
  }
  const root: Node = { end: false, next: new Map() };
  for (const w of words) {
    let node = root;
    for (const ch of w) {
      let child = node.next.get(ch);
      if (!child) node.next.set(ch, (child = { end: false, next: new Map() }));
      node = child;
    }
    node.end = true;
  }
  const escapeRegExp = (ch: string) => ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const build = (node: Node): string => {
    const branches = [...node.next]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([ch, child]) => escapeRegExp(ch) + build(child));
    if (branches.length === 0) return '';
    const alternation = branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
    return node.end ? `(?:${alternation})?` : alternation;
  };
  return build(root);
}

/**
 * ASCII text matched case-insensitively is the same as matched lowercased: when none of the key words is in it
 * (each clause's first group of gate words, written to be its rarest), no clause can match, and it needs no
 * lowercase copy and no word set. Other text is always looked at.
 */
const KEY_WORDS = [...new Set(CLAUSES.flatMap((c) => c.needs[0] ?? []))];
const KEY_AT_WORD_START = KEY_WORDS.filter((w) => AT_WORD_START.includes(w));
const KEY_ANYWHERE = KEY_WORDS.filter((w) => !AT_WORD_START.includes(w));
const KEY_SCANS_ANY_CASE = [
  new RegExp(`\\b(?:${trieSource(KEY_AT_WORD_START)})`, 'i'),
  new RegExp(`(?:${trieSource(KEY_ANYWHERE)})`, 'i'),
];
const NON_ASCII = /[^\x00-\x7f]/;

/** The gate words present. */
function gateWordsIn(lower: string): Set<string> {
  const found = new Set<string>();
  for (const scan of GATE_SCANS) {
    scan.lastIndex = 0;
    for (let m = scan.exec(lower); m; m = scan.exec(lower)) {
      for (const w of GATE_PREFIXES.get(m[1]!)!) found.add(w);
      scan.lastIndex = m.index + 1;
    }
  }
  return found;
}

function matchClause(clause: Clause, sentence: string, rule: TextRule, toolName: string): number | undefined {
  const [first, ...rest] = clause.all;
  if (!first?.test(sentence)) return undefined;
  if (!rest.every((r) => r.test(sentence))) return undefined;
  if (!rule.accept && !rule.quotedIsMention) return first.exec(sentence)!.index;
  // Some places are vetoed (the tool names itself, a quoted mention); the first one that is not counts.
  const all = new RegExp(first.source, first.flags + 'g');
  for (let m = all.exec(sentence); m; m = all.exec(sentence)) {
    if (m[0].length === 0) all.lastIndex++;
    if (rule.accept && !rule.accept(m, toolName)) continue;
    if (rule.quotedIsMention && OPENING_QUOTE.test(sentence.slice(Math.max(0, m.index - 1), m.index))) continue;
    return m.index;
  }
  return undefined;
}

const OPENING_QUOTE = /["'\u2018\u201c\u00ab\u2039\x60\u300c\u300e]/u;

// ---------------------------------------------------------------------------------------------------------
// Normalization: what the model effectively reads, with the hiding tricks removed.

const ANSI_SEQUENCE = /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-_]/gu;
const FORMAT_OR_SELECTOR = /[\p{Cf}\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u034f\u115f\u1160\u3164\uffa0]/gu;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/gu;

const NOT_PLAIN_ASCII = /[^\x20-\x7e\n]/;
const SPACE_RUN = / {2,}/g;

/** Printable ASCII normalized: runs of spaces made one. */
function spacesJoined(raw: string): string {
  return raw.includes('  ') ? raw.replace(SPACE_RUN, ' ') : raw;
}

function normalize(raw: string, odd = ODD_CHARACTER.test(raw)): string {
  // Printable ASCII and newlines: nothing to normalize but spaces (the common case, and the fast one).
  if (!NOT_PLAIN_ASCII.test(raw)) return spacesJoined(raw);
  let text = raw.normalize('NFKC');
  // Without any odd character (NFKC creates none) there are no escapes, format or control characters to drop.
  if (odd) text = text.replace(ANSI_SEQUENCE, ' ').replace(FORMAT_OR_SELECTOR, '').replace(CONTROL, ' ');
  if (GREEK_OR_CYRILLIC.test(text)) text = foldLookalikes(text);
  return text.replace(/\r\n?/g, '\n').replace(/[^\S\n]+/g, ' ');
}

/**
 * Greek and Cyrillic letters that look like Latin ones (UTS #39 confusables, the common ones), each one code unit
 * for one, so offsets do not move.
 */
const LOOKALIKE = new Map<string, string>(
  Object.entries({
    а: 'a',
    е: 'e',
    о: 'o',
    р: 'p',
    с: 'c',
    у: 'y',
    х: 'x',
    і: 'i',
    ј: 'j',
    ѕ: 's',
    һ: 'h',
    ԁ: 'd',
    ԛ: 'q',
    ԝ: 'w',
    ӏ: 'l',
    к: 'k',
    ү: 'y',
    А: 'A',
    В: 'B',
    Е: 'E',
    К: 'K',
    М: 'M',
    Н: 'H',
    О: 'O',
    Р: 'P',
    С: 'C',
    Т: 'T',
    Х: 'X',
    У: 'Y',
    І: 'I',
    Ј: 'J',
    Ѕ: 'S',
    Ԛ: 'Q',
    Ԝ: 'W',
    Ү: 'Y',
    Ӏ: 'l',
    α: 'a',
    ο: 'o',
    ρ: 'p',
    ν: 'v',
    ι: 'i',
    κ: 'k',
    υ: 'u',
    χ: 'x',
    ε: 'e',
    Α: 'A',
    Β: 'B',
    Ε: 'E',
    Ζ: 'Z',
    Η: 'H',
    Ι: 'I',
    Κ: 'K',
    Μ: 'M',
    Ν: 'N',
    Ο: 'O',
    Ρ: 'P',
    Τ: 'T',
    Υ: 'Y',
    Χ: 'X',
  }),
);
const GREEK_OR_CYRILLIC = /[\u0370-\u03ff\u0400-\u052f]/;
const LOOKALIKE_CLASS = `[${[...LOOKALIKE.keys()].join('')}]`;
const LOOKALIKE_CHAR = new RegExp(LOOKALIKE_CLASS, 'g');
/** A whole word of Latin letters and look-alikes only (most Russian or Greek words have other letters too). */
const FOLDABLE_WORD = new RegExp(`^(?:[A-Za-z]|${LOOKALIKE_CLASS})+$`);
const LETTER_RUN = /[\p{L}\p{M}]+/gu;
const LATIN_LETTER = /[A-Za-z]/;

/**
 * Homoglyphs: a word that mixes Latin letters with Greek or Cyrillic look-alikes ("Іgnоrе" with a Cyrillic І, о,
 * е) is what an attacker writes, not a Russian or Greek writer. When a text has such a word, every word made only
 * of Latin letters and look-alikes is read as Latin, so the text rules see "ignore". Plain Greek and Cyrillic text
 * (no mixed word) is left as it is.
 */
function foldLookalikes(text: string): string {
  let mixed = false;
  for (const m of text.matchAll(LETTER_RUN)) {
    const w = m[0];
    if (LATIN_LETTER.test(w) && GREEK_OR_CYRILLIC.test(w) && FOLDABLE_WORD.test(w)) {
      mixed = true;
      break;
    }
  }
  if (!mixed) return text;
  return text.replace(LETTER_RUN, (w) =>
    GREEK_OR_CYRILLIC.test(w) && FOLDABLE_WORD.test(w) ? w.replace(LOOKALIKE_CHAR, (ch) => LOOKALIKE.get(ch)!) : w,
  );
}

/**
 * The text one sentence per line: paragraphs split at blank lines, wrapped lines rejoined (a list item, heading,
 * table row or quote starts its own), then split after sentence-ending punctuation. ~/.ssh/id_rsa stays whole.
 */
function sentenceLines(text: string): string {
  return text
    .replace(/\n[ ]?\n|\n(?![ ]?(?:[-*•+]\s|\d+[.)]\s|#|\||>|```))/g, (m) => (m.length > 1 ? '\n' : ' '))
    .replace(/([.!?。！？])\s+/g, '$1\n')
    .replace(/ *\n[ \n]*/g, '\n')
    .trim();
}

/** The sentences of a text, in order. */
function sentencesOf(text: string): string[] {
  const lines = sentenceLines(text);
  return lines === '' ? [] : lines.split('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Base64 blobs.

/** A whole run of 24+ base64 characters (attempts start only after a delimiter, which keeps the scan fast). */
const BASE64_BLOB = /(?:^|[^A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{24,}={0,2})/g;
const CUE_WORDS = new RegExp(
  String.raw`\b(ignore|disregard|instructions?|must|always|never|read|send|pass|include|secret|password|ssh|system|` +
    String.raw`assistant|user|tool|parameter|argument|conversation|hidden)\b`,
  'gi',
);
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** An excerpt when a blob decodes to readable orders, else undefined. */
function encodedInstructions(text: string, toolName: string): string | undefined {
  if (text.length < 24) return undefined; // shorter than any blob
  BASE64_BLOB.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = BASE64_BLOB.exec(text))) {
    const blob = m[1]!;
    // identifiers and words are not base64
    if (!/[A-Z]/.test(blob) || !/[a-z]/.test(blob) || !/\d|[+/]/.test(blob)) continue;
    const decoded = decodeText(blob);
    if (decoded === undefined) continue;
    const words = decoded.trim().split(/\s+/);
    if (words.length < 4) continue;
    const cues = new Set(Array.from(decoded.matchAll(CUE_WORDS), (c) => c[1]!.toLowerCase()));
    const ruled = textHits(normalize(decoded), false, false, toolName).length > 0;
    if (ruled || cues.size >= 2) {
      return excerptText(`${clip(blob, 24)} decodes to: ${decoded}`, EXCERPT_MAX);
    }
  }
  return undefined;
}

function decodeText(blob: string): string | undefined {
  const bytes = Buffer.from(blob.replace(/=+$/, ''), 'base64');
  if (bytes.length < 12) return undefined;
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return undefined;
  }
  const printable = Array.from(text).filter((c) => /[\p{L}\p{N}\p{P}\p{S}\p{Zs}\n\t]/u.test(c)).length;
  return printable / Array.from(text).length >= 0.95 && / /.test(text) ? text : undefined;
}

const clip = (s: string, max: number) => clipText(s, max + 1);

// ---------------------------------------------------------------------------------------------------------
// Excerpts: short and inert.

/** ~30 characters of context before the place, then enough to read it, made inert and clipped. */
function excerptAround(text: string, index: number, length: number): string {
  let start = Math.max(0, index - 30);
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start--;
  const end = Math.min(text.length, Math.max(index + length, start) + EXCERPT_MAX);
  const prefix = start > 0 ? '…' : '';
  return excerptText(prefix + text.slice(start, end) + (end < text.length ? '…' : ''), EXCERPT_MAX);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

const TAG_RUN = /[\u{e0020}-\u{e007e}]{3,}/gu;
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u034f\u115f\u1160\u3164\uffa0]/u;

/**
 * Text safe to print anywhere: tag-character runs shown decoded, every control, format, bidi, invisible or
 * separator character shown as ⟨U+XXXX⟩ (newline and tab as a space), clipped to `max` characters.
 */
function excerptText(text: string, max: number): string {
  const decodedTags = text.replace(
    TAG_RUN,
    (run) => `[hidden: "${Array.from(run, (c) => String.fromCodePoint(c.codePointAt(0)! - 0xe0000)).join('')}"]`,
  );
  let out = '';
  let count = 0;
  for (const ch of decodedTags) {
    const piece = ch === '\n' || ch === '\t' ? ' ' : UNSAFE.test(ch) ? visibleCodePoint(ch) : ch;
    const size = Array.from(piece).length;
    if (count + size > max) return out + '…';
    out += piece;
    count += size;
  }
  return out;
}
