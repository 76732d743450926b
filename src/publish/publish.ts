/**
 * `publish`: the curated list in the discovery standards' shapes (pure), and writing it to a directory.
 * An AI Catalog, the older MCP Catalog, and one Server Card per server.
 */
import { clipText } from '../text/clip.js';
import { createHash } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { lintCatalog, SECRET_HEADER, where, type LintOptions, type LintProblem } from '../catalog/lint.js';
import type { Catalog, CatalogServer } from '../catalog/model.js';
import { hostOf } from '../catalog/url.js';
import { serverIds } from '../catalog/ids.js';
import { MEDIA, WELL_KNOWN } from '../discover/documents.js';
import { writeAllAtomic, writeFileAtomic, type FileWrite } from '../util/atomic.js';

export const CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';

export interface PublishOptions {
  /** Absolute base for document URLs (`https://lists.example.org`); without it URLs are root-relative. */
  baseUrl?: string;
  /**
   * The publisher domain in `urn:air:<publisher>:mcp:<slug>` identifiers (default: the base URL's host, else
   * `onetap.local`).
   */
  publisher?: string;
}

export interface PublishedCard {
  slug: string;
  path: string;
  card: Record<string, unknown>;
}

export interface Publication {
  aiCatalog: Record<string, unknown>;
  mcpCatalog: Record<string, unknown>;
  cards: PublishedCard[];
}

/** `mcp.context7.com` → `com.context7.mcp`: the reverse-DNS namespace a card name starts with. */
function namespaceOf(url: string): string {
  const host = (hostOf(url) ?? 'unknown').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host
    .split('.')
    .reverse()
    .join('.')
    .replace(/[^a-zA-Z0-9.-]/g, '-');
}

/** A valid Server Card for one curated server. */
export function serverCard(s: CatalogServer, slug: string): Record<string, unknown> {
  const headers: Record<string, unknown>[] = Object.entries(s.headers ?? {}).map(([name, value]) => ({ name, value }));
  if (s.requiresAuth) {
    headers.push({
      name: 'Authorization',
      description: 'Optional free API key: initialize works without it, some tools need it.',
      isRequired: false,
      isSecret: true,
      value: 'Bearer {api_key}',
      variables: { api_key: { description: 'Your API key', isRequired: false, isSecret: true } },
    });
  }
  const decided = /^\d{4}-\d{2}-\d{2}/.test(s.decision?.at ?? '')
    ? s.decision!.at.slice(0, 10).split('-').map(Number).join('.')
    : '1.0.0';
  return {
    $schema: CARD_SCHEMA,
    name: `${namespaceOf(s.url)}/${slug}`,
    version: decided,
    title: clipText(s.name.trim(), 100),
    description: clipText(s.description.trim(), 100),
    remotes: [{ type: 'streamable-http', url: s.url, ...(headers.length ? { headers } : {}) }],
  };
}

/** A catalog that must not be published: the findings say why. Commands print them and exit 1. */
export class UnpublishableCatalog extends Error {
  constructor(readonly problems: LintProblem[]) {
    super(
      `the catalog fails lint (${problems.length} problem${problems.length === 1 ? '' : 's'}): nothing is published`,
    );
  }
}

/**
 * What would leak if this entry were published: a URL that is not http(s), credentials or a secret-looking
 * query parameter in the URL, a value for a secret-looking header. Checked by `publication` itself, so no
 * caller can publish a secret, whatever lint says.
 */
function leaks(s: CatalogServer): string[] {
  const out: string[] = [];
  let url: URL | null = null;
  try {
    url = new URL(s.url);
  } catch {
    out.push('not a URL');
  }
  if (url) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') out.push(`a ${url.protocol} URL is never published`);
    if (url.username || url.password) out.push('credentials in the URL are never published');
    if ([...url.searchParams.keys()].some((k) => SECRET_HEADER.test(k)))
      out.push('a secret-looking query parameter is never published');
  }
  for (const [name, value] of Object.entries(s.headers ?? {})) {
    if (SECRET_HEADER.test(name) && String(value).trim() !== '')
      out.push(`a value for the secret-looking header "${name}" is never published`);
  }
  return out;
}

export function leakProblems(catalog: Catalog): LintProblem[] {
  return catalog.servers.flatMap((s, i) =>
    leaks(s).map((message) => ({ where: where('servers', i, s.name), message })),
  );
}

/**
 * Everything that keeps a catalog from being published: its lint findings (the policy), and the leak
 * rules `publication` enforces anyway. Empty when it may be published. Every command that publishes the
 * list calls this (or `assertPublishable`) before any work.
 */
export function publishProblems(catalog: Catalog, opts: LintOptions = {}): LintProblem[] {
  const problems = lintCatalog(catalog, opts);
  return problems.length ? problems : leakProblems(catalog);
}

export function assertPublishable(catalog: Catalog, opts: LintOptions = {}): void {
  const problems = publishProblems(catalog, opts);
  if (problems.length) throw new UnpublishableCatalog(problems);
}

/** The published shapes of a catalog. Throws `UnpublishableCatalog` rather than publish a secret or credentials. */
export function publication(catalog: Catalog, opts: PublishOptions = {}): Publication {
  const leaked = leakProblems(catalog);
  if (leaked.length) throw new UnpublishableCatalog(leaked);
  const base = opts.baseUrl?.replace(/\/+$/, '') ?? '';
  const publisher = opts.publisher ?? (base ? new URL(base).hostname : 'onetap.local');
  const ids = serverIds(catalog.servers);
  const cards = catalog.servers.map((s, i) => ({
    slug: ids[i]!,
    path: `/cards/${ids[i]}.json`,
    card: serverCard(s, ids[i]!),
  }));
  const entries = cards.map((c) => ({
    identifier: `urn:air:${publisher}:mcp:${c.slug}`,
    type: MEDIA.serverCard,
    url: `${base}${c.path}`,
  }));
  return {
    aiCatalog: {
      specVersion: '1.0',
      host: { displayName: 'One-tap remote MCP servers (curated, attested)', identifier: publisher },
      entries,
    },
    mcpCatalog: { specVersion: 'draft', entries },
    cards,
  };
}

/** Every published document, at its URL path, with its media type: the catalogs first, then the cards. */
export function publishedDocuments(p: Publication): Required<FileWrite>[] {
  const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';
  return [
    { path: WELL_KNOWN.aiCatalog, mediaType: MEDIA.aiCatalog, content: json(p.aiCatalog) },
    { path: WELL_KNOWN.mcpCatalog, mediaType: 'application/json', content: json(p.mcpCatalog) },
    ...p.cards.map((c) => ({ path: c.path, mediaType: MEDIA.serverCard, content: json(c.card) })),
  ];
}

/** Where `publish --out` records the cards it wrote, so a later run removes only those (never anyone else's files). */
export const CARD_MANIFEST = join('cards', '.onetap-manifest.json');

/** What one `publish --out` did: files written, stale cards removed, stale cards kept because they changed since. */
export interface PublishWrite {
  written: string[];
  removed: string[];
  kept: string[];
}

interface Manifest {
  writtenBy: string;
  cards: Record<string, string>;
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
/** A card file name as publish makes them: nothing a tampered manifest could use to reach outside cards/. */
const CARD_FILE = /^[a-z0-9-]+\.json$/;

function manifestText(cards: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(cards).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const m: Manifest = {
    writtenBy:
      'onetap publish: the cards below were written by it; it removes them when their server leaves the catalog',
    cards: sorted,
  };
  return JSON.stringify(m, null, 2) + '\n';
}

/** The cards an earlier run wrote (name → sha256 of what it wrote); empty when there is no readable manifest. */
async function readManifest(path: string): Promise<Record<string, string>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return {};
  }
  const cards = (parsed as Partial<Manifest> | null)?.cards;
  if (!cards || typeof cards !== 'object') return {};
  return Object.fromEntries(
    Object.entries(cards).filter(([name, hash]) => CARD_FILE.test(name) && typeof hash === 'string'),
  );
}

/**
 * Writes every published document under `outDir` (cards first, the catalogs that point at them last), then
 * removes the cards an earlier run wrote for servers no longer published. A card is removed only when the
 * manifest lists it and its bytes are still what was written; files onetap did not write are never touched.
 * The manifest lists the stale cards until they are gone, so a run killed halfway finishes on the next one.
 */
export async function writePublication(p: Publication, outDir: string): Promise<PublishWrite> {
  const docs = publishedDocuments(p).map((doc) => ({
    urlPath: doc.path,
    path: join(outDir, ...doc.path.split('/').filter(Boolean)),
    content: doc.content,
  }));
  const cards = docs.filter((d) => d.urlPath.startsWith('/cards/'));
  const catalogs = docs.filter((d) => !d.urlPath.startsWith('/cards/'));
  const manifestPath = join(outDir, CARD_MANIFEST);
  const previous = await readManifest(manifestPath);
  const current = Object.fromEntries(cards.map((c) => [basename(c.path), sha256(c.content)]));
  const stale = Object.entries(previous).filter(([name]) => !(name in current));
  const files: FileWrite[] = [
    ...cards,
    { path: manifestPath, content: manifestText({ ...Object.fromEntries(stale), ...current }) },
    ...catalogs,
  ];
  await writeAllAtomic(files.map(({ path, content }) => ({ path, content })));
  const removed: string[] = [];
  const kept: string[] = [];
  for (const [name, hash] of stale) {
    const path = join(outDir, 'cards', name);
    const bytes = await readFile(path).catch(() => null);
    if (bytes === null) continue;
    if (sha256(bytes) !== hash) {
      kept.push(path);
      continue;
    }
    await unlink(path);
    removed.push(path);
  }
  if (stale.length) await writeFileAtomic(manifestPath, manifestText(current));
  return { written: files.map((f) => f.path), removed, kept };
}
