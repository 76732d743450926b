/**
 * The store in PostgreSQL, for a fleet, a status page served from one host while runs record from another, and
 * (next) workers in several places: the same interface as the text history (`./store.ts`), through `pg`, loaded
 * when a store is opened. Lines are kept as the text history writes them, verbatim (`./pg-migrations.ts`), and
 * validated when read back exactly as a month file's are; a run is recorded in one transaction, so a connection
 * lost mid-run records nothing of it. The schema lives in the URL's `schema` parameter (default `onetap`).
 */
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { LockEntry, ToolsLock } from '../model/acceptance.js';
import { EMPTY_LOCK, lockEntrySchema } from '../model/acceptance.js';
import type {
  CanaryCheck,
  HistoryProblem,
  HistoryProblems,
  PlanRow,
  RecordedRun,
  RunRecord,
  VerdictPoint,
} from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import { observationSchema, type Observation } from '../model/observation.js';
import { check } from '../model/validate.js';
import { writeAllAtomic } from '../util/atomic.js';
import {
  boundedObservationLine,
  HISTORY_LIMITS,
  monthFileName,
  parseHistory,
  rowAt,
  runAt,
  runLineList,
  toolsRef,
  withApplied,
} from './lines.js';
import { MIGRATIONS, SCHEMA_VERSION } from './pg-migrations.js';
import { keptSnapshot, snapshotOfBytes, snapshotText, type SnapshotRead } from './snapshots.js';
import { keptFromDay, type Retention } from './text-index.js';
import { changedOnly } from './text-store.js';
import { connection, queueSchemaOf, redactStoreUrl, storeUrlProblem } from './url.js';
import { storeUnreachable } from './unreachable.js';
import { sameSignature, signCanaries, signObservation, type VantageKeys } from './signatures.js';
import {
  CANARIES_URL,
  RunRecordedError,
  type RunChanges,
  type RunRegistration,
  type RunSelection,
  type Store,
  type UrlHistory,
} from './store.js';

export { storeUnreachable };

/** A store that cannot be used: not reachable, behind or ahead of this onetap, or lost mid-run. */
export class StoreError extends Error {}

async function pool(url: string): Promise<Pool> {
  const problem = storeUrlProblem(url);
  if (problem) throw new StoreError(`the store ${redactStoreUrl(url)}: ${problem}`);
  const { connectionString, schema } = connection(url);
  const { default: pg } = await import('pg');
  const p = new pg.Pool({
    connectionString,
    options: `-c search_path=${schema}`,
    // A worker or a decider holds a few at once; many of them share one server (PostgreSQL allows 100 by default).
    max: 4,
    // An idle connection goes back to the server after a second, not the driver's ten: slots are shared.
    idleTimeoutMillis: 1_000,
    connectionTimeoutMillis: 10_000,
    query_timeout: 120_000,
    keepAlive: true,
    application_name: 'onetap',
  });
  // An idle connection that drops (a restart, a cut) is the pool's to replace; the next query says what failed.
  p.on('error', () => {});
  return patientConnections(p);
}

/**
 * A server out of connections for now (53300: every slot taken, as when two suites or many workers share it; 57P03:
 * starting up) refuses a connection before anything runs on it, so trying again is safe for any query or transaction.
 */
const BUSY_SERVER = new Set(['53300', '57P03']);
export const CONNECT_RETRIES = { tries: 12, firstMs: 100, mostMs: 4_000 } as const;

/**
 * The pool's connections, waited for while the server is busy (`BUSY_SERVER`): up to `CONNECT_RETRIES.tries` tries,
 * the pause doubling from `firstMs` to at most `mostMs` (about 25 s in all), then the server's own error. The pool's
 * `query` takes its connections through `connect`, so both wait.
 */
function patientConnections(p: Pool): Pool {
  const connect = p.connect.bind(p) as () => Promise<PoolClient>;
  const patient = async (): Promise<PoolClient> => {
    for (let tried = 1; ; tried++) {
      try {
        return await connect();
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (tried >= CONNECT_RETRIES.tries || typeof code !== 'string' || !BUSY_SERVER.has(code)) throw err;
        const pause = Math.min(CONNECT_RETRIES.mostMs, CONNECT_RETRIES.firstMs * 2 ** (tried - 1));
        await new Promise((r) => setTimeout(r, pause * (0.5 + Math.random() / 2)));
      }
    }
  };
  type Callback = (err: Error | undefined, client?: PoolClient, done?: (release?: unknown) => void) => void;
  p.connect = ((callback?: Callback) => {
    if (!callback) return patient();
    patient().then(
      (client) => callback(undefined, client, (release) => client.release(release as boolean | Error | undefined)),
      (err: Error) => callback(err),
    );
  }) as Pool['connect'];
  return p;
}

/** A driver's failure as the store's, naming the store without its password. */
function storeFailure(err: unknown, url: string, what: string): StoreError {
  const message = err instanceof Error ? err.message : String(err);
  return new StoreError(`the store ${redactStoreUrl(url)}: ${what}: ${message}`, { cause: err });
}

async function schemaVersion(db: Pool | PoolClient, schema: string): Promise<number> {
  const exists = await db.query(`SELECT to_regclass($1) AS t`, [`${schema}.schema_migrations`]);
  if (exists.rows[0].t === null) return 0;
  const r = await db.query(`SELECT coalesce(max(version), 0) AS v FROM schema_migrations`);
  return Number(r.rows[0].v);
}

/**
 * What `onetap store migrate` did: the version before and after, the migrations applied, and what they found and did
 * that a maintainer should know (the runs migration 6 kept aside: the first few, then how many more).
 */
export interface Migrated {
  from: number;
  to: number;
  applied: string[];
  notes: string[];
}

/** Notes of one migration named one by one; the rest counted. */
const NOTES_LISTED = 20;

/** Applies the migrations the store lacks, each in its own transaction (idempotent; concurrent runs wait on a lock). */
export async function migrateStore(url: string): Promise<Migrated> {
  const db = await pool(url);
  const { schema } = connection(url);
  try {
    const client = await db.connect().catch((err) => {
      throw storeFailure(err, url, 'cannot connect');
    });
    client.on('error', () => {}); // the statement under way fails and says so
    try {
      // One migrating process at a time, whatever schema: the advisory lock is the database's.
      await client.query(`SELECT pg_advisory_lock(hashtext('onetap migrate ' || $1))`, [schema]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const from = await schemaVersion(client, schema);
      if (from > SCHEMA_VERSION)
        throw new StoreError(
          `the store ${redactStoreUrl(url)} is at schema version ${from}, newer than this onetap knows (${SCHEMA_VERSION}): use a newer onetap`,
        );
      const applied: string[] = [];
      const notes: string[] = [];
      for (const m of MIGRATIONS.filter((x) => x.version > from)) {
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          if (m.report) {
            const said = ((await client.query(m.report)).rows as Array<{ said: string }>).map((r) => r.said);
            notes.push(
              ...said.slice(0, NOTES_LISTED),
              ...(said.length > NOTES_LISTED
                ? [`… and ${said.length - NOTES_LISTED} more (migration ${m.version})`]
                : []),
            );
          }
          await client.query(`INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw storeFailure(err, url, `migration ${m.version} (${m.name}) failed, nothing of it applied`);
        }
        applied.push(`${m.version} ${m.name}`);
      }
      // The queue's engine tables beside the store's, so a vantage's own role (which may not create them) finds them.
      const queue = await migrateQueue(client, queueSchemaOf(schema)).catch((err) => {
        throw storeFailure(err, url, `the queue's tables (schema ${queueSchemaOf(schema)}) could not be migrated`);
      });
      if (queue) applied.push(queue);
      return { from, to: SCHEMA_VERSION, applied, notes };
    } finally {
      await client.query(`SELECT pg_advisory_unlock_all()`).catch(() => {});
      client.release();
    }
  } catch (err) {
    throw err instanceof StoreError ? err : storeFailure(err, url, 'cannot migrate');
  } finally {
    await db.end();
  }
}

/** The queue engine's migrations in `schema`, when it lacks any: what was done, or null. */
async function migrateQueue(client: PoolClient, schema: string): Promise<string | null> {
  const { assertSchemaCompatibility, runMigrations, LATEST_SCHEMA_VERSION, SchemaMigrationRequiredError } =
    await import('bullmq');
  let from = 0;
  try {
    from = await assertSchemaCompatibility(client, schema);
  } catch (err) {
    if (!(err instanceof SchemaMigrationRequiredError)) throw err;
  }
  if (from >= LATEST_SCHEMA_VERSION) return null;
  await runMigrations(client, schema);
  return `queue: the job engine's tables in schema ${schema}, from its version ${from} to ${LATEST_SCHEMA_VERSION}`;
}

/** Opens a store, its schema checked: a store behind this onetap names `onetap store migrate` (exit 1). */
export async function openPgStore(url: string, retention: Retention = {}): Promise<PgStore> {
  const db = await pool(url);
  try {
    const version = await schemaVersion(db, connection(url).schema);
    if (version < SCHEMA_VERSION) {
      throw new StoreError(
        `the store ${redactStoreUrl(url)} is at schema version ${version}, this onetap needs ${SCHEMA_VERSION}: run ` +
          `\`onetap store migrate\` with the same --store first`,
      );
    }
    if (version > SCHEMA_VERSION)
      throw new StoreError(
        `the store ${redactStoreUrl(url)} is at schema version ${version}, newer than this onetap knows (${SCHEMA_VERSION}): use a newer onetap`,
      );
  } catch (err) {
    await db.end();
    throw err instanceof StoreError ? err : storeFailure(err, url, 'cannot be read');
  }
  return new PgStore(db, url, retention);
}

/** What a vantage's canaries said (as `decide` reads it). */

/** One observation line as stored: the row it read as (null: a line kept only so its run exports whole). */
interface StoredLine {
  line: string;
  row: PlanRow | null;
  toolsRef: string | null;
}

/** A run's lines, checked, ready to insert. */
interface RunLines {
  run: RunRecord;
  month: string;
  runLine: string;
  observations: StoredLine[];
  lists: Map<string, string[]>;
}

/** An observation line as the row queries find it, with its run's line. */
interface FoundRow {
  line: string;
  run_line: string;
  month: string;
  tools_ref: string | null;
  seq: string;
  position: number;
  started_at: string;
}

const sha256Of = (text: string) => createHash('sha256').update(text).digest('hex');

/** The reference a stored observation line makes to a list written in full elsewhere in its month, or null. */
function refOf(line: string): string | null {
  const m = /"tools":"(#[0-9a-f]{8,16})"/.exec(line);
  return m ? m[1]! : null;
}

/** Observations read or written per statement (a run across vantages gathered, a run recorded). */
const OBSERVATION_PAGE = 500;

export class PgStore implements Store {
  /** Rows or runs that did not read back (a store written by another hand): counted, never fatal. */
  private readProblems: HistoryProblem[] = [];
  private readProblemCount = 0;

  constructor(
    private readonly db: Pool,
    private readonly url: string,
    readonly retention: Retention = {},
  ) {}

  private get keptFrom(): string {
    return keptFromDay(this.retention) ?? '';
  }

  private async q<R extends object>(sql: string, params: unknown[] = []): Promise<R[]> {
    try {
      return (await this.db.query(sql, params)).rows as R[];
    } catch (err) {
      throw storeFailure(err, this.url, 'a query failed');
    }
  }

  private problem(file: string, line: number, problem: string): void {
    this.readProblemCount++;
    if (this.readProblems.length < HISTORY_LIMITS.problemsListed) this.readProblems.push({ file, line, problem });
  }

  /** Tool lists of a month by reference (those asked for). */
  private async lists(
    month: string,
    refs: Iterable<string>,
    db: Pool | PoolClient = this.db,
  ): Promise<Map<string, string[]>> {
    const wanted = [...new Set(refs)];
    if (!wanted.length) return new Map();
    const found = await db
      .query(`SELECT ref, list FROM tool_lists WHERE month = $1 AND ref = ANY($2)`, [month, wanted])
      .catch((err) => {
        throw storeFailure(err, this.url, 'a query failed');
      });
    const rows = found.rows as Array<{ ref: string; list: unknown }>;
    return new Map(
      rows
        .filter(
          (r): r is { ref: string; list: string[] } =>
            Array.isArray(r.list) && r.list.every((t) => typeof t === 'string'),
        )
        .map((r) => [r.ref, r.list]),
    );
  }

  /** Rows of a URL's observation lines (as the query gave them, in order), validated, tool lists resolved. */
  private async readRows(found: FoundRow[]): Promise<PlanRow[]> {
    const byMonth = new Map<string, string[]>();
    for (const f of found) if (f.tools_ref) byMonth.set(f.month, [...(byMonth.get(f.month) ?? []), f.tools_ref]);
    const lists = new Map<string, Map<string, string[]>>();
    for (const [month, refs] of byMonth) lists.set(month, await this.lists(month, refs));
    const runs = new Map<string, RunRecord | null>();
    const rows: PlanRow[] = [];
    for (const f of found) {
      if (!runs.has(f.seq)) runs.set(f.seq, runAt(f.run_line));
      const run = runs.get(f.seq)!;
      const row = run && rowAt(f.line, run, lists.get(f.month) ?? new Map());
      if (!row || row.run !== run!.id) {
        this.problem(
          `store run ${f.seq}`,
          f.position + 2,
          'observation line: does not read as a row of its run (skipped)',
        );
        continue;
      }
      rows.push(row);
    }
    return rows;
  }

  private static readonly ROW_FIELDS =
    `o.line, r.line AS run_line, r.month, o.tools_ref, r.seq::text AS seq, o.position, r.started_at`;
  private static readonly FROM = `FROM observations o JOIN runs r ON r.seq = o.run_seq`;
  private static readonly ROWS = `SELECT ${PgStore.ROW_FIELDS} ${PgStore.FROM}`;
  /** A URL's rows in run order (the index `observations_url`), oldest or newest first. */
  private static readonly OLDEST = `o.run_started_at, o.run_seq, o.position`;
  private static readonly NEWEST = `o.run_started_at DESC, o.run_seq DESC, o.position DESC`;

  /** The URL's row before a run's position (`seq` of a run started at `startedAt`), as `previous` reads it. */
  private async before(url: string, startedAt: string, seq: string, position: number): Promise<PlanRow['previous']> {
    const r = await this.q<{ verdict: PlanRow['verdict']; reason: PlanRow['reason']; observed_at: string }>(
      `
      SELECT o.verdict, o.reason, o.observed_at FROM observations o
      WHERE o.url = $1 AND (o.run_started_at, o.run_seq, o.position) < ($2, $3::bigint, $4)
      ORDER BY ${PgStore.NEWEST} LIMIT 1`,
      [url, startedAt, seq, position],
    );
    return r[0] ? { verdict: r[0].verdict, reason: r[0].reason, at: r[0].observed_at } : null;
  }

  /** Each row's `previous` and `changed`: the row before it in the list, the first one's from the store. */
  private async chain(
    url: string,
    rows: PlanRow[],
    first: { started_at: string; seq: string; position: number } | undefined,
  ): Promise<PlanRow[]> {
    let previous = first ? await this.before(url, first.started_at, first.seq, first.position) : null;
    for (const row of rows) {
      row.previous = previous;
      row.changed = !previous || previous.verdict !== row.verdict || previous.reason !== row.reason;
      previous = { verdict: row.verdict, reason: row.reason, at: row.observedAt };
    }
    return rows;
  }

  private from(since = ''): string {
    return since > this.keptFrom ? since : this.keptFrom;
  }

  async recent(url: string, limit: number): Promise<PlanRow[]> {
    const found = (
      await this.q<FoundRow>(
        `${PgStore.ROWS} WHERE o.url = $1 AND o.observed_at >= $2
      ORDER BY ${PgStore.NEWEST} LIMIT $3`,
        [url, this.from(), limit],
      )
    ).reverse();
    return (await this.chain(url, await this.readRows(found), found[0])).reverse();
  }

  async since(url: string, since: string): Promise<PlanRow[]> {
    const found = await this.q<FoundRow>(
      `${PgStore.ROWS} WHERE o.url = $1 AND o.observed_at >= $2
      ORDER BY ${PgStore.OLDEST}`,
      [url, this.from(since)],
    );
    return this.chain(url, await this.readRows(found), found[0]);
  }

  async verdicts(url: string, since: string): Promise<VerdictPoint[]> {
    const found = await this.q<{
      observed_at: string;
      verdict: VerdictPoint['verdict'];
      reason: VerdictPoint['reason'];
    }>(
      `
      SELECT o.observed_at, o.verdict, o.reason FROM observations o
      WHERE o.url = $1 AND o.observed_at >= $2 ORDER BY ${PgStore.OLDEST}`,
      [url, this.from(since)],
    );
    return found.map((f) => ({ observedAt: f.observed_at, verdict: f.verdict, reason: f.reason }));
  }

  /** Three queries for any number of URLs: their points, their newest rows, and the row before those that need it. */
  async histories(urls: readonly string[], since: string): Promise<Map<string, UrlHistory>> {
    const from = this.from(since);
    const out = new Map<string, UrlHistory>(urls.map((u) => [u, { points: [], last: null }]));
    // One row per URL with its points as three arrays: a fleet's 750,000 points are 25,000 rows, not 750,000 objects.
    const points = await this.q<{
      url: string;
      at: string[];
      verdict: Array<VerdictPoint['verdict']>;
      reason: Array<VerdictPoint['reason']>;
    }>(
      `
      SELECT u.url, p.at, p.verdict, p.reason FROM unnest($1::text[]) AS u (url)
      CROSS JOIN LATERAL (SELECT array_agg(o.observed_at ORDER BY ${PgStore.OLDEST}) AS at, array_agg(o.verdict ORDER BY ${PgStore.OLDEST}) AS verdict,
        array_agg(o.reason ORDER BY ${PgStore.OLDEST}) AS reason FROM observations o WHERE o.url = u.url AND o.observed_at >= $2) p
      WHERE p.at IS NOT NULL`,
      [urls, from],
    );
    for (const p of points)
      out.get(p.url)!.points = p.at.map((observedAt, i) => ({
        observedAt,
        verdict: p.verdict[i]!,
        reason: p.reason[i]!,
      }));
    const found = await this.q<FoundRow>(
      `SELECT ${PgStore.ROW_FIELDS} FROM unnest($1::text[]) AS u (url)
      CROSS JOIN LATERAL (SELECT * FROM observations o WHERE o.url = u.url AND o.observed_at >= $2 ORDER BY ${PgStore.NEWEST} LIMIT 1) o
      JOIN runs r ON r.seq = o.run_seq`,
      [urls, from],
    );
    const rows = await this.readRows(found);
    // Each newest row's previous: the point before it, or (for a URL with one point) the newest row before `from`.
    const alone = rows.filter((r) => out.get(r.url)!.points.length < 2).map((r) => r.url);
    const earlier = alone.length
      ? await this.q<{ url: string; verdict: PlanRow['verdict']; reason: PlanRow['reason']; observed_at: string }>(
          `
      SELECT u.url, o.verdict, o.reason, o.observed_at FROM unnest($1::text[]) AS u (url)
      CROSS JOIN LATERAL (SELECT * FROM observations o WHERE o.url = u.url AND o.observed_at < $2 ORDER BY ${PgStore.NEWEST} LIMIT 1) o`,
          [alone, from],
        )
      : [];
    const before = new Map(earlier.map((e) => [e.url, { verdict: e.verdict, reason: e.reason, at: e.observed_at }]));
    for (const row of rows) {
      const h = out.get(row.url)!;
      const p = h.points.at(-2);
      row.previous = p ? { verdict: p.verdict, reason: p.reason, at: p.observedAt } : (before.get(row.url) ?? null);
      row.changed = !row.previous || row.previous.verdict !== row.verdict || row.previous.reason !== row.reason;
      h.last = row;
    }
    return out;
  }

  async stamp(): Promise<string> {
    const [r] = await this.q<{ stamp: string }>(
      `SELECT concat_ws(':', (SELECT max(seq) FROM runs), (SELECT count(*) FROM runs WHERE applied),
      (SELECT max(seq) FROM history_problems), ${this.readProblemCount}, $1::text) AS stamp`,
      [this.keptFrom],
    );
    return r!.stamp;
  }

  async latestRun(): Promise<RecordedRun | null> {
    return (await this.runs({ last: 1 }))[0] ?? null;
  }

  async runs(select: RunSelection): Promise<RecordedRun[]> {
    const since = select.since !== undefined && select.since > this.keptFrom ? select.since : this.keptFrom;
    const found = await this.q<{ seq: string; started_at: string; month: string; line: string }>(
      `
      SELECT seq::text AS seq, started_at, month, line FROM runs WHERE started_at >= $1
      ORDER BY started_at DESC, seq DESC ${select.last !== undefined ? 'LIMIT $2' : ''}`,
      select.last !== undefined ? [since, select.last] : [since],
    );
    return this.readRuns(found.reverse());
  }

  /**
   * The run recorded under `id` (a run id is recorded once, by a run the outage guard did not abort), whatever the
   * retention.
   */
  async recordedRun(id: string): Promise<RecordedRun | null> {
    // The record that decided; else the latest the outage guard aborted (those claim no id: a re-run decides afresh).
    const found = await this.q<{ seq: string; started_at: string; month: string; line: string }>(
      `SELECT seq::text AS seq, started_at, month, line FROM runs WHERE id = $1 ORDER BY aborted, seq DESC`,
      [id],
    );
    // The line says which run it is: one that says otherwise is not this run.
    return (await this.readRuns(found)).find((r) => r.run.id === id) ?? null;
  }

  /**
   * A session advisory lock on the run id (in this schema), on a connection of its own, until released: a second
   * decider waits (asking again every half second: no statement waits long enough to time out). A holder that dies,
   * or whose connection drops, loses it; then the record's own check (a run id is recorded once) still holds.
   */
  async holdRun(id: string, onBusy?: () => void): Promise<() => Promise<void>> {
    let client: PoolClient;
    try {
      client = await this.db.connect();
    } catch (err) {
      throw storeFailure(err, this.url, `cannot connect to hold run ${id}`);
    }
    let broken: Error | undefined;
    client.on('error', (err) => {
      broken ??= err;
    });
    const key = [`onetap run ${connection(this.url).schema}`, id];
    try {
      for (let asked = false; ; asked = true) {
        const { rows } = await client.query(`SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS held`, key);
        if (rows[0].held) break;
        if (!asked) onBusy?.();
        await new Promise((r) => setTimeout(r, 500));
      }
    } catch (err) {
      client.release(err as Error);
      throw storeFailure(err, this.url, `run ${id} could not be held`);
    }
    return async () => {
      if (!broken)
        await client.query(`SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, key).catch((err) => {
          broken = err as Error;
        });
      client.release(broken);
    };
  }

  /** Runs read back, each row's previous the URL's last row of a run before it. */
  private async readRuns(
    found: Array<{ seq: string; started_at: string; month: string; line: string }>,
  ): Promise<RecordedRun[]> {
    const out: RecordedRun[] = [];
    for (const r of found) {
      const read = await this.readRun(r.seq, r.month, r.line);
      if (!read) continue;
      // Each row's previous: the URL's last row of a run before this one.
      const urls = [...new Set(read.rows.map((x) => x.url))];
      const before = urls.length
        ? await this.q<{ url: string; verdict: PlanRow['verdict']; reason: PlanRow['reason']; observed_at: string }>(
            `
        SELECT u.url, o.verdict, o.reason, o.observed_at FROM unnest($1::text[]) AS u (url)
        CROSS JOIN LATERAL (SELECT * FROM observations o WHERE o.url = u.url AND (o.run_started_at, o.run_seq) < ($2, $3::bigint)
          ORDER BY ${PgStore.NEWEST} LIMIT 1) o`,
            [urls, r.started_at, r.seq],
          )
        : [];
      const last = new Map(before.map((b) => [b.url, { verdict: b.verdict, reason: b.reason, at: b.observed_at }]));
      for (const row of read.rows) {
        row.previous = last.get(row.url) ?? null;
        row.changed = !row.previous || row.previous.verdict !== row.verdict || row.previous.reason !== row.reason;
      }
      out.push(read);
    }
    return out;
  }

  /** A run read back as its text would be: its lines parsed and validated together, tool lists of its month. */
  private async readRun(seq: string, month: string, runLine: string): Promise<RecordedRun | null> {
    const lines = await this.q<{ line: string; tools_ref: string | null }>(
      `SELECT line, tools_ref FROM observations WHERE run_seq = $1 ORDER BY position`,
      [seq],
    );
    const known = await this.lists(
      month,
      lines.flatMap((l) => (l.tools_ref ? [l.tools_ref] : [])),
    );
    const parsed = parseHistory([runLine, ...lines.map((l) => l.line)].join('\n') + '\n', known);
    for (const p of parsed.problems) this.problem(`store run ${seq}`, p.line, p.problem);
    const read = parsed.runs[0];
    return read ? { run: read.run, rows: read.rows } : null;
  }

  async acceptances(): Promise<ToolsLock> {
    const rows = await this.q<{ url: string; entry: unknown }>(`SELECT url, entry FROM acceptances ORDER BY url`);
    const servers: Record<string, LockEntry> = {};
    for (const r of rows) {
      const c = check(lockEntrySchema, r.entry);
      if (c.ok) servers[r.url] = c.value;
      else this.problem('store acceptances', 0, `${r.url}: ${c.problem} (not used)`);
    }
    return rows.length ? { version: 1, servers } : EMPTY_LOCK;
  }

  async snapshot(hash: string, sha256?: string | null): Promise<SnapshotRead> {
    if (!/^[0-9a-f]{16}$/.test(hash)) return { snapshot: null, warning: null };
    const rows = await this.q<{ content: string }>(`SELECT content FROM snapshots WHERE hash = $1`, [hash]);
    return rows[0]
      ? snapshotOfBytes(Buffer.from(rows[0].content), hash, sha256, `the store's snapshot ${hash}`)
      : { snapshot: null, warning: null };
  }

  async snapshotDigests(snapshots: readonly StoredSnapshot[], rewrite: boolean): Promise<Map<string, string>> {
    const current = await this.currentSnapshots(this.db, snapshots);
    return new Map(
      snapshots.map((s) => [
        s.hash,
        keptSnapshot(current.get(s.hash) ?? null, s, rewrite) ?? sha256Of(snapshotText(s)),
      ]),
    );
  }

  private async currentSnapshots(
    db: Pool | PoolClient,
    snapshots: readonly StoredSnapshot[],
  ): Promise<Map<string, Buffer>> {
    if (!snapshots.length) return new Map();
    const rows = (
      await db.query(`SELECT hash, content FROM snapshots WHERE hash = ANY($1)`, [snapshots.map((s) => s.hash)])
    ).rows as Array<{ hash: string; content: string }>;
    return new Map(rows.map((r) => [r.hash, Buffer.from(r.content)]));
  }

  /**
   * Records a run in one transaction: the acceptances, the snapshots, the run and its lines. The catalog's files
   * are written once it is committed; when they fail, the run is marked not applied. A connection lost before the
   * commit records nothing, and says so.
   */
  async record(recorded: RecordedRun, changes: RunChanges): Promise<string[]> {
    const month = monthFileName(recorded.run.startedAt).slice(0, 7);
    const seq = await this.transaction('nothing of this run was recorded', async (client) => {
      // A run id is recorded once: refused before anything is written (and, should two record at once, by
      // `runs_id_once`).
      if ((await client.query(`SELECT 1 FROM runs WHERE id = $1 AND NOT aborted`, [recorded.run.id])).rowCount)
        throw new RunRecordedError(recorded.run.id);
      await this.writeChanges(client, changes);
      const known = await this.lists(
        month,
        recorded.rows.flatMap((r) => (r.tools?.length ? [toolsRef(r.tools)] : [])),
        client,
      );
      const before = new Set(known.keys());
      const [runLine, ...lines] = runLineList(recorded, known);
      const lists = new Map([...known].filter(([ref]) => !before.has(ref)));
      return insertRun(client, {
        run: recorded.run,
        month,
        runLine: runLine!,
        lists,
        observations: lines.map((line, i) => ({ line, row: recorded.rows[i]!, toolsRef: refOf(line) })),
      }).catch((err) => {
        throw (err as { constraint?: string }).constraint === 'runs_id_once'
          ? new RunRecordedError(recorded.run.id)
          : err;
      });
    });
    const files = await changedOnly(changes.files);
    try {
      await writeAllAtomic(files);
    } catch (err) {
      // The run line alone changes (it does not depend on the tool lists its rows refer to).
      const notApplied = runLineList({ run: { ...recorded.run, applied: false }, rows: recorded.rows })[0]!;
      await this.q(`UPDATE runs SET applied = false, line = $2 WHERE seq = $1`, [seq, notApplied]);
      throw err;
    }
    return files.map((f) => f.path);
  }

  /** The acceptances and the snapshots a run records, in its transaction. */
  private async writeChanges(client: PoolClient, changes: RunChanges): Promise<void> {
    if (changes.lock) await this.upsertAcceptances(client, changes.lock);
    const current = await this.currentSnapshots(client, changes.snapshots);
    const writes = [...changes.snapshots]
      .sort((a, b) => (a.hash < b.hash ? -1 : 1))
      .filter((s) => keptSnapshot(current.get(s.hash) ?? null, s, changes.rewriteSnapshots) === null);
    for (const s of writes) {
      const content = snapshotText(s);
      await client.query(
        `INSERT INTO snapshots (hash, content, sha256) VALUES ($1, $2, $3)
        ON CONFLICT (hash) DO UPDATE SET content = excluded.content, sha256 = excluded.sha256`,
        [s.hash, content, sha256Of(content)],
      );
    }
  }

  /**
   * A recorded run applied: its acceptances and snapshots and its run line marked applied in one transaction, then the
   * catalog's files; when they fail, the run is marked not applied again.
   */
  async applyRecorded(id: string, changes: RunChanges): Promise<string[]> {
    const run = await this.transaction(`run ${id} was not applied`, async (client) => {
      const [r] = (await client.query(`SELECT seq::text AS seq, line FROM runs WHERE id = $1 FOR UPDATE`, [id]))
        .rows as Array<{ seq: string; line: string }>;
      if (!r) throw new StoreError(`the store ${redactStoreUrl(this.url)}: run ${id} is not recorded`);
      await this.writeChanges(client, changes);
      await client.query(`UPDATE runs SET applied = true, line = $2 WHERE seq = $1`, [
        r.seq,
        withApplied(r.line, true),
      ]);
      return r;
    });
    const files = await changedOnly(changes.files);
    try {
      await writeAllAtomic(files);
    } catch (err) {
      await this.q(`UPDATE runs SET applied = false, line = $2 WHERE seq = $1`, [run.seq, run.line]);
      throw err;
    }
    return files.map((f) => f.path);
  }

  /**
   * Registers a run across vantages and the jobs it enqueues, before they are on the queue: the run once (its first
   * enqueue's id, start and vantages stay), each job once with when it was enqueued. Whatever was recorded for a job
   * before it was enqueued was not its worker's (nobody could have taken it yet): it is deleted here, counted in
   * `discarded`, so the job's own observation is the one recorded. Returns the run as registered.
   */
  async registerRun(
    run: { id: string; startedAt: string },
    vantages: readonly string[],
    jobs: ReadonlyArray<{ url: string; vantage: string }>,
  ): Promise<{ registration: RunRegistration; discarded: number }> {
    return this.transaction('the run was not registered and nothing was enqueued', async (client) => {
      await client.query(
        `INSERT INTO run_registrations (id, started_at, vantages) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
        [run.id, run.startedAt, vantages],
      );
      const [r] = (
        await client.query(`SELECT id, started_at, vantages, registered_at FROM run_registrations WHERE id = $1`, [
          run.id,
        ])
      ).rows as Array<{ id: string; started_at: string; vantages: string[]; registered_at: Date }>;
      let discarded = 0;
      for (let start = 0; start < jobs.length; start += OBSERVATION_PAGE) {
        const page = jobs.slice(start, start + OBSERVATION_PAGE);
        const gone = await client.query(
          `WITH fresh AS (
            INSERT INTO run_jobs (run_id, url, vantage) SELECT $1, * FROM unnest($2::text[], $3::text[]) ON CONFLICT DO NOTHING RETURNING url, vantage),
          observed AS (DELETE FROM vantage_observations o USING fresh f WHERE o.run_id = $1 AND o.url = f.url AND o.vantage = f.vantage RETURNING 1),
          reported AS (DELETE FROM vantage_canaries c USING fresh f WHERE f.url = $4 AND c.run_id = $1 AND c.vantage = f.vantage RETURNING 1)
          SELECT (SELECT count(*) FROM observed) + (SELECT count(*) FROM reported) AS n`,
          [run.id, page.map((j) => j.url), page.map((j) => j.vantage), CANARIES_URL],
        );
        discarded += Number(gone.rows[0].n);
      }
      return {
        registration: {
          id: r!.id,
          startedAt: r!.started_at,
          vantages: r!.vantages,
          registeredAt: r!.registered_at.toISOString(),
        },
        discarded,
      };
    });
  }

  /**
   * A worker's observation of a run's URL from its vantage, with the tool list it saw, in one transaction, signed
   * with the vantage's key when the worker holds one. The first one recorded stays (a job taken again after its
   * worker died records nothing new): true when this one did.
   */
  async recordObservation(
    o: Observation,
    snapshot: StoredSnapshot | null,
    key: string | null = null,
  ): Promise<boolean> {
    if (o.run === null) throw new StoreError('an observation outside a run cannot be recorded for one');
    // Bounded as a history line is (whatever a server listed), so one observation is at most 128 KiB. One statement
    // (the tool list in a CTE beside it): both recorded or neither.
    const line = JSON.stringify(boundedObservationLine(o as unknown as Record<string, unknown>));
    const signature = key === null ? null : signObservation(key, line);
    const observation =
      `INSERT INTO vantage_observations (run_id, url, vantage, observed_at, line, signature) ` +
      `VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1 AS fresh`;
    if (!snapshot)
      return (await this.q(observation, [o.run, o.url, o.vantage, o.observedAt, line, signature])).length === 1;
    const content = snapshotText(snapshot);
    return (
      (
        await this.q(
          `WITH listed AS (INSERT INTO snapshots (hash, content, sha256) VALUES ($7, $8, $9) ON CONFLICT (hash) DO NOTHING) ${observation}`,
          [o.run, o.url, o.vantage, o.observedAt, line, signature, snapshot.hash, content, sha256Of(content)],
        )
      ).length === 1
    );
  }

  /** An observation or canaries report counts when its job was enqueued, and it was recorded after that. */
  private static readonly ASKED =
    `JOIN run_jobs j ON j.run_id = o.run_id AND j.url = o.url AND j.vantage = o.vantage AND o.recorded_at >= j.enqueued_at`;

  async observationCount(runId: string, vantages: readonly string[]): Promise<number> {
    const [r] = await this.q<{ n: string }>(
      `SELECT count(*) AS n FROM vantage_observations o ${PgStore.ASKED} WHERE o.run_id = $1 AND o.vantage = ANY($2)`,
      [runId, vantages],
    );
    return Number(r!.n);
  }

  async observedOf(
    runId: string,
    jobs: ReadonlyArray<{ url: string; vantage: string }>,
  ): Promise<Array<{ url: string; vantage: string }>> {
    if (!jobs.length) return [];
    return this.q(
      `SELECT o.url, o.vantage FROM vantage_observations o ${PgStore.ASKED}
      JOIN unnest($2::text[], $3::text[]) AS f (url, vantage) ON f.url = o.url AND f.vantage = o.vantage WHERE o.run_id = $1`,
      [runId, jobs.map((j) => j.url), jobs.map((j) => j.vantage)],
    );
  }

  /**
   * The observations workers recorded for a run, each validated (one that does not read is a problem, not a row):
   * only those of jobs the run enqueued, recorded after they were; with `keys` (`policy.signedVantages`), only those
   * whose signature verifies with their vantage's key. What is left out is named in `problems()`.
   */
  async observationsOf(runId: string, keys?: VantageKeys): Promise<Observation[]> {
    const out: Observation[] = [];
    for await (const page of this.observationPages(runId, keys)) out.push(...page);
    return out;
  }

  /**
   * The same, a page at a time in the order of URL then vantage (a URL's observations are consecutive): the lines of
   * a large run are never all held, as text or as what they parse into.
   */
  async *observationPages(runId: string, keys?: VantageKeys): AsyncGenerator<Observation[]> {
    for (let after: { url: string; vantage: string } | null = null; ; ) {
      const rows: Array<{ url: string; vantage: string; line: string; signature: string | null; asked: boolean }> =
        await this.q(
          `
        SELECT o.url, o.vantage, o.line, o.signature, (j.run_id IS NOT NULL) AS asked FROM vantage_observations o LEFT ${PgStore.ASKED}
        WHERE o.run_id = $1 AND ($2::text IS NULL OR (o.url, o.vantage) > ($2, $3)) ORDER BY o.url, o.vantage LIMIT ${OBSERVATION_PAGE}`,
          [runId, after?.url ?? null, after?.vantage ?? null],
        );
      const page: Observation[] = [];
      for (const r of rows) {
        const left = (why: string) =>
          this.problem(`store run ${runId}`, 0, `the observation of ${r.url} from ${r.vantage} ${why}; left out`);
        if (!r.asked) {
          left('is not of a job this run enqueued (recorded before it was, or never enqueued)');
          continue;
        }
        if (keys && !this.signedBy(keys, r.vantage, r.signature, (key) => signObservation(key, r.line))) {
          left(`does not carry ${r.vantage}'s signature`);
          continue;
        }
        let value: unknown;
        try {
          value = JSON.parse(r.line);
        } catch {
          value = undefined;
        }
        const c = check(observationSchema, value);
        if (c.ok && c.value.url === r.url && c.value.vantage === r.vantage && c.value.run === runId) page.push(c.value);
        else left(`does not read (${c.ok ? 'not its key' : c.problem})`);
      }
      yield page;
      if (rows.length < OBSERVATION_PAGE) return;
      after = rows.at(-1)!;
    }
  }

  /** Whether a record of `vantage` carries the signature its key gives (`expected`), the key being the decider's. */
  private signedBy(
    keys: VantageKeys,
    vantage: string,
    signature: string | null,
    expected: (key: string) => string,
  ): boolean {
    const key = keys.get(vantage);
    return key !== undefined && sameSignature(signature, expected(key));
  }

  /** What a vantage's canaries said in a run (the first report stays), signed as an observation is. */
  async recordCanaries(
    runId: string,
    vantage: string,
    canaries: CanaryCheck,
    key: string | null = null,
  ): Promise<void> {
    await this.q(
      `INSERT INTO vantage_canaries (run_id, vantage, configured, reachable, signature) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [
        runId,
        vantage,
        canaries.configured,
        canaries.reachable,
        key === null ? null : signCanaries(key, runId, vantage, canaries),
      ],
    );
  }

  /**
   * What each vantage's canaries said in a run: only reports of the canaries jobs it enqueued, after; verified with
   * `keys`.
   */
  async canariesOf(runId: string, keys?: VantageKeys): Promise<Map<string, CanaryCheck>> {
    const rows = await this.q<{ vantage: string; configured: number; reachable: number; signature: string | null }>(
      `
      SELECT o.vantage, o.configured, o.reachable, o.signature FROM vantage_canaries o
      JOIN run_jobs j ON j.run_id = o.run_id AND j.url = $2 AND j.vantage = o.vantage AND o.recorded_at >= j.enqueued_at WHERE o.run_id = $1`,
      [runId, CANARIES_URL],
    );
    const out = new Map<string, CanaryCheck>();
    for (const r of rows) {
      const c = { configured: r.configured, reachable: r.reachable };
      if (!keys || this.signedBy(keys, r.vantage, r.signature, (key) => signCanaries(key, runId, r.vantage, c)))
        out.set(r.vantage, c);
      else
        this.problem(
          `store run ${runId}`,
          0,
          `the canaries report from ${r.vantage} does not carry its signature; left out`,
        );
    }
    return out;
  }

  /**
   * Takes one of a host's `limit` slots for `holder` for `leaseMs`, unless all are held or the host is not to be
   * probed yet: the slot, or null (try again later). Atomic per slot: two workers never hold the same one.
   */
  async acquireHost(host: string, limit: number, holder: string, leaseMs: number): Promise<number | null> {
    // One statement: a free slot (none held, or its lease expired) taken unless the host is held back. Two workers
    // after the same slot: the second finds it taken (its lease has not expired) and gets none this time.
    const [taken] = await this.q<{ slot: number }>(
      `INSERT INTO host_leases (host, slot, holder, expires_at)
      SELECT $1, s, $3, now() + $4 * interval '1 millisecond' FROM generate_series(0, $2::int - 1) AS s
      WHERE NOT EXISTS (SELECT 1 FROM host_not_before WHERE host = $1 AND until > now())
        AND NOT EXISTS (SELECT 1 FROM host_leases l WHERE l.host = $1 AND l.slot = s AND l.expires_at > now())
      ORDER BY random() LIMIT 1
      ON CONFLICT (host, slot) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at WHERE host_leases.expires_at <= now()
      RETURNING slot`,
      [host, limit, holder, leaseMs],
    );
    return taken?.slot ?? null;
  }

  /** Extends a held slot's lease (false: it expired and was taken by another). */
  async renewHost(host: string, slot: number, holder: string, leaseMs: number): Promise<boolean> {
    return (
      (
        await this.q(
          `UPDATE host_leases SET expires_at = now() + $4 * interval '1 millisecond' WHERE host = $1 AND slot = $2 AND holder = $3 RETURNING slot`,
          [host, slot, holder, leaseMs],
        )
      ).length === 1
    );
  }

  async releaseHost(host: string, slot: number, holder: string): Promise<void> {
    await this.q(`DELETE FROM host_leases WHERE host = $1 AND slot = $2 AND holder = $3`, [host, slot, holder]);
  }

  /**
   * Takes a slot on each of `addresses` for `holder`, to ask it on `port`, for `leaseMs`: all of them or none (false:
   * try again later). An address takes at most `limit` holders at once, all on one port. Each address is locked in
   * turn, in sorted order (two takers of overlapping addresses never wait on each other in a circle), and checked
   * once its lock is held, by the database's clock; the locks go with the transaction.
   */
  // biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
  async acquireAddresses(
    addresses: readonly string[],
    port: number,
    limit: number,
    holder: string,
    leaseMs: number,
  ): Promise<boolean> {
    const sorted = [...new Set(addresses)].sort();
    if (!sorted.length) return true;
    return this.transaction('the address leases were not taken', async (client) => {
      // A statement of its own per lock: a statement sees only what was committed before it started.
      for (const a of sorted)
        await client.query(`SELECT pg_advisory_xact_lock(hashtext('onetap address ' || $1))`, [a]);
      const { rows } = await client.query<{ address: string; slot: number | null }>(
        `
        SELECT a AS address, (SELECT min(s) FROM generate_series(0, $3::int - 1) AS s
          WHERE NOT EXISTS (SELECT 1 FROM address_leases l WHERE l.address = a AND l.slot = s AND l.expires_at > now())) AS slot
        FROM unnest($1::text[]) AS a
        WHERE NOT EXISTS (SELECT 1 FROM address_leases l WHERE l.address = a AND l.port <> $2 AND l.expires_at > now())`,
        [sorted, port, limit],
      );
      if (rows.length < sorted.length || rows.some((r) => r.slot === null)) return false;
      // Every slot taken here is free or expired, and nobody else writes it while the locks are held.
      await client.query(
        `INSERT INTO address_leases (address, slot, port, holder, expires_at)
        SELECT a, s, $3, $4, now() + $5 * interval '1 millisecond' FROM unnest($1::text[], $2::int[]) AS t(a, s)
        ON CONFLICT (address, slot) DO UPDATE SET port = excluded.port, holder = excluded.holder, expires_at = excluded.expires_at`,
        [rows.map((r) => r.address), rows.map((r) => r.slot), port, holder, leaseMs],
      );
      return true;
    });
  }

  /**
   * Extends `holder`'s unexpired address leases (one that expired may be another's already: never taken back); false
   * when one of them was not held any more.
   */
  async renewAddresses(addresses: readonly string[], holder: string, leaseMs: number): Promise<boolean> {
    const wanted = [...new Set(addresses)];
    const renewed = await this.q(
      `UPDATE address_leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE address = ANY($1::text[]) ` +
        `AND holder = $2 AND expires_at > now() RETURNING address`,
      [wanted, holder, leaseMs],
    );
    return renewed.length === wanted.length;
  }

  async releaseAddresses(addresses: readonly string[], holder: string): Promise<void> {
    await this.q(`DELETE FROM address_leases WHERE address = ANY($1::text[]) AND holder = $2`, [
      [...addresses],
      holder,
    ]);
  }

  /**
   * No worker probes `host` for `ms` from now (a 429's Retry-After, a census's rest) by the database's clock, which
   * every worker's lease is read by: a worker's own clock, skewed, would shorten or lengthen the hold. A later time
   * already set stays.
   */
  async holdHost(host: string, ms: number): Promise<void> {
    await this.q(
      `INSERT INTO host_not_before (host, until) VALUES ($1, now() + $2 * interval '1 millisecond') ON CONFLICT ` +
        `(host) DO UPDATE SET until = greatest(host_not_before.until, excluded.until)`,
      [host, ms],
    );
  }

  /** Whether the store answers now (a worker that lost it asks before it takes jobs again). */
  async reachable(): Promise<boolean> {
    return this.q('SELECT 1').then(
      () => true,
      () => false,
    );
  }

  async accept(url: string, entry: LockEntry): Promise<void> {
    await this.transaction('the acceptance was not recorded', (client) =>
      this.upsertAcceptances(client, { version: 1, servers: { [url]: entry } }),
    );
  }

  async upsertAcceptances(client: PoolClient, lock: ToolsLock): Promise<void> {
    for (const url of Object.keys(lock.servers).sort()) {
      await client.query(
        `INSERT INTO acceptances (url, entry) VALUES ($1, $2)
        ON CONFLICT (url) DO UPDATE SET entry = excluded.entry WHERE acceptances.entry IS DISTINCT FROM excluded.entry`,
        [url, JSON.stringify(lock.servers[url])],
      );
    }
  }

  /** Runs `work` in one transaction; any failure rolls it back and is thrown as a StoreError saying `lost`. */
  async transaction<T>(lost: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.db.connect();
    } catch (err) {
      throw storeFailure(err, this.url, `cannot connect; ${lost}`);
    }
    let broken: Error | undefined;
    // A connection that drops between two statements is an 'error' event; the next statement fails and says so.
    const dropped = (err: Error) => {
      broken ??= err;
    };
    client.on('error', dropped);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      broken = err as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw err instanceof StoreError || err instanceof RunRecordedError ? err : storeFailure(err, this.url, lost);
    } finally {
      // A connection that failed mid-transaction is not given back to the pool.
      client.off('error', dropped);
      client.release(broken);
    }
  }

  async problems(): Promise<HistoryProblems> {
    const rows = await this.q<{ file: string; line: number; problem: string; n: string }>(
      `
      SELECT file, line, problem, count(*) OVER () AS n FROM history_problems ORDER BY seq LIMIT $1`,
      [HISTORY_LIMITS.problemsListed],
    );
    const stored = rows.length ? Number(rows[0]!.n) : 0;
    const first = [...rows.map(({ file, line, problem }) => ({ file, line, problem })), ...this.readProblems].slice(
      0,
      HISTORY_LIMITS.problemsListed,
    );
    return { count: stored + this.readProblemCount, first };
  }

  /**
   * The whole store as text history: per month, its runs' lines in the order recorded; the snapshots; the acceptances.
   */
  async *months(): AsyncGenerator<{ month: string; text: string }> {
    const months = await this.q<{ month: string }>(`SELECT DISTINCT month FROM runs ORDER BY month`);
    for (const { month } of months) {
      const runs = await this.q<{ seq: string; line: string }>(
        `SELECT seq::text AS seq, line FROM runs WHERE month = $1 ORDER BY seq`,
        [month],
      );
      const parts: string[] = [];
      for (const r of runs) {
        parts.push(r.line + '\n');
        for (const o of await this.q<{ line: string }>(
          `SELECT line FROM observations WHERE run_seq = $1 ORDER BY position`,
          [r.seq],
        ))
          parts.push(o.line + '\n');
      }
      yield { month, text: parts.join('') };
    }
  }

  async storedSnapshots(): Promise<Array<{ hash: string; content: string }>> {
    return this.q(`SELECT hash, content FROM snapshots ORDER BY hash`);
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}

/**
 * Loads one month file's text into a transaction: its whole runs, verbatim (a run already in the store, by id and
 * start, is left out), its tool lists, and what could not be read as problems.
 */
/** A snapshot's stored text, kept as it is (it is checked when read, as a file is). */
export async function importSnapshot(client: PoolClient, hash: string, content: string): Promise<void> {
  await client.query(
    `INSERT INTO snapshots (hash, content, sha256) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING`,
    [hash, content, sha256Of(content)],
  );
}

export async function importMonth(
  client: PoolClient,
  file: string,
  text: Buffer,
): Promise<{ runs: number; present: number; problems: number }> {
  const month = file.slice(0, 7);
  const parsed = parseHistory(text);
  const lists = parsed.tools; // 0.1's 8-digit references with today's 16
  let runs = 0;
  let repeated = 0;
  for (const p of parsed.problems)
    await client.query(
      `INSERT INTO history_problems (file, line, problem) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [`history/${file}`, p.line, p.problem],
    );
  for (const r of parsed.runs) {
    // The run's lines as they are (blank ones left out), each with the row it read as.
    const lines: Array<{ line: string; start: number }> = [];
    for (let at = r.bytes[0]; at < r.bytes[1]; ) {
      const end = text.indexOf(0x0a, at);
      const line = text.toString('utf8', at, end);
      if (line.trim()) lines.push({ line, start: at });
      at = end + 1;
    }
    const rowsAt = new Map(r.run.aborted ? [] : r.spans.map((s, i) => [s[0], r.rows[i]!] as const));
    const observations = lines
      .slice(1)
      .map(({ line, start }) => ({ line, row: rowsAt.get(start) ?? null, toolsRef: refOf(line) }));
    // A run the store holds (the same id and start: imported before) is left out; another record of its id is a
    // history problem (a run id is recorded once).
    const [held] = (await client.query(`SELECT started_at FROM runs WHERE id = $1`, [r.run.id])).rows as Array<{
      started_at: string;
    }>;
    if (held) {
      if (held.started_at !== r.run.startedAt) {
        await client.query(
          `INSERT INTO history_problems (file, line, problem) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [
            `history/${file}`,
            r.line,
            'run line: its run id is recorded in the store already (a run id is recorded once): this record is left out',
          ],
        );
        repeated++;
      }
      continue;
    }
    await insertRun(client, { run: r.run, month, runLine: lines[0]!.line, observations, lists });
    runs++;
  }
  return { runs, present: parsed.runs.length - runs - repeated, problems: parsed.problems.length + repeated };
}

/** Inserts a run, its observation lines (one statement) and the tool lists its lines wrote in full. Returns its seq. */
async function insertRun(client: PoolClient, r: RunLines): Promise<string> {
  const inserted = await client.query(
    `INSERT INTO runs (id, started_at, month, aborted, applied, observations, line)
    VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq::text AS seq`,
    [r.run.id, r.run.startedAt, r.month, r.run.aborted !== null, r.run.applied, r.observations.length, r.runLine],
  );
  const seq = inserted.rows[0].seq as string;
  // In pages, inside the run's transaction: a large run's lines are never all encoded into one statement at once.
  for (let start = 0; start < r.observations.length; start += OBSERVATION_PAGE) {
    const o = r.observations.slice(start, start + OBSERVATION_PAGE);
    await client.query(
      `INSERT INTO observations (run_seq, run_started_at, position, url, vantage, observed_at, verdict, reason, tools_ref, line)
      SELECT $1::bigint, $2, * FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])`,
      [
        seq,
        r.run.startedAt,
        o.map((_, i) => start + i),
        o.map((x) => x.row?.url ?? null),
        o.map((x) => x.row?.vantage ?? null),
        o.map((x) => x.row?.observedAt ?? null),
        o.map((x) => x.row?.verdict ?? null),
        o.map((x) => x.row?.reason ?? null),
        o.map((x) => x.toolsRef),
        o.map((x) => x.line),
      ],
    );
  }
  const lists = [...r.lists];
  if (lists.length) {
    await client.query(
      `INSERT INTO tool_lists (month, ref, list) SELECT $1, * FROM unnest($2::text[], $3::jsonb[]) ON CONFLICT DO NOTHING`,
      [r.month, lists.map(([ref]) => ref), lists.map(([, list]) => JSON.stringify(list))],
    );
  }
  return seq;
}
