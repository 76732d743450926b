/**
 * `accept`: a maintainer accepts a server's latest recorded tool list (or the one they reviewed, by hash),
 * in tools.lock.json. It never probes: what is accepted is what a recorded refresh saw.
 */
import type { LockEntry } from '../model/acceptance.js';
import type { Store } from '../store/store.js';
import { loadCatalog } from '../catalog/model.js';
import { normalizeUrl } from '../catalog/url.js';

export interface AcceptOptions {
  catalogPath: string;
  store: Store;
  /** A server's name or URL. */
  server: string;
  /** "who: why" */
  decision: string;
  /** The snapshot hash that was reviewed (default: the latest recorded one). */
  snapshot?: string;
  now?: () => Date;
}

/** Nothing was accepted; the message says why (exit 1). */
export class NothingToAccept extends Error {}

export async function acceptTools(
  opts: AcceptOptions,
): Promise<{ url: string; entry: LockEntry; previous: LockEntry | null }> {
  const { catalog } = await loadCatalog(opts.catalogPath);
  const wanted = opts.server.trim();
  const s =
    catalog.servers.find((x) => x.name === wanted) ??
    catalog.servers.find((x) => normalizeUrl(x.url) === normalizeUrl(wanted));
  if (!s) throw new NothingToAccept(`no server named or at "${wanted}" in ${opts.catalogPath}`);
  const decision = /^\s*([^:]+?)\s*:\s*(.+?)\s*$/.exec(opts.decision);
  if (!decision) throw new NothingToAccept('--decision must read "who: why"');
  const recent = await opts.store.recent(s.url, 50);
  const hash = opts.snapshot ?? recent[0]?.toolsHash ?? null;
  if (hash === null)
    throw new NothingToAccept(
      `nothing to accept: no recorded tool list for ${s.name} (run \`onetap refresh --write\` or \`--record\` first)`,
    );
  // The file must be the one the run recorded (its SHA-256, when the observation has it).
  const read = await opts.store.snapshot(hash, recent.find((o) => o.toolsHash === hash)?.snapshotSha256);
  if (!read.snapshot)
    throw new NothingToAccept(
      `nothing to accept: ${read.warning ?? `no recorded snapshot ${hash} (history/snapshots/${hash}.json)`}`,
    );
  const previous = (await opts.store.acceptances()).servers[s.url] ?? null;
  if (previous?.hash === hash)
    throw new NothingToAccept(
      `nothing to accept: ${s.name}'s tool list ${hash} is already accepted (${previous.by}: ${previous.why})`,
    );
  const entry: LockEntry = {
    name: s.name,
    hash,
    ...(read.snapshot.toolsDigest ? { toolsDigest: read.snapshot.toolsDigest } : {}),
    snapshotSha256: read.sha256,
    by: decision[1]!,
    why: decision[2]!,
    at: (opts.now?.() ?? new Date()).toISOString(),
  };
  await opts.store.accept(s.url, entry);
  return { url: s.url, entry, previous };
}
