/**
 * Client profiles: the clients a probe can be, as data. The verdict follows the deciding profile
 * (the catalog's `policy.clientProfile`, default the app's own client); the others make the matrix.
 * Sources: docs/app-client.md §4.2 (the app), §4.4 (the app fork), §8 (the app's engines); the spec-correct and
 * stateless profiles follow the MCP specification and the official TypeScript SDK's client (./spec-client.ts).
 */
import type { CatalogPolicy } from '../catalog/model.js';
import { MATRIX_LABELS } from '../model/describe.js';

/** How a profile talks: each maps to one client in this folder. */
export type Handshake =
  | 'app' // the app's classic McpClient (Ktor): src/attest/app-client.ts
  | 'spec' // a spec-correct Streamable HTTP client: src/attest/spec-client.ts
  | 'stateless' // the 2026-07-28 stateless revision: src/attest/spec-client.ts (runStatelessClient)
  | 'app-fallback'; // the app fork's newest-first chain: src/attest/app-client.ts

export interface ClientProfile {
  /** Short id used in reports, flags and the history store. */
  id: string;
  /** The word for this client in a one-line matrix ("app ✓ · 2025-11-25 ✓ · 2026-07-28 ✗"). */
  label: string;
  handshake: Handshake;
  protocolVersion: string;
  clientInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
  /** User-Agent the client sends (null: none). */
  userAgent: string | null;
  /** Accept-Encoding the client's engine sends (null: none). */
  acceptEncoding: string | null;
  /** Time limits of the client, per request. */
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** tools/list pages the client follows through nextCursor (1: the first page only). */
  toolPages: number;
  /** Protocol versions the client accepts in an initialize result (empty: any answer). */
  supportedVersions: readonly string[];
  /** Headers the client sends on every request, before the entry's own (a list's own client may add some). */
  headers?: Readonly<Record<string, string>>;
  /** The built-in profile a list's own profile derives from. */
  extends?: string;
}

/** The app's User-Agent: Ktor's default (`KTOR_DEFAULT_USER_AGENT`), Kai sets none of its own. */
export const KTOR_USER_AGENT = 'Ktor client';

/**
 * A browser's agent, for the diagnosis: edges (Cloudflare and others) 403 non-browser agents, so the
 * spec-correct reading looks like a browser to tell "the app's agent is blocked" from "the server is gone".
 */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 onetap/0.1';

/** The app's limits (`HttpTimeout { requestTimeoutMillis = 60_000; connectTimeoutMillis = 10_000 }`). */
const APP_LIMITS = { connectTimeoutMs: 10_000, requestTimeoutMs: 60_000 } as const;

/**
 * The app's client ("Kai 9000", classic McpClient on Android): 2024-11-05, empty capabilities, Ktor's agent,
 * OkHttp's transparent gzip, page 1 of tools only, whole bodies read, status never checked.
 */
export const KAI_9000: ClientProfile = {
  id: 'kai-9000',
  label: MATRIX_LABELS['kai-9000'],
  handshake: 'app',
  protocolVersion: '2024-11-05',
  clientInfo: { name: 'Kai 9000', version: '1.0' },
  capabilities: {},
  userAgent: KTOR_USER_AGENT,
  acceptEncoding: 'gzip',
  ...APP_LIMITS,
  toolPages: 1,
  supportedVersions: [],
};

/** What the official SDK clients do today (TS SDK 1.32: Client + StreamableHTTPClientTransport on Node's fetch). */
export const MCP_2025_11_25: ClientProfile = {
  id: 'mcp-2025-11-25',
  label: MATRIX_LABELS['mcp-2025-11-25'],
  handshake: 'spec',
  protocolVersion: '2025-11-25',
  clientInfo: { name: 'onetap', version: '0.1.0' },
  capabilities: {},
  userAgent: 'node',
  acceptEncoding: 'gzip, deflate',
  // Node's fetch (undici) gives up connecting after 10 s; the SDK's request timeout is 60 s.
  connectTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  toolPages: 10,
  supportedVersions: ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'],
};

/**
 * The stateless revision: `server/discover`, then `tools/list`, each with the version header, `Mcp-Method` and `_meta`.
 */
export const MCP_2026_07_28: ClientProfile = {
  ...MCP_2025_11_25,
  id: 'mcp-2026-07-28',
  label: MATRIX_LABELS['mcp-2026-07-28'],
  handshake: 'stateless',
  protocolVersion: '2026-07-28',
  supportedVersions: ['2026-07-28'],
};

/** The app fork's chain (§4.4): 2026-07-28 first, stateless then classic per version, falling back to older ones. */
export const KAI_FALLBACK: ClientProfile = {
  ...KAI_9000,
  id: 'kai-fallback',
  label: MATRIX_LABELS['kai-fallback'],
  handshake: 'app-fallback',
  protocolVersion: '2026-07-28',
  capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'],
};

/**
 * The spec-correct reading that explains a failure of the deciding profile: today's diagnosis client
 * speaks the app's handshake (2024-11-05) but reads as the spec says, with a browser's agent.
 */
export const DIAGNOSIS: ClientProfile = {
  ...MCP_2025_11_25,
  id: 'diagnosis',
  label: 'spec',
  protocolVersion: '2024-11-05',
  clientInfo: KAI_9000.clientInfo,
  userAgent: BROWSER_USER_AGENT,
  acceptEncoding: 'gzip, deflate, br',
  supportedVersions: [],
};

export const DEFAULT_PROFILE_ID = KAI_9000.id;

/** Every profile a probe can decide with, in matrix order. */
export const CLIENT_PROFILES: Readonly<Record<string, ClientProfile>> = Object.fromEntries(
  [KAI_9000, KAI_FALLBACK, MCP_2025_11_25, MCP_2026_07_28].map((p) => [p.id, p]),
);

export function profileById(id: string): ClientProfile | undefined {
  return Object.hasOwn(CLIENT_PROFILES, id) ? CLIENT_PROFILES[id] : undefined;
}

/** What a list's own client changes of a built-in profile; everything else (handshake, reading, limits) is kept. */
export interface ProfileChanges {
  clientInfo?: { name: string; version: string };
  userAgent?: string | null;
  protocolVersion?: string;
  headers?: Record<string, string>;
  requestTimeoutMs?: number;
}

/** A list's own client profile: `base` with `changes`, under its own id (its label too). */
export function deriveProfile(id: string, base: ClientProfile, changes: ProfileChanges): ClientProfile {
  return {
    ...base,
    id,
    label: id,
    extends: base.id,
    clientInfo: changes.clientInfo ?? base.clientInfo,
    userAgent: changes.userAgent !== undefined ? changes.userAgent : base.userAgent,
    protocolVersion: changes.protocolVersion ?? base.protocolVersion,
    // The era's client asks for this version and accepts it back.
    supportedVersions:
      changes.protocolVersion &&
      base.supportedVersions.length &&
      !base.supportedVersions.includes(changes.protocolVersion)
        ? [changes.protocolVersion, ...base.supportedVersions]
        : base.supportedVersions,
    headers: { ...base.headers, ...changes.headers },
    requestTimeoutMs: changes.requestTimeoutMs ?? base.requestTimeoutMs,
  };
}

/** The profile ids a catalog can choose: the built-in ones and its own. */
export function profileIds(policy: Pick<CatalogPolicy, 'profiles'>): string[] {
  return [...Object.keys(CLIENT_PROFILES), ...Object.keys(policy.profiles ?? {})];
}

/**
 * A catalog's deciding profile: `id` (a flag), else `policy.clientProfile`, else the Kai 9000 app's; a built-in
 * one, or one of `policy.profiles` derived from a built-in one. Throws naming the known ids when there is none.
 */
export function catalogProfile(
  policy: Pick<CatalogPolicy, 'clientProfile' | 'profiles'>,
  id = policy.clientProfile ?? DEFAULT_PROFILE_ID,
): ClientProfile {
  const builtIn = profileById(id);
  if (builtIn) return builtIn;
  const own = policy.profiles && Object.hasOwn(policy.profiles, id) ? policy.profiles[id]! : undefined;
  const base = own && profileById(own.extends);
  if (!own || !base) throw new Error(`unknown client profile "${id}" (known: ${profileIds(policy).join(', ')})`);
  return deriveProfile(id, base, {
    clientInfo: own.clientInfo,
    userAgent: own.userAgent,
    protocolVersion: own.protocolVersion,
    headers: own.headers,
    requestTimeoutMs: own.timeoutMs,
  });
}
