/**
 * The PostgreSQL store's schema, as numbered migrations applied in order by `onetap store migrate` (each in the
 * transaction that records it in `schema_migrations`). A migration, once released, is never edited: a change is a
 * new number. Every other command checks the version at start (`checkSchema` in `./pg-store.ts`).
 *
 * Lines are kept as the text history writes them (`./lines.ts`), verbatim, beside the columns queries need: a
 * store exported back to text gives the same lines, and every line read back is validated as a file's is.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * A query run after `sql`, in its transaction: each row's `said` is something `store migrate` names (what it found
   * and did).
   */
  report?: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'runs, observation lines, tool lists, snapshots, acceptances, history problems',
    sql: `
      CREATE TABLE runs (
        seq bigserial PRIMARY KEY,
        id text NOT NULL,
        started_at text NOT NULL,
        month text NOT NULL,
        aborted boolean NOT NULL,
        applied boolean NOT NULL,
        observations integer NOT NULL,
        line text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (id, started_at)
      );
      CREATE INDEX runs_started ON runs (started_at, seq);
      CREATE INDEX runs_month ON runs (month, seq);
      -- One line per observation of a run, in its order; url is null for a line that did not read as a row when
      -- imported (kept so the export gives the run back whole; never read as a row). The run's start is repeated
      -- here so a URL's rows come in run order from one index.
      CREATE TABLE observations (
        run_seq bigint NOT NULL REFERENCES runs (seq) ON DELETE CASCADE,
        run_started_at text NOT NULL,
        position integer NOT NULL,
        url text,
        vantage text,
        observed_at text,
        verdict text,
        reason text,
        tools_ref text,
        line text NOT NULL,
        PRIMARY KEY (run_seq, position)
      );
      CREATE INDEX observations_url ON observations (url, run_started_at, run_seq, position)
        INCLUDE (observed_at, verdict, reason) WHERE url IS NOT NULL;
      -- Tool lists written in full, per month (a line refers to one of its month, as in a month file).
      CREATE TABLE tool_lists (
        month text NOT NULL,
        ref text NOT NULL,
        list jsonb NOT NULL,
        PRIMARY KEY (month, ref)
      );
      CREATE TABLE snapshots (
        hash text PRIMARY KEY,
        content text NOT NULL,
        sha256 text NOT NULL
      );
      CREATE TABLE acceptances (
        url text PRIMARY KEY,
        entry jsonb NOT NULL
      );
      -- Lines of an imported text history that could not be used, as the import found them (once, however often imported).
      CREATE TABLE history_problems (
        seq bigserial PRIMARY KEY,
        file text NOT NULL,
        line integer NOT NULL,
        problem text NOT NULL,
        UNIQUE (file, line, problem)
      );
    `,
  },
  {
    version: 2,
    name: 'observations per run, URL and vantage, as workers make them; canaries per run and vantage',
    sql: `
      -- A worker's observation, recorded as its job finishes, keyed as the job is (a retried job records once). It
      -- counts for nothing until the deciding process records its run (then the run's rows, in observations).
      CREATE TABLE vantage_observations (
        run_id text NOT NULL,
        url text NOT NULL,
        vantage text NOT NULL,
        observed_at text NOT NULL,
        line text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, url, vantage)
      );
      CREATE TABLE vantage_canaries (
        run_id text NOT NULL,
        vantage text NOT NULL,
        configured integer NOT NULL,
        reachable integer NOT NULL,
        PRIMARY KEY (run_id, vantage)
      );
    `,
  },
  {
    version: 3,
    name: 'per-host leases and not-before times shared by every worker',
    sql: `
      -- At most a run's per-host limit of probes in flight per host, over every worker: a slot is held until it is
      -- released or its lease expires (renewed while the probe runs), so a killed worker cannot keep one.
      CREATE TABLE host_leases (
        host text NOT NULL,
        slot integer NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (host, slot)
      );
      -- A host that answered 429: no worker probes it before this time.
      CREATE TABLE host_not_before (
        host text PRIMARY KEY,
        until timestamptz NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: "runs across vantages registered at their first enqueue, with their jobs; vantages' signatures",
    sql: `
      -- A run across vantages as its first enqueue registered it (once: a re-run with the same id keeps this row):
      -- its id, its start, the vantages asked, and when, by the database's clock.
      CREATE TABLE run_registrations (
        id text PRIMARY KEY,
        started_at text NOT NULL,
        vantages text[] NOT NULL,
        registered_at timestamptz NOT NULL DEFAULT now()
      );
      -- Each job a run enqueued (a vantage's canaries as the URL '#canaries'), and when: an observation counts only for
      -- a job that was enqueued, and only when it was recorded after that.
      CREATE TABLE run_jobs (
        run_id text NOT NULL REFERENCES run_registrations (id),
        url text NOT NULL,
        vantage text NOT NULL,
        enqueued_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, url, vantage)
      );
      -- HMAC-SHA256 with the vantage's key (null: its workers hold none): what policy.signedVantages verifies.
      ALTER TABLE vantage_observations ADD COLUMN signature text;
      ALTER TABLE vantage_canaries ADD COLUMN signature text, ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT now();
    `,
  },
  {
    version: 5,
    name: 'per-address leases shared by every worker of a census',
    sql: `
      -- A census's probes of one resolved address, over every worker: at most a few slots per address, all held on one
      -- port (an address is never asked on two ports at once). Taken under an advisory lock on the address; a slot is
      -- held until it is released or its lease expires (renewed while the probe runs), so a killed worker cannot keep one.
      CREATE TABLE address_leases (
        address text NOT NULL,
        slot integer NOT NULL,
        port integer NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (address, slot)
      );
    `,
  },
  {
    version: 6,
    name: 'a run id is recorded once; runs recorded again under an id before this are kept aside',
    sql: `
      -- Before this, a re-run with the same --run-id recorded a second row (and its observations counted twice in a
      -- drop streak). The first recorded row of an id that was not aborted stays; each later one moves here whole (its run line and its
      -- observation lines in order), out of every query, and store migrate names it.
      CREATE TABLE runs_set_aside (
        seq bigint PRIMARY KEY,
        id text NOT NULL,
        started_at text NOT NULL,
        month text NOT NULL,
        aborted boolean NOT NULL,
        applied boolean NOT NULL,
        observations integer NOT NULL,
        line text NOT NULL,
        recorded_at timestamptz NOT NULL,
        lines text[] NOT NULL,
        set_aside_at timestamptz NOT NULL DEFAULT now()
      );
      INSERT INTO runs_set_aside (seq, id, started_at, month, aborted, applied, observations, line, recorded_at, lines)
        SELECT r.seq, r.id, r.started_at, r.month, r.aborted, r.applied, r.observations, r.line, r.recorded_at,
          ARRAY(SELECT o.line FROM observations o WHERE o.run_seq = r.seq ORDER BY o.position)
        FROM runs r WHERE EXISTS (SELECT 1 FROM runs f WHERE f.id = r.id AND f.seq < r.seq AND NOT f.aborted);
      -- Their observation lines go with them (ON DELETE CASCADE).
      DELETE FROM runs r USING runs_set_aside a WHERE r.seq = a.seq;
      -- A run the outage guard aborted decided nothing: it claims no id, and a re-run of it records afresh.
      CREATE UNIQUE INDEX runs_id_once ON runs (id) WHERE NOT aborted;
      ALTER TABLE runs DROP CONSTRAINT runs_id_started_at_key;
    `,
    report: `SELECT format('run %s (started %s, recorded %s): recorded again after its first record; kept aside in runs_set_aside (seq %s)',
      id, started_at, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), seq) AS said FROM runs_set_aside ORDER BY seq`,
  },
];

/** The schema version this onetap reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;
