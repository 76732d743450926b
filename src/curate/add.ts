/** `add`: a new entry goes in only with a decision record, past every lint rule, and attested live. */
import { readFile } from 'node:fs/promises';
import { probe, type ProbeOptions, type ProbeResult } from '../attest/probe.js';
import { acquireLock, writeFileAtomic } from '../util/atomic.js';
import { lintCatalog, where } from '../catalog/lint.js';
import { CatalogError, loadCatalog, serializeCatalog, type CatalogServer, type ProbeHeader } from '../catalog/model.js';
import { catalogProfile } from '../attest/profile.js';
import { targetOf, type Env } from '../attest/keys.js';
import type { SameTools } from '../model/plan.js';
import { APP_SAYS, describe } from '../model/describe.js';
import { refuses, SAME_TOOLS_WORDS, sameToolsIndex, type ToolSetPrint } from '../policy/same-tools.js';

export interface AddOptions {
  catalogPath: string;
  url: string;
  name: string;
  description: string;
  /** "who: why" */
  decision: string;
  requiresAuth?: boolean;
  /** Probe-only keys of a requiresAuth entry, written into the entry (names of environment variables, never values). */
  probeHeaders?: Record<string, ProbeHeader>;
  /** Where those keys are read from (default: this process's environment). */
  env?: Env;
  allowHttp?: boolean;
  probe?: Omit<ProbeOptions, 'requiresAuth' | 'keys' | 'missingKeys' | 'refusedKeys'>;
  now?: () => Date;
  /**
   * What the list's curated and removed entries are known to serve (`toolSetPrints` of the history): a copy is refused.
   */
  known?: readonly ToolSetPrint[];
  /** Add a server that serves the same tool set as another entry anyway; its decision record says so. */
  allowSameTools?: boolean;
}

/**
 * What `add` found of the candidate's tool set among the list's entries (the description-blind digest alone is only
 * reported).
 */
export interface Added {
  entry: CatalogServer;
  probe: ProbeResult;
  sameToolsAs: SameTools[];
}

/** The entry was refused; `problems` says why (lint rules, or the probe's verdict). */
export class AddRefused extends Error {
  constructor(
    readonly problems: string[],
    readonly probeResult: ProbeResult | null = null,
    readonly sameToolsAs: SameTools[] = [],
  ) {
    super(problems.join('\n'));
  }
}

export interface RestoreOptions extends Omit<AddOptions, 'url' | 'description'> {
  /** The description when the removed entry kept none (entries removed before 0.3). */
  description?: string;
}

/**
 * `restore`: a removed entry goes back into the list as `add` puts one in (every lint rule, attested live, a new
 * decision record), with the description it had; an entry marked `permanent` never does.
 */
export async function restoreServer(opts: RestoreOptions): Promise<Added> {
  const { catalog } = await loadCatalog(opts.catalogPath);
  const wanted = opts.name.trim().toLowerCase();
  const index = catalog.removed.findIndex((r) => r.name.trim().toLowerCase() === wanted);
  if (index === -1)
    throw new AddRefused([
      `no removed entry is named "${opts.name}" (removed: ${catalog.removed.map((r) => r.name).join(', ') || 'none'})`,
    ]);
  const removed = catalog.removed[index]!;
  if (removed.permanent === true)
    throw new AddRefused([
      `removed[${index}] (${removed.name}) is marked permanent: it is never added back (${removed.reason}${removed.note ? `; ${removed.note}` : ''})`,
    ]);
  const description = opts.description ?? removed.description;
  if (!description?.trim())
    throw new AddRefused([`removed[${index}] (${removed.name}) kept no description: give one with --description`]);
  return addServer({ ...opts, name: removed.name, url: removed.url, description }, index);
}

export async function addServer(opts: AddOptions, restoring?: number): Promise<Added> {
  const loaded = await loadCatalog(opts.catalogPath);
  const text = loaded.text;
  // A restored entry leaves the removed list in the same write that puts it back.
  const catalog =
    restoring === undefined
      ? loaded.catalog
      : { ...loaded.catalog, removed: loaded.catalog.removed.filter((_, i) => i !== restoring) };
  const at = /^\s*([^:]+?)\s*:\s*(.+?)\s*$/.exec(opts.decision);
  const entry: CatalogServer = {
    name: opts.name.trim(),
    url: opts.url.trim(),
    description: opts.description.trim(),
    requiresAuth: !!opts.requiresAuth,
    headers: {},
    ...(opts.probeHeaders && Object.keys(opts.probeHeaders).length ? { probeHeaders: opts.probeHeaders } : {}),
    decision: { by: at?.[1] ?? '', at: (opts.now?.() ?? new Date()).toISOString().slice(0, 10), why: at?.[2] ?? '' },
  };
  const candidate = { ...catalog, servers: [...catalog.servers, entry] };
  const mine = where('servers', catalog.servers.length, entry.name);
  const problems = lintCatalog(candidate, { allowHttp: opts.allowHttp })
    .filter((p) => p.where === mine)
    .map((p) => p.message);
  if (!at) problems.push('--decision must read "who: why"');
  if (problems.length) throw new AddRefused(problems);

  // Decided as refresh decides: the catalog's profile and time limit unless the caller overrides them.
  let profile;
  try {
    profile = catalogProfile(catalog.policy);
  } catch (err) {
    throw new CatalogError(`${opts.catalogPath}: ${(err as Error).message}`);
  }
  const { keys, missingKeys, refusedKeys } = targetOf(entry, opts.env, catalog.policy.keyEnv);
  const result = await probe(entry.url, {
    profile,
    timeoutMs: catalog.policy.timeoutMs,
    ...opts.probe,
    requiresAuth: entry.requiresAuth,
    keys,
    missingKeys,
    refusedKeys,
  });
  if (result.verdict !== 'live') {
    const d = describe(result);
    const evidence = [
      d.error,
      d.appSays ? `${APP_SAYS}: ${d.appSays}` : null,
      d.auth ? `auth: ${d.auth}${d.auth === 'oauth' ? ' (OAuth-only servers stay out)' : ''}` : null,
    ]
      .filter(Boolean)
      .join('; ');
    throw new AddRefused([`not attested live: ${d.outcome}${evidence ? ` (${evidence})` : ''}`], result);
  }
  // The same tool set as another entry (curated, or removed): a copy under another host is a duplicate too.
  const sameToolsAs = sameToolsIndex(opts.known ?? [])({ ...result, name: entry.name });
  const copies = sameToolsAs.filter((s) => refuses(s.digest));
  const placeOf = (s: SameTools) => {
    const i = loaded.catalog.servers.findIndex((x) => x.url === s.url);
    const r = loaded.catalog.removed.findIndex((x) => x.url === s.url);
    return i >= 0 ? where('servers', i, s.name) : r >= 0 ? where('removed', r, s.name) : s.name;
  };
  if (copies.length && !opts.allowSameTools) {
    throw new AddRefused(
      copies.map(
        (s) =>
          `serves the same tool set as ${placeOf(s)}: ${SAME_TOOLS_WORDS[s.digest]} (its ${s.digest} digest ` +
          `matched); --allow-same-tools adds it anyway and says so in its decision record`,
      ),
      result,
      sameToolsAs,
    );
  }
  if (copies.length)
    entry.decision!.why += `; serves the same tool set as ${copies.map((s) => `${placeOf(s)} (${s.digest})`).join(', ')}: added with --allow-same-tools`;

  const release = await acquireLock(opts.catalogPath, 10_000);
  try {
    if ((await readFile(opts.catalogPath, 'utf8')) !== text)
      throw new CatalogError(
        `${opts.catalogPath} changed while the server was probed; nothing was written, run it again`,
      );
    await writeFileAtomic(opts.catalogPath, serializeCatalog(candidate));
  } finally {
    await release();
  }
  return { entry, probe: result, sameToolsAs };
}
