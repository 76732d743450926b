/**
 * Curation rules (policy "Must hold" and "Must not add"), pure: catalog in, problems out.
 * Each problem names its place as `servers[i] (name)` or `removed[i] (name)`.
 */
import { readPackageJson } from '../util/package-file.js';
import { once } from '../util/once.js';
import { ajv as loadAjv } from '../util/lazy.js';
import { placeOf, type Catalog, type CatalogServer } from './model.js';
import { ENV_NAME, keyEnvEntryProblem, keyEnvRefusal } from './key-env.js';
import { outputsProblems } from './outputs.js';
import { hostOf, isLoopbackUrl, normalizeUrl } from './url.js';
import { RULES, type CharRule } from '../screen/rules.js';
import { escapeHidden, firstHidden, hiddenKind, visibleCodePoint, codePointName } from '../text/unicode.js';
import { inert } from '../text/escape.js';

export interface LintProblem {
  where: string;
  message: string;
}

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

/** The built-in client profiles a list's own profile can extend (the schema's enum, held to the code by a test). */
export const builtInProfileIds = once((): string[] => {
  const schema = readPackageJson('catalog/servers.schema.json') as {
    $defs: { profile: { properties: { extends: { enum: string[] } } } };
  };
  return schema.$defs.profile.properties.extends.enum;
});

/** The deciding profile must exist; a list's own profile ids must not shadow a built-in one. */
function policyProblems(catalog: Catalog, opts: LintOptions): LintProblem[] {
  const builtIn = builtInProfileIds();
  const own = Object.keys(catalog.policy.profiles ?? {});
  const problems: LintProblem[] = own
    .filter((id) => builtIn.includes(id))
    .map((id) => ({
      where: `policy.profiles.${id}`,
      message: `"${id}" is a built-in profile: give the list's own profile another id`,
    }));
  const chosen = catalog.policy.clientProfile;
  if (chosen !== undefined && !builtIn.includes(chosen) && !own.includes(chosen)) {
    problems.push({
      where: 'policy.clientProfile',
      message: `unknown client profile "${chosen}" (known: ${[...builtIn, ...own].join(', ')})`,
    });
  }
  (catalog.policy.keyEnv ?? []).forEach((entry, i) => {
    const problem = typeof entry === 'string' ? keyEnvEntryProblem(entry) : null;
    if (problem) problems.push({ where: `policy.keyEnv[${i}]`, message: problem });
  });
  // A canary is asked as a job would ask it: https, under the address rule (loopback only with --allow-http).
  (catalog.policy.canaries ?? []).forEach((c, i) => {
    if (/^http:/i.test(c) && !(opts.allowHttp && isLoopbackUrl(c)))
      problems.push({
        where: `policy.canaries[${i}]`,
        message:
          'HTTPS only (http:// is allowed with --allow-http on loopback addresses only): an http canary is never reached',
      });
  });
  const { vantages, quorum } = catalog.policy;
  if (quorum !== undefined && vantages === undefined)
    problems.push({ where: 'policy.quorum', message: 'only with policy.vantages' });
  if (quorum !== undefined && vantages !== undefined && quorum > vantages.length)
    problems.push({ where: 'policy.quorum', message: `${quorum} is more than the ${vantages.length} vantages` });
  return problems;
}

/**
 * Text that looks like a credential: a known token format, or a long unbroken run of letters and digits mixing
 * both (a random key) that is not a hex digest. Heuristic on purpose: a catalog holds names, URLs and prose.
 */
export function looksSecret(text: string): boolean {
  if (
    new RegExp(
      String.raw`\b(?:sk|pk|rk)[-_](?:live|test|proj|ant)?[-_]?[A-Za-z0-9]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|` +
        String.raw`\bgithub_pat_\w{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}\b|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}|\bBearer\s+\S{8,}`,
    ).test(text)
  )
    return true;
  for (const run of text.match(/[A-Za-z0-9_-]{32,}/g) ?? []) {
    if (/^[0-9a-f]+$/i.test(run)) continue; // a digest, not a key
    if (/[0-9]/.test(run) && /[a-z]/.test(run) && /[A-Z]/.test(run)) return true;
  }
  return false;
}

/** Every string of a catalog with its path (keys excluded: they are names). */
function strings(value: unknown, path: string[] = []): Array<{ path: string[]; text: string }> {
  if (typeof value === 'string') return [{ path, text: value }];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => strings(v, [...path, k]));
}

/** Header names that carry secrets; a default value for one would ship a secret to every user. */
export const SECRET_HEADER = /authorization|key|token|secret|password|cookie|session/i;

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function where(kind: 'servers' | 'removed', i: number, name: unknown): string {
  return `${kind}[${i}] (${typeof name === 'string' ? name : '?'})`;
}

export function lintCatalog(catalog: Catalog, opts: LintOptions = {}): LintProblem[] {
  const problems: LintProblem[] = [];
  const shape = validateShape(catalog);
  if (!shape.valid) {
    for (const e of shape.errors) {
      const m = /^\/(servers|removed)\/(\d+)(.*)$/.exec(e.instancePath);
      const place = m
        ? where(
            m[1] as 'servers',
            Number(m[2]),
            (catalog as unknown as Record<string, Array<{ name?: unknown }>>)[m[1]!]?.[Number(m[2])]?.name,
          )
        : placeOf(
            catalog,
            e.instancePath
              .split('/')
              .slice(1)
              .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
          );
      problems.push({
        where: place,
        message: `${m?.[3] ? `${m[3].slice(1)} ` : ''}${e.message ?? 'is invalid'}${
          e.params && 'additionalProperty' in e.params ? `: "${e.params.additionalProperty}"` : ''
        }`,
      });
    }
  }
  catalog.servers.forEach((s, i) => {
    for (const message of entryProblems(s, catalog, opts))
      problems.push({ where: where('servers', i, s.name), message });
  });
  catalog.removed.forEach((r, i) => {
    for (const message of hiddenTextProblems(r)) problems.push({ where: where('removed', i, r.name), message });
  });
  const { servers: _servers, removed: _removed, ...rest } = catalog;
  for (const message of hiddenTextProblems(rest)) problems.push({ where: '(catalog)', message });
  problems.push(...policyProblems(catalog, opts));
  for (const message of outputsProblems(catalog.outputs)) problems.push({ where: '(catalog)', message });
  for (const { path, text } of strings(catalog)) {
    if (looksSecret(text))
      problems.push({
        where: placeOf(catalog, path),
        message:
          'looks like a literal secret (a key or token): never write one into the catalog; a probe-only key comes from an environment variable (probeHeaders)',
      });
  }
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
    if (sameUrl !== undefined)
      problems.push({
        where: where('servers', i, s.name),
        message: `duplicate of servers[${sameUrl}] (${catalog.servers[sameUrl]!.name}): same URL`,
      });
    else if (sameHost !== undefined && !gateways.has(host))
      problems.push({
        where: where('servers', i, s.name),
        message:
          `duplicate host ${host}: servers[${sameHost}] (${catalog.servers[sameHost]!.name}) is already on ` +
          `it (declare it in policy.sharedGatewayHosts if several servers really live there)`,
      });
    seenUrl.set(url, seenUrl.get(url) ?? i);
    seenHost.set(host, seenHost.get(host) ?? i);
  });
  return problems;
}

/** Problems of one entry on its own: the rules `add` also applies before it writes. */
export function entryProblems(s: CatalogServer, catalog: Catalog, opts: LintOptions = {}): string[] {
  const out: string[] = [];
  if ('command' in s || 'args' in s)
    out.push('stdio servers are not one-tap (has "command"/"args"): Streamable HTTP only');
  let url: URL | null = null;
  try {
    url = new URL(s.url);
  } catch {
    out.push(`not a URL: ${s.url}`);
  }
  if (url) {
    if (url.protocol === 'http:' && !(opts.allowHttp && isLoopbackUrl(s.url)))
      out.push('HTTPS only (http:// is allowed with --allow-http on loopback addresses only)');
    else if (url.protocol !== 'https:' && url.protocol !== 'http:') out.push(`HTTPS only, got ${url.protocol}`);
    if (/\/sse\/?$/i.test(url.pathname))
      out.push('looks like a legacy HTTP+SSE endpoint (path ends in /sse): Streamable HTTP only');
    if (/\{[^}]*\}|%7B[^%]*%7D/i.test(s.url))
      out.push('the URL has a template variable ({…}) that a user would have to fill in');
    if (url.username || url.password) out.push('credentials in the URL');
    if ([...url.searchParams.keys()].some((k) => SECRET_HEADER.test(k)))
      out.push('a query parameter that looks secret (key/token/…)');
  }
  const transport = s.transport ?? s.type;
  if (typeof transport === 'string' && !/^streamable-?http$/i.test(transport))
    out.push(`transport "${transport}": Streamable HTTP only`);
  if (s.oauth === true || s.auth === 'oauth' || s.authType === 'oauth') out.push('OAuth-only servers are not one-tap');
  if (s.paid === true || s.pricing === 'paid') out.push('paid-only servers stay out');
  const host = hostOf(s.url);
  const authHosts = new Set(catalog.policy.authOptionalHosts.map((h) => h.toLowerCase()));
  if (s.requiresAuth === true && host && !authHosts.has(host))
    out.push(
      `requiresAuth is only allowed on policy.authOptionalHosts (${[...authHosts].join(', ') || 'none'}), not ${host}`,
    );
  for (const [name, value] of Object.entries(s.headers ?? {})) {
    if (SECRET_HEADER.test(name) && String(value).trim() !== '')
      out.push(`default header "${name}" looks secret: never ship a secret default (the user adds their own key)`);
  }
  if (s.probeHeaders !== undefined && s.requiresAuth !== true)
    out.push('probeHeaders need requiresAuth: true (a key for probing is only for an auth-optional server)');
  for (const [name, source] of Object.entries(s.probeHeaders ?? {})) {
    if (!HEADER_NAME.test(name)) out.push(`probeHeaders: "${name}" is not a header name`);
    // A name that is no variable's name is the schema's problem, reported above.
    const refusal =
      typeof source?.env === 'string' && ENV_NAME.test(source.env)
        ? keyEnvRefusal(source.env, catalog.policy.keyEnv)
        : null;
    if (refusal) out.push(`probeHeaders.${name}: ${refusal} (the row is probed without it)`);
  }
  const d = s.decision;
  if (!d || typeof d !== 'object' || !d.by?.trim() || !d.at?.trim() || !d.why?.trim())
    out.push('no decision record: every entry needs {by, at, why} (this list is curated, not scraped)');
  const removed = removedMatch(s.url, catalog);
  if (removed !== null)
    out.push(
      `previously removed: removed[${removed}] (${catalog.removed[removed]!.name}, ` +
        `${catalog.removed[removed]!.reason}); a new decision must first take it off the removed list`,
    );
  out.push(...hiddenTextProblems(s));
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Hidden characters in catalog text

/** The screening's character rules (src/screen/rules.ts): invisible and tag characters, bidi, ANSI, controls. */
const CHARACTER_RULES = RULES.filter((r): r is CharRule => r.kind === 'chars');

/** Code points of a hit, as `U+XXXX` words (at most four, then `…`). */
function codePoints(text: string): string {
  const cps = [...text];
  return cps.slice(0, 4).map(codePointName).join(' ') + (cps.length > 4 ? ' …' : '');
}

/**
 * The first hidden character of one string: where a character rule of the screening fires, or where an output
 * would show a character escaped (./outputs/unicode.ts), whichever comes first. Null when there is none.
 */
export function hiddenCharacterProblem(text: string): string | null {
  let hit: { index: number; length: number } | null = null;
  let rule = '';
  for (const r of CHARACTER_RULES) {
    const h = r.scan(text);
    if (h && (hit === null || h.index < hit.index)) {
      hit = h;
      rule = r.id;
    }
  }
  const shown = firstHidden(text);
  if (shown && (hit === null || shown.index < hit.index)) {
    hit = { index: shown.index, length: shown.char.length };
    rule = '';
  }
  if (hit === null) return null;
  const chars = [...text.slice(hit.index, hit.index + Math.max(hit.length, 1))];
  const kinds = [...new Set(chars.slice(0, 4).map(hiddenKind))].join(', ');
  const many = chars.length > 1;
  return `hidden character${many ? 's' : ''} ${codePoints(chars.join(''))} (${kinds}${
    rule ? `; screening rule ${rule}` : ''
  }) at character ${[...text.slice(0, hit.index)].length}: a reader cannot see ${
    many ? 'them' : 'it'
  } and every output shows ${many ? 'them' : 'it'} escaped; remove ${many ? 'them' : 'it'} or write ${many ? 'them' : 'it'} visibly`;
}

/** A step of a field path, the key made visible. */
function step(key: string): string {
  return /^[A-Za-z_$][\w$-]{0,63}$/.test(key)
    ? `.${key}`
    : `[${JSON.stringify(escapeHidden(key.slice(0, 64), visibleCodePoint))}]`;
}

/** One problem per string (keys included) of an entry holding a hidden character: `description: hidden …`. */
export function hiddenTextProblems(value: unknown): string[] {
  const out: string[] = [];
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  const seen = new Set<object>();
  while (stack.length) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = hiddenCharacterProblem(v);
      if (problem) out.push(`${path.replace(/^\./, '') || '(value)'}: ${problem}`);
      continue;
    }
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    const children: Array<{ value: unknown; path: string }> = [];
    if (Array.isArray(v))
      v.forEach((x, i) => {
        children.push({ value: x, path: `${path}[${i}]` });
      });
    else {
      for (const [k, x] of Object.entries(v)) {
        const problem = hiddenCharacterProblem(k);
        if (problem) out.push(`${`${path}${step(k)}`.replace(/^\./, '')} (the name): ${problem}`);
        children.push({ value: x, path: `${path}${step(k)}` });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out;
}

/** Index of the removed entry this URL would bring back: same URL, or same host unless a shared gateway. */
export function removedMatch(url: string, catalog: Catalog): number | null {
  const gateways = new Set(catalog.policy.sharedGatewayHosts.map((h) => h.toLowerCase()));
  const host = hostOf(url);
  const i = catalog.removed.findIndex(
    (r) =>
      normalizeUrl(r.url) === normalizeUrl(url) || (host !== null && !gateways.has(host) && hostOf(r.url) === host),
  );
  return i === -1 ? null : i;
}

export function formatProblems(file: string, problems: LintProblem[]): string {
  return problems.map((p) => inert(`${file}: ${p.where}: ${p.message}`)).join('\n');
}
