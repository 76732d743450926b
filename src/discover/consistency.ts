/**
 * Card vs runtime (pure): the Server Card standard says clients SHOULD verify a card's claims against the live
 * connection, preferring runtime values. What is compared: `version` with serverInfo.version; the remote that
 * answered (its URL listed, its transport streamable-http); `supportedProtocolVersions` with what the server
 * negotiated and with the protocol eras it served. The card's `name` is a reverse-DNS identifier and need not
 * equal serverInfo.name; free text (title, description) is not judged.
 */
import { normalizeUrl } from '../catalog/url.js';
import { clipText } from '../text/clip.js';

import type { Mismatch } from '../model/observation.js';

export type { Mismatch };

/** A claim as recorded: scalars (text clipped), lists of at most 20 scalars; anything else only by its kind. */
function claim(value: unknown): unknown {
  if (typeof value === 'string') return clipText(value, 256);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value))
    return value
      .slice(0, 20)
      .map((v) =>
        typeof v === 'string'
          ? clipText(v, 256)
          : typeof v === 'number' || typeof v === 'boolean'
            ? v
            : `(${v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v})`,
      );
  return `(${typeof value === 'object' ? 'an object' : typeof value})`;
}

export interface LiveFacts {
  /** The URL that answered. */
  url: string;
  serverVersion: string | null;
  /** The version the server negotiated with the deciding client. */
  protocolVersion: string | null;
  /** Per protocol version a client of that era used, whether it worked (from the matrix; empty without it). */
  eras: Record<string, boolean>;
}

interface CardRemote {
  type?: unknown;
  url?: unknown;
  supportedProtocolVersions?: unknown;
}

export function cardMismatches(card: unknown, live: LiveFacts): Mismatch[] {
  const c = (card ?? {}) as { version?: unknown; remotes?: unknown };
  const out: Mismatch[] = [];
  if (typeof c.version === 'string' && live.serverVersion !== null && c.version !== live.serverVersion) {
    out.push({ field: 'version', card: claim(c.version), live: live.serverVersion });
  }
  const remotes = Array.isArray(c.remotes) ? (c.remotes as CardRemote[]) : [];
  const at = remotes.findIndex((r) => typeof r?.url === 'string' && normalizeUrl(r.url) === normalizeUrl(live.url));
  if (at < 0) {
    out.push({
      field: 'remotes[].url',
      card: claim(remotes.map((r) => r?.url).filter((u) => typeof u === 'string')),
      live: live.url,
    });
    return out;
  }
  const remote = remotes[at]!;
  if (remote.type !== 'streamable-http')
    out.push({ field: `remotes[${at}].type`, card: claim(remote.type ?? null), live: 'streamable-http' });
  if (Array.isArray(remote.supportedProtocolVersions)) {
    const claimed = remote.supportedProtocolVersions.filter((v): v is string => typeof v === 'string');
    if (live.protocolVersion !== null && !claimed.includes(live.protocolVersion)) {
      out.push({ field: `remotes[${at}].supportedProtocolVersions`, card: claim(claimed), live: live.protocolVersion });
    }
    for (const [version, works] of Object.entries(live.eras)) {
      if (claimed.includes(version) && !works)
        out.push({
          field: `remotes[${at}].supportedProtocolVersions`,
          card: claim(version),
          live: `a ${version} client could not list tools`,
        });
    }
  }
  return out;
}
