/**
 * Reading the official MCP Registry for a census (pure, but for `readRegistry`): its v0.1 list API with cursor
 * paging, or a dump file of the same shape; the latest version of each server; its remotes as census targets.
 * Everything the registry says is untrusted: pages, servers and remotes are bounded in count and size, and a
 * server or remote that is not of the expected shape is skipped and counted, never fatal.
 */
import { readFile } from 'node:fs/promises';
import { guardedGet, type FetchPolicy } from '../net/fetcher.js';

/** What a census reads at most. */
export const REGISTRY_LIMITS = { pages: 2_000, pageBytes: 8 * 1024 * 1024, servers: 200_000, remotesPerServer: 20, urlChars: 2_048, perPage: 100 } as const;

/** One item of the registry's list: the server.json and the registry's own `_meta`. */
export interface RegistryItem { server: Record<string, unknown>; _meta: Record<string, unknown> }

const OFFICIAL = 'io.modelcontextprotocol.registry/official';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The list endpoint of a registry given as its base URL or as the endpoint itself. */
export function listEndpoint(registry: string): URL {
  const u = new URL(registry);
  if (!/\/v0\.1\/servers\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/$/, '')}/v0.1/servers`;
  return u;
}

/** One item of a list page, or null when it is not of the item's shape (a server with a name). */
export function registryItem(value: unknown): RegistryItem | null {
  return isObject(value) && isObject(value.server) && typeof value.server.name === 'string' ? { server: value.server, _meta: isObject(value._meta) ? value._meta : {} } : null;
}

/** The items of one list page, and its next cursor (null: the last page). */
export function readPage(value: unknown): { items: RegistryItem[]; skipped: number; next: string | null } {
  if (!isObject(value) || !Array.isArray(value.servers)) throw new Error('not a registry list page: expected {servers: [...]}');
  const items: RegistryItem[] = [];
  let skipped = 0;
  for (const s of value.servers) {
    const item = registryItem(s);
    if (item) items.push(item); else skipped++;
  }
  const cursor = isObject(value.metadata) ? value.metadata.nextCursor : undefined;
  return { items, skipped, next: typeof cursor === 'string' && cursor.length > 0 && cursor.length <= 1_000 ? cursor : null };
}

/**
 * Every item of a registry (URL: every page, cursor by cursor) or of a dump file of the list's shape, handed to
 * `take` page by page, so that the caller keeps only what it needs of them.
 */
export async function readRegistry(source: string, policy: FetchPolicy & { userAgent?: string }, take: (item: RegistryItem) => void): Promise<{ items: number; skipped: number; pages: number }> {
  if (!/^https?:\/\//i.test(source)) {
    const page = readPage(JSON.parse(await readFile(source, 'utf8')));
    page.items.forEach(take);
    return { items: page.items.length, skipped: page.skipped, pages: 1 };
  }
  let items = 0;
  let skipped = 0;
  let cursor: string | null = null;
  const seen = new Set<string>();
  for (let pages = 1; ; pages++) {
    const url = listEndpoint(source);
    url.searchParams.set('limit', String(REGISTRY_LIMITS.perPage));
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const fetched = await guardedGet(url.href, 'application/json', { ...policy, maxBytes: REGISTRY_LIMITS.pageBytes });
    if (fetched.status !== 200) throw new Error(`${url.href}: HTTP ${fetched.status}`);
    const page = readPage(JSON.parse(fetched.text));
    page.items.forEach(take);
    items += page.items.length;
    skipped += page.skipped;
    if (page.next === null) return { items, skipped, pages };
    // A cursor seen before would loop forever; past the limits, the registry is not read whole.
    if (seen.has(page.next)) throw new Error(`${url.href}: the cursor ${JSON.stringify(page.next).slice(0, 80)} came back a second time`);
    if (pages >= REGISTRY_LIMITS.pages || items >= REGISTRY_LIMITS.servers) throw new Error(`more than ${REGISTRY_LIMITS.pages} pages or ${REGISTRY_LIMITS.servers} servers: not read whole`);
    seen.add(page.next);
    cursor = page.next;
  }
}

const officialOf = (item: RegistryItem): Record<string, unknown> => (isObject(item._meta[OFFICIAL]) ? item._meta[OFFICIAL] : {});

/**
 * The latest version of each server, as items are read: the item the registry marks `isLatest`, else the one
 * published last, else the last one listed; in the registry's order (where each name first appears). Each is kept as
 * its JSON text, a fraction of its size as objects.
 */
export class LatestOnly {
  private readonly best = new Map<string, { latest: number; publishedAt: string; json: string }>();

  add(item: RegistryItem): void {
    const o = officialOf(item);
    const next = { latest: o.isLatest === true ? 1 : 0, publishedAt: typeof o.publishedAt === 'string' ? o.publishedAt : '', json: '' };
    const name = item.server.name as string;
    const held = this.best.get(name);
    if (held && (next.latest < held.latest || (next.latest === held.latest && next.publishedAt < held.publishedAt))) return;
    next.json = JSON.stringify(item);
    this.best.set(name, next);
  }

  get size(): number { return this.best.size; }

  /** Each kept item's JSON text, in the registry's order. */
  *texts(): Generator<string> {
    for (const b of this.best.values()) yield b.json;
  }
}

/** How a census treats one remote of a server. */
export type RemoteKind = 'streamable-http' | 'sse-only' | 'templated' | 'unusable';

export interface Remote {
  url: string;
  kind: RemoteKind;
  /** It declares a required header (a key): probed as an auth-optional entry. */
  requiresAuth: boolean;
  /** Why a remote is not probed (kinds other than streamable-http). */
  why: string | null;
}

/** A server's remotes as the census sees them (at most `REGISTRY_LIMITS.remotesPerServer`). */
export function remotesOf(server: Record<string, unknown>): Remote[] {
  const remotes = Array.isArray(server.remotes) ? server.remotes.slice(0, REGISTRY_LIMITS.remotesPerServer) : [];
  return remotes.map((r): Remote => {
    const url = isObject(r) && typeof r.url === 'string' ? r.url.slice(0, REGISTRY_LIMITS.urlChars) : '';
    const type = isObject(r) ? r.type : undefined;
    const requiresAuth = isObject(r) && Array.isArray(r.headers) && r.headers.some((h) => isObject(h) && h.isRequired === true);
    if (!url) return { url, kind: 'unusable', requiresAuth, why: 'no url' };
    if (/\{[^}]*\}/.test(url)) return { url, kind: 'templated', requiresAuth, why: 'the URL has a {placeholder} a user fills in' };
    if (type === 'sse') return { url, kind: 'sse-only', requiresAuth, why: 'an SSE remote (the legacy transport): not probed' };
    if (type !== 'streamable-http') return { url, kind: 'unusable', requiresAuth, why: `transport ${JSON.stringify(type).slice(0, 40)}` };
    return { url, kind: 'streamable-http', requiresAuth, why: null };
  });
}
