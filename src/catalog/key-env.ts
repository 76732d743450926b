/**
 * Which environment variables a catalog may name as a probe key (`probeHeaders`), one pure rule. A catalog comes
 * through pull requests; the process that probes holds the store's URL and the CI's own credentials in its
 * environment, and whatever a row names is sent to that row's server. So:
 *
 *   0. a name that is no environment variable's name (letters, digits and _) is refused;
 *   1. the store's and the CI's own variables are refused always, whatever `policy.keyEnv` lists: names beginning
 *      `ONETAP_`, `GITHUB_`, `ACTIONS_`, `RUNNER_`, or `PG` (what PostgreSQL's clients read: `PGPASSWORD`, …);
 *   2. a name ending in `_TOKEN`, `_PASSWORD` or `_URL` only when `policy.keyEnv` lists it by its full name (a
 *      `PREFIX_*` pattern is not enough);
 *   3. with `policy.keyEnv`, only what it lists (a name, or a `PREFIX_*` pattern), rules 1 and 2 still holding.
 *
 * Rules 1 and 2 compare in upper case: on Windows `github_token` reads `GITHUB_TOKEN`. `keyEnv`'s own entries are
 * matched as written (they can only narrow what is allowed).
 */

/** Prefixes of the variables the store, its PostgreSQL client and the CI runner keep for themselves. */
const OWN_PREFIXES = ['ONETAP_', 'GITHUB_', 'ACTIONS_', 'RUNNER_', 'PG'] as const;
/** Suffixes of names that hold credentials of something else: a key only when listed by full name. */
const CREDENTIAL_SUFFIXES = ['_TOKEN', '_PASSWORD', '_URL'] as const;

/** An environment variable's name as `probeHeaders` may give it (the schema's pattern). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const ownPrefix = (name: string) => OWN_PREFIXES.find((p) => name.toUpperCase().startsWith(p));
const credentialSuffix = (name: string) => CREDENTIAL_SUFFIXES.find((s) => name.toUpperCase().endsWith(s));
const matches = (entry: string, name: string) =>
  entry.endsWith('_*') ? name.startsWith(entry.slice(0, -1)) : name === entry;

/** Rule 1 alone: why `name` is never a probe key, anywhere (a catalog's, a command line's), or null. */
export function ownVariableRefusal(name: string): string | null {
  const own = ownPrefix(name);
  return own ? `${name} is one of the store's or the CI's own variables (${own}…): never a probe key` : null;
}

/** Why a catalog may not name `name` as a probe key (`keyEnv`: the catalog's `policy.keyEnv`), or null when it may. */
export function keyEnvRefusal(name: string, keyEnv: readonly string[] | undefined): string | null {
  if (!ENV_NAME.test(name)) return "not an environment variable's name (letters, digits and _)";
  const own = ownVariableRefusal(name);
  if (own) return own;
  const listed = keyEnv?.some((e) => e === name);
  const suffix = credentialSuffix(name);
  if (suffix && !listed)
    return `${name} ends in ${suffix}: a probe key only when policy.keyEnv lists it by its full name`;
  if (keyEnv && !listed && !keyEnv.some((e) => matches(e, name))) return `${name} is not in policy.keyEnv`;
  return null;
}

/** Why a `policy.keyEnv` entry can never allow anything (a name or pattern of rule 1), or null. */
export function keyEnvEntryProblem(entry: string): string | null {
  const own = ownPrefix(entry.replace(/\*$/, ''));
  return own
    ? `${entry} names the store's or the CI's own variables (${own}…), refused always: listing it allows nothing`
    : null;
}
