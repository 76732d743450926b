/**
 * A store's address: a PostgreSQL URL (`postgres://user:password@host:5432/db?schema=name`, or over a Unix
 * socket `postgresql://user@/db?host=/var/run/postgresql`). It may hold a password, so it comes from a flag or the
 * environment, never a catalog, and is shown only with the password replaced. No driver is loaded here.
 */
const URL_SCHEME = /^postgres(?:ql)?:\/\//;
/** Lower case: PostgreSQL folds an unquoted name (as `search_path` reads it) to lower case. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** The schema the store's tables live in when the URL names none. */
export const DEFAULT_SCHEMA = 'onetap';

/** What is wrong with a store URL, or null: `postgres://` or `postgresql://`, its `schema` parameter an SQL name. */
export function storeUrlProblem(url: string): string | null {
  if (!URL_SCHEME.test(url)) return 'expected a PostgreSQL URL (postgres://… or postgresql://…)';
  const schema = new URLSearchParams(url.split('?')[1] ?? '').get('schema');
  if (schema !== null && !SCHEMA_NAME.test(schema))
    return 'its schema parameter must be an SQL name in lower case (a-z, digits, _)';
  return null;
}

/** A store URL as it may be shown: its password (in the user part or a parameter) replaced by `***`. */
export function redactStoreUrl(url: string): string {
  return url
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/?#]*:)[^/?#]*@/, '$1***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** The schema of the queue beside a store's schema (the engine's tables: `onetap store migrate` makes them too). */
export const queueSchemaOf = (storeSchema: string) => `${storeSchema}_queue`;

/** The connection string for `pg` (the `schema` parameter taken out) and the schema. */
export function connection(url: string): { connectionString: string; schema: string } {
  const [base, query = ''] = url.split(/\?(.*)/s);
  const params = new URLSearchParams(query);
  const schema = params.get('schema') ?? DEFAULT_SCHEMA;
  params.delete('schema');
  const rest = params.toString();
  return { connectionString: rest ? `${base}?${rest}` : base!, schema };
}
