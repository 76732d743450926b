/** The default history store: one SQLite file (better-sqlite3), WAL mode so readers never block a writer. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
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
];

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

type Details = Pick<ObservationRecord, 'profile' | 'reasons' | 'appError' | 'location' | 'matrix' | 'toolsHash' | 'findings' | 'findingsSeen'>;

function details(r: Row): Details {
  const d = r.details ? (JSON.parse(r.details) as Partial<Details>) : {};
  return {
    profile: d.profile ?? 'kai-9000', reasons: d.reasons ?? [r.reason as ObservationRecord['reason']],
    appError: d.appError ?? null, location: d.location ?? null, matrix: d.matrix ?? null,
    toolsHash: d.toolsHash ?? null, findings: d.findings ?? [], findingsSeen: d.findingsSeen ?? 0,
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
      this.db = new Database(path, { readonly: true, fileMustExist: true });
      this.db.pragma('busy_timeout = 10000');
    } else {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new Database(path);
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
          JSON.stringify({ profile: o.profile, reasons: o.reasons, appError: o.appError, location: o.location, matrix: o.matrix, toolsHash: o.toolsHash, findings: o.findings, findingsSeen: o.findingsSeen }));
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

  close(): void {
    this.db.close();
  }
}
