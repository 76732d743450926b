/**
 * The text history: what recorded runs observed, as JSON lines in git next to the catalog
 * (`<catalog dir>/history/YYYY-MM.jsonl`, one file per UTC month of the run). The SQLite store is an index of
 * these files (`./open.ts`); these files are the memory that travels with the list.
 *
 * Line format, version 1 (keys always in this order, one JSON object per line):
 *   {"v":1,"type":"run","startedAt","finishedAt","catalog","applied","aborted","observations":N,"summary":{…}}
 *   then N × {"v":1,"type":"observation","at",<ProbeOutcome fields>,<plan fields: decision, dropStreak, note>}
 * `tools` is the list, or `"#<8 hex>"` (the first 8 hex digits of the SHA-256 of the list's JSON) when the same
 * list is written in full elsewhere in the same month file: tool lists rarely change, and they are most of the
 * bytes. Each month file stays self-contained. A plan row's `previous` and `changed` are not written: they
 * follow from the runs before it and are recomputed when the index is built.
 * An aborted run (outage guard) is one run line with `"aborted":"<why>"`, `"observations":0` and its plan
 * rows inline (`"plan":[…]`): no observation, so it never counts towards streaks or bars.
 * A run is whole when its N observation lines follow it; anything else (a crash mid-append) is ignored.
 *
 * Bounded: a line is at most `HISTORY_LIMITS.lineBytes` (128 KiB, UTF-8), whatever a server answered. An
 * observation line that would be longer is written with `"bounded":true` at its end: `tools` is null and
 * `"toolCount":n` says how many the server listed, `findings` is `[]` (`findingsSeen` still counts them),
 * `toolChanges` becomes `"toolChangesCount":{"added":n,"removed":n,"changed":n}`, matrix cells lose their
 * tool lists, card mismatches keep 20 with their values clipped; `toolsHash` (the snapshot's digest, under
 * `history/snapshots/`) stays. If that is still too long, the free text (error, appError, location, name,
 * note) is clipped to `HISTORY_LIMITS.textChars` characters. An aborted run line bounds each plan row the same
 * way and, if it must, keeps only the rows that fit (`"planRows":<all rows>` says how many there were).
 *
 * Untrusted: the history arrives through pull requests, so every line is checked against this format when it
 * is read (`checkRunLine`, `checkObservationLine`): a bad observation line is skipped alone (it still counts
 * towards its run's N), a bad run line skips its whole run, a line longer than `HISTORY_LIMITS.readLineBytes`
 * is not parsed. Each is a problem (`parseHistory(…).problems`, `readHistoryChecked`), never a crash, and the
 * index only ever holds what passed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, open, truncate } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Decision } from '../decide/decide.js';
import { REASON_TEXT, type Reason, type VerdictName } from '../policy/policy.js';
import { acquireLock } from '../util/atomic.js';
import type { ObservationRecord, RunRecord } from './store.js';
import type { PlanJson, PlanRowJson } from '../decide/plan-json.js';
import type { ToolChanges } from '../decide/drift.js';
import type { MatrixCell } from '../attest/result.js';
import { nestsDeeperThan } from '../attest/snapshot.js';
import { clipText } from '../util/text.js';

export const HISTORY_LINE_VERSION = 1;
export const MONTH_FILE = /^\d{4}-\d{2}\.jsonl$/;

/** What one line of the history may cost, written and read (see the header). */
export const HISTORY_LIMITS = {
  /** Bytes of one line (UTF-8, its newline not counted) as onetap writes it. */
  lineBytes: 131_072,
  /** A longer line is not parsed when read, only counted as a problem (the slack allows a hand edit). */
  readLineBytes: 131_072 + 16_384,
  /** Characters each free-text field keeps on a line that had to be bounded. */
  textChars: 1_000,
  /** Card mismatches kept on a bounded line. */
  cardMismatches: 20,
  /** Problems kept one by one (`count` says how many there were in all). */
  problemsListed: 10,
} as const;

export type { PlanJson, PlanRowJson };

/** One recorded run as the history holds it. */
export interface HistoryRun {
  run: Omit<RunRecord, 'id'> & { plan: PlanJson };
  observations: ObservationRecord[];
}

/** A line of a month file that was skipped, and why (`line`: 1-based). */
export interface LineProblem { line: number; problem: string }
/** A skipped line of the history: `file` relative to the catalog's directory (`history/2026-11.jsonl`). */
export interface HistoryProblem extends LineProblem { file: string }
/** How many lines the history had that could not be used, and the first of them. */
export interface HistoryProblems { count: number; first: HistoryProblem[] }

export const NO_HISTORY_PROBLEMS: HistoryProblems = Object.freeze({ count: 0, first: Object.freeze([]) as unknown as HistoryProblem[] });

export const historyDir = (catalogPath: string) => join(dirname(catalogPath), 'history');
export const monthFileName = (iso: string) => `${iso.slice(0, 7)}.jsonl`;

/** The lines of one run, each ending in a newline, keys in a fixed order, each at most `HISTORY_LIMITS.lineBytes`. */
export function runLines({ run, observations }: HistoryRun, knownTools: Set<string> = new Set()): string {
  const aborted = run.plan.aborted;
  const head = {
    v: HISTORY_LINE_VERSION, type: 'run', startedAt: run.startedAt, finishedAt: run.finishedAt, catalog: basename(run.catalog),
    applied: run.applied, aborted, observations: aborted ? 0 : observations.length, summary: run.plan.summary,
    ...(aborted ? { plan: run.plan.plan.map(planRowJson) } : {}),
  };
  if (aborted) return JSON.stringify(boundedRunLine(head)) + '\n';
  const rowByUrl = new Map(run.plan.plan.map((r) => [r.url, r]));
  const line = (o: ObservationRecord) => {
    const ref = o.tools?.length ? toolsRef(o.tools) : null;
    const l = boundedObservationLine(observationLine(o, rowByUrl.get(o.url) ?? null, ref !== null && knownTools.has(ref) ? ref : o.tools));
    // Only a list written in full may be referred to later (a bounded line holds none).
    if (ref !== null && Array.isArray(l.tools)) knownTools.add(ref);
    return l;
  };
  return [head, ...observations.map(line)].map((l) => JSON.stringify(l) + '\n').join('');
}

const toolsRef = (tools: string[]) => `#${createHash('sha256').update(JSON.stringify(tools)).digest('hex').slice(0, 8)}`;

function observationLine(o: ObservationRecord, row: PlanRowJson | null, tools: string[] | string | null) {
  return {
    v: HISTORY_LINE_VERSION, type: 'observation', at: o.at, name: o.name, url: o.url, verdict: o.verdict, reason: o.reason, reasons: o.reasons,
    attempts: o.attempts, httpStatus: o.httpStatus, durationMs: o.durationMs, tools, error: o.error, profile: o.profile,
    appError: o.appError, location: o.location, matrix: o.matrix,
    toolsHash: o.toolsHash,
    decision: row?.decision ?? null, dropStreak: row?.dropStreak ?? null, note: row?.note ?? null,
    ...(o.snapshotSha256 ? { snapshotSha256: o.snapshotSha256 } : {}),
    ...(row?.serverInfoChanged ? { serverInfoChanged: true } : {}),
    // Tool review, written only when it says something (most weeks it does not): the history stays small.
    ...(o.findingsSeen ? { findings: o.findings, findingsSeen: o.findingsSeen } : {}),
    ...(row && o.toolsHash !== null && (row.acceptedHash ?? null) !== o.toolsHash ? { acceptedHash: row.acceptedHash ?? null } : {}),
    ...(row?.toolChanges && (row.toolChanges.added.length || row.toolChanges.removed.length || row.toolChanges.changed.length || row.toolChanges.unlisted) ? { toolChanges: row.toolChanges } : {}),
    ...(row?.firstUse ? { firstUse: true } : {}),
    ...(row?.heldOut ? { heldOut: true } : {}),
    ...(row?.cardMismatches?.length ? { cardMismatches: row.cardMismatches } : {}),
  };
}

/** A plan row in `planJson`'s key order (so the index holds what `refresh --json` printed). */
function planRowJson(r: PlanRowJson): PlanRowJson {
  // Nested values are rebuilt from their known fields: whatever else a line carried is not read back.
  const previous = r.previous ? { verdict: r.previous.verdict, reason: r.previous.reason, at: r.previous.at } : null;
  const matrix = r.matrix ? matrixOf(r.matrix) : null;
  return {
    name: r.name, url: r.url, decision: r.decision, verdict: r.verdict, reason: r.reason, attempts: r.attempts, previous,
    changed: r.changed, dropStreak: r.dropStreak, note: r.note, httpStatus: r.httpStatus, tools: r.tools, error: r.error, durationMs: r.durationMs,
    profile: r.profile, reasons: r.reasons, appError: r.appError, location: r.location, ...(matrix ? { matrix } : {}),
    toolsHash: r.toolsHash ?? null, acceptedHash: r.acceptedHash ?? null, toolChanges: r.toolChanges ? toolChangesOf(r.toolChanges) : null, firstUse: r.firstUse ?? false, heldOut: r.heldOut ?? false,
    findings: (r.findings ?? []).map((f) => ({ tool: f.tool, field: f.field, rule: f.rule, excerpt: f.excerpt })), findingsSeen: r.findingsSeen ?? 0,
    ...(r.serverInfoChanged ? { serverInfoChanged: true } : {}), ...(r.snapshotSha256 ? { snapshotSha256: r.snapshotSha256 } : {}),
  };
}

/** How deep a history line may nest (the format needs 5 levels; card claims, recorded bounded, a few more). */
const LINE_DEPTH = 16;

const matrixOf = (m: Record<string, MatrixCell>): Record<string, MatrixCell> =>
  Object.fromEntries(Object.entries(m).map(([id, c]) => [id, { works: c.works, verdict: c.verdict, reason: c.reason, tools: c.tools }]));
const toolChangesOf = (c: ToolChanges): ToolChanges => ({ added: c.added, removed: c.removed, changed: c.changed, ...(c.unlisted ? { unlisted: true } : {}) });

type ObservationLine = ReturnType<typeof observationLine> & BoundedFields;
interface BoundedFields { bounded?: true; toolCount?: number; toolChangesCount?: { added: number; removed: number; changed: number } }
interface RunLine {
  v: number; type: 'run'; startedAt: string; finishedAt: string; catalog: string; applied: boolean; aborted: string | null;
  observations: number; summary: PlanJson['summary']; plan?: PlanRowJson[]; bounded?: true; planRows?: number;
}

// ---------------------------------------------------------------------------------------------------------
// Bounding what is written

const utf8Bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const fits = (value: unknown) => utf8Bytes(value) <= HISTORY_LIMITS.lineBytes;

/** `text` cut to `max` characters (the last one "…"), never splitting a surrogate pair. */
const clip = (text: string, max: number = HISTORY_LIMITS.textChars) => clipText(text, max);

/** A JSON value kept as it is when small, else as its JSON text, clipped. */
function clipValue(value: unknown): unknown {
  const json = JSON.stringify(value) ?? 'null';
  return json.length <= HISTORY_LIMITS.textChars / 2 ? value : clip(json, HISTORY_LIMITS.textChars / 2);
}

type Bounding = Record<string, unknown> & BoundedFields;

/** The lists a server decides the length of, as counts (`toolsHash`, the snapshot's digest, stays). */
function countLists(line: Bounding, changesKey: 'drop' | 'null'): void {
  if (Array.isArray(line.tools)) { line.toolCount = line.tools.length; line.tools = null; }
  if (Array.isArray(line.findings)) line.findings = [];
  const changes = line.toolChanges as { added: unknown[]; removed: unknown[]; changed: unknown[] } | null | undefined;
  if (changes) {
    line.toolChangesCount = { added: changes.added?.length ?? 0, removed: changes.removed?.length ?? 0, changed: changes.changed?.length ?? 0 };
    if (changesKey === 'drop') delete line.toolChanges; // an observation line: the counts say it
    else line.toolChanges = null; // a plan row keeps its key
  }
  if (line.matrix && typeof line.matrix === 'object') {
    line.matrix = Object.fromEntries(Object.entries(line.matrix as Record<string, Record<string, unknown>>).map(([id, cell]) => [id, { ...cell, tools: null }]));
  }
  if (Array.isArray(line.cardMismatches)) {
    line.cardMismatches = (line.cardMismatches as Array<{ field: string; card: unknown; live: unknown }>).slice(0, HISTORY_LIMITS.cardMismatches)
      .map((m) => ({ field: clip(String(m.field), 200), card: clipValue(m.card), live: clipValue(m.live) }));
  }
}

const FREE_TEXT = ['error', 'appError', 'location', 'name', 'note'] as const;

function clipFreeText(line: Bounding): void {
  for (const k of FREE_TEXT) if (typeof line[k] === 'string') line[k] = clip(line[k] as string);
}

/** The line itself when it fits; else bounded (see the header), its extra fields at the end. */
function boundedObservationLine(line: ObservationLine): ObservationLine {
  if (fits(line)) return line;
  const b: Bounding = { ...line };
  countLists(b, 'drop');
  const finish = (): ObservationLine => {
    const { toolCount, toolChangesCount, bounded: _, ...rest } = b;
    return { ...rest, bounded: true, ...(toolCount === undefined ? {} : { toolCount }), ...(toolChangesCount ? { toolChangesCount } : {}) } as ObservationLine;
  };
  if (fits(finish())) return finish();
  clipFreeText(b);
  if (fits(finish())) return finish();
  // What is left that is not of a fixed size: the matrix and card checks go, then the address is clipped.
  b.matrix = null;
  delete b.cardMismatches;
  b.url = clip(String(b.url));
  b.profile = clip(String(b.profile), 100);
  return finish();
}

/** A plan row of an aborted run, bounded like an observation line. */
function boundedPlanRow(row: PlanRowJson): PlanRowJson {
  const b: Bounding = { ...row };
  countLists(b, 'null');
  clipFreeText(b);
  const { toolCount, toolChangesCount, bounded: _, ...rest } = b;
  return { ...rest, bounded: true, ...(toolCount === undefined ? {} : { toolCount }), ...(toolChangesCount ? { toolChangesCount } : {}) } as unknown as PlanRowJson;
}

function boundedRunLine<T extends { plan?: PlanRowJson[] }>(head: T): T {
  if (!head.plan) return head;
  // Row by row: the whole plan of a large catalog with long lists may be more than one string can hold.
  const overhead = utf8Bytes({ ...head, plan: [], bounded: true, planRows: head.plan.length }) + 16;
  const sizes = head.plan.map(utf8Bytes);
  if (utf8Bytes({ ...head, plan: [] }) + sizes.reduce((a, n) => a + n + 1, 0) <= HISTORY_LIMITS.lineBytes) return head;
  const plan = head.plan.map((r, i) => (sizes[i]! > 512 ? boundedPlanRow(r) : r));
  const bytes = plan.map(utf8Bytes);
  const total = bytes.reduce((a, n) => a + n + 1, 0);
  if (overhead + total <= HISTORY_LIMITS.lineBytes) return { ...head, plan, bounded: true };
  // Only the rows that fit (the summary still counts them all): an aborted run's rows never decide anything.
  let used = 0;
  let keep = 0;
  while (keep < plan.length && overhead + used + bytes[keep]! + 1 <= HISTORY_LIMITS.lineBytes) used += bytes[keep++]! + 1;
  return { ...head, plan: plan.slice(0, keep), bounded: true, planRows: plan.length };
}

// ---------------------------------------------------------------------------------------------------------
// Checking what is read: a small table of the line format

/** Where in a line a value is wrong and what was expected there (never the value itself: it is untrusted). */
interface Fault { at: string; expected: string }
type Check = (v: unknown) => Fault | null;

const VERDICTS = ['live', 'review', 'drop', 'failed'] as const satisfies readonly VerdictName[];
const DECISIONS = ['keep', 'keep-failed', 'review', 'drop'] as const satisfies readonly Decision[];
// Each list names every member of its type (a new verdict or decision must be added here).
const everyVerdict: Record<VerdictName, true> = { live: true, review: true, drop: true, failed: true };
const everyDecision: Record<Decision, true> = { keep: true, 'keep-failed': true, review: true, drop: true };
void everyVerdict; void everyDecision;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const fault = (expected: string): Fault => ({ at: '', expected });
const under = (at: string, f: Fault | null): Fault | null => (f ? { at: f.at ? (f.at.startsWith('[') ? `${at}${f.at}` : `${at}.${f.at}`) : at, expected: f.expected } : null);

const is = (test: (v: unknown) => boolean, expected: string): Check => (v) => (test(v) ? null : fault(expected));
const string = is((v) => typeof v === 'string', 'a string');
const boolean = is((v) => typeof v === 'boolean', 'true or false');
const yes = is((v) => v === true, 'true');
const count = is((v) => Number.isSafeInteger(v) && (v as number) >= 0, 'a whole number >= 0');
const integer = is((v) => Number.isSafeInteger(v), 'a whole number');
const duration = is((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0, 'a number >= 0');
const time = is((v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(v) && Number.isFinite(Date.parse(v)), 'an ISO time (UTC)');
const snapshotHash = is((v) => typeof v === 'string' && /^[0-9a-f]{16}$/.test(v), 'a snapshot hash (16 hex digits)');
const sha256 = is((v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v), 'a SHA-256 (64 hex digits)');
const oneOf = (words: readonly string[], expected: string): Check => is((v) => typeof v === 'string' && words.includes(v), expected);
const verdict = oneOf(VERDICTS, `one of ${VERDICTS.join(', ')}`);
const decision = oneOf(DECISIONS, `one of ${DECISIONS.join(', ')}`);
const reason: Check = is((v) => typeof v === 'string' && Object.hasOwn(REASON_TEXT, v), 'a known reason');
const anything: Check = () => null;
const nullable = (check: Check): Check => (v) => {
  if (v === null) return null;
  const f = check(v);
  return f && !f.at ? fault(`${f.expected}, or null`) : f;
};
const list = (check: Check): Check => (v) => {
  if (!Array.isArray(v)) return fault('a list');
  for (let i = 0; i < v.length; i++) { const f = under(`[${i}]`, check(v[i])); if (f) return f; }
  return null;
};
/** Every value of an object (its keys are untrusted text: a fault names them `*`). */
const record = (check: Check): Check => (v) => {
  if (!isObject(v)) return fault('an object');
  for (const value of Object.values(v)) { const f = under('*', check(value)); if (f) return f; }
  return null;
};
/** An object with these fields (`optional` may be missing; other fields are ignored, and never read). */
function shape(required: Record<string, Check>, optional: Record<string, Check> = {}): Check {
  return (v) => {
    if (!isObject(v)) return fault('an object');
    for (const [k, check] of Object.entries(required)) {
      if (!Object.hasOwn(v, k)) return { at: k, expected: 'present' };
      const f = under(k, check(v[k]));
      if (f) return f;
    }
    for (const [k, check] of Object.entries(optional)) {
      if (!Object.hasOwn(v, k) || v[k] === undefined) continue;
      const f = under(k, check(v[k]));
      if (f) return f;
    }
    return null;
  };
}

const strings = list(string);
/** A tool list, or a reference to one written in full in the same file. */
const tools: Check = (v) => (v === null || (typeof v === 'string' && /^#[0-9a-f]{8}$/.test(v)) || strings(v) === null ? null : fault('a list of strings, a "#<8 hex>" reference, or null'));
const matrixCell = shape({ works: boolean, verdict, reason, tools: nullable(strings) });
const finding = shape({ tool: string, field: string, rule: string, excerpt: string });
const toolChanges = shape({ added: strings, removed: strings, changed: strings }, { unlisted: boolean });
const changeCounts = shape({ added: count, removed: count, changed: count });
const cardMismatch = shape({ field: string, card: anything, live: anything });
const summary = shape({ total: count, keep: count, keepFailed: count, review: count, drop: count, changed: count });

/** The fields a probe outcome has, wherever it is written (an observation line, a plan row). */
const OUTCOME = {
  name: string, url: string, verdict, reason, attempts: count, httpStatus: nullable(integer), durationMs: duration,
  tools, error: nullable(string), profile: string, reasons: list(reason), appError: nullable(string), location: nullable(string),
};
/** Fields added later (older lines may lack them), and those only a bounded line has. */
const LATER = {
  toolsHash: nullable(snapshotHash), acceptedHash: nullable(snapshotHash), findings: list(finding), findingsSeen: count,
  firstUse: boolean, heldOut: boolean, cardMismatches: nullable(list(cardMismatch)),
  snapshotSha256: nullable(sha256), serverInfoChanged: boolean,
  bounded: yes, toolCount: count, toolChangesCount: changeCounts,
};

const observationLineShape = shape(
  { at: time, ...OUTCOME, matrix: nullable(record(matrixCell)), decision: nullable(decision), dropStreak: nullable(count), note: nullable(string) },
  { ...LATER, toolChanges },
);
const planRowShape = shape(
  { ...OUTCOME, decision, previous: nullable(shape({ verdict, reason, at: time })), changed: boolean, dropStreak: count, note: nullable(string) },
  { ...LATER, matrix: record(matrixCell), toolChanges: nullable(toolChanges) },
);
const runLineShape = shape(
  { startedAt: time, finishedAt: time, catalog: string, applied: boolean, aborted: nullable(string), observations: count, summary },
  { plan: list(planRowShape), bounded: yes, planRows: count },
);

const describe = (f: Fault) => `${f.at ? `${f.at}: ` : ''}expected ${f.expected}`;

/** Why a parsed run line does not fit the format, or null when it does. */
export function checkRunLine(value: unknown): string | null {
  if (nestsDeeperThan(value, LINE_DEPTH)) return `nested deeper than ${LINE_DEPTH} levels`;
  const f = runLineShape(value);
  return f ? describe(f) : null;
}

/** Why a parsed observation line does not fit the format, or null when it does. */
export function checkObservationLine(value: unknown): string | null {
  if (nestsDeeperThan(value, LINE_DEPTH)) return `nested deeper than ${LINE_DEPTH} levels`;
  const f = observationLineShape(value);
  return f ? describe(f) : null;
}

// ---------------------------------------------------------------------------------------------------------
// Reading

export interface ParsedHistory {
  runs: HistoryRun[];
  /** Bytes up to the end of the last whole run (or other whole line): what an append may keep. */
  wholeBytes: number;
  /** Lines skipped: unreadable, of a newer version, of a bad or incomplete run, or not of the format. */
  skipped: number;
  /** The tool lists written in full in this file, by reference. */
  tools: Map<string, string[]>;
  /** Each line (or run) that was skipped, and why. A torn last line is not one: it is not history yet. */
  problems: LineProblem[];
}

/** The type and time of a line too long to parse, from its first bytes (the writer's fixed key order). */
function peek(raw: string): { type: 'run' | 'observation'; at: string } | null {
  const m = /^\{"v":1,"type":"(run|observation)","(?:startedAt|at)":"([^"\\]{1,64})"/.exec(raw.slice(0, 200));
  return m ? { type: m[1] as 'run' | 'observation', at: m[2]! } : null;
}

interface Pending {
  /** The run line, or null when it was bad: its lines are then skipped. */
  line: RunLine | null;
  startLine: number;
  /** The run's time (observation lines carry it), or null when even that was unreadable. */
  startedAt: string | null;
  /** Observation lines the run line announced, or null when unreadable (a bad run then ends at the next line of another run). */
  expected: number | null;
  seen: number;
  lines: number;
  observations: ObservationRecord[];
  rows: PlanRowJson[];
  tools: string[][];
}

/** Parses one month file. Never throws: what it cannot read or does not fit the format it skips, counts and names. */
export function parseHistory(text: string): ParsedHistory {
  const runs: HistoryRun[] = [];
  const tools = new Map<string, string[]>();
  const problems: LineProblem[] = [];
  let pending = null as Pending | null; // (set in the closures below too)
  let offset = 0;
  let lineNo = 0;
  let wholeBytes = 0;
  let skipped = 0;
  const finish = (p: Pending) => {
    pending = null;
    if (!p.line) { skipped += p.lines; wholeBytes = offset; return; }
    for (const list of p.tools) tools.set(toolsRef(list), list); // only a whole run's lists count
    const plan = p.line.plan ? p.line.plan.map(planRowJson) : p.rows;
    runs.push({
      run: { startedAt: p.line.startedAt, finishedAt: p.line.finishedAt, catalog: p.line.catalog, applied: p.line.applied, plan: { plan, summary: summaryOf(p.line.summary), aborted: p.line.aborted } },
      observations: p.observations,
    });
    wholeBytes = offset;
  };
  /** A run that never got all its lines (a crash mid-append, or lines lost in a merge). */
  const unfinished = (p: Pending) => {
    if (p.line) problems.push({ line: p.startLine, problem: `run incomplete: ${p.seen} of ${p.line.observations} observation lines (the run is skipped)` });
    skipped += p.lines;
    pending = null;
  };
  const startRun = (line: RunLine | null, startedAt: string | null, expected: number | null) => {
    const p: Pending = { line, startLine: lineNo, startedAt, expected, seen: 0, lines: 1, observations: [], rows: [], tools: [] };
    pending = p;
    if (line === null) wholeBytes = offset; // a bad run's lines are whole lines: an append never cuts them
    if (expected === 0) finish(p);
  };
  /** An observation line of the pending run: counted towards its N whether it is kept or not. */
  const observe = (p: Pending, o: ObservationLine | null, problem: string | null) => {
    p.lines++;
    p.seen++;
    if (!p.line) wholeBytes = offset;
    else if (problem !== null || o === null) {
      problems.push({ line: lineNo, problem: `observation line: ${problem} (the observation is skipped)` });
      skipped++;
    } else keep(p, o);
    if (p.expected !== null && p.seen >= p.expected) finish(p);
  };
  const belongs = (p: Pending | null, at: unknown): p is Pending => p !== null && (p.startedAt === null ? p.line === null : at === p.startedAt);
  while (offset < text.length) {
    const end = text.indexOf('\n', offset);
    if (end < 0) { skipped++; break; } // a partial last line (a crash mid-append): not history yet
    const raw = text.slice(offset, end);
    offset = end + 1;
    lineNo++;
    const stray = (problem: string) => {
      problems.push({ line: lineNo, problem });
      skipped++;
      if (!pending) wholeBytes = offset;
    };
    if (raw.length * 3 > HISTORY_LIMITS.readLineBytes && Buffer.byteLength(raw) > HISTORY_LIMITS.readLineBytes) {
      const tooLong = `${Buffer.byteLength(raw)} bytes, more than the ${HISTORY_LIMITS.readLineBytes} a line may have (not read)`;
      const head = peek(raw);
      if (head?.type === 'observation' && belongs(pending, head.at)) observe(pending, null, tooLong);
      else if (head?.type === 'run') {
        if (pending) unfinished(pending);
        problems.push({ line: lineNo, problem: `run line: ${tooLong} (its run is skipped)` });
        startRun(null, head.at, null);
      } else stray(`line: ${tooLong}`);
      continue;
    }
    if (!raw.trim()) { if (!pending) wholeBytes = offset; continue; }
    let value: unknown;
    try { value = JSON.parse(raw); } catch { value = undefined; }
    if (!isObject(value)) { stray(value === undefined ? 'not JSON' : 'not a history line (not a JSON object)'); continue; }
    if (value.v !== HISTORY_LINE_VERSION) {
      stray(typeof value.v === 'number' && value.v > HISTORY_LINE_VERSION ? `a line of version ${Math.floor(value.v)}, newer than this onetap reads (${HISTORY_LINE_VERSION})` : 'not a history line (no "v":1)');
      continue;
    }
    if (value.type === 'run') {
      if (pending) unfinished(pending);
      const problem = checkRunLine(value);
      if (problem === null) startRun(value as unknown as RunLine, value.startedAt as string, value.observations as number);
      else {
        problems.push({ line: lineNo, problem: `run line: ${problem} (its run is skipped)` });
        startRun(null, typeof value.startedAt === 'string' ? value.startedAt : null, Number.isSafeInteger(value.observations) && (value.observations as number) >= 0 ? value.observations as number : null);
      }
    } else if (value.type === 'observation' && belongs(pending, value.at)) {
      observe(pending, value as unknown as ObservationLine, pending.line ? checkObservationLine(value) : null);
    } else {
      // A bad run of an unknown count ends at the first line that is not its own.
      const p = pending as Pending | null;
      if (p && p.line === null && p.expected === null) finish(p);
      stray(value.type === 'observation' ? 'observation line outside a run (no run line with its time before it)' : 'not a history line (its "type" is neither run nor observation)');
    }
  }
  if (pending) {
    const p = pending as Pending;
    if (p.line) unfinished(p);
    else { skipped += p.lines; pending = null; }
  }
  // References resolve anywhere in the file (a merge may put a run before the one that wrote the list in full).
  const resolveTools = (t: string[] | string | null) => (typeof t === 'string' ? tools.get(t) ?? null : t);
  for (const r of runs) {
    for (const o of r.observations) o.tools = resolveTools(o.tools);
    for (const row of r.run.plan.plan) row.tools = resolveTools(row.tools);
  }
  return { runs, wholeBytes: Buffer.byteLength(text.slice(0, wholeBytes)), skipped, tools, problems };
}

const summaryOf = (s: PlanJson['summary']): PlanJson['summary'] => ({ total: s.total, keep: s.keep, keepFailed: s.keepFailed, review: s.review, drop: s.drop, changed: s.changed });

/** A checked observation line into the run's records (only the known fields: anything else on the line is dropped). */
function keep(p: Pending, o: ObservationLine): void {
  if (Array.isArray(o.tools) && o.tools.length) p.tools.push(o.tools);
  const tools = o.tools as string[] | null;
  const findings = (o.findings ?? []).map((f) => ({ tool: f.tool, field: f.field, rule: f.rule, excerpt: f.excerpt }));
  const matrix = o.matrix ? matrixOf(o.matrix) : null;
  p.observations.push({
    url: o.url, name: o.name, at: o.at, verdict: o.verdict, reason: o.reason, attempts: o.attempts, httpStatus: o.httpStatus, durationMs: o.durationMs,
    tools, error: o.error, profile: o.profile, reasons: o.reasons, appError: o.appError, location: o.location, matrix,
    toolsHash: o.toolsHash ?? null, findings, findingsSeen: o.findingsSeen ?? 0, ...(o.snapshotSha256 ? { snapshotSha256: o.snapshotSha256 } : {}),
  });
  p.rows.push(planRowJson({
    name: o.name, url: o.url, decision: o.decision as Decision, verdict: o.verdict, reason: o.reason, attempts: o.attempts, previous: null,
    changed: true, dropStreak: o.dropStreak ?? 0, note: o.note, httpStatus: o.httpStatus, tools, error: o.error,
    durationMs: o.durationMs, profile: o.profile, reasons: o.reasons, appError: o.appError, location: o.location, ...(matrix ? { matrix } : {}),
    toolsHash: o.toolsHash ?? null, acceptedHash: 'acceptedHash' in o ? o.acceptedHash ?? null : o.toolsHash ?? null, toolChanges: o.toolChanges ?? null, firstUse: o.firstUse ?? false, heldOut: o.heldOut ?? false,
    findings, findingsSeen: o.findingsSeen ?? 0, cardMismatches: o.cardMismatches ?? null,
    ...(o.serverInfoChanged ? { serverInfoChanged: true } : {}), ...(o.snapshotSha256 ? { snapshotSha256: o.snapshotSha256 } : {}),
  }));
}

export interface HistoryFile { file: string; bytes: number; sha256: string; text: string }

/** The month files of a history directory, sorted, each cut to its last newline (a partial line is not yet history). */
export function readHistoryFiles(dir: string): HistoryFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => MONTH_FILE.test(f)).sort().map((file) => {
    const buf = readFileSync(join(dir, file));
    const whole = buf.subarray(0, buf.lastIndexOf(0x0a) + 1);
    return { file, bytes: whole.length, sha256: createHash('sha256').update(whole).digest('hex'), text: whole.toString('utf8') };
  });
}

/** Every whole run of a history directory, oldest first (by start time; file and line order break ties). */
export function readHistory(dir: string, files = readHistoryFiles(dir)): HistoryRun[] {
  return readHistoryChecked(dir, files).runs;
}

/** The problems of many lines as the reports give them: the count and the first few, in file and line order. */
export function summarizeProblems(problems: readonly HistoryProblem[]): HistoryProblems {
  return { count: problems.length, first: problems.slice(0, HISTORY_LIMITS.problemsListed).map(({ file, line, problem }) => ({ file, line, problem })) };
}

/**
 * What `readHistory` reads, and the lines it skipped (`file` as `history/<month file>`), never a crash: every
 * run and observation in `runs` fits the line format.
 */
export function readHistoryChecked(dir: string, files = readHistoryFiles(dir)): { runs: HistoryRun[]; problems: HistoryProblems } {
  const problems: HistoryProblem[] = [];
  const parsed = files.flatMap((f) => {
    const p = parseHistory(f.text);
    for (const x of p.problems) problems.push({ file: `history/${f.file}`, line: x.line, problem: x.problem });
    return p.runs;
  });
  const runs = parsed
    .map((r, i) => ({ r, i })).sort((a, b) => (a.r.run.startedAt < b.r.run.startedAt ? -1 : a.r.run.startedAt > b.r.run.startedAt ? 1 : a.i - b.i)).map(({ r }) => r);
  // A plan row's `previous` is the URL's last observation before the run, and `changed` follows from it.
  const last = new Map<string, { verdict: VerdictName; reason: Reason; at: string }>();
  for (const r of runs) {
    if (r.run.plan.aborted) continue;
    for (const row of r.run.plan.plan) {
      const previous = last.get(row.url) ?? null;
      row.previous = previous;
      row.changed = !previous || previous.verdict !== row.verdict || previous.reason !== row.reason;
    }
    for (const o of r.observations) last.set(o.url, { verdict: o.verdict, reason: o.reason, at: o.at });
  }
  return { runs, problems: summarizeProblems(problems) };
}

/** The problems of a catalog's text history, read from the files (no index): for a command that has no store open. */
export function readHistoryProblems(catalogPath: string): HistoryProblems {
  return readHistoryChecked(historyDir(catalogPath)).problems;
}

/**
 * One line for a terminal or a page: "3 history lines skipped (history/2026-11.jsonl:3: …; …)", or null
 * when there was nothing to skip. Made of file names, line numbers and this module's own words only.
 */
export function describeHistoryProblems(p: HistoryProblems, listed = 3): string | null {
  if (!p.count) return null;
  const where = p.first.slice(0, listed).map((x) => `${x.file}:${x.line}: ${x.problem}`).join('; ');
  return `${p.count} history line${p.count === 1 ? '' : 's'} skipped (${p.count > listed ? 'first: ' : ''}${where}${p.count > listed ? '; …' : ''})`;
}

/**
 * Appends runs to their month files: one locked write per file, then fsync. An incomplete tail left by a
 * crash is cut off first, so it can never run into the new lines.
 */
export async function appendRuns(dir: string, runs: HistoryRun[]): Promise<string[]> {
  const byFile = new Map<string, HistoryRun[]>();
  for (const r of runs) byFile.set(monthFileName(r.run.startedAt), [...(byFile.get(monthFileName(r.run.startedAt)) ?? []), r]);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [file, fileRuns] of byFile) {
    const path = join(dir, file);
    // The lock is a dot-file: never a month file, so never history.
    const release = await acquireLock(join(dir, `.${file}`), 10_000);
    try {
      const fresh = !existsSync(path);
      const known = new Set<string>();
      if (!fresh) {
        const current = readFileSync(path, 'utf8');
        const parsed = parseHistory(current);
        if (parsed.wholeBytes < Buffer.byteLength(current)) await truncate(path, parsed.wholeBytes);
        for (const ref of parsed.tools.keys()) known.add(ref);
      }
      const text = fileRuns.map((r) => runLines(r, known)).join('');
      const handle = await open(path, 'a', 0o644);
      try {
        await handle.write(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (fresh) await syncDir(dir);
      written.push(path);
    } finally {
      await release();
    }
  }
  return written;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  try { await handle?.sync(); } catch { /* not every platform syncs directories */ } finally { await handle?.close(); }
}
