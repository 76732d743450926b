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
const FIELD_MAX = 200;

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
      perTool.push({ tool: name, field: inert(field, FIELD_MAX), rule, excerpt });
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

function segment(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

// ---------------------------------------------------------------------------------------------------------
// One string.

type Report = (field: string, rule: string, excerpt: string) => void;

function screenText(raw: string, field: string, kind: FieldKind, toolName: string, report: Report): void {
  for (const rule of CHAR_RULES) {
    const hit = rule.scan(raw);
    if (hit) report(field, rule.id, excerptAround(raw, hit.index, hit.length));
  }
  if (kind === 'key') return;
  const normalized = normalize(raw);
  for (const sentence of sentencesOf(normalized)) {
    for (const rule of TEXT_RULES) {
      if (rule.scope === 'values' && kind !== 'value') continue;
      const at = matchRule(rule, sentence, toolName);
      if (at !== undefined) report(field, rule.id, excerptAround(sentence, at, 0));
    }
  }
  const blob = encodedInstructions(normalized, toolName);
  if (blob) report(field, 'encoded-instructions', blob);
}

/** The index in `sentence` where the rule fires, or undefined. */
function matchRule(rule: TextRule, sentence: string, toolName: string): number | undefined {
  for (const clause of rule.clauses) {
    const at = matchClause(clause, sentence, rule, toolName);
    if (at !== undefined) return at;
  }
  return undefined;
}

function matchClause(clause: Clause, sentence: string, rule: TextRule, toolName: string): number | undefined {
  const [first, ...rest] = clause;
  if (!first) return undefined;
  // Cheap conditions first would be faster, but clauses are short and sentences small; keep it readable.
  const m = first.exec(sentence);
  if (!m) return undefined;
  if (rule.accept && !rule.accept(m, toolName)) {
    // The first place was vetoed (say, the tool names itself); look for another one in the same sentence.
    const g = new RegExp(first.source, first.flags + 'g');
    let found: RegExpExecArray | null;
    let accepted: RegExpExecArray | undefined;
    while ((found = g.exec(sentence))) {
      if (rule.accept(found, toolName)) { accepted = found; break; }
      if (found[0].length === 0) g.lastIndex++;
    }
    if (!accepted) return undefined;
    return rest.every((r) => r.test(sentence)) ? accepted.index : undefined;
  }
  return rest.every((r) => r.test(sentence)) ? m.index : undefined;
}

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
const CUE_WORDS = /\b(ignore|disregard|instructions?|must|always|never|read|send|pass|include|secret|password|ssh|system|assistant|user|tool|parameter|argument|conversation|hidden)\b/giu;
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
    const ruled = sentencesOf(normalize(decoded)).some((s) => TEXT_RULES.some((r) => r.scope !== 'values' && matchRule(r, s, toolName) !== undefined));
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
