/**
 * Reading the official MCP Registry for a census (pure, but for `readRegistry`): its v0.1 list API with cursor
 * paging, or a dump file of the same shape; the latest version of each server; its remotes as census targets.
 * Everything the registry says is untrusted: pages, servers and remotes are bounded in count and size, and a
 * server or remote that is not of the expected shape is skipped and counted, never fatal. A server over the limits
 * (`assess`, `limited`) is kept as a record of why it was skipped, never cut to fit.
 */
import { readFile } from 'node:fs/promises';
import { guardedGet, type FetchPolicy } from '../net/fetcher.js';
import { validateRegistryServer } from '../discover/card.js';
import type { ServerJsonAssessment } from '../model/census.js';
import { isObject } from '../util/json.js';

/** What a census reads at most. */
export const REGISTRY_LIMITS = {
  pages: 2_000,
  pageBytes: 8 * 1024 * 1024,
  servers: 200_000,
  serverJsonBytes: 64 * 1024,
  metaBytes: 64 * 1024,
  remotesPerServer: 20,
  urlChars: 2_048,
  perPage: 100,
} as const;

/** One item of the registry's list: the server.json and the registry's own `_meta`. */
export interface RegistryItem {
  server: Record<string, unknown>;
  _meta: Record<string, unknown>;
}

/** What the census made of a server before probing: why its remotes are not probed, and its schema check. */
export interface Assessment {
  /** Why none of its remotes is probed (over the limits, or invalid against the schema), or null. */
  skipped: string | null;
  serverJson: ServerJsonAssessment;
}

/** An item as the census's state holds it: with what the census made of it. */
export interface CensusItem extends RegistryItem {
  census: Assessment;
}

const OFFICIAL = 'io.modelcontextprotocol.registry/official';

/** The list endpoint of a registry given as its base URL or as the endpoint itself. */
export function listEndpoint(registry: string): URL {
  const u = new URL(registry);
  if (!/\/v0\.1\/servers\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/$/, '')}/v0.1/servers`;
  return u;
}

/** The longest server name the registry's schema allows. */
const NAME_CHARS = 200;

/** One item of a list page, or null when it is not of the item's shape (a server with a name). */
export function registryItem(value: unknown): RegistryItem | null {
  return isObject(value) &&
    isObject(value.server) &&
    typeof value.server.name === 'string' &&
    value.server.name.length > 0 &&
    value.server.name.length <= NAME_CHARS
    ? { server: value.server, _meta: isObject(value._meta) ? value._meta : {} }
    : null;
}

/**
 * One line of the state's registry: the item and what the census made of it (assessed now when a state predates it).
 */
export function stateItem(value: unknown): CensusItem | null {
  const item = registryItem(value);
  if (!item) return null;
  const census = (value as { census?: unknown }).census;
  return {
    ...item,
    census:
      isObject(census) && isObject(census.serverJson) && (census.skipped === null || typeof census.skipped === 'string')
        ? (census as unknown as Assessment)
        : assess(item),
  };
}

/** The items of one list page, and its next cursor (null: the last page). */
export function readPage(value: unknown): { items: RegistryItem[]; skipped: number; next: string | null } {
  if (!isObject(value) || !Array.isArray(value.servers))
    throw new Error('not a registry list page: expected {servers: [...]}');
  const items: RegistryItem[] = [];
  let skipped = 0;
  for (const s of value.servers) {
    const item = registryItem(s);
    if (item) items.push(item);
    else skipped++;
  }
  const cursor = isObject(value.metadata) ? value.metadata.nextCursor : undefined;
  return {
    items,
    skipped,
    next: typeof cursor === 'string' && cursor.length > 0 && cursor.length <= 1_000 ? cursor : null,
  };
}

/**
 * Every item of a registry (URL: every page, cursor by cursor) or of a dump file of the list's shape, handed to
 * `take` page by page, so that the caller keeps only what it needs of them.
 */
export async function readRegistry(
  source: string,
  policy: FetchPolicy & { userAgent?: string },
  take: (item: RegistryItem) => void | Promise<void>,
): Promise<{ items: number; skipped: number; pages: number }> {
  if (!/^https?:\/\//i.test(source)) {
    const page = readPage(JSON.parse(await readFile(source, 'utf8')));
    for (const item of page.items) await take(item);
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
    for (const item of page.items) await take(item);
    items += page.items.length;
    skipped += page.skipped;
    if (page.next === null) return { items, skipped, pages };
    // A cursor seen before would loop forever; past the limits, the registry is not read whole.
    if (seen.has(page.next))
      throw new Error(`${url.href}: the cursor ${JSON.stringify(page.next).slice(0, 80)} came back a second time`);
    if (pages >= REGISTRY_LIMITS.pages || items >= REGISTRY_LIMITS.servers)
      throw new Error(`more than ${REGISTRY_LIMITS.pages} pages or ${REGISTRY_LIMITS.servers} servers: not read whole`);
    seen.add(page.next);
    cursor = page.next;
  }
}

const officialOf = (item: RegistryItem): Record<string, unknown> =>
  isObject(item._meta[OFFICIAL]) ? item._meta[OFFICIAL] : {};

/** An instant: whole seconds since the epoch, and nanoseconds. */
export type Instant = readonly [seconds: number, nanos: number];

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** An RFC 3339 date-time (what the registry's `publishedAt` is) as an instant, or null when it is not one. */
export function instantOf(value: unknown): Instant | null {
  const m = typeof value === 'string' && value.length <= 64 ? RFC3339.exec(value) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const [oh, om] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  const offset = (m[8] === '-' ? -1 : 1) * (oh * 60 + om) * 60;
  // Nanoseconds: the fraction's first nine digits (what the registry writes at most).
  return [date.getTime() / 1000 + h * 3_600 + mi * 60 + s - offset, Number((m[7] ?? '').slice(0, 9).padEnd(9, '0'))];
}

/** Negative, zero or positive as `a` is before, at or after `b`; a value that is no instant is before every instant. */
export function compareInstants(a: Instant | null, b: Instant | null): number {
  if (!a || !b) return (a ? 1 : 0) - (b ? 1 : 0);
  return a[0] - b[0] || a[1] - b[1];
}

/**
 * The latest version of each server, as items are read (pure): the item the registry marks `isLatest`, else the one
 * published last (`publishedAt` as an instant; one that does not read as one is never the latest), and of equals the
 * last one listed; in the registry's order (where each name first appears). For each, what `keep` made of it when it
 * became the latest (the census: where its text is in a file), so neither the items nor their texts are held.
 */
export class LatestOnly<T> {
  private readonly best = new Map<string, { latest: boolean; at: Instant | null; kept: T }>();

  /** Whether `item` is now the latest version of its server; `keep` is called only then. */
  add(item: RegistryItem, keep: () => T): boolean {
    const o = officialOf(item);
    const latest = o.isLatest === true;
    const at = instantOf(o.publishedAt);
    const name = item.server.name as string;
    const held = this.best.get(name);
    if (held && (latest !== held.latest ? !latest : compareInstants(at, held.at) < 0)) return false;
    this.best.set(name, { latest, at, kept: keep() });
    return true;
  }

  get size(): number {
    return this.best.size;
  }

  /** What was kept of each server's latest version, in the registry's order. */
  *kept(): Generator<T> {
    for (const b of this.best.values()) yield b.kept;
  }
}

const VENDORED_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
const DATED_SCHEMA = /^https:\/\/static\.modelcontextprotocol\.io\/schemas\/(\d{4}-\d{2}-\d{2})\/server\.schema\.json$/;
/** Time one server.json may take to validate. */
const VALIDATE_BUDGET_MS = 50;

const kib = (bytes: number) => `${Math.ceil(bytes / 1024).toLocaleString('en')} KiB`;

/**
 * What a census makes of a server before probing (pure): skipped when it lists more remotes than
 * `REGISTRY_LIMITS.remotesPerServer`, or when its `$schema` is the vendored schema and it is invalid against it
 * (validated there, bounded in time); of another schema, probed and said not validated.
 */
export function assess(item: RegistryItem): Assessment {
  const server = item.server;
  const $schema = server.$schema;
  const dated = typeof $schema === 'string' ? DATED_SCHEMA.exec($schema) : null;
  let serverJson: Assessment['serverJson'];
  if (!dated)
    serverJson = {
      schema: null,
      valid: null,
      why:
        typeof $schema === 'string'
          ? 'not validated: $schema is not a registry server.json schema'
          : 'not validated: no $schema',
    };
  else if ($schema !== VENDORED_SCHEMA)
    serverJson = { schema: dated[1]!, valid: null, why: `not validated: schema ${dated[1]} not vendored` };
  else {
    const v = validateRegistryServer(server, { budgetMs: VALIDATE_BUDGET_MS });
    serverJson = {
      schema: dated[1]!,
      valid: v.valid,
      why: v.valid
        ? null
        : v.errors
            .slice(0, 3)
            .map((e) => `${e.pointer}: ${e.message}`)
            .join('; ')
            .slice(0, 300),
    };
  }
  const remotes = Array.isArray(server.remotes) ? server.remotes.length : 0;
  const skipped =
    remotes > REGISTRY_LIMITS.remotesPerServer
      ? `it lists ${remotes.toLocaleString('en')} remotes, over the limit of ${REGISTRY_LIMITS.remotesPerServer}: none probed`
      : serverJson.valid === false
        ? `its server.json is invalid against the registry's schema ${serverJson.schema}: none probed`
        : null;
  return { skipped, serverJson };
}

const short = (value: unknown, chars: number) =>
  typeof value === 'string' && value.length <= chars ? value : undefined;

/**
 * The item as the census keeps it, as JSON text: whole, or, when its server.json or the registry's `_meta` for it
 * is over its limit, a record of why it was skipped (its name, and the short fields that say which server it is).
 */
export function limited(item: RegistryItem): string {
  const serverBytes = Buffer.byteLength(JSON.stringify(item.server));
  const metaBytes = Buffer.byteLength(JSON.stringify(item._meta));
  const why =
    serverBytes > REGISTRY_LIMITS.serverJsonBytes
      ? `its server.json is ${kib(serverBytes)}, over the limit of ${kib(REGISTRY_LIMITS.serverJsonBytes)}: not read`
      : metaBytes > REGISTRY_LIMITS.metaBytes
        ? `the registry's _meta for it is ${kib(metaBytes)}, over the limit of ${kib(REGISTRY_LIMITS.metaBytes)}: not read`
        : null;
  if (!why) return JSON.stringify(item);
  const s = item.server;
  const o = officialOf(item);
  const server = {
    $schema: short(s.$schema, 200),
    name: s.name,
    description: short(s.description, 100),
    title: short(s.title, 100),
    version: short(s.version, 255),
  };
  const official = {
    status: short(o.status, 40),
    publishedAt: short(o.publishedAt, 64),
    updatedAt: short(o.updatedAt, 64),
    isLatest: typeof o.isLatest === 'boolean' ? o.isLatest : undefined,
  };
  const census: Assessment = {
    skipped: why,
    serverJson: { schema: null, valid: null, why: 'not validated: not read' },
  };
  return JSON.stringify({ server, _meta: { [OFFICIAL]: official }, census });
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

/** A server's remotes as the census sees them: none of a skipped server (`assess`, `limited`). */
export function remotesOf(item: CensusItem): Remote[] {
  const remotes = !item.census.skipped && Array.isArray(item.server.remotes) ? item.server.remotes : [];
  return remotes.map((r): Remote => {
    const url = isObject(r) && typeof r.url === 'string' ? r.url : '';
    const type = isObject(r) ? r.type : undefined;
    const requiresAuth =
      isObject(r) && Array.isArray(r.headers) && r.headers.some((h) => isObject(h) && h.isRequired === true);
    if (!url) return { url, kind: 'unusable', requiresAuth, why: 'no url' };
    // Refused whole, never cut: a cut URL is another URL (a {placeholder} past the cut would go unseen).
    if (url.length > REGISTRY_LIMITS.urlChars)
      return {
        url,
        kind: 'unusable',
        requiresAuth,
        why: `the URL is ${url.length.toLocaleString('en')} characters, over the limit of ${REGISTRY_LIMITS.urlChars.toLocaleString('en')}: not probed`,
      };
    if (/\{[^}]*\}/.test(url))
      return { url, kind: 'templated', requiresAuth, why: 'the URL has a {placeholder} a user fills in' };
    if (type === 'sse')
      return { url, kind: 'sse-only', requiresAuth, why: 'an SSE remote (the legacy transport): not probed' };
    if (type !== 'streamable-http')
      return { url, kind: 'unusable', requiresAuth, why: `transport ${JSON.stringify(type).slice(0, 40)}` };
    return { url, kind: 'streamable-http', requiresAuth, why: null };
  });
}
