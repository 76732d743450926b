/**
 * Reading discovery documents as found in the wild (pure). Tolerant on purpose: the standard moved in 2026
 * (MCP Catalog → AI Catalog, `mediaType` → `type`, `application/mcp-server+json` → `…-card+json`).
 */
import { isObject } from '../util/json.js';

export const MEDIA = {
  aiCatalog: 'application/ai-catalog+json',
  serverCard: 'application/mcp-server-card+json',
  serverCardLegacy: 'application/mcp-server+json',
} as const;

export const WELL_KNOWN = {
  aiCatalog: '/.well-known/ai-catalog.json',
  mcpCatalog: '/.well-known/mcp/catalog.json',
} as const;

/** The most entries one catalog document may list. */
export const MAX_ENTRIES = 1000;

export type EntryKind = 'server-card' | 'catalog' | 'other';

export interface CatalogEntry {
  identifier: string | null;
  displayName: string | null;
  kind: EntryKind;
  type: string | null;
  /** Absolute URL (resolved against the catalog's URL), or null when the artifact is inline. */
  url: string | null;
  data: unknown;
}

export interface CatalogDocument {
  specVersion: string | null;
  hostName: string | null;
  entries: CatalogEntry[];
}

export class DocumentError extends Error {}

const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : null);

function entryKind(type: string | null): EntryKind {
  if (type === MEDIA.serverCard || type === MEDIA.serverCardLegacy) return 'server-card';
  if (type === MEDIA.aiCatalog) return 'catalog';
  return 'other';
}

/** True for a JSON value shaped like a catalog (an object with an `entries` array). */
export function looksLikeCatalog(value: unknown): boolean {
  return isObject(value) && Array.isArray(value.entries);
}

/** True for a JSON value shaped like a Server Card or registry server.json (valid or not). */
export function looksLikeCard(value: unknown): boolean {
  return (
    isObject(value) &&
    !Array.isArray(value.entries) &&
    (typeof value.$schema === 'string' ||
      Array.isArray(value.remotes) ||
      (typeof value.name === 'string' && typeof value.description === 'string'))
  );
}

/** Reads an AI Catalog or an older MCP Catalog. Throws DocumentError with a clear message otherwise. */
export function readCatalog(value: unknown, baseUrl: string): CatalogDocument {
  if (!looksLikeCatalog(value)) throw new DocumentError('not a catalog: expected an object with an "entries" array');
  const doc = value as { specVersion?: unknown; host?: unknown; entries: unknown[] };
  if (doc.entries.length > MAX_ENTRIES)
    throw new DocumentError(`too many entries: ${doc.entries.length} (at most ${MAX_ENTRIES} are read)`);
  const specVersion = str(doc.specVersion);
  const entries = doc.entries.filter(isObject).map((e): CatalogEntry => {
    const type = str(e.type) ?? str(e.mediaType);
    let url: string | null = null;
    if (str(e.url)) {
      try {
        url = new URL(e.url as string, baseUrl).href;
      } catch {
        url = null;
      }
    }
    return {
      identifier: str(e.identifier),
      displayName: str(e.displayName),
      kind: entryKind(type),
      type,
      url,
      data: e.data,
    };
  });
  return { specVersion, hostName: isObject(doc.host) ? str(doc.host.displayName) : null, entries };
}

/** The last `:` or `/` segment of an identifier, the AI Catalog's fallback display name. */
export function identifierTail(identifier: string | null): string | null {
  return identifier ? (identifier.split(/[:/]/).filter(Boolean).pop() ?? null) : null;
}
