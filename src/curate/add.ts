/** `add`: a new entry goes in only with a decision record, past every lint rule, and attested live. */
import { readFile } from 'node:fs/promises';
import { probe, type ProbeOptions, type ProbeResult } from '../attest/probe.js';
import { acquireLock, writeFileAtomic } from '../util/atomic.js';
import { lintCatalog, where } from '../catalog/lint.js';
import { CatalogError, loadCatalog, serializeCatalog, type CatalogServer, type ProbeHeader } from '../catalog/model.js';
import { catalogProfile } from '../attest/profile.js';
import { targetOf, type Env } from '../attest/keys.js';

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
  probe?: Omit<ProbeOptions, 'requiresAuth' | 'keys' | 'missingKeys'>;
  now?: () => Date;
}

/** The entry was refused; `problems` says why (lint rules, or the probe's verdict). */
export class AddRefused extends Error {
  constructor(readonly problems: string[], readonly probeResult: ProbeResult | null = null) {
    super(problems.join('\n'));
  }
}

export async function addServer(opts: AddOptions): Promise<{ entry: CatalogServer; probe: ProbeResult }> {
  const { catalog, text } = await loadCatalog(opts.catalogPath);
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
  const problems = lintCatalog(candidate, { allowHttp: opts.allowHttp }).filter((p) => p.where === mine).map((p) => p.message);
  if (!at) problems.push('--decision must read "who: why"');
  if (problems.length) throw new AddRefused(problems);

  // Decided as refresh decides: the catalog's profile and time limit unless the caller overrides them.
  let profile;
  try { profile = catalogProfile(catalog.policy); } catch (err) { throw new CatalogError(`${opts.catalogPath}: ${(err as Error).message}`); }
  const { keys, missingKeys } = targetOf(entry, opts.env);
  const result = await probe(entry.url, {
    profile, timeoutMs: catalog.policy.timeoutMs, ...opts.probe, requiresAuth: entry.requiresAuth, keys, missingKeys,
  });
  if (result.verdict !== 'live') {
    const evidence = [result.error, result.appError && result.appError !== result.error ? `the app says: ${result.appError}` : null, result.auth ? `auth: ${result.auth}${result.auth === 'oauth' ? ' (OAuth-only servers stay out)' : ''}` : null].filter(Boolean).join('; ');
    throw new AddRefused([`not attested live: ${result.verdict}/${result.reason}${evidence ? ` (${evidence})` : ''}`], result);
  }

  const release = await acquireLock(opts.catalogPath, 10_000);
  try {
    if ((await readFile(opts.catalogPath, 'utf8')) !== text) throw new CatalogError(`${opts.catalogPath} changed while the server was probed; nothing was written, run it again`);
    await writeFileAtomic(opts.catalogPath, serializeCatalog(candidate));
  } finally {
    await release();
  }
  return { entry, probe: result };
}
