/**
 * `discover`: find candidate servers through the discovery standards, validate their cards, judge one-tap
 * eligibility, optionally attest them. It proposes; it never writes the catalog.
 */
import { detailOf } from '../policy/policy.js';
import type { Catalog } from '../catalog/model.js';
import { probeMany } from '../attest/probe-many.js';
import { targetOf, type Env } from '../attest/keys.js';
import { catalogProfile } from '../attest/profile.js';
import { normalizeUrl } from '../catalog/url.js';
import { cardMismatches, type Mismatch } from './consistency.js';
import type { Finding } from '../model/observation.js';
import type { SameTools } from '../model/plan.js';
import { sameToolsIndex, type ToolSetPrint } from '../policy/same-tools.js';
import type { Reason, VerdictName } from '../policy/policy.js';
import { mapConcurrent } from '../util/pool.js';
import { validateDocument, type Validation } from './card.js';
import {
  DocumentError,
  identifierTail,
  looksLikeCard,
  looksLikeCatalog,
  MEDIA,
  readCatalog,
  WELL_KNOWN,
  type CatalogEntry,
} from './documents.js';
import { addCommand, judgeCard } from './eligibility.js';
import { checkUrl, FetchRefused, guardedGet, guardedLookup, type FetchPolicy } from '../net/fetcher.js';
import type { Fence } from '../net/fence.js';

export interface DiscoverOptions extends FetchPolicy {
  /** The curated catalog, for the removed list and duplicate hosts. */
  catalog: Catalog;
  /** Attest each eligible remote with the prober. */
  probe?: boolean;
  probeTimeoutMs?: number;
  /** Where the probe-only keys of candidates the catalog holds are read from (default: this process's environment). */
  env?: Env;
  /** At most this many documents (catalogs and cards, fetched or inline) are read in one run. Default 500. */
  maxDocuments?: number;
  /** At most this many documents are fetched from one origin in one run. Default 100. */
  maxPerOrigin?: number;
  /** What the list's curated and removed entries last served: a probed candidate serving the same set says so. */
  known?: readonly ToolSetPrint[];
}

export const DISCOVERY_LIMITS = { maxDocuments: 500, maxPerOrigin: 100, maxDepth: 4, unreadListed: 50 } as const;

/** The `why` of a candidate whose card could not be read at all. */
export const NO_CARD_READ = 'no Server Card could be read';

/** A document discovery knew of but did not read, and why (a limit, depth). */
export interface UnreadDocument {
  url: string;
  why: string;
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
  /** The card's description (what a user would read), or null. */
  description: string | null;
  valid: boolean;
  /** Which schema accepted the card: `current`, `legacy` (the seed-era one, with a warning) or null. */
  schema: Validation['schema'];
  /** Fetch errors and at most 100 schema errors, as `pointer: message`. */
  errors: string[];
  /** Every error found, including those not listed in `errors`. */
  errorCount: number;
  warnings: string[];
  /** With --probe: one-tap eligible only when also attested live. */
  eligible: boolean;
  why: string;
  requiresAuth: boolean;
  curated: boolean;
  verdict: VerdictName | null;
  reason: Reason | null;
  /** For an eligible candidate not yet curated: the `onetap add` command to propose it (fill in --decision). */
  addCommand: string | null;
  /** With --probe: where the card's claims disagree with the live server (empty when consistent). */
  mismatches: Mismatch[];
  /** With --probe: what screening found in the tool list the probe saw. */
  findings: Finding[];
  /**
   * With --probe: curated or removed entries serving the same tool set, and which digest matched (`add` refuses all but
   * a description-blind match).
   */
  sameToolsAs: SameTools[];
  /** With --probe: what its tool list costs a conversation (o200k tokens), or null. */
  tokens: number | null;
}

export interface DiscoverResult {
  source: string;
  catalogs: CatalogReport[];
  candidates: Candidate[];
  /**
   * The first 50 documents left unread (limits, depth) and the first of every other reason; `unreadCount` counts them
   * all.
   */
  unread: UnreadDocument[];
  unreadCount: number;
}

const MAX_DEPTH = DISCOVERY_LIMITS.maxDepth;
const CATALOG_ACCEPT = `${MEDIA.aiCatalog}, application/json`;
const CARD_ACCEPT = MEDIA.serverCard;

interface CardRef {
  entry: CatalogEntry | null;
  url: string | null;
  data: unknown;
}

/** `example.com`, `https://example.com[:port]` (an origin), or a URL with a path. */
export function parseSource(input: string): { origin: string | null; url: string } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `https://${input}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new FetchRefused('bad-url', `not a domain or URL: ${input}`);
  }
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
  const policy: FetchPolicy = {
    allowPrivate: opts.allowPrivate,
    trustedAddresses: opts.trustedAddresses,
    resolver: opts.resolver,
    timeoutMs: opts.timeoutMs,
    maxBytes: opts.maxBytes,
  };
  const { origin, url } = parseSource(input);
  checkUrl(url, policy); // a refused source is refused as a whole
  const catalogs: CatalogReport[] = [];
  const cards: CardRef[] = [];
  const visited = new Set<string>();
  const cardUrls = new Set<string>();
  const budget = documentBudget(
    opts.maxDocuments ?? DISCOVERY_LIMITS.maxDocuments,
    opts.maxPerOrigin ?? DISCOVERY_LIMITS.maxPerOrigin,
  );
  const result = (candidates: Candidate[]): DiscoverResult => ({
    source: input,
    catalogs,
    candidates,
    unread: budget.unread,
    unreadCount: budget.unreadCount(),
  });

  const walk = async (catalogUrl: string, value: unknown, depth: number, kind: CatalogReport['kind']) => {
    const report: CatalogReport = { url: catalogUrl, kind, specVersion: null, entries: 0, depth, error: null };
    catalogs.push(report);
    let doc;
    try {
      doc = readCatalog(value, catalogUrl);
    } catch (err) {
      report.error = (err as Error).message;
      return;
    }
    report.specVersion = doc.specVersion;
    report.entries = doc.entries.length;
    for (const entry of doc.entries) {
      const inlineUrl = `${catalogUrl}#${entry.identifier ?? 'inline'}`;
      if (entry.kind === 'server-card') {
        if (entry.data === undefined && (!entry.url || cardUrls.has(entry.url))) continue; // each card URL is read once
        if (!budget.take(entry.data === undefined ? entry.url! : inlineUrl, entry.data === undefined)) continue;
        if (entry.url) cardUrls.add(entry.url);
        cards.push({ entry, url: entry.url, data: entry.data });
      } else if (entry.kind === 'catalog') {
        if (depth + 1 > MAX_DEPTH) {
          budget.skip(entry.url ?? inlineUrl, `nested deeper than ${MAX_DEPTH} levels`);
          continue;
        }
        if (entry.data !== undefined) {
          if (budget.take(inlineUrl, false)) await walk(inlineUrl, entry.data, depth + 1, 'catalog');
        } else if (entry.url && !visited.has(entry.url)) {
          visited.add(entry.url);
          await fetchCatalog(entry.url, depth + 1, 'catalog');
        } else if (entry.url) report.error = `cycle: ${entry.url} was already read`;
      }
    }
  };

  const fetchCatalog = async (catalogUrl: string, depth: number, kind: CatalogReport['kind']): Promise<boolean> => {
    visited.add(catalogUrl);
    if (!budget.take(catalogUrl, true)) return false;
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
    const found =
      (await fetchCatalog(origin + WELL_KNOWN.aiCatalog, 0, 'ai-catalog')) ||
      (await fetchCatalog(origin + WELL_KNOWN.mcpCatalog, 0, 'mcp-catalog'));
    if (!found) return result([]);
  } else {
    // A URL with a path: a catalog, a card, or else an MCP endpoint whose card sits at <url>/server-card.
    let got;
    budget.take(url, true); // the first document of a run is always within the limits
    try {
      got = await guardedGet(url, `${MEDIA.aiCatalog}, ${MEDIA.serverCard}, application/json;q=0.9`, policy);
    } catch (err) {
      catalogs.push({ url, kind: 'catalog', specVersion: null, entries: 0, depth: 0, error: (err as Error).message });
      return result([]);
    }
    const value = got.status === 200 ? tryJson(got.text) : undefined;
    if (looksLikeCatalog(value)) {
      visited.add(got.url);
      await walk(got.url, value, 0, 'catalog');
    } else if (looksLikeCard(value)) cards.push({ entry: null, url: got.url, data: value });
    else {
      const cardUrl = isCardLocation(url) ? url : serverCardUrl(url);
      if (budget.take(cardUrl, true)) cards.push({ entry: null, url: cardUrl, data: undefined });
    }
  }

  const cardOf = new Map<Candidate, unknown>();
  const candidates = await mapConcurrent(cards, 8, (ref) => readCandidate(ref, opts, policy, budget, cardOf));

  if (opts.probe) {
    // A remote is a URL a document supplied: the address rule holds before the probe connects (IP literals)
    // and in the probe's own DNS lookups (names).
    const eligible = candidates.filter((c) => c.eligible && c.url && !refusedRemote(c, policy));
    // Decided as refresh decides: the curated catalog's profile and time limit unless told otherwise.
    // A candidate the catalog already holds is probed as refresh probes it, with its probe-only keys.
    const curated = new Map(opts.catalog.servers.map((s) => [normalizeUrl(s.url), s]));
    const results = await probeMany(
      eligible.map((c) => {
        const entry = curated.get(normalizeUrl(c.url!));
        return entry
          ? targetOf(entry, opts.env, opts.catalog.policy.keyEnv)
          : { url: c.url!, requiresAuth: c.requiresAuth };
      }),
      {
        profile: catalogProfile(opts.catalog.policy),
        timeoutMs: opts.probeTimeoutMs ?? opts.catalog.policy.timeoutMs,
        lookup: guardedLookup(opts.trustedAddresses, opts.resolver, { allowPrivate: opts.allowPrivate }),
      },
    );
    const same = sameToolsIndex(opts.known ?? []);
    eligible.forEach((c, i) => {
      const r = results[i]!;
      c.verdict = r.verdict;
      c.reason = r.reason;
      c.findings = r.findings;
      c.tokens = r.tokens ?? null;
      c.sameToolsAs = same({ ...r, name: c.name ?? c.url! });
      c.mismatches = cardMismatches(cardOf.get(c), {
        url: c.url!,
        serverVersion: r.serverVersion,
        protocolVersion: r.protocolVersion,
        eras: {},
      });
      // A card is a claim; only a live answer makes it a one-tap candidate.
      if (c.verdict !== 'live') {
        c.eligible = false;
        c.why = `not attested live: ${c.verdict}/${c.reason} (${detailOf(r)})`;
      }
    });
  }
  for (const c of candidates) c.addCommand = c.eligible && !c.curated && c.url ? addCommand(c) : null;
  return result(candidates);
}

interface DocumentBudget {
  /** Counts a document against the limits; false (and recorded as unread) when over one. */
  take(url: string, fetched: boolean): boolean;
  skip(url: string, why: string): void;
  unread: UnreadDocument[];
  unreadCount(): number;
}

/** The run's document limits: in total (fetched or inline) and fetched per origin. */
function documentBudget(maxDocuments: number, maxPerOrigin: number): DocumentBudget {
  let read = 0;
  let unreadCount = 0;
  const perOrigin = new Map<string, number>();
  const unread: UnreadDocument[] = [];
  const reasons = new Set<string>();
  const skip = (url: string, why: string) => {
    unreadCount++;
    // The first 50, and the first of every other reason, so a limit that bit late is still named.
    if (unread.length < DISCOVERY_LIMITS.unreadListed || !reasons.has(why)) unread.push({ url, why });
    reasons.add(why);
  };
  return {
    unread,
    unreadCount: () => unreadCount,
    skip,
    take(url, fetched) {
      if (read >= maxDocuments) {
        skip(url, `over the limit of ${maxDocuments} documents per run (--max-documents)`);
        return false;
      }
      let origin: string | null = null;
      if (fetched) {
        try {
          origin = new URL(url).origin;
        } catch {
          origin = null;
        }
        const n = origin ? (perOrigin.get(origin) ?? 0) : 0;
        if (origin && n >= maxPerOrigin) {
          skip(url, `over the limit of ${maxPerOrigin} documents from ${origin} (--max-per-origin)`);
          return false;
        }
        if (origin) perOrigin.set(origin, n + 1);
      }
      read++;
      return true;
    },
  };
}

/** Refuses a remote the address rule forbids: not eligible, not probed, and says why. */
function refusedRemote(c: Candidate, policy: FetchPolicy): boolean {
  try {
    checkUrl(c.url!, policy);
    return false;
  } catch (err) {
    c.eligible = false;
    c.why = `remote refused: ${(err as Error).message}`;
    return true;
  }
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function readCandidate(
  ref: CardRef,
  opts: DiscoverOptions,
  policy: FetchPolicy,
  budget: DocumentBudget,
  cardOf: Map<Candidate, unknown>,
): Promise<Candidate> {
  const entry = ref.entry;
  const started = performance.now();
  const candidate: Candidate = {
    name: null,
    title: entry?.displayName ?? identifierTail(entry?.identifier ?? null),
    identifier: entry?.identifier ?? null,
    url: null,
    cardUrl: ref.url,
    description: null,
    valid: false,
    schema: null,
    errors: [],
    errorCount: 0,
    warnings: [],
    eligible: false,
    why: '',
    requiresAuth: false,
    curated: false,
    verdict: null,
    reason: null,
    addCommand: null,
    mismatches: [],
    findings: [],
    sameToolsAs: [],
    tokens: null,
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
        if (!budget.take(fallback, true))
          candidate.errors.push((err as Error).message, `${fallback}: not read (a document limit)`);
        else
          try {
            card = await fetchCard(fallback, policy);
            candidate.cardUrl = fallback;
          } catch (err2) {
            candidate.errors.push((err as Error).message, (err2 as Error).message);
          }
      } else candidate.errors.push((err as Error).message);
    }
  }
  candidate.errorCount = candidate.errors.length;
  if (card === undefined) {
    candidate.why = NO_CARD_READ;
    return candidate;
  }
  cardOf.set(candidate, card);
  const c = card as { name?: unknown; title?: unknown; description?: unknown; remotes?: unknown };
  candidate.name = typeof c.name === 'string' ? c.name : null;
  if (typeof c.title === 'string') candidate.title = c.title;
  candidate.title ??= candidate.name;
  if (typeof c.description === 'string') candidate.description = c.description;
  // Validation time counts against the document's time budget, after what fetching it took.
  const validation = validateDocument(card, {
    legacy: true,
    budgetMs: Math.max(0, (opts.timeoutMs ?? 10_000) - (performance.now() - started)),
  });
  candidate.valid = validation.valid;
  candidate.schema = validation.schema;
  candidate.warnings = validation.warnings;
  for (const e of validation.errors) candidate.errors.push(`${e.pointer}: ${e.message}`);
  candidate.errorCount += validation.errorCount;
  const judged = judgeCard(card as never, opts.catalog, {
    allowHttp: opts.allowPrivate || !!opts.trustedAddresses?.length,
  });
  candidate.url = judged.remoteUrl;
  candidate.requiresAuth = judged.requiresAuth;
  candidate.curated = judged.curated;
  candidate.eligible = judged.eligible && validation.valid;
  candidate.why = validation.valid
    ? `${judged.why}${validation.schema === 'legacy' ? ' (card read by the earlier seed-era schema)' : ''}`
    : `invalid ${validation.kind === 'server-card' ? 'Server Card' : 'server.json'}${judged.eligible ? '' : `; also ${judged.why}`}`;
  return candidate;
}

/**
 * The card a curated server serves at `<url>/server-card`, or null (none, refused, not a card). Its origin is the
 * maintainer's (the curated URL); a redirect elsewhere passes the address rule unless the curated URL itself is
 * private (a local fixture).
 */
export async function curatedCard(
  url: string,
  opts: { timeoutMs?: number; allowPrivate?: boolean; fence?: Fence } = {},
): Promise<unknown | null> {
  try {
    return await fetchCard(serverCardUrl(url), {
      timeoutMs: opts.timeoutMs ?? 10_000,
      allowPrivate: opts.allowPrivate,
      maxRedirects: 3,
      fence: opts.fence,
    });
  } catch (err) {
    if (err instanceof DocumentError || err instanceof FetchRefused) return null;
    throw err;
  }
}

async function fetchCard(url: string, policy: FetchPolicy): Promise<unknown> {
  const got = await guardedGet(url, CARD_ACCEPT, {
    ...policy,
    maxBytes: Math.min(policy.maxBytes ?? 256 * 1024, 256 * 1024),
  });
  if (got.status !== 200) throw new DocumentError(`HTTP ${got.status} for ${url}`);
  const value = parseJson(got.text);
  if (!looksLikeCard(value)) throw new DocumentError(`not a Server Card: ${url}`);
  return value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new DocumentError('not JSON');
  }
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
