/**
 * Curation rules (policy "Must hold" and "Must not add"), pure: catalog in, problems out.
 * Each problem names its place as `servers[i] (name)` or `removed[i] (name)`.
 */
import { readPackageJson } from '../util/package-file.js';
import { once } from '../util/once.js';
import { ajv as loadAjv } from '../util/lazy.js';
import { placeOf, type Catalog, type CatalogServer } from './model.js';
import { hostOf, isLoopbackUrl, normalizeUrl } from './url.js';

export interface LintProblem { where: string; message: string }

export interface LintOptions {
  /** Permit http:// on loopback addresses (local fixtures and demos). */
  allowHttp?: boolean;
}

const shapeValidator = once(() => {
  const { Ajv2020, addFormats } = loadAjv();
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(readPackageJson('catalog/servers.schema.json') as object);
});

function validateShape(value: unknown) {
  const validate = shapeValidator();
  return { valid: validate(value) as boolean, errors: validate.errors ?? [] };
}

/** Header names that carry secrets; a default value for one would ship a secret to every user. */
export const SECRET_HEADER = /authorization|key|token|secret|password|cookie|session/i;

export function where(kind: 'servers' | 'removed', i: number, name: unknown): string {
  return `${kind}[${i}] (${typeof name === 'string' ? name : '?'})`;
}

export function lintCatalog(catalog: Catalog, opts: LintOptions = {}): LintProblem[] {
  const problems: LintProblem[] = [];
  const shape = validateShape(catalog);
  if (!shape.valid) {
    for (const e of shape.errors) {
      const m = /^\/(servers|removed)\/(\d+)(.*)$/.exec(e.instancePath);
      const place = m ? where(m[1] as 'servers', Number(m[2]), (catalog as unknown as Record<string, Array<{ name?: unknown }>>)[m[1]!]?.[Number(m[2])]?.name)
        : placeOf(catalog, e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')));
      problems.push({ where: place, message: `${m?.[3] ? `${m[3].slice(1)} ` : ''}${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? `: "${e.params.additionalProperty}"` : ''}` });
    }
  }
  catalog.servers.forEach((s, i) => {
    for (const message of entryProblems(s, catalog, opts)) problems.push({ where: where('servers', i, s.name), message });
  });
  // No two entries on one host unless it is a declared shared gateway (and then not the same URL twice).
  const gateways = new Set(catalog.policy.sharedGatewayHosts.map((h) => h.toLowerCase()));
  const seenHost = new Map<string, number>();
  const seenUrl = new Map<string, number>();
  catalog.servers.forEach((s, i) => {
    const host = hostOf(s.url);
    if (!host) return;
    const url = normalizeUrl(s.url);
    const sameUrl = seenUrl.get(url);
    const sameHost = seenHost.get(host);
    if (sameUrl !== undefined) problems.push({ where: where('servers', i, s.name), message: `duplicate of servers[${sameUrl}] (${catalog.servers[sameUrl]!.name}): same URL` });
    else if (sameHost !== undefined && !gateways.has(host)) problems.push({ where: where('servers', i, s.name), message: `duplicate host ${host}: servers[${sameHost}] (${catalog.servers[sameHost]!.name}) is already on it (declare it in policy.sharedGatewayHosts if several servers really live there)` });
    seenUrl.set(url, seenUrl.get(url) ?? i);
    seenHost.set(host, seenHost.get(host) ?? i);
  });
  return problems;
}

/** Problems of one entry on its own: the rules `add` also applies before it writes. */
export function entryProblems(s: CatalogServer, catalog: Catalog, opts: LintOptions = {}): string[] {
  const out: string[] = [];
  if ('command' in s || 'args' in s) out.push('stdio servers are not one-tap (has "command"/"args"): Streamable HTTP only');
  let url: URL | null = null;
  try { url = new URL(s.url); } catch { out.push(`not a URL: ${s.url}`); }
  if (url) {
    if (url.protocol === 'http:' && !(opts.allowHttp && isLoopbackUrl(s.url))) out.push('HTTPS only (http:// is allowed with --allow-http on loopback addresses only)');
    else if (url.protocol !== 'https:' && url.protocol !== 'http:') out.push(`HTTPS only, got ${url.protocol}`);
    if (/\/sse\/?$/i.test(url.pathname)) out.push('looks like a legacy HTTP+SSE endpoint (path ends in /sse): Streamable HTTP only');
    if (/\{[^}]*\}|%7B[^%]*%7D/i.test(s.url)) out.push('the URL has a template variable ({…}) that a user would have to fill in');
    if (url.username || url.password) out.push('credentials in the URL');
    if ([...url.searchParams.keys()].some((k) => SECRET_HEADER.test(k))) out.push('a query parameter that looks secret (key/token/…)');
  }
  const transport = s.transport ?? s.type;
  if (typeof transport === 'string' && !/^streamable-?http$/i.test(transport)) out.push(`transport "${transport}": Streamable HTTP only`);
  if (s.oauth === true || s.auth === 'oauth' || s.authType === 'oauth') out.push('OAuth-only servers are not one-tap');
  if (s.paid === true || s.pricing === 'paid') out.push('paid-only servers stay out');
  const host = hostOf(s.url);
  const authHosts = new Set(catalog.policy.authOptionalHosts.map((h) => h.toLowerCase()));
  if (s.requiresAuth === true && host && !authHosts.has(host)) out.push(`requiresAuth is only allowed on policy.authOptionalHosts (${[...authHosts].join(', ') || 'none'}), not ${host}`);
  for (const [name, value] of Object.entries(s.headers ?? {})) {
    if (SECRET_HEADER.test(name) && String(value).trim() !== '') out.push(`default header "${name}" looks secret: never ship a secret default (the user adds their own key)`);
  }
  const d = s.decision;
  if (!d || typeof d !== 'object' || !d.by?.trim() || !d.at?.trim() || !d.why?.trim()) out.push('no decision record: every entry needs {by, at, why} (this list is curated, not scraped)');
  const removed = removedMatch(s.url, catalog);
  if (removed !== null) out.push(`previously removed: removed[${removed}] (${catalog.removed[removed]!.name}, ${catalog.removed[removed]!.reason}); a new decision must first take it off the removed list`);
  return out;
}

/** Index of the removed entry this URL would bring back: same URL, or same host unless a shared gateway. */
export function removedMatch(url: string, catalog: Catalog): number | null {
  const gateways = new Set(catalog.policy.sharedGatewayHosts.map((h) => h.toLowerCase()));
  const host = hostOf(url);
  const i = catalog.removed.findIndex((r) => normalizeUrl(r.url) === normalizeUrl(url) || (host !== null && !gateways.has(host) && hostOf(r.url) === host));
  return i === -1 ? null : i;
}

export function formatProblems(file: string, problems: LintProblem[]): string {
  return problems.map((p) => `${file}: ${p.where}: ${p.message}`).join('\n');
}
