/**
 * `discover`: find candidate servers through the discovery standards, validate their cards, judge one-tap
 * eligibility, optionally attest them. It proposes; it never writes the catalog.
 */
import type { Catalog } from '../catalog/model.js';
import { probeMany } from '../attest/probe-many.js';
import type { Reason, VerdictName } from '../policy/policy.js';
import { mapConcurrent } from '../util/pool.js';
import { validateDocument } from './card.js';
import { DocumentError, identifierTail, looksLikeCard, looksLikeCatalog, MEDIA, readCatalog, WELL_KNOWN, type CatalogEntry } from './documents.js';
import { judgeCard } from './eligibility.js';
import { checkUrl, FetchRefused, guardedGet, guardedLookup, type FetchPolicy } from './fetcher.js';

export interface DiscoverOptions extends FetchPolicy {
  /** The curated catalog, for the removed list and duplicate hosts. */
  catalog: Catalog;
  /** Attest each eligible remote with the prober. */
  probe?: boolean;
  probeTimeoutMs?: number;
  /** At most this many cards are read in one run. */
  maxCards?: number;
}

export interface CatalogReport {
  url: string;
  kind: 'ai-catalog' | 'mcp-catalog' | 'catalog';
  specVersion: string | null;
  entries: number;
  depth: number;
  error: string | null;
}

export interface Candidate {
  name: string | null;
  title: string | null;
  identifier: string | null;
  /** The streamable-http remote URL judged. */
  url: string | null;
  cardUrl: string | null;
  valid: boolean;
  errors: string[];
  eligible: boolean;
  why: string;
  requiresAuth: boolean;
  curated: boolean;
  verdict: VerdictName | null;
  reason: Reason | null;
}

export interface DiscoverResult { source: string; catalogs: CatalogReport[]; candidates: Candidate[] }

const MAX_DEPTH = 4;
const CATALOG_ACCEPT = `${MEDIA.aiCatalog}, application/json`;
const CARD_ACCEPT = MEDIA.serverCard;

interface CardRef { entry: CatalogEntry | null; url: string | null; data: unknown }

/** `example.com`, `https://example.com[:port]` (an origin), or a URL with a path. */
export function parseSource(input: string): { origin: string | null; url: string } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `https://${input}`;
  let u: URL;
  try { u = new URL(withScheme); } catch { throw new FetchRefused('bad-url', `not a domain or URL: ${input}`); }
  const isOrigin = (u.pathname === '/' || u.pathname === '') && !u.search && !u.hash;
  return { origin: isOrigin ? u.origin : null, url: u.href };
}

/** The reserved card location: `<streamable-http-url>/server-card`, on the path, query and fragment dropped. */
export function serverCardUrl(endpoint: string): string {
  const u = new URL(endpoint);
  u.search = '';
  u.hash = '';
  u.pathname = `${u.pathname.replace(/\/$/, '')}/server-card`;
  return u.href;
}

const isCardLocation = (url: string) => new URL(url).pathname.replace(/\/$/, '').endsWith('/server-card');

export async function discover(input: string, opts: DiscoverOptions): Promise<DiscoverResult> {
  const policy: FetchPolicy = { allowPrivate: opts.allowPrivate, trustedAddresses: opts.trustedAddresses, resolver: opts.resolver, timeoutMs: opts.timeoutMs, maxBytes: opts.maxBytes };
  const { origin, url } = parseSource(input);
  checkUrl(url, policy); // a refused source is refused as a whole
  const catalogs: CatalogReport[] = [];
  const cards: CardRef[] = [];
  const visited = new Set<string>();
  const maxCards = opts.maxCards ?? 500;
  let overflow = 0;

  const walk = async (catalogUrl: string, value: unknown, depth: number, kind: CatalogReport['kind']) => {
    const report: CatalogReport = { url: catalogUrl, kind, specVersion: null, entries: 0, depth, error: null };
    catalogs.push(report);
    let doc;
    try { doc = readCatalog(value, catalogUrl); } catch (err) { report.error = (err as Error).message; return; }
    report.specVersion = doc.specVersion;
    report.entries = doc.entries.length;
    for (const entry of doc.entries) {
      if (entry.kind === 'server-card') {
        if (cards.length >= maxCards) overflow++;
        else cards.push({ entry, url: entry.url, data: entry.data });
      } else if (entry.kind === 'catalog') {
        if (depth + 1 > MAX_DEPTH) { report.error = `nested deeper than ${MAX_DEPTH} levels: not followed`; continue; }
        if (entry.data !== undefined) await walk(`${catalogUrl}#${entry.identifier ?? 'inline'}`, entry.data, depth + 1, 'catalog');
        else if (entry.url && !visited.has(entry.url)) {
          visited.add(entry.url);
          await fetchCatalog(entry.url, depth + 1, 'catalog');
        } else if (entry.url) report.error = `cycle: ${entry.url} was already read`;
      }
    }
  };

  const fetchCatalog = async (catalogUrl: string, depth: number, kind: CatalogReport['kind']): Promise<boolean> => {
    visited.add(catalogUrl);
    try {
      const got = await guardedGet(catalogUrl, CATALOG_ACCEPT, policy);
      if (got.status !== 200) throw new DocumentError(`HTTP ${got.status}`);
      await walk(got.url, parseJson(got.text), depth, kind);
      return true;
    } catch (err) {
      catalogs.push({ url: catalogUrl, kind, specVersion: null, entries: 0, depth, error: (err as Error).message });
      return false;
    }
  };

  if (origin) {
    // The AI Catalog first; the older MCP Catalog only when there is none.
    const found = await fetchCatalog(origin + WELL_KNOWN.aiCatalog, 0, 'ai-catalog') || await fetchCatalog(origin + WELL_KNOWN.mcpCatalog, 0, 'mcp-catalog');
    if (!found) return { source: input, catalogs, candidates: [] };
  } else {
    // A URL with a path: a catalog, a card, or else an MCP endpoint whose card sits at <url>/server-card.
    let got;
    try {
      got = await guardedGet(url, `${MEDIA.aiCatalog}, ${MEDIA.serverCard}, application/json;q=0.9`, policy);
    } catch (err) {
      catalogs.push({ url, kind: 'catalog', specVersion: null, entries: 0, depth: 0, error: (err as Error).message });
      return { source: input, catalogs, candidates: [] };
    }
    const value = got.status === 200 ? tryJson(got.text) : undefined;
    if (looksLikeCatalog(value)) { visited.add(got.url); await walk(got.url, value, 0, 'catalog'); }
    else if (looksLikeCard(value)) cards.push({ entry: null, url: got.url, data: value });
    else cards.push({ entry: null, url: isCardLocation(url) ? url : serverCardUrl(url), data: undefined });
  }

  const candidates = await mapConcurrent(cards, 8, (ref) => readCandidate(ref, opts, policy));
  if (overflow) catalogs.push({ url: input, kind: 'catalog', specVersion: null, entries: 0, depth: 0, error: `more than ${maxCards} Server Cards: ${overflow} were not read` });

  if (opts.probe) {
    // A remote is a URL a document supplied: the address rule holds before the probe connects (IP literals)
    // and in the probe's own DNS lookups (names).
    const eligible = candidates.filter((c) => c.eligible && c.url && !refusedRemote(c, policy));
    const results = await probeMany(eligible.map((c) => ({ url: c.url!, requiresAuth: c.requiresAuth })), {
      timeoutMs: opts.probeTimeoutMs, lookup: guardedLookup(opts.trustedAddresses, opts.resolver, { allowPrivate: opts.allowPrivate }),
    });
    eligible.forEach((c, i) => { c.verdict = results[i]!.verdict; c.reason = results[i]!.reason; });
  }
  return { source: input, catalogs, candidates };
}

/** Refuses a remote the address rule forbids: not eligible, not probed, and says why. */
function refusedRemote(c: Candidate, policy: FetchPolicy): boolean {
  try { checkUrl(c.url!, policy); return false; } catch (err) {
    c.eligible = false;
    c.why = `remote refused: ${(err as Error).message}`;
    return true;
  }
}

async function readCandidate(ref: CardRef, opts: DiscoverOptions, policy: FetchPolicy): Promise<Candidate> {
  const entry = ref.entry;
  const candidate: Candidate = {
    name: null, title: entry?.displayName ?? identifierTail(entry?.identifier ?? null), identifier: entry?.identifier ?? null,
    url: null, cardUrl: ref.url, valid: false, errors: [], eligible: false, why: '',
    requiresAuth: false, curated: false, verdict: null, reason: null,
  };
  let card = ref.data;
  if (card === undefined && ref.url) {
    try {
      card = await fetchCard(ref.url, policy);
    } catch (err) {
      // An older catalog entry may point at the MCP endpoint itself: try its reserved card location once
      // (only when the answer was not a card; a refused, oversized or silent URL is not tried again).
      const fallback = serverCardUrl(ref.url);
      if (err instanceof DocumentError && !isCardLocation(ref.url)) {
        try { card = await fetchCard(fallback, policy); candidate.cardUrl = fallback; } catch (err2) { candidate.errors.push((err as Error).message, (err2 as Error).message); }
      } else candidate.errors.push((err as Error).message);
    }
  }
  if (card === undefined) { candidate.why = 'no Server Card could be read'; return candidate; }
  const c = card as { name?: unknown; title?: unknown; remotes?: unknown };
  candidate.name = typeof c.name === 'string' ? c.name : null;
  if (typeof c.title === 'string') candidate.title = c.title;
  candidate.title ??= candidate.name;
  const validation = validateDocument(card);
  candidate.valid = validation.valid;
  candidate.errors.push(...validation.errors.map((e) => `${e.pointer}: ${e.message}`));
  const judged = judgeCard(card as never, opts.catalog, { allowHttp: opts.allowPrivate || !!opts.trustedAddresses?.length });
  candidate.url = judged.remoteUrl;
  candidate.requiresAuth = judged.requiresAuth;
  candidate.curated = judged.curated;
  candidate.eligible = judged.eligible && validation.valid;
  candidate.why = validation.valid ? judged.why : `invalid ${validation.kind === 'server-card' ? 'Server Card' : 'server.json'}${judged.eligible ? '' : `; also ${judged.why}`}`;
  return candidate;
}

async function fetchCard(url: string, policy: FetchPolicy): Promise<unknown> {
  const got = await guardedGet(url, CARD_ACCEPT, { ...policy, maxBytes: Math.min(policy.maxBytes ?? 256 * 1024, 256 * 1024) });
  if (got.status !== 200) throw new DocumentError(`HTTP ${got.status} for ${url}`);
  const value = parseJson(got.text);
  if (!looksLikeCard(value)) throw new DocumentError(`not a Server Card: ${url}`);
  return value;
}

function parseJson(text: string): unknown {
  try { return JSON.parse(text); } catch { throw new DocumentError('not JSON'); }
}

function tryJson(text: string): unknown {
  try { return JSON.parse(text); } catch { return undefined; }
}
