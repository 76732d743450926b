/**
 * Probe-only keys: a requiresAuth entry's `probeHeaders` name environment variables; their values are sent when
 * onetap probes, never written anywhere (the prober redacts them from whatever a server sends back). Which
 * variables a catalog may name is `src/catalog/key-env.ts`'s rule: a refused one is never read.
 */
import type { CatalogServer, ProbeHeader } from '../catalog/model.js';
import { keyEnvRefusal, ownVariableRefusal } from '../catalog/key-env.js';
import type { ProbeTarget } from './probe-many.js';
import type { ProbeKey } from './probe.js';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * What `probeHeaders` give in `env`: each key (after its prefix), the variables unset or empty, and those the key rule
 * refused (never read).
 */
export interface KeysRead {
  keys: Record<string, ProbeKey>;
  missingKeys: string[];
  refusedKeys: string[];
}

/**
 * The keys `probeHeaders` give in `env`: each set variable a key (after its prefix), each unset or empty one
 * missing, each one the key rule refuses (`keyEnv`: the catalog's `policy.keyEnv`; absent, the rule without it)
 * refused: not read, not sent.
 */
export function keysFrom(
  probeHeaders: Readonly<Record<string, ProbeHeader>>,
  env: Env,
  keyEnv?: readonly string[],
): KeysRead {
  const keys: Record<string, ProbeKey> = {};
  const missingKeys: string[] = [];
  const refusedKeys: string[] = [];
  for (const [header, source] of Object.entries(probeHeaders)) {
    if (keyEnvRefusal(source.env, keyEnv) !== null) {
      refusedKeys.push(source.env);
      continue;
    }
    // Own properties only: a plain object's `constructor` is no variable.
    const raw = Object.hasOwn(env, source.env) ? env[source.env] : undefined;
    const value = typeof raw === 'string' ? raw.trim() : '';
    if (value) keys[header] = { value, ...(source.prefix ? { prefix: source.prefix } : {}) };
    else missingKeys.push(source.env);
  }
  return { keys, missingKeys, refusedKeys };
}

/**
 * A catalog row as a probe target: a requiresAuth entry with its keys from `env`, as the catalog's `policy.keyEnv`
 * permits.
 */
export function targetOf(s: CatalogServer, env: Env | undefined, keyEnv: readonly string[] | undefined): ProbeTarget {
  const target: ProbeTarget = { url: s.url, requiresAuth: s.requiresAuth, headers: s.headers };
  return s.requiresAuth && s.probeHeaders
    ? { ...target, ...keysFrom(s.probeHeaders, env ?? process.env, keyEnv) }
    : target;
}

/** `--probe-header 'Authorization: Bearer ${API_KEY}'`: the header and where its value comes from, or why not. */
export function parseProbeHeader(line: string): { name: string; source: ProbeHeader } | string {
  const at = line.indexOf(':');
  const name = at > 0 ? line.slice(0, at).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return 'a probe header is "Name: prefix${VARIABLE}"';
  const m = /^(.*?)\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(line.slice(at + 1).trimStart());
  if (!m)
    return 'the value must end in ${VARIABLE}, the environment variable holding the key (in single quotes, so the shell leaves it be)';
  // Refused everywhere (src/catalog/key-env.ts), so refused here; the rest of the rule is a catalog's (policy.keyEnv).
  return ownVariableRefusal(m[2]!) ?? { name, source: { env: m[2]!, ...(m[1] ? { prefix: m[1] } : {}) } };
}
