/**
 * The index of a text history, in memory (no native module, nothing on disk): per URL, when each row was observed,
 * what it came to, and where its line is. Built from the month files and kept in step with them (`sync`, cheap when
 * nothing changed: file sizes and times): a month file that changed is parsed again, alone, so the weekly run's
 * append costs one file. Whole rows are read again from their lines when asked for, so the index stays small
 * whatever the history holds (every line was validated when the index was built; a line read again is again).
 */
import { existsSync, openSync, readdirSync, readSync, closeSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryProblem, HistoryProblems, PlanRow, RecordedRun, RunRecord, VerdictPoint } from '../model/plan.js';
import { HISTORY_LIMITS, MONTH_FILE, parseHistory, rowAt } from './lines.js';
import type { RunSelection } from './store.js';

/** One row of a non-aborted run, as the index keeps it. */
interface Entry extends VerdictPoint {
  url: string;
  file: string;
  /** Its line's bytes in the file. */
  start: number;
  end: number;
  /** The run it belongs to (in `runs`, sorted). */
  run: IndexedRun;
}

interface IndexedRun {
  run: RunRecord;
  file: string;
  /** The run's bytes in its file (run line and observation lines). */
  bytes: [number, number];
  /** Order among runs of the same start time: file, then line. */
  order: number;
  /** 1-based line of its run line. */
  line: number;
}

interface FileIndex {
  stamp: string;
  runs: IndexedRun[];
  entries: Entry[];
  tools: Map<string, string[]>;
  problems: HistoryProblem[];
}

/** How far back the index keeps runs: `days` UTC days up to today (none: every run). */
export interface Retention {
  days?: number;
  now?: () => Date;
}

/** The first UTC day kept (runs that started before it are left out), or null to keep all. */
export function keptFromDay(retention: Retention = {}): string | null {
  if (retention.days === undefined) return null;
  return new Date((retention.now?.() ?? new Date()).getTime() - (retention.days - 1) * 86_400_000)
    .toISOString()
    .slice(0, 10);
}

const NO_PROBLEMS: HistoryProblems = Object.freeze({
  count: 0,
  first: Object.freeze([]) as unknown as HistoryProblem[],
});

export class TextIndex {
  private files = new Map<string, FileIndex>();
  private byUrl = new Map<string, Entry[]>();
  private runList: IndexedRun[] = [];
  private byId = new Map<string, IndexedRun>();
  private position = new Map<IndexedRun, number>();
  private problemList: HistoryProblems = NO_PROBLEMS;
  private seen = '';

  /** What the index was last built from (the month files' names, sizes and times, and the retention's first day). */
  get stamp(): string {
    return this.seen;
  }

  constructor(
    readonly dir: string,
    readonly retention: Retention = {},
  ) {}

  /**
   * Brings the index up to date with the month files: a file whose size or time changed is parsed again, a file
   * that went is forgotten. Returns true when anything changed.
   */
  sync(): boolean {
    const names = existsSync(this.dir)
      ? readdirSync(this.dir)
          .filter((f) => MONTH_FILE.test(f))
          .sort()
      : [];
    const stamps = names.map((f) => {
      const s = statSync(join(this.dir, f));
      return `${s.size}:${s.mtimeMs}:${s.ino}`;
    });
    const all = `${keptFromDay(this.retention)}|${names.map((f, i) => `${f}=${stamps[i]}`).join('|')}`;
    if (all === this.seen) return false;
    const next = new Map<string, FileIndex>();
    names.forEach((file, i) => {
      const known = this.files.get(file);
      next.set(file, known && known.stamp === stamps[i] ? known : this.parse(file, stamps[i]!));
    });
    this.files = next;
    this.rebuild();
    this.seen = all;
    return true;
  }

  private parse(file: string, stamp: string): FileIndex {
    const parsed = parseHistory(readWhole(join(this.dir, file)));
    const runs: IndexedRun[] = [];
    const entries: Entry[] = [];
    parsed.runs.forEach((r, i) => {
      const run: IndexedRun = { run: r.run, file, bytes: r.bytes, order: i, line: r.line };
      runs.push(run);
      if (r.run.aborted) return;
      r.rows.forEach((row, j) => {
        entries.push({
          url: row.url,
          observedAt: row.observedAt,
          verdict: row.verdict,
          reason: row.reason,
          file,
          start: r.spans[j]![0],
          end: r.spans[j]![1],
          run,
        });
      });
    });
    return {
      stamp,
      runs,
      entries,
      tools: parsed.tools,
      problems: parsed.problems.map((p) => ({ file: `history/${file}`, line: p.line, problem: p.problem })),
    };
  }

  /**
   * Runs in time order (file and line order break ties), and per URL its rows in that order. A run id is recorded
   * once: a run whose id appeared before (month file by month file, line by line; one file's own repeats are
   * `parseHistory`'s) is a problem, and none of its rows count.
   */
  private rebuild(): void {
    const fileOrder = [...this.files.keys()];
    const byId = new Map<string, IndexedRun>();
    const repeats: HistoryProblem[] = [];
    const runs = [...this.files.values()]
      .flatMap((f) => f.runs)
      .filter((r) => {
        const first = byId.get(r.run.id);
        // An aborted run claims no id (it decided nothing): a later record of the id stands, and is the one `run`
        // reads.
        if (first === undefined || first.run.aborted !== null) {
          byId.set(r.run.id, r);
          return true;
        }
        repeats.push({
          file: `history/${r.file}`,
          line: r.line,
          problem: `run line: its run id was recorded before, at history/${first.file}:${first.line} (a run id is recorded once): this later record is ignored`,
        });
        return false;
      });
    const rank = (r: IndexedRun) => fileOrder.indexOf(r.file) * 1e9 + r.order;
    runs.sort((a, b) =>
      a.run.startedAt < b.run.startedAt ? -1 : a.run.startedAt > b.run.startedAt ? 1 : rank(a) - rank(b),
    );
    const position = new Map(runs.map((r, i) => [r, i]));
    const byUrl = new Map<string, Entry[]>();
    for (const f of this.files.values()) {
      for (const e of f.entries) {
        if (!position.has(e.run)) continue; // a repeated run's
        const list = byUrl.get(e.url);
        if (list) list.push(e);
        else byUrl.set(e.url, [e]);
      }
    }
    for (const list of byUrl.values()) list.sort((a, b) => position.get(a.run)! - position.get(b.run)!);
    this.runList = runs;
    this.byId = byId;
    this.position = position;
    this.byUrl = byUrl;
    const problems = [...[...this.files.values()].flatMap((f) => f.problems), ...repeats];
    this.problemList = problems.length
      ? { count: problems.length, first: problems.slice(0, HISTORY_LIMITS.problemsListed) }
      : NO_PROBLEMS;
  }

  private get keptFrom(): string {
    return keptFromDay(this.retention) ?? '';
  }

  problems(): HistoryProblems {
    return this.problemList;
  }

  /** A URL's rows on or after `since`, oldest first (never before the retention's first day). */
  private entries(url: string, since = ''): Entry[] {
    const list = this.byUrl.get(url) ?? [];
    const from = since > this.keptFrom ? since : this.keptFrom;
    if (!from) return list;
    const first = list.findIndex((e) => e.observedAt >= from);
    return first < 0 ? [] : list.slice(first);
  }

  verdicts(url: string, since: string): VerdictPoint[] {
    return this.entries(url, since).map((e) => ({ observedAt: e.observedAt, verdict: e.verdict, reason: e.reason }));
  }

  since(url: string, since: string): PlanRow[] {
    return this.rows(url, this.entries(url, since));
  }

  recent(url: string, limit: number): PlanRow[] {
    const list = this.entries(url);
    return this.rows(url, list.slice(Math.max(0, list.length - limit))).reverse();
  }

  /** Whole rows read again from their lines, each with `previous` and `changed` from the row before it. */
  private rows(url: string, picked: Entry[]): PlanRow[] {
    const all = this.byUrl.get(url) ?? [];
    const reader = new FileReader(this.dir);
    try {
      const out: PlanRow[] = [];
      for (const e of picked) {
        const row = rowAt(reader.bytes(e.file, e.start, e.end), e.run.run, this.files.get(e.file)!.tools);
        // The line is not the one indexed (the file changed under us): left out; the next sync reads the file again.
        if (!row || row.url !== e.url || row.run !== e.run.run.id) continue;
        const before = all[all.indexOf(e) - 1];
        row.previous = before ? { verdict: before.verdict, reason: before.reason, at: before.observedAt } : null;
        row.changed = !before || before.verdict !== row.verdict || before.reason !== row.reason;
        out.push(row);
      }
      return out;
    } finally {
      reader.close();
    }
  }

  /** Runs (aborted ones too), oldest first, each with its rows read again. */
  runs(select: RunSelection): RecordedRun[] {
    let list = this.runList.filter((r) => !this.keptFrom || r.run.startedAt >= this.keptFrom);
    if (select.since !== undefined) list = list.filter((r) => r.run.startedAt >= select.since!);
    if (select.last !== undefined) list = list.slice(Math.max(0, list.length - select.last));
    const reader = new FileReader(this.dir);
    try {
      return list.map((r) => this.readRun(r, reader));
    } finally {
      reader.close();
    }
  }

  /**
   * The run recorded under `id` (the one that decided, else its latest aborted record), with its rows, whatever the
   * retention; or null.
   */
  run(id: string): RecordedRun | null {
    const r = this.byId.get(id);
    if (r === undefined) return null;
    const reader = new FileReader(this.dir);
    try {
      return this.readRun(r, reader);
    } finally {
      reader.close();
    }
  }

  /** Where the run recorded under `id` is: its month file and bytes, or null. */
  placeOf(id: string): { file: string; bytes: [number, number] } | null {
    const r = this.byId.get(id);
    return r ? { file: r.file, bytes: r.bytes } : null;
  }

  private readRun(r: IndexedRun, reader: FileReader): RecordedRun {
    const file = this.files.get(r.file)!;
    const parsed = parseHistory(reader.bytes(r.file, r.bytes[0], r.bytes[1]), file.tools).runs[0];
    // Not the run indexed (the file changed under us): no rows; the next sync reads the file again.
    const rows = parsed?.run.id === r.run.id ? parsed.rows : [];
    const at = this.position.get(r)!;
    for (const row of rows) {
      // The URL's last row of a run before this one (an aborted run's plan rows read the same way).
      const before = (this.byUrl.get(row.url) ?? []).filter((e) => this.position.get(e.run)! < at).at(-1);
      row.previous = before ? { verdict: before.verdict, reason: before.reason, at: before.observedAt } : null;
      row.changed = !before || before.verdict !== row.verdict || before.reason !== row.reason;
    }
    return { run: r.run, rows };
  }
}

/** The bytes of one whole month file, cut to its last newline (a partial line is not history yet). */
function readWhole(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = statSync(path).size;
    const buf = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, buf.lastIndexOf(0x0a, read - 1) + 1);
  } finally {
    closeSync(fd);
  }
}

/** Reads byte ranges of month files, one open file at a time. */
class FileReader {
  private fd: number | null = null;
  private file = '';

  constructor(private readonly dir: string) {}

  bytes(file: string, start: number, end: number): Buffer {
    if (this.file !== file || this.fd === null) {
      this.close();
      this.fd = openSync(join(this.dir, file), 'r');
      this.file = file;
    }
    const buf = Buffer.allocUnsafe(end - start);
    let read = 0;
    while (read < buf.length) {
      const n = readSync(this.fd, buf, read, buf.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
