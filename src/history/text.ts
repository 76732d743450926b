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
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, open, truncate } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Decision } from '../decide/decide.js';
import type { Reason, VerdictName } from '../policy/policy.js';
import { acquireLock } from '../util/atomic.js';
import type { ObservationRecord, RunRecord } from './store.js';
import type { PlanJson, PlanRowJson } from '../decide/plan-json.js';

export const HISTORY_LINE_VERSION = 1;
export const MONTH_FILE = /^\d{4}-\d{2}\.jsonl$/;

export type { PlanJson, PlanRowJson };

/** One recorded run as the history holds it. */
export interface HistoryRun {
  run: Omit<RunRecord, 'id'> & { plan: PlanJson };
  observations: ObservationRecord[];
}

export const historyDir = (catalogPath: string) => join(dirname(catalogPath), 'history');
export const monthFileName = (iso: string) => `${iso.slice(0, 7)}.jsonl`;

/** The lines of one run, each ending in a newline, keys in a fixed order. */
export function runLines({ run, observations }: HistoryRun, knownTools: Set<string> = new Set()): string {
  const aborted = run.plan.aborted;
  const head = {
    v: HISTORY_LINE_VERSION, type: 'run', startedAt: run.startedAt, finishedAt: run.finishedAt, catalog: basename(run.catalog),
    applied: run.applied, aborted, observations: aborted ? 0 : observations.length, summary: run.plan.summary,
    ...(aborted ? { plan: run.plan.plan.map(planRowJson) } : {}),
  };
  if (aborted) return JSON.stringify(head) + '\n';
  const rowByUrl = new Map(run.plan.plan.map((r) => [r.url, r]));
  const toolsField = (tools: string[] | null): string[] | string | null => {
    if (!tools?.length) return tools;
    const ref = toolsRef(tools);
    if (knownTools.has(ref)) return ref;
    knownTools.add(ref);
    return tools;
  };
  return [head, ...observations.map((o) => observationLine(o, rowByUrl.get(o.url) ?? null, toolsField(o.tools)))].map((l) => JSON.stringify(l) + '\n').join('');
}

const toolsRef = (tools: string[]) => `#${createHash('sha256').update(JSON.stringify(tools)).digest('hex').slice(0, 8)}`;

function observationLine(o: ObservationRecord, row: PlanRowJson | null, tools: string[] | string | null) {
  return {
    v: HISTORY_LINE_VERSION, type: 'observation', at: o.at, name: o.name, url: o.url, verdict: o.verdict, reason: o.reason, reasons: o.reasons,
    attempts: o.attempts, httpStatus: o.httpStatus, durationMs: o.durationMs, tools, error: o.error, profile: o.profile,
    appError: o.appError, location: o.location, matrix: o.matrix,
    toolsHash: o.toolsHash,
    decision: row?.decision ?? null, dropStreak: row?.dropStreak ?? null, note: row?.note ?? null,
    // Tool review, written only when it says something (most weeks it does not): the history stays small.
    ...(o.findingsSeen ? { findings: o.findings, findingsSeen: o.findingsSeen } : {}),
    ...(row && o.toolsHash !== null && (row.acceptedHash ?? null) !== o.toolsHash ? { acceptedHash: row.acceptedHash ?? null } : {}),
    ...(row?.toolChanges && (row.toolChanges.added.length || row.toolChanges.removed.length || row.toolChanges.changed.length) ? { toolChanges: row.toolChanges } : {}),
    ...(row?.firstUse ? { firstUse: true } : {}),
    ...(row?.heldOut ? { heldOut: true } : {}),
    ...(row?.cardMismatches?.length ? { cardMismatches: row.cardMismatches } : {}),
  };
}

/** A plan row in `planJson`'s key order (so the index holds what `refresh --json` printed). */
function planRowJson(r: PlanRowJson): PlanRowJson {
  return {
    name: r.name, url: r.url, decision: r.decision, verdict: r.verdict, reason: r.reason, attempts: r.attempts, previous: r.previous,
    changed: r.changed, dropStreak: r.dropStreak, note: r.note, httpStatus: r.httpStatus, tools: r.tools, error: r.error, durationMs: r.durationMs,
    profile: r.profile, reasons: r.reasons, appError: r.appError, location: r.location, ...(r.matrix ? { matrix: r.matrix } : {}),
    toolsHash: r.toolsHash ?? null, acceptedHash: r.acceptedHash ?? null, toolChanges: r.toolChanges ?? null, firstUse: r.firstUse ?? false, heldOut: r.heldOut ?? false,
    findings: r.findings ?? [], findingsSeen: r.findingsSeen ?? 0,
  };
}

type ObservationLine = ReturnType<typeof observationLine>;
interface RunLine {
  v: number; type: 'run'; startedAt: string; finishedAt: string; catalog: string; applied: boolean; aborted: string | null;
  observations: number; summary: PlanJson['summary']; plan?: PlanRowJson[];
}

export interface ParsedHistory {
  runs: HistoryRun[];
  /** Bytes up to the end of the last whole run (or other whole line): what an append may keep. */
  wholeBytes: number;
  /** Lines skipped: unreadable, of a newer version, or of an incomplete run. */
  skipped: number;
  /** The tool lists written in full in this file, by reference. */
  tools: Map<string, string[]>;
}

/** Parses one month file. Never throws: what it cannot read it skips and counts. */
export function parseHistory(text: string): ParsedHistory {
  const runs: HistoryRun[] = [];
  const tools = new Map<string, string[]>();
  let pending: { line: RunLine; observations: ObservationRecord[]; rows: PlanRowJson[]; lines: number; tools: string[][] } | null = null;
  let offset = 0;
  let wholeBytes = 0;
  let skipped = 0;
  const finish = () => {
    const p = pending!;
    for (const list of p.tools) tools.set(toolsRef(list), list); // only a whole run's lists count
    runs.push({
      run: { startedAt: p.line.startedAt, finishedAt: p.line.finishedAt, catalog: p.line.catalog, applied: p.line.applied, plan: { plan: p.line.plan ?? p.rows, summary: p.line.summary, aborted: p.line.aborted } },
      observations: p.observations,
    });
    pending = null;
  };
  while (offset < text.length) {
    const end = text.indexOf('\n', offset);
    if (end < 0) { skipped++; break; } // a partial last line (a crash mid-append)
    const raw = text.slice(offset, end);
    offset = end + 1;
    let value: { v?: unknown; type?: unknown } | null = null;
    try { value = JSON.parse(raw) as { v?: unknown; type?: unknown }; } catch { value = null; }
    if (!value || typeof value !== 'object' || value.v !== HISTORY_LINE_VERSION) {
      if (raw.trim()) skipped++;
      if (!pending) wholeBytes = offset;
      continue;
    }
    if (value.type === 'run') {
      if (pending) skipped += (pending as { lines: number }).lines; // the previous run never got all its lines
      pending = { line: value as unknown as RunLine, observations: [], rows: [], lines: 1, tools: [] };
    } else if (value.type === 'observation' && pending && (value as unknown as ObservationLine).at === pending.line.startedAt) {
      const o = value as unknown as ObservationLine;
      if (Array.isArray(o.tools) && o.tools.length) pending.tools.push(o.tools);
      pending.lines++;
      pending.observations.push({
        url: o.url, name: o.name, at: o.at, verdict: o.verdict, reason: o.reason, attempts: o.attempts, httpStatus: o.httpStatus, durationMs: o.durationMs,
        tools: o.tools as string[] | null, error: o.error, profile: o.profile, reasons: o.reasons, appError: o.appError, location: o.location, matrix: o.matrix,
        toolsHash: o.toolsHash ?? null, findings: o.findings ?? [], findingsSeen: o.findingsSeen ?? 0,
      });
      pending.rows.push(planRowJson({
        name: o.name, url: o.url, decision: o.decision as Decision, verdict: o.verdict, reason: o.reason, attempts: o.attempts, previous: null,
        changed: true, dropStreak: o.dropStreak ?? 0, note: o.note, httpStatus: o.httpStatus, tools: o.tools as string[] | null, error: o.error,
        durationMs: o.durationMs, profile: o.profile, reasons: o.reasons, appError: o.appError, location: o.location, ...(o.matrix ? { matrix: o.matrix } : {}),
        toolsHash: o.toolsHash ?? null, acceptedHash: 'acceptedHash' in o ? o.acceptedHash ?? null : o.toolsHash ?? null, toolChanges: o.toolChanges ?? null, firstUse: o.firstUse ?? false, heldOut: o.heldOut ?? false,
        findings: o.findings ?? [], findingsSeen: o.findingsSeen ?? 0, cardMismatches: o.cardMismatches ?? null,
      }));
    } else {
      skipped++;
      continue;
    }
    if (pending && pending.observations.length >= (pending.line.observations ?? 0)) {
      finish();
      wholeBytes = offset;
    }
  }
  if (pending) skipped += (pending as { lines: number }).lines;
  // References resolve anywhere in the file (a merge may put a run before the one that wrote the list in full).
  const resolveTools = (t: string[] | string | null) => (typeof t === 'string' ? tools.get(t) ?? null : t);
  for (const r of runs) {
    for (const o of r.observations) o.tools = resolveTools(o.tools);
    for (const row of r.run.plan.plan) row.tools = resolveTools(row.tools);
  }
  return { runs, wholeBytes: Buffer.byteLength(text.slice(0, wholeBytes)), skipped, tools };
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
  const runs = files.flatMap((f) => parseHistory(f.text).runs)
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
  return runs;
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
