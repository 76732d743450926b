/**
 * Card vs runtime (pure): the Server Card standard says clients SHOULD verify a card's claims against the live
 * connection, preferring runtime values. What is compared: `version` with serverInfo.version; the remote that
 * answered (its URL listed, its transport streamable-http); `supportedProtocolVersions` with what the server
 * negotiated and with the protocol eras it served. The card's `name` is a reverse-DNS identifier and need not
 * equal serverInfo.name; free text (title, description) is not judged.
 */
import { normalizeUrl } from '../catalog/url.js';

export interface Mismatch { field: string; card: unknown; live: unknown }

export interface LiveFacts {
  /** The URL that answered. */
  url: string;
  serverVersion: string | null;
  /** The version the server negotiated with the deciding client. */
  protocolVersion: string | null;
  /** Per protocol version a client of that era used, whether it worked (from the matrix; empty without it). */
  eras: Record<string, boolean>;
}

interface CardRemote { type?: unknown; url?: unknown; supportedProtocolVersions?: unknown }

export function cardMismatches(card: unknown, live: LiveFacts): Mismatch[] {
  const c = (card ?? {}) as { version?: unknown; remotes?: unknown };
  const out: Mismatch[] = [];
  if (typeof c.version === 'string' && live.serverVersion !== null && c.version !== live.serverVersion) {
    out.push({ field: 'version', card: c.version, live: live.serverVersion });
  }
  const remotes = Array.isArray(c.remotes) ? (c.remotes as CardRemote[]) : [];
  const at = remotes.findIndex((r) => typeof r?.url === 'string' && normalizeUrl(r.url) === normalizeUrl(live.url));
  if (at < 0) {
    out.push({ field: 'remotes[].url', card: remotes.map((r) => r?.url).filter((u) => typeof u === 'string'), live: live.url });
    return out;
  }
  const remote = remotes[at]!;
  if (remote.type !== 'streamable-http') out.push({ field: `remotes[${at}].type`, card: remote.type ?? null, live: 'streamable-http' });
  if (Array.isArray(remote.supportedProtocolVersions)) {
    const claimed = remote.supportedProtocolVersions.filter((v): v is string => typeof v === 'string');
    if (live.protocolVersion !== null && !claimed.includes(live.protocolVersion)) {
      out.push({ field: `remotes[${at}].supportedProtocolVersions`, card: claimed, live: live.protocolVersion });
    }
    for (const [version, works] of Object.entries(live.eras)) {
      if (claimed.includes(version) && !works) out.push({ field: `remotes[${at}].supportedProtocolVersions`, card: version, live: `a ${version} client could not list tools` });
    }
  }
  return out;
}
