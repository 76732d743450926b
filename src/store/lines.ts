/**
 * The text history's line format: what recorded runs observed, as JSON lines in git next to the catalog
 * (`<catalog dir>/history/YYYY-MM.jsonl`, one file per UTC month of the run). These files are the memory that travels
 * with the list; the index (`./text-index.ts`) is built from them in memory.
 *
 * Version 2 (written since 0.2.0; version-1 lines of 0.1 are read too, see `./legacy.ts`), one JSON object a line:
 *   {"v":2,"type":"run","id","startedAt","finishedAt","catalog","applied","aborted","observations":N,"summary",
 *    "warnings"}
 *   then N × {"v":2,"type":"observation","run":<the run's id>,…every field of the plan row (`src/model/plan.ts`)
 *   but `previous` and `changed`, its evidence included}
 * `tools` is the list, or `"#<16 hex>"` (the first 16 hex digits of the SHA-256 of the list's JSON; 0.1 wrote 8) when
 * the same list is written in full elsewhere in the same month file: tool lists rarely change, and they are most of the
 * bytes. Each month file stays self-contained. A row's `previous` and `changed` are not written: they follow from the
 * runs before it and are recomputed when the index is built. An aborted run (outage guard) is one run line with
 * `"aborted":"<why>"`, `"observations":0` and its plan rows inline (`"plan":[…]`): no observation, so it never counts
 * towards streaks or bars. A run is whole when its N observation lines follow it; anything else (a crash mid-append) is
 * ignored.
 *
 * Bounded: a line is at most `HISTORY_LIMITS.lineBytes` (128 KiB, UTF-8), whatever a server answered. An observation
 * line that would be longer is written with `"bounded":true` at its end: `tools` is null (`toolCount` still says how
 * many), `findings` is `[]` (`findingsSeen` still counts them), `toolChanges` becomes `null` with
 * `"toolChangesCount":{"added":n,"removed":n,"changed":n}`, matrix cells lose their tool lists, card mismatches keep 20
 * with their values clipped; `toolsHash` (the snapshot's digest, under `history/snapshots/`) stays. If that is still
 * too long, the free text (error, appError, location, name, note) is clipped to `HISTORY_LIMITS.textChars` characters,
 * then the evidence loses the runs `--matrix` added, then the evidence goes whole (`"evidence":null`: such a row cannot
 * be judged again; its evidence is never altered). A run's warnings are always the first 20, clipped. An aborted run
 * line bounds each plan row the same way and, if it must, keeps only the rows that fit (`"planRows":<all rows>`).
 *
 * Untrusted: the history arrives through pull requests, so every line is validated against the record's schema when it
 * is read: a bad observation line is skipped alone (it still counts towards its run's N), a bad run line skips its
 * whole run, a line longer than `HISTORY_LIMITS.readLineBytes` is not parsed, a run whose id was recorded before (a run
 * id is recorded once) is ignored after its first appearance. Each is a problem, never a crash, and the index only ever
 * holds what passed.
 */
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { planRowSchema, runRecordSchema, type PlanRow, type RecordedRun, type RunRecord } from '../model/plan.js';
import { check } from '../model/validate.js';
import { RECORD_VERSION } from '../model/limits.js';
import { clipText } from '../text/clip.js';
import { isObject, nestsDeeperThan } from '../util/json.js';
import { rowOfV1, runOfV1, toolsOrRef, v1ObservationLine, v1RunLine } from './legacy.js';

/** The version lines are written in: the record's (`RECORD_VERSION`); 1 is still read. */
export const HISTORY_LINE_VERSION = RECORD_VERSION;
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
  /** Excluded tools kept on a bounded line, and a run's warnings kept on any (each clipped). */
  listed: 20,
  /** Problems kept one by one (`count` says how many there were in all). */
  problemsListed: 10,
} as const;

/** How deep a history line may nest (the record needs 10 levels; card claims, recorded bounded, a few more). */
const LINE_DEPTH = 16;

export const historyDir = (catalogPath: string) => join(dirname(catalogPath), 'history');
export const monthFileName = (iso: string) => `${iso.slice(0, 7)}.jsonl`;

/** A line of a month file that was skipped, and why (`line`: 1-based). */
export interface LineProblem {
  line: number;
  problem: string;
}

// ---------------------------------------------------------------------------------------------------------
// The lines as schemas: the record's, with what only a line carries

const lineHead = { v: z.literal(HISTORY_LINE_VERSION), type: z.string() };

const runLine = runRecordSchema.extend({
  ...lineHead,
  observations: z.number().int().min(0),
  plan: z
    .array(planRowSchema.omit({ previous: true, changed: true, run: true }).extend({ tools: toolsOrRef }))
    .optional(),
  bounded: z.literal(true).optional(),
  planRows: z.number().int().min(0).optional(),
});

const observationLine = planRowSchema
  .omit({ previous: true, changed: true })
  .extend({ ...lineHead, run: z.string(), tools: toolsOrRef });

type ObservationLine = z.infer<typeof observationLine>;

// ---------------------------------------------------------------------------------------------------------
// Writing

/** A tool list's reference: `#` and 16 hex digits of the SHA-256 of its JSON (0.1 wrote 8, which are still read). */
const toolsDigest = (tools: readonly string[]) => createHash('sha256').update(JSON.stringify(tools)).digest('hex');
/** The reference a line writes for a tool list written in full elsewhere in its month. */
export const toolsRef = (tools: readonly string[]) => `#${toolsDigest(tools).slice(0, 16)}`;
const sameList = (a: readonly string[] | undefined, b: readonly string[]) =>
  !!a && a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The fields of a row's line, in the record's order: `previous` and `changed` are left out (they are recomputed when
 * read).
 */
const ROW_FIELDS = Object.keys(planRowSchema.shape).filter(
  (k) => k !== 'previous' && k !== 'changed' && k !== 'run',
) as Array<keyof PlanRow>;

/** A row as a line's fields, keys in the record's order, `tools` as given (the list or a reference to it). */
function rowFields(r: PlanRow, tools: string[] | string | null): Record<string, unknown> {
  const line: Record<string, unknown> = {};
  for (const k of ROW_FIELDS) line[k] = k === 'tools' ? tools : r[k];
  return line;
}

/** The lines of one run, each ending in a newline, keys in a fixed order, each at most `HISTORY_LIMITS.lineBytes`. */
export function runLines(recorded: RecordedRun, knownTools: Map<string, string[]> = new Map()): string {
  return runLineList(recorded, knownTools)
    .map((l) => l + '\n')
    .join('');
}

/**
 * The lines of one run without their newlines: the run line, then its observation lines. `knownTools` holds the
 * lists written in full before them (in the same month file, or a store's same month): a row whose list is there
 * refers to it; a list written in full here is added to it.
 */
export function runLineList({ run, rows }: RecordedRun, knownTools: Map<string, string[]> = new Map()): string[] {
  const aborted = run.aborted;
  const head = {
    v: HISTORY_LINE_VERSION,
    type: 'run',
    id: run.id,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    catalog: basename(run.catalog),
    applied: run.applied,
    aborted,
    observations: aborted ? 0 : rows.length,
    summary: run.summary,
    warnings: boundedWarnings(run.warnings),
    ...(run.quorum !== undefined ? { quorum: run.quorum } : {}),
    ...(aborted ? { plan: rows.map((r) => rowFields(r, r.tools)) } : {}),
  };
  if (aborted) return [JSON.stringify(boundedRunLine(head))];
  const line = (r: PlanRow) => {
    const ref = r.tools?.length ? toolsRef(r.tools) : null;
    // A list is referred to only when the one written under that reference is the same list, name for name.
    const fields = rowFields(r, ref !== null && sameList(knownTools.get(ref), r.tools!) ? ref : r.tools);
    const l = boundedObservationLine({ v: HISTORY_LINE_VERSION, type: 'observation', run: run.id, ...fields });
    // Only a list written in full may be referred to later (a bounded line holds none).
    if (ref !== null && Array.isArray(l.tools) && !knownTools.has(ref)) knownTools.set(ref, r.tools!);
    return l;
  };
  return [head, ...rows.map(line)].map((l) => JSON.stringify(l));
}

// ---------------------------------------------------------------------------------------------------------
// Bounding what is written

type Line = Record<string, unknown>;

const utf8Bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const fits = (value: unknown) => utf8Bytes(value) <= HISTORY_LIMITS.lineBytes;

/** A JSON value kept as it is when small, else as its JSON text, clipped. */
function clipValue(value: unknown): unknown {
  const json = JSON.stringify(value) ?? 'null';
  return json.length <= HISTORY_LIMITS.textChars / 2 ? value : clipText(json, HISTORY_LIMITS.textChars / 2);
}

/** The lists a server decides the length of, as counts (`toolsHash`, the snapshot's digest, stays). */
function countLists(line: Line): void {
  if (Array.isArray(line.tools)) line.tools = null;
  if (Array.isArray(line.findings)) line.findings = [];
  const changes = line.toolChanges as { added: unknown[]; removed: unknown[]; changed: unknown[] } | null | undefined;
  if (changes) {
    line.toolChangesCount = {
      added: changes.added.length,
      removed: changes.removed.length,
      changed: changes.changed.length,
    };
    line.toolChanges = null;
  }
  if (line.matrix && typeof line.matrix === 'object') {
    line.matrix = Object.fromEntries(
      Object.entries(line.matrix as Record<string, Record<string, unknown>>).map(([id, cell]) => [
        id,
        { ...cell, tools: null },
      ]),
    );
  }
  if (line.diagnosis && typeof line.diagnosis === 'object')
    line.diagnosis = { ...(line.diagnosis as Record<string, unknown>), tools: null };
  if (Array.isArray(line.excludedTools) && line.excludedTools.length > HISTORY_LIMITS.listed)
    line.excludedTools = line.excludedTools.slice(0, HISTORY_LIMITS.listed);
  if (Array.isArray(line.cardMismatches)) {
    line.cardMismatches = (line.cardMismatches as Array<{ field: string; card: unknown; live: unknown }>)
      .slice(0, HISTORY_LIMITS.cardMismatches)
      .map((m) => ({ field: clipText(String(m.field), 200), card: clipValue(m.card), live: clipValue(m.live) }));
  }
}

const FREE_TEXT = ['error', 'appError', 'location', 'name', 'note'] as const;

function clipFreeText(line: Line): void {
  for (const k of FREE_TEXT)
    if (typeof line[k] === 'string') line[k] = clipText(line[k] as string, HISTORY_LIMITS.textChars);
}

type Evidence = NonNullable<PlanRow['evidence']>;

/**
 * The evidence smaller each time, never altered: first without the runs `--matrix` added (the verdict never reads
 * them), then none at all (`rejudge` says "no evidence": a clipped reading could judge otherwise).
 */
const EVIDENCE_STEPS: Array<(e: Evidence) => Evidence | null> = [(e) => ({ ...e, matrix: null }), () => null];

/** A run's warnings as a line keeps them: the first few, each clipped, and how many more there were. */
function boundedWarnings(warnings: readonly string[]): string[] {
  const kept = warnings.slice(0, HISTORY_LIMITS.listed).map((w) => clipText(w, HISTORY_LIMITS.textChars));
  return warnings.length > kept.length ? [...kept, `… and ${warnings.length - kept.length} more warnings`] : kept;
}

/** The line itself when it fits; else bounded (see the header), its extra fields at the end. */
export function boundedObservationLine(line: Line): Line {
  if (fits(line)) return line;
  const b: Line = { ...line };
  countLists(b);
  const finish = (): Line => {
    const { toolChangesCount, bounded: _, ...rest } = b;
    return { ...rest, bounded: true, ...(toolChangesCount ? { toolChangesCount } : {}) };
  };
  if (fits(finish())) return finish();
  clipFreeText(b);
  for (const smaller of EVIDENCE_STEPS) {
    if (fits(finish())) return finish();
    b.evidence = b.evidence ? smaller(b.evidence as Evidence) : null;
  }
  if (fits(finish())) return finish();
  // What is left that is not of a fixed size: the matrix and card checks go, then the address is clipped.
  b.matrix = null;
  b.cardMismatches = null;
  b.diagnosis = null;
  b.url = clipText(String(b.url), HISTORY_LIMITS.textChars);
  b.profile = clipText(String(b.profile), 100);
  return finish();
}

/** A plan row of an aborted run, bounded like an observation line. */
function boundedPlanRow(row: Line): Line {
  const b: Line = { ...row };
  countLists(b);
  clipFreeText(b);
  b.evidence = null;
  const { toolChangesCount, bounded: _, ...rest } = b;
  return { ...rest, bounded: true, ...(toolChangesCount ? { toolChangesCount } : {}) };
}

function boundedRunLine<T extends { plan?: Line[] }>(head: T): T {
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
  while (keep < plan.length && overhead + used + bytes[keep]! + 1 <= HISTORY_LIMITS.lineBytes)
    used += bytes[keep++]! + 1;
  return { ...head, plan: plan.slice(0, keep), bounded: true, planRows: plan.length };
}

// ---------------------------------------------------------------------------------------------------------
// Reading

/** A run as parsed from a month file, with where each of its rows' lines lies (bytes), for reading it again. */
export interface ParsedRun extends RecordedRun {
  /**
   * Per row, the bytes of its line in the file ([start, end), the newline not included; an aborted run's rows share the
   * run line's).
   */
  spans: Array<[number, number]>;
  /** 1-based line of the run line. */
  line: number;
  /** The run's bytes in the file: its run line and its observation lines ([start, end)). */
  bytes: [number, number];
}

export interface ParsedHistory {
  runs: ParsedRun[];
  /** Bytes up to the end of the last whole run (or other whole line): what an append may keep. */
  wholeBytes: number;
  /** Lines skipped: unreadable, of a newer version, of a bad or incomplete run, or not of the format. */
  skipped: number;
  /** The tool lists written in full in this file, by reference. */
  tools: Map<string, string[]>;
  /** Each line (or run) that was skipped, and why. A torn last line is not one: it is not history yet. */
  problems: LineProblem[];
}

/** The type, version and run of a line too long to parse, from its first bytes (the writer's fixed key order). */
function peek(raw: string): { type: 'run' | 'observation'; key: string } | null {
  const v2 = /^\{"v":2,"type":"(run|observation)","(?:id|run)":"((?:[^"\\]|\\.){1,200})"/.exec(raw.slice(0, 400));
  if (v2) return { type: v2[1] as 'run' | 'observation', key: JSON.parse(`"${v2[2]}"`) as string };
  const v1 = /^\{"v":1,"type":"(run|observation)","(?:startedAt|at)":"([^"\\]{1,64})"/.exec(raw.slice(0, 200));
  return v1 ? { type: v1[1] as 'run' | 'observation', key: v1[2]! } : null;
}

interface Pending {
  /** The run, or null when its line was bad: its lines are then skipped. */
  run: RunRecord | null;
  version: number;
  startLine: number;
  start: number;
  /**
   * What the run's observation lines carry to say they are its own (v2: the run's id; v1: its start time), or null when
   * unreadable.
   */
  key: string | null;
  /**
   * Observation lines the run line announced, or null when unreadable (a bad run then ends at the next line of another
   * run).
   */
  expected: number | null;
  seen: number;
  lines: number;
  rows: PlanRow[];
  spans: Array<[number, number]>;
  tools: string[][];
  /** An aborted run's plan rows, as read from its line (tools not resolved yet). */
  plan: Array<{ row: PlanRow; tools: string[] | string | null }> | null;
}

/** Why a parsed run line does not fit the format (or the run it starts), or the run. */
function readRunLine(
  value: Record<string, unknown>,
): { ok: true; run: RunRecord; expected: number; key: string; plan: Pending['plan'] } | { ok: false; problem: string } {
  if (nestsDeeperThan(value, LINE_DEPTH)) return { ok: false, problem: `nested deeper than ${LINE_DEPTH} levels` };
  if (value.v === 1) {
    const c = check(v1RunLine, value);
    if (!c.ok) return c;
    if (c.value.plan && c.value.aborted === null)
      return { ok: false, problem: 'plan: expected only on an aborted run' };
    const run = runOfV1(c.value);
    const plan = c.value.plan?.map((r) => ({ row: rowOfV1(r, run.id, run.startedAt, null), tools: r.tools })) ?? null;
    return { ok: true, run, expected: c.value.observations, key: c.value.startedAt, plan };
  }
  const c = check(runLine, value);
  if (!c.ok) return c;
  if (c.value.plan && c.value.aborted === null) return { ok: false, problem: 'plan: expected only on an aborted run' };
  const { v: _v, type: _t, observations, plan: rows, bounded: _b, planRows: _p, ...run } = c.value;
  const plan =
    rows?.map((r) => ({
      row: { ...r, run: run.id, previous: null, changed: true, tools: null } as PlanRow,
      tools: r.tools,
    })) ?? null;
  return { ok: true, run, expected: observations, key: run.id, plan };
}

/** An observation line of a run, checked and made a row (its tools not resolved yet), or why not. */
function readObservationLine(
  value: Record<string, unknown>,
  run: RunRecord,
): { ok: true; row: PlanRow; tools: string[] | string | null } | { ok: false; problem: string } {
  if (nestsDeeperThan(value, LINE_DEPTH)) return { ok: false, problem: `nested deeper than ${LINE_DEPTH} levels` };
  if (value.v === 1) {
    const c = check(v1ObservationLine, value);
    return c.ok ? { ok: true, row: rowOfV1(c.value, run.id, c.value.at, null), tools: c.value.tools } : c;
  }
  const c = check(observationLine, value);
  if (!c.ok) return c;
  const { v: _v, type: _t, tools, ...row } = c.value as ObservationLine;
  return { ok: true, row: { ...row, tools: null, previous: null, changed: true }, tools };
}

/** Sets a row's tools from a list or a reference (a reference to no list written in full is no list). */
function resolve(row: PlanRow, tools: string[] | string | null, known: ReadonlyMap<string, string[]>): PlanRow {
  const list = typeof tools === 'string' ? (known.get(tools) ?? null) : tools;
  row.tools = list;
  if (list !== null) row.toolCount ??= list.length;
  return row;
}

/**
 * Parses one month file. Never throws: what it cannot read or does not fit the format it skips, counts and names.
 * Byte offsets (`spans`, `bytes`, `wholeBytes`) are of `bytes`. `known`: tool lists of the whole file, when
 * `bytes` is a part of it read again.
 */
export function parseHistory(bytes: Buffer | string, known: ReadonlyMap<string, string[]> = new Map()): ParsedHistory {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const runs: ParsedRun[] = [];
  const tools = new Map<string, string[]>();
  const problems: LineProblem[] = [];
  const unresolved: Array<{ row: PlanRow; tools: string[] | string | null }> = [];
  let pending = null as Pending | null; // (set in the closures below too)
  let offset = 0;
  let lineNo = 0;
  let wholeBytes = 0;
  let skipped = 0;
  const firstLine = new Map<string, number>();
  const finish = (p: Pending) => {
    pending = null;
    if (!p.run) {
      skipped += p.lines;
      wholeBytes = offset;
      return;
    }
    for (const list of p.tools) {
      // only a whole run's lists count; 0.1's 8-digit references resolve too
      const digest = toolsDigest(list);
      tools.set(`#${digest.slice(0, 16)}`, list);
      tools.set(`#${digest.slice(0, 8)}`, list);
    }
    // A run id is recorded once: a later record of it (a re-run recorded again, a merge) is a problem, not a run. A
    // run the outage guard aborted decided nothing, so it claims no id: a re-run of it decides and records afresh.
    const first = firstLine.get(p.run.id);
    if (first !== undefined) {
      problems.push({
        line: p.startLine,
        problem: `run line: its run id was recorded before, at line ${first} (a run id is recorded once): this later record is ignored`,
      });
      skipped += p.lines - (p.seen - p.rows.length); // its unreadable lines were counted already
      wholeBytes = offset;
      return;
    }
    if (p.run.aborted === null) firstLine.set(p.run.id, p.startLine);
    let rows = p.rows;
    let spans = p.spans;
    if (p.plan) {
      rows = p.plan.map((x) => x.row);
      spans = rows.map(() => [p.start, p.start] as [number, number]);
      unresolved.push(...p.plan);
    }
    runs.push({ run: p.run, rows, spans, line: p.startLine, bytes: [p.start, offset] });
    wholeBytes = offset;
  };
  /** A run that never got all its lines (a crash mid-append, or lines lost in a merge). */
  const unfinished = (p: Pending) => {
    if (p.run)
      problems.push({
        line: p.startLine,
        problem: `run incomplete: ${p.seen} of ${p.expected} observation lines (the run is skipped)`,
      });
    skipped += p.lines;
    pending = null;
  };
  // biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
  const startRun = (
    start: number,
    run: RunRecord | null,
    version: number,
    key: string | null,
    expected: number | null,
    plan: Pending['plan'],
  ) => {
    const p: Pending = {
      run,
      version,
      startLine: lineNo,
      start,
      key,
      expected,
      seen: 0,
      lines: 1,
      rows: [],
      spans: [],
      tools: [],
      plan,
    };
    pending = p;
    if (run === null) wholeBytes = offset; // a bad run's lines are whole lines: an append never cuts them
    if (expected === 0) finish(p);
  };
  /** An observation line of the pending run: counted towards its N whether it is kept or not. */
  const observe = (
    p: Pending,
    span: [number, number],
    read: ReturnType<typeof readObservationLine> | { ok: false; problem: string },
  ) => {
    p.lines++;
    p.seen++;
    if (!p.run) wholeBytes = offset;
    else if (!read.ok) {
      problems.push({ line: lineNo, problem: `observation line: ${read.problem} (the observation is skipped)` });
      skipped++;
    } else {
      if (Array.isArray(read.tools) && read.tools.length) p.tools.push(read.tools);
      p.rows.push(read.row);
      p.spans.push(span);
      unresolved.push({ row: read.row, tools: read.tools });
    }
    if (p.expected !== null && p.seen >= p.expected) finish(p);
  };
  const belongs = (p: Pending | null, key: unknown): p is Pending =>
    p !== null && (p.key === null ? p.run === null : key === p.key);
  while (offset < buf.length) {
    const end = buf.indexOf(0x0a, offset);
    if (end < 0) {
      skipped++;
      break;
    } // a partial last line (a crash mid-append): not history yet
    const start = offset;
    offset = end + 1;
    lineNo++;
    const stray = (problem: string) => {
      problems.push({ line: lineNo, problem });
      skipped++;
      if (!pending) wholeBytes = offset;
    };
    if (end - start > HISTORY_LIMITS.readLineBytes) {
      const tooLong = `${end - start} bytes, more than the ${HISTORY_LIMITS.readLineBytes} a line may have (not read)`;
      const head = peek(buf.toString('utf8', start, Math.min(end, start + 400)));
      if (head?.type === 'observation' && belongs(pending, head.key))
        observe(pending, [start, end], { ok: false, problem: tooLong });
      else if (head?.type === 'run') {
        if (pending) unfinished(pending);
        problems.push({ line: lineNo, problem: `run line: ${tooLong} (its run is skipped)` });
        startRun(start, null, 0, head.key, null, null);
      } else stray(`line: ${tooLong}`);
      continue;
    }
    const raw = buf.toString('utf8', start, end);
    if (!raw.trim()) {
      if (!pending) wholeBytes = offset;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
    if (!isObject(value)) {
      stray(value === undefined ? 'not JSON' : 'not a history line (not a JSON object)');
      continue;
    }
    if (value.v !== 1 && value.v !== HISTORY_LINE_VERSION) {
      stray(
        typeof value.v === 'number' && value.v > HISTORY_LINE_VERSION
          ? `a line of version ${Math.floor(value.v)}, newer than this onetap reads (${HISTORY_LINE_VERSION})`
          : 'not a history line (no "v":1 or "v":2)',
      );
      continue;
    }
    const key =
      value.v === 1 ? (value.type === 'run' ? value.startedAt : value.at) : value.type === 'run' ? value.id : value.run;
    if (value.type === 'run') {
      if (pending) unfinished(pending);
      const read = readRunLine(value);
      if (read.ok) startRun(start, read.run, value.v, read.key, read.expected, read.plan);
      else {
        problems.push({ line: lineNo, problem: `run line: ${read.problem} (its run is skipped)` });
        startRun(
          start,
          null,
          value.v,
          typeof key === 'string' ? key : null,
          Number.isSafeInteger(value.observations) && (value.observations as number) >= 0
            ? (value.observations as number)
            : null,
          null,
        );
      }
    } else if (value.type === 'observation' && belongs(pending, key)) {
      const read =
        value.v !== pending.version
          ? { ok: false as const, problem: `a line of version ${value.v} in a run of version ${pending.version}` }
          : pending.run
            ? readObservationLine(value, pending.run)
            : { ok: false as const, problem: 'of a skipped run' };
      observe(pending, [start, end], read);
    } else {
      // A bad run of an unknown count ends at the first line that is not its own.
      const p = pending as Pending | null;
      if (p && p.run === null && p.expected === null) finish(p);
      stray(
        value.type === 'observation'
          ? 'observation line outside a run (no run line of its run before it)'
          : 'not a history line (its "type" is neither run nor observation)',
      );
    }
  }
  if (pending) {
    const p = pending as Pending;
    if (p.run) unfinished(p);
    else {
      skipped += p.lines;
      pending = null;
    }
  }
  // References resolve anywhere in the file (a merge may put a run before the one that wrote the list in full).
  const lists = known.size ? new Map([...known, ...tools]) : tools;
  for (const u of unresolved) resolve(u.row, u.tools, lists);
  return { runs, wholeBytes, skipped, tools, problems };
}

/**
 * A run line with `applied` set (a recorded run applied later, or whose files failed): the same line, keys in their
 * order, only that value changed.
 */
export function withApplied(runLine: string, applied: boolean): string {
  const value = JSON.parse(runLine) as Record<string, unknown>;
  return JSON.stringify({ ...value, applied });
}

/** A run line read again from its text, validated as when the history was read: the run, or null. */
export function runAt(text: string): RunRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(value)) return null;
  const read = readRunLine(value);
  return read.ok ? read.run : null;
}

/**
 * One observation line read again from its bytes or text (the index keeps where each row is): the row, or null when it
 * no longer reads.
 */
export function rowAt(line: Buffer | string, run: RunRecord, tools: ReadonlyMap<string, string[]>): PlanRow | null {
  let value: unknown;
  try {
    value = JSON.parse(typeof line === 'string' ? line : line.toString('utf8'));
  } catch {
    return null;
  }
  if (!isObject(value)) return null;
  const read = readObservationLine(value, run);
  return read.ok ? resolve(read.row, read.tools, tools) : null;
}
