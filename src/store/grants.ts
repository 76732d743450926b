/**
 * A vantage's own PostgreSQL role (`onetap store grant-vantage <name>` prints the SQL): what a worker of that vantage
 * needs, and nothing more. It reads the store's schema version; records its own vantage's observations and canaries
 * (row-level security refuses any other vantage's rows, and `recorded_at` is not its to set: the database's clock
 * says when); adds the tool lists its observations name; shares the host and address leases and the holds with every
 * worker; and, in the queue's schema, works its own queue's jobs only (row-level security on every engine table that
 * names a queue). It cannot read or write the runs, their rows, the acceptances, the run registrations or their jobs.
 *
 * Row-level security is added as a permissive policy for every role (what each may do stays what its grants say)
 * and a restrictive one for this role alone, so enabling it changes nothing for the store's owner or anyone else.
 */
import { queueSchemaOf } from './url.js';

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The role's name when none is given: the store's schema and the vantage (PostgreSQL roles are the whole server's). */
export const vantageRoleOf = (schema: string, vantage: string) => `${schema}_vantage_${vantage}`;

/** The queue engine's tables that name a queue, with the column(s) that do: the role sees only its queue's rows. */
const QUEUE_TABLES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['job', ['queue']],
  ['job_log', ['queue']],
  ['event', ['queue']],
  ['meta', ['queue']],
  ['metrics', ['queue']],
  ['rate_limit', ['queue']],
  ['dedup', ['queue']],
  ['dedup_next', ['queue']],
  ['scheduler', ['queue']],
  ['job_dependency', ['parent_queue', 'child_queue']],
];

/** Row-level security on `table` (schema-qualified): everyone as before, `role` only where `condition` holds. */
function onlyWhere(table: string, policy: string, role: string, condition: string): string[] {
  return [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;`,
    `DROP POLICY IF EXISTS onetap_every_role ON ${table};`,
    `CREATE POLICY onetap_every_role ON ${table} USING (true) WITH CHECK (true);`,
    `DROP POLICY IF EXISTS ${ident(policy)} ON ${table};`,
    `CREATE POLICY ${ident(policy)} ON ${table} AS RESTRICTIVE TO ${ident(role)} USING (${condition}) WITH CHECK (${condition});`,
  ];
}

/**
 * The SQL, idempotent, one transaction, to be run by the store's owner after `onetap store migrate` (which makes the
 * queue's tables too). The role gets no password here (a secret never goes to stdout): the owner sets one.
 */
export function vantageRoleSql(opts: { schema: string; vantage: string; queue: string; role: string }): string {
  const { schema, vantage, queue, role } = opts;
  const s = (table: string) => `${ident(schema)}.${ident(table)}`;
  const qs = queueSchemaOf(schema);
  const q = (table: string) => `${ident(qs)}.${ident(table)}`;
  const r = ident(role);
  const policy = `onetap vantage ${vantage}`;
  return [
    `-- The role of vantage ${vantage}'s workers in the store ${schema} (and its queue, ${qs}): run as the store's owner,`,
    `-- after \`onetap store migrate\`. Then give it a password (\\password ${role}) and start the workers with`,
    `-- ONETAP_STORE_URL='postgres://${role}:PASSWORD@HOST/DATABASE?schema=${schema}' onetap worker --vantage ${vantage}`,
    'BEGIN;',
    `DO $$ BEGIN CREATE ROLE ${r} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;`,
    `GRANT USAGE ON SCHEMA ${ident(schema)}, ${ident(qs)} TO ${r};`,
    "-- The store: its version; its own vantage's observations and canaries (the database's clock says when); the tool",
    '-- lists they name; the host and address leases and the holds every worker shares.',
    `GRANT SELECT ON ${s('schema_migrations')} TO ${r};`,
    `GRANT INSERT (run_id, url, vantage, observed_at, line, signature) ON ${s('vantage_observations')} TO ${r};`,
    `GRANT INSERT (run_id, vantage, configured, reachable, signature) ON ${s('vantage_canaries')} TO ${r};`,
    // ON CONFLICT (hash) reads the conflict's column.
    `GRANT INSERT, SELECT (hash) ON ${s('snapshots')} TO ${r};`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${s('host_leases')} TO ${r};`,
    `GRANT SELECT, INSERT, UPDATE ON ${s('host_not_before')} TO ${r};`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${s('address_leases')} TO ${r};`,
    ...onlyWhere(s('vantage_observations'), policy, role, `vantage = ${literal(vantage)}`),
    ...onlyWhere(s('vantage_canaries'), policy, role, `vantage = ${literal(vantage)}`),
    `-- The queue: its own queue's jobs (${queue}) and nothing of another's.`,
    `GRANT SELECT ON ${q('migration')} TO ${r};`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ${QUEUE_TABLES.map(([t]) => q(t)).join(', ')} TO ${r};`,
    `GRANT USAGE, SELECT, UPDATE ON SEQUENCE ${q('job_seq')}, ${q('event_seq')} TO ${r};`,
    `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${ident(qs)} TO ${r};`,
    ...QUEUE_TABLES.flatMap(([t, columns]) =>
      onlyWhere(q(t), policy, role, columns.map((c) => `${c} = ${literal(queue)}`).join(' AND ')),
    ),
    'COMMIT;',
    '',
  ].join('\n');
}
