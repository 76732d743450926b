/**
 * Runtime helpers for client apps, the TypeScript twins of the app's Kotlin ones: match a saved server to
 * a popular entry, and apply default headers without ever overwriting what the user set.
 */
import { hostOf, normalizeUrl } from '../catalog/url.js';

/** Hosts whose every path is the same server (Jina's `/v1` and `/sse`). */
export const HOST_ALIASED: readonly string[] = ['mcp.jina.ai'];

/** True when `saved` is the same popular endpoint as `popular`: same normalised URL, or same aliased host. */
export function matchesPopularUrl(
  saved: string,
  popular: string,
  aliasedHosts: readonly string[] = HOST_ALIASED,
): boolean {
  if (normalizeUrl(saved) === normalizeUrl(popular)) return true;
  const host = hostOf(saved);
  return host !== null && host === hostOf(popular) && aliasedHosts.includes(host);
}

/**
 * Adds the default headers the user has not set (names compared case-insensitively); same object when nothing is added.
 */
export function mergeMissingHeaders(
  existing: Readonly<Record<string, string>>,
  defaults: Readonly<Record<string, string>>,
): Record<string, string> {
  const have = new Set(Object.keys(existing).map((k) => k.toLowerCase()));
  const missing = Object.entries(defaults).filter(([k]) => !have.has(k.toLowerCase()));
  return missing.length === 0 ? (existing as Record<string, string>) : { ...existing, ...Object.fromEntries(missing) };
}

export interface SavedServer {
  url: string;
  headers: Record<string, string>;
}
export interface PopularDefaults {
  url: string;
  headers?: Record<string, string>;
}

/** Applies popular entries' default headers to saved servers; returns the same array when nothing changes. */
export function applyPopularDefaultHeaders<T extends SavedServer>(
  servers: T[],
  popular: readonly PopularDefaults[],
  aliasedHosts: readonly string[] = HOST_ALIASED,
): T[] {
  let changed = false;
  const updated = servers.map((server) => {
    const defaults = popular.find(
      (p) => p.headers && Object.keys(p.headers).length > 0 && matchesPopularUrl(server.url, p.url, aliasedHosts),
    )?.headers;
    if (!defaults) return server;
    const merged = mergeMissingHeaders(server.headers, defaults);
    if (merged === server.headers) return server;
    changed = true;
    return { ...server, headers: merged };
  });
  return changed ? updated : servers;
}

/** A pasted API key as an Authorization value: trimmed, `Bearer ` added unless present (any case). */
export function authorizationHeaderValue(key: string): string {
  const raw = key.trim();
  if (raw === '') return raw;
  return /^bearer /i.test(raw) ? raw : `Bearer ${raw}`;
}
