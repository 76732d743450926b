/**
 * One-tap eligibility of a Server Card (pure): a streamable-http remote on https, nothing a user must
 * type in (except a secret on an allowed auth-optional host), not removed, not a second entry on a
 * curated host.
 */
import type { Catalog } from '../catalog/model.js';
import { removedMatch } from '../catalog/lint.js';
import { hostOf, normalizeUrl } from '../catalog/url.js';

interface Input {
  isRequired?: boolean;
  isSecret?: boolean;
  default?: string;
  value?: string;
  variables?: Record<string, Input>;
}
interface KeyValueInput extends Input {
  name: string;
}
export interface CardRemote {
  type?: string;
  url?: string;
  headers?: KeyValueInput[];
  variables?: Record<string, Input>;
}

export interface Eligibility {
  eligible: boolean;
  why: string;
  /** The remote judged (the first streamable-http one), or null. */
  remoteUrl: string | null;
  /** Eligible only as an auth-optional entry (an optional or allowed secret header). */
  requiresAuth: boolean;
  /** The remote is already a curated entry (same URL). */
  curated: boolean;
}

const no = (why: string, remoteUrl: string | null = null): Eligibility => ({
  eligible: false,
  why,
  remoteUrl,
  requiresAuth: false,
  curated: false,
});

/** Names of required inputs without a default or fixed value. */
function needsInput(inputs: Record<string, Input> | undefined): string[] {
  return Object.entries(inputs ?? {})
    .filter(([, i]) => i?.isRequired && i.default === undefined && i.value === undefined)
    .map(([n]) => n);
}

export function judgeCard(
  card: { remotes?: CardRemote[] },
  catalog: Catalog,
  opts: { allowHttp?: boolean } = {},
): Eligibility {
  const remotes = Array.isArray(card.remotes) ? card.remotes : [];
  const remote = remotes.find((r) => r?.type === 'streamable-http');
  if (!remote)
    return no(
      remotes.some((r) => r?.type === 'sse')
        ? 'only a legacy SSE remote: not Streamable HTTP'
        : 'no remote: a local package is not one-tap',
    );
  const url = typeof remote.url === 'string' ? remote.url : '';
  const vars = [...url.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]!);
  if (vars.length)
    return no(`the URL has template variables (${vars.map((v) => `{${v}}`).join(', ')}) that a user must fill in`, url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return no(`not a URL: ${url}`, url);
  }
  if (parsed.protocol !== 'https:' && !(opts.allowHttp && parsed.protocol === 'http:')) return no('not https', url);
  const host = hostOf(url)!;
  const authHosts = new Set(catalog.policy.authOptionalHosts.map((h) => h.toLowerCase()));
  let requiresAuth = false;
  for (const h of remote.headers ?? []) {
    const missing = [
      ...needsInput(h.variables),
      ...(h.isRequired && h.value === undefined && h.default === undefined ? [h.name] : []),
    ];
    if (h.isSecret && authHosts.has(host)) {
      requiresAuth = true;
      continue;
    } // the one exception: an allowed auth-optional host
    if (h.isSecret && !h.isRequired) continue; // an optional key: one tap works without it
    if (h.isRequired && (h.isSecret || missing.length))
      return no(`a required header needs user input: ${h.name}${h.isSecret ? ' (a secret)' : ''}`, url);
  }
  const remoteVars = needsInput(remote.variables);
  if (remoteVars.length) return no(`required variables need user input: ${remoteVars.join(', ')}`, url);
  const removed = removedMatch(url, catalog);
  if (removed !== null)
    return no(`on the removed list: ${catalog.removed[removed]!.name} (${catalog.removed[removed]!.reason})`, url);
  const same = catalog.servers.find((s) => normalizeUrl(s.url) === normalizeUrl(url));
  if (same)
    return { eligible: true, why: `already curated as ${same.name}`, remoteUrl: url, requiresAuth, curated: true };
  const gateways = new Set(catalog.policy.sharedGatewayHosts.map((h) => h.toLowerCase()));
  const sameHost = catalog.servers.find((s) => hostOf(s.url) === host);
  if (sameHost && !gateways.has(host)) return no(`duplicate host of the curated ${sameHost.name} (${host})`, url);
  return {
    eligible: true,
    why: requiresAuth
      ? 'one-tap eligible as auth-optional (an allowed host; the user may add a key)'
      : 'one-tap eligible',
    remoteUrl: url,
    requiresAuth,
    curated: false,
  };
}

/** POSIX shell quoting: bare when only safe characters, else single quotes (a `'` becomes `'\''`). */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Card text in a command line: control, line-separator and bidi characters become spaces (Trojan Source). */
const printable = (text: string) =>
  text
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

export interface AddCommandInput {
  url: string | null;
  title: string | null;
  name: string | null;
  description: string | null;
  requiresAuth: boolean;
}

/**
 * The complete `onetap add` command for a discovered candidate: every required flag, each value shell-quoted.
 * The decision is the maintainer's to write; the placeholder says so. `extra` carries flags such as `--catalog`.
 */
export function addCommand(c: AddCommandInput, extra: string[] = []): string {
  const name = printable(c.title ?? c.name ?? '') || 'NAME';
  const description = printable(c.description ?? '') || 'what the server does for a user';
  const args = [
    'onetap',
    'add',
    shellQuote(c.url ?? ''),
    '--name',
    shellQuote(name),
    '--description',
    shellQuote(description),
    '--decision',
    shellQuote('YOUR NAME: why this server belongs in the list'),
  ];
  if (c.requiresAuth) args.push('--requires-auth');
  if (c.url?.startsWith('http:')) args.push('--allow-http'); // a loopback fixture found with --allow-private
  return [...args, ...extra.map(shellQuote)].join(' ');
}
