/**
 * The curated catalog file (default `catalog/servers.json`, schema `catalog/servers.schema.json`).
 * Loading checks only what every command needs; `lint` enforces the rest.
 */
import { readFile } from 'node:fs/promises';

export interface DecisionRecord {
  /** Who decided (a person or a tool). */
  by: string;
  /** When, as an ISO date (YYYY-MM-DD) or date-time. */
  at: string;
  why: string;
}

export interface CatalogServer {
  name: string;
  url: string;
  description: string;
  requiresAuth: boolean;
  /** Non-secret default headers sent on one-tap add. */
  headers?: Record<string, string>;
  decision?: DecisionRecord;
  [extra: string]: unknown;
}

export interface RemovedEntry {
  name: string;
  url: string;
  /** A policy reason (`dns`, `origin-tls`, …) or a word such as `dead` or `rejected`. */
  reason: string;
  removedAt?: string | null;
  note?: string;
  decision?: DecisionRecord;
}

export interface CatalogPolicy {
  /** Hosts allowed to be requiresAuth (auth-optional with a free key). */
  authOptionalHosts: string[];
  /** Hosts where several different servers live under different paths. */
  sharedGatewayHosts: string[];
  /** Hosts whose every path is one server (the app matches saved URLs by host there). */
  aliasedHosts?: string[];
  /** The client profile whose outcome decides each row (default `kai-9000`, the app's own client). */
  clientProfile?: string;
  /** Per-request time limit override, ms (default: the profile's own, 60 s for the app; `--timeout` wins). */
  timeoutMs?: number;
  /** Consecutive drop-class runs needed before a drop (a `--confirm-drops` flag wins). */
  confirmDrops?: number;
  /** URLs that must answer when this machine's network is up (any HTTP answer counts). */
  canaries?: string[];
}

export interface Catalog {
  $schema?: string;
  about?: string;
  policy: CatalogPolicy;
  servers: CatalogServer[];
  removed: RemovedEntry[];
}

export class CatalogError extends Error {}

const DEFAULT_POLICY: CatalogPolicy = { authOptionalHosts: [], sharedGatewayHosts: [] };

export async function loadCatalog(path: string): Promise<{ catalog: Catalog; text: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CatalogError(`${path}: cannot read the catalog (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return { catalog: parseCatalog(text, path), text };
}

/** Parses a catalog, requiring only name, url, description and requiresAuth per server. */
export function parseCatalog(text: string, path = 'catalog'): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`${path}: not JSON (${(err as Error).message})`);
  }
  if (!isObject(raw) || !Array.isArray(raw.servers)) throw new CatalogError(`${path}: expected an object with a "servers" array`);
  const problems: string[] = [];
  raw.servers.forEach((s: unknown, i: number) => {
    if (!isObject(s)) return problems.push(`servers[${i}]: not an object`);
    for (const key of ['name', 'url', 'description'] as const) {
      if (typeof s[key] !== 'string' || (s[key] as string).trim() === '') problems.push(`servers[${i}]: "${key}" must be a non-empty string`);
    }
    if (typeof s.requiresAuth !== 'boolean') problems.push(`servers[${i}]: "requiresAuth" must be true or false`);
    return undefined;
  });
  if (raw.removed !== undefined && !Array.isArray(raw.removed)) problems.push('"removed" must be an array');
  if (raw.policy !== undefined && !isObject(raw.policy)) problems.push('"policy" must be an object');
  if (problems.length) throw new CatalogError(problems.map((p) => `${path}: ${p}`).join('\n'));
  const policy = { ...DEFAULT_POLICY, ...(raw.policy as Partial<CatalogPolicy> | undefined) };
  return { ...(raw as object), policy, servers: raw.servers as CatalogServer[], removed: (raw.removed as RemovedEntry[] | undefined) ?? [] } as Catalog;
}

/** The catalog as written to disk: stable key order, two-space indent, trailing newline. */
export function serializeCatalog(catalog: Catalog): string {
  return JSON.stringify(catalog, null, 2) + '\n';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
