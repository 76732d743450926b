/** The default history store: one SQLite file (better-sqlite3), WAL mode so readers never block a writer. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { sqlite } from '../util/lazy.js';
import type { HistoryStore, ObservationRecord, RunRecord } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  catalog TEXT NOT NULL,
  applied INTEGER NOT NULL,
  plan TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS observations (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  url TEXT NOT NULL,
  name TEXT NOT NULL,
  at TEXT NOT NULL,
  verdict TEXT NOT NULL,
  reason TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  http_status INTEGER,
  duration_ms INTEGER NOT NULL,
  tools TEXT,
  error TEXT
);
CREATE INDEX IF NOT EXISTS observations_by_url ON observations (url, at);
`;

/**
 * Migrations, by `PRAGMA user_version`: each brings the schema from its index to the next. Append only.
 * 1: `details` holds what a probe says beyond the columns (profile, reasons, appError, location, matrix).
 */
const MIGRATIONS: string[] = [
  'ALTER TABLE observations ADD COLUMN details TEXT',
  // 2: the store becomes an index of the text history. `sources` says which month files (and which bytes of
  // them) it was built from; `meta.legacy` marks a store that held runs before, to be carried into the text once.
  `CREATE TABLE sources (file TEXT PRIMARY KEY, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL);
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO meta (key, value) SELECT 'legacy', '1' WHERE EXISTS (SELECT 1 FROM runs);`,
];

/** The index's source files: name, bytes indexed, and their SHA-256. */
export interface IndexSource { file: string; bytes: number; sha256: string }

/** Lines of the text history the index left out (see `./text.ts`); kept in `meta.problems` as JSON. */
export interface IndexProblems { count: number; first: Array<{ file: string; line: number; problem: string }> }

/**
 * What the index was built by, in `meta.index-format`: an index built by another format (before the text
 * history was checked line by line, say) is rebuilt from the text even when the files did not change.
 */
export const INDEX_FORMAT = '2';

function migrate(db: Database.Database): void {
  const from = db.pragma('user_version', { simple: true }) as number;
  for (let v = from; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

interface Row {
  url: string; name: string; at: string; verdict: string; reason: string; attempts: number;
  http_status: number | null; duration_ms: number; tools: string | null; error: string | null; details?: string | null;
}

type Details = Pick<ObservationRecord, 'profile' | 'reasons' | 'appError' | 'location' | 'matrix' | 'toolsHash' | 'findings' | 'findingsSeen' | 'snapshotSha256'>;

function details(r: Row): Details {
  const d = r.details ? (JSON.parse(r.details) as Partial<Details>) : {};
  return {
    profile: d.profile ?? 'kai-9000', reasons: d.reasons ?? [r.reason as ObservationRecord['reason']],
    appError: d.appError ?? null, location: d.location ?? null, matrix: d.matrix ?? null,
    toolsHash: d.toolsHash ?? null, findings: d.findings ?? [], findingsSeen: d.findingsSeen ?? 0, ...(d.snapshotSha256 ? { snapshotSha256: d.snapshotSha256 } : {}),
  };
}

const fromRow = (r: Row): ObservationRecord => ({
  url: r.url, name: r.name, at: r.at, verdict: r.verdict as ObservationRecord['verdict'], reason: r.reason as ObservationRecord['reason'],
  attempts: r.attempts, httpStatus: r.http_status, durationMs: r.duration_ms, tools: r.tools === null ? null : JSON.parse(r.tools), error: r.error,
  ...details(r),
});

export class SqliteHistoryStore implements HistoryStore {
  private readonly db: Database.Database;
  private readonly insertRun: Database.Statement;
  private readonly insertObservation: Database.Statement;
  private readonly recentStmt: Database.Statement;
  private readonly sinceStmt: Database.Statement;
  private readonly latestRunStmt: Database.Statement;

  /** `readonly` opens an existing store for reading (the status page) and never creates or migrates it. */
  constructor(readonly path: string, opts: { readonly?: boolean } = {}) {
    if (opts.readonly) {
      this.db = new (sqlite())(path, { readonly: true, fileMustExist: true });
      this.db.pragma('busy_timeout = 10000');
    } else {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new (sqlite())(path);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('busy_timeout = 10000');
      this.db.pragma('synchronous = NORMAL');
      this.db.exec(SCHEMA);
      migrate(this.db);
    }
    this.insertRun = this.db.prepare('INSERT INTO runs (started_at, finished_at, catalog, applied, plan) VALUES (?, ?, ?, ?, ?)');
    this.insertObservation = this.db.prepare(`INSERT INTO observations (run_id, url, name, at, verdict, reason, attempts, http_status, duration_ms, tools, error, details)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.recentStmt = this.db.prepare('SELECT * FROM observations WHERE url = ? ORDER BY at DESC, id DESC LIMIT ?');
    this.sinceStmt = this.db.prepare('SELECT * FROM observations WHERE url = ? AND at >= ? ORDER BY at, id');
    this.latestRunStmt = this.db.prepare('SELECT * FROM runs ORDER BY id DESC LIMIT 1');
  }

  recordRun(run: Omit<RunRecord, 'id'>, observations: ObservationRecord[]): number {
    const tx = this.db.transaction(() => {
      const { lastInsertRowid } = this.insertRun.run(run.startedAt, run.finishedAt, run.catalog, run.applied ? 1 : 0, JSON.stringify(run.plan));
      for (const o of observations) {
        this.insertObservation.run(lastInsertRowid, o.url, o.name, o.at, o.verdict, o.reason, o.attempts, o.httpStatus, o.durationMs, o.tools === null ? null : JSON.stringify(o.tools), o.error,
          JSON.stringify({ profile: o.profile, reasons: o.reasons, appError: o.appError, location: o.location, matrix: o.matrix, toolsHash: o.toolsHash, findings: o.findings, findingsSeen: o.findingsSeen, snapshotSha256: o.snapshotSha256 ?? null }));
      }
      return Number(lastInsertRowid);
    });
    return tx.immediate();
  }

  recent(url: string, limit: number): ObservationRecord[] {
    return (this.recentStmt.all(url, limit) as Row[]).map(fromRow);
  }

  since(url: string, sinceIso: string): ObservationRecord[] {
    return (this.sinceStmt.all(url, sinceIso) as Row[]).map(fromRow);
  }

  latestRun(): RunRecord | null {
    const r = this.latestRunStmt.get() as { id: number; started_at: string; finished_at: string; catalog: string; applied: number; plan: string } | undefined;
    return r ? { id: r.id, startedAt: r.started_at, finishedAt: r.finished_at, catalog: r.catalog, applied: r.applied === 1, plan: JSON.parse(r.plan) } : null;
  }

  /** The month files this index was built from (empty for a store that is not an index yet). */
  sources(): IndexSource[] {
    return this.db.prepare('SELECT file, bytes, sha256 FROM sources ORDER BY file').all() as IndexSource[];
  }

  /** True while the store holds runs recorded before the text history existed (not yet carried into it). */
  isLegacy(): boolean {
    return this.db.prepare("SELECT 1 FROM meta WHERE key = 'legacy'").get() !== undefined;
  }

  /** Every run with its observations, oldest first (to carry a legacy store into the text history). */
  allRuns(): Array<{ run: RunRecord; observations: ObservationRecord[] }> {
    const runs = this.db.prepare('SELECT * FROM runs ORDER BY id').all() as Array<{ id: number; started_at: string; finished_at: string; catalog: string; applied: number; plan: string }>;
    const obs = this.db.prepare('SELECT * FROM observations WHERE run_id = ? ORDER BY id');
    return runs.map((r) => ({
      run: { id: r.id, startedAt: r.started_at, finishedAt: r.finished_at, catalog: r.catalog, applied: r.applied === 1, plan: JSON.parse(r.plan) },
      observations: (obs.all(r.id) as Row[]).map(fromRow),
    }));
  }

  /**
   * Replaces everything with these runs (ids from 1, in order) in one transaction; clears the legacy mark.
   * `keptFrom` (a UTC day) records the retention cut the runs were chosen by (see `HistoryIndex`).
   */
  replaceAll(runs: Array<{ run: Omit<RunRecord, 'id'>; observations: ObservationRecord[] }>, sources: IndexSource[], keptFrom: string | null = null, problems: IndexProblems = { count: 0, first: [] }): void {
    this.db.transaction(() => {
      this.db.exec("DELETE FROM observations; DELETE FROM runs; DELETE FROM sources; DELETE FROM meta WHERE key IN ('legacy', 'kept-from', 'problems', 'index-format');");
      for (const r of runs) this.recordRun(r.run, r.observations);
      const insert = this.db.prepare('INSERT INTO sources (file, bytes, sha256) VALUES (?, ?, ?)');
      for (const s of sources) insert.run(s.file, s.bytes, s.sha256);
      const meta = this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      if (keptFrom !== null) meta.run('kept-from', keptFrom);
      meta.run('problems', JSON.stringify({ count: problems.count, first: problems.first }));
      meta.run('index-format', INDEX_FORMAT);
    }).immediate();
  }

  /** The format the index was built by (`INDEX_FORMAT`), or null for a store that is not an index of it. */
  indexFormat(): string | null {
    return this.meta('index-format');
  }

  /** The lines of the text history the index was built without (none for a store that is not an index). */
  problems(): IndexProblems {
    const text = this.meta('problems');
    if (text === null) return { count: 0, first: [] };
    try {
      const p = JSON.parse(text) as IndexProblems;
      return { count: Number(p.count) || 0, first: Array.isArray(p.first) ? p.first : [] };
    } catch {
      return { count: 0, first: [] };
    }
  }

  private meta(key: string): string | null {
    try {
      return (this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value ?? null;
    } catch {
      return null; // an old store without the table
    }
  }

  /** The retention cut the index holds runs from (a UTC day), or null when it was built without one. */
  keptFrom(): string | null {
    return this.meta('kept-from');
  }

  /** Forgets the runs started before `day` (and their observations): the index only, never the text history. */
  pruneBefore(day: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM observations WHERE run_id IN (SELECT id FROM runs WHERE started_at < ?)').run(day);
      this.db.prepare('DELETE FROM runs WHERE started_at < ?').run(day);
      this.db.prepare("INSERT INTO meta (key, value) VALUES ('kept-from', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(day);
    }).immediate();
  }

  /** A consistent copy of the whole store in one file (a backup before it is rebuilt). */
  copyTo(path: string): void {
    this.db.prepare('VACUUM INTO ?').run(path);
  }

  close(): void {
    this.db.close();
  }
}
