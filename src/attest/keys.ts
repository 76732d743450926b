/**
 * Probe-only keys: a requiresAuth entry's `probeHeaders` name environment variables; their values are sent when
 * onetap probes, never written anywhere (the prober redacts them from whatever a server sends back).
 */
import type { CatalogServer, ProbeHeader } from '../catalog/model.js';
import type { ProbeTarget } from './probe-many.js';
import type { ProbeKey } from './probe.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** The keys `probeHeaders` give in `env`: each set variable a key (after its prefix), each unset or empty one missing. */
export function keysFrom(probeHeaders: Readonly<Record<string, ProbeHeader>>, env: Env): { keys: Record<string, ProbeKey>; missingKeys: string[] } {
  const keys: Record<string, ProbeKey> = {};
  const missingKeys: string[] = [];
  for (const [header, source] of Object.entries(probeHeaders)) {
    const value = env[source.env]?.trim();
    if (value) keys[header] = { value, ...(source.prefix ? { prefix: source.prefix } : {}) };
    else missingKeys.push(source.env);
  }
  return { keys, missingKeys };
}

/** A catalog row as a probe target: a requiresAuth entry with its keys from `env`. */
export function targetOf(s: CatalogServer, env: Env = process.env): ProbeTarget {
  const target: ProbeTarget = { url: s.url, requiresAuth: s.requiresAuth, headers: s.headers };
  return s.requiresAuth && s.probeHeaders ? { ...target, ...keysFrom(s.probeHeaders, env) } : target;
}

/** `--probe-header 'Authorization: Bearer ${API_KEY}'`: the header and where its value comes from, or why not. */
export function parseProbeHeader(line: string): { name: string; source: ProbeHeader } | string {
  const at = line.indexOf(':');
  const name = at > 0 ? line.slice(0, at).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return 'a probe header is "Name: prefix${VARIABLE}"';
  const m = /^(.*?)\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(line.slice(at + 1).trimStart());
  if (!m) return 'the value must end in ${VARIABLE}, the environment variable holding the key (in single quotes, so the shell leaves it be)';
  return { name, source: { env: m[2]!, ...(m[1] ? { prefix: m[1] } : {}) } };
}
