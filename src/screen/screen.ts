/**
 * Screening of tool lists for poisoned descriptions: pure, local, deterministic. Reads every string a client
 * would show the model (name, title, description, annotations, and every string in inputSchema: property
 * descriptions, titles, enum/const/default/examples values) in full, and reports each rule once per field.
 */
import { RULES, type CharRule, type Clause, type Rule, type TextRule } from './rules.js';
import type { Finding, ScreenRuleDoc, ToolSnapshot } from './types.js';

export type { Finding, ToolSnapshot, ScreenRuleDoc } from './types.js';

/** The rules as documented (README table): id, title, why, example. */
export const SCREEN_RULES: ReadonlyArray<ScreenRuleDoc> = RULES.map(({ id, title, why, example }) => ({ id, title, why, example }));

const EXCERPT_MAX = 120;

const TEXT_RULES = RULES.filter((r): r is TextRule => r.kind === 'text');
const CHAR_RULES = RULES.filter((r): r is CharRule => r.kind === 'chars');
const RULE_ORDER = new Map(RULES.map((r, i) => [r.id, i]));

/** Screens every tool; findings in tool order, then field order, then rule order. Never throws on odd input. */
export function screenTools(tools: readonly ToolSnapshot[]): Finding[] {
  const findings: Finding[] = [];
  for (const tool of tools) {
    if (tool === null || typeof tool !== 'object') continue;
    const name = typeof tool.name === 'string' ? tool.name : String(tool.name ?? '');
    const perTool: Finding[] = [];
    const seen = new Set<string>();
    const report = (field: string, rule: string, excerpt: string) => {
      const key = `${field}\u0000${rule}`;
      if (seen.has(key)) return;
      seen.add(key);
      perTool.push({ tool: name, field: inert(field, Infinity), rule, excerpt });
    };
    for (const { field, text, kind } of fieldsOf(tool, name)) screenText(text, field, kind, name, report);
    // Within one field, the table's order; fields keep the order they were met in.
    const fieldOrder = new Map<string, number>();
    for (const f of perTool) if (!fieldOrder.has(f.field)) fieldOrder.set(f.field, fieldOrder.size);
    perTool.sort((a, b) => fieldOrder.get(a.field)! - fieldOrder.get(b.field)! || RULE_ORDER.get(a.rule)! - RULE_ORDER.get(b.rule)!);
    findings.push(...perTool);
  }
  return findings;
}

// ---------------------------------------------------------------------------------------------------------
// Fields.

/** 'prose' strings get every rule; 'value' strings (enum, default…) also the value rule; 'key' only characters. */
type FieldKind = 'prose' | 'value' | 'key';
interface FieldText { field: string; text: string; kind: FieldKind }

/** Schema keywords whose children are names chosen by the author, not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Schema keywords whose content is data, not documentation. */
const VALUE_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

function* fieldsOf(tool: ToolSnapshot, name: string): Generator<FieldText> {
  yield { field: 'name', text: name, kind: 'prose' };
  if (typeof tool.title === 'string') yield { field: 'title', text: tool.title, kind: 'prose' };
  if (typeof tool.description === 'string') yield { field: 'description', text: tool.description, kind: 'prose' };
  if (tool.annotations !== undefined) yield* walk(tool.annotations, 'annotations');
  if (tool.inputSchema !== undefined) yield* walk(tool.inputSchema, 'inputSchema');
}

type Mode = 'schema' | 'names' | 'value';

/** Every string in a JSON value, depth-first in document order, without recursion (hostile depth is fine). */
function* walk(root: unknown, rootPath: string): Generator<FieldText> {
  const stack: Array<{ value: unknown; path: string; mode: Mode }> = [{ value: root, path: rootPath, mode: 'schema' }];
  const visited = new Set<object>();
  while (stack.length) {
    const { value, path, mode } = stack.pop()!;
    if (typeof value === 'string') {
      yield { field: path, text: value, kind: mode === 'value' ? 'value' : 'prose' };
      continue;
    }
    if (value === null || typeof value !== 'object' || visited.has(value)) continue;
    visited.add(value);
    const children: Array<{ value: unknown; path: string; mode: Mode }> = [];
    if (Array.isArray(value)) {
      value.forEach((v, i) => children.push({ value: v, path: `${path}[${i}]`, mode: mode === 'names' ? 'schema' : mode }));
    } else {
      for (const [k, v] of Object.entries(value)) {
        const childPath = `${path}${segment(k)}`;
        yield { field: childPath, text: k, kind: 'key' };
        const childMode: Mode = mode === 'value' ? 'value'
          : mode === 'names' ? 'schema'
          : NAME_MAPS.has(k) ? 'names'
          : VALUE_KEYWORDS.has(k) ? 'value'
          : 'schema';
        children.push({ value: v, path: childPath, mode: childMode });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
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

type Report = (field: string, rule: string, excerpt: string) => void;

function screenText(raw: string, field: string, kind: FieldKind, toolName: string, report: Report): void {
  for (const rule of CHAR_RULES) {
    const hit = rule.scan(raw);
    if (hit) report(field, rule.id, excerptAround(raw, hit.index, hit.length));
  }
  if (kind === 'key') return;
  const normalized = normalize(raw);
  for (const { rule, at, sentence } of textHits(normalized, kind === 'value' && !PROSE_EXPECTED.test(field), toolName)) {
    report(field, rule.id, excerptAround(sentence, at, 0));
  }
  const blob = encodedInstructions(normalized, toolName);
  if (blob) report(field, 'encoded-instructions', blob);
}

/** Each text rule that fires on the text, once, with the sentence and the place where it fired. */
function textHits(normalized: string, isValue: boolean, toolName: string): Array<{ rule: TextRule; at: number; sentence: string }> {
  const lower = normalized.toLowerCase();
  const hits: Array<{ rule: TextRule; at: number; sentence: string }> = [];
  let sentences: Array<{ original: string; lower: string }> | undefined;
  for (const rule of TEXT_RULES) {
    if (rule.scope === 'values' && !isValue) continue;
    const clauses = rule.clauses.filter((c) => present(c, lower));
    if (clauses.length === 0) continue;
    sentences ??= sentencesOf(normalized).map((original) => ({ original, lower: original.toLowerCase() }));
    found: for (const s of sentences) {
      for (const clause of clauses) {
        const at = matchClause(clause, s.lower, rule, toolName);
        if (at === undefined) continue;
        // Lowercasing keeps offsets for nearly all text; when it does not, quote the lowercased sentence.
        hits.push({ rule, at, sentence: s.lower.length === s.original.length ? s.original : s.lower });
        break found;
      }
    }
  }
  return hits;
}

/** The clause's gate words are in the text (every group has one). */
function present(clause: Clause, lower: string): boolean {
  return clause.needs.every((group) => group.some((word) => lower.includes(word)));
}

function matchClause(clause: Clause, sentence: string, rule: TextRule, toolName: string): number | undefined {
  const [first, ...rest] = clause.all;
  if (!first || !first.test(sentence)) return undefined;
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

export function normalize(raw: string): string {
  return raw
    .normalize('NFKC')
    .replace(ANSI_SEQUENCE, ' ')
    .replace(FORMAT_OR_SELECTOR, '')
    .replace(CONTROL, ' ')
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/g, ' ');
}

/**
 * Sentences: paragraphs split at blank lines, wrapped lines rejoined (a list item or table row starts its own),
 * then split after sentence-ending punctuation. A path such as ~/.ssh/id_rsa stays whole.
 */
export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n[ ]?\n/)) {
    const joined = paragraph.replace(/\n(?![ ]?(?:[-*•+]\s|\d+[.)]\s|#|\||>|```))/g, ' ');
    for (const line of joined.split('\n')) {
      for (const s of line.split(/(?<=[.!?。！？])\s+/u)) {
        const t = s.trim();
        if (t) out.push(t);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Base64 blobs.

const BASE64_BLOB = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_=-])/g;
const CUE_WORDS = /\b(ignore|disregard|instructions?|must|always|never|read|send|pass|include|secret|password|ssh|system|assistant|user|tool|parameter|argument|conversation|hidden)\b/gi;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** An excerpt when a blob decodes to readable orders, else undefined. */
function encodedInstructions(text: string, toolName: string): string | undefined {
  BASE64_BLOB.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = BASE64_BLOB.exec(text))) {
    const blob = m[0];
    if (!/[A-Z]/.test(blob) || !/[a-z]/.test(blob) || !/\d|[+/]/.test(blob)) continue; // identifiers and words are not base64
    const decoded = decodeText(blob);
    if (decoded === undefined) continue;
    const words = decoded.trim().split(/\s+/);
    if (words.length < 4) continue;
    const cues = new Set(Array.from(decoded.matchAll(CUE_WORDS), (c) => c[1]!.toLowerCase()));
    const ruled = textHits(normalize(decoded), false, toolName).length > 0;
    if (ruled || cues.size >= 2) {
      return inert(`${clip(blob, 24)} decodes to: ${decoded}`, EXCERPT_MAX);
    }
  }
  return undefined;
}

function decodeText(blob: string): string | undefined {
  const bytes = Buffer.from(blob.replace(/=+$/, ''), 'base64');
  if (bytes.length < 12) return undefined;
  let text: string;
  try { text = UTF8.decode(bytes); } catch { return undefined; }
  const printable = Array.from(text).filter((c) => /[\p{L}\p{N}\p{P}\p{S}\p{Zs}\n\t]/u.test(c)).length;
  return printable / Array.from(text).length >= 0.95 && / /.test(text) ? text : undefined;
}

function clip(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

// ---------------------------------------------------------------------------------------------------------
// Excerpts: short and inert.

/** ~30 characters of context before the place, then enough to read it, made inert and clipped. */
function excerptAround(text: string, index: number, length: number): string {
  let start = Math.max(0, index - 30);
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start--;
  const end = Math.min(text.length, Math.max(index + length, start) + EXCERPT_MAX);
  const prefix = start > 0 ? '…' : '';
  return inert(prefix + text.slice(start, end) + (end < text.length ? '…' : ''), EXCERPT_MAX);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

const TAG_RUN = /[\u{e0020}-\u{e007e}]{3,}/gu;
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u034f\u115f\u1160\u3164\uffa0]/u;

/**
 * Text safe to print anywhere: tag-character runs shown decoded, every control, format, bidi, invisible or
 * separator character shown as [U+XXXX] (newline and tab as a space), clipped to `max` characters.
 */
export function inert(text: string, max: number): string {
  const decodedTags = text.replace(TAG_RUN, (run) => `[hidden: "${Array.from(run, (c) => String.fromCodePoint(c.codePointAt(0)! - 0xe0000)).join('')}"]`);
  let out = '';
  let count = 0;
  for (const ch of decodedTags) {
    const piece = ch === '\n' || ch === '\t' ? ' '
      : UNSAFE.test(ch) ? `[U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`
      : ch;
    const size = Array.from(piece).length;
    if (count + size > max) return out + '…';
    out += piece;
    count += size;
  }
  return out;
}

/** For tests and docs: the rule with this id. */
export function ruleById(id: string): Rule | undefined {
  return RULES.find((r) => r.id === id);
}
