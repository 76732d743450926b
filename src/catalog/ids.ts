/**
 * Stable, URL-safe ids for catalog servers (card file names, card names, urn:air identifiers, status page
 * paths). An id is a function of the server itself, never of its position: deleting, adding or reordering
 * one server never moves an id to another server.
 */
import { createHash } from 'node:crypto';
import type { CatalogServer } from './model.js';

/** Lower-case letters, digits and single dashes: a slug never contains `--`, so hashed ids never equal one. */
export function slugify(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'server'
  );
}

/** A short hash of the server's URL: the same URL always gives the same suffix. */
function urlHash(url: string, length = 8): string {
  return createHash('sha256').update(url).digest('hex').slice(0, length);
}

/**
 * The slug of the name; servers whose names slug alike all get `<slug>--<hash of URL>` (none keeps the bare
 * slug, so deleting one never hands its id to another). URLs are unique in a linted catalog; for the rare
 * unlinted duplicate, the longer hash of the whole entry, then the order among identical entries, decides.
 */
export function serverIds(servers: readonly Pick<CatalogServer, 'name' | 'url'>[]): string[] {
  const slugs = servers.map((s) => slugify(s.name));
  const bySlug = new Map<string, number>();
  for (const slug of slugs) bySlug.set(slug, (bySlug.get(slug) ?? 0) + 1);
  const ids = servers.map((s, i) => (bySlug.get(slugs[i]!)! > 1 ? `${slugs[i]}--${urlHash(s.url)}` : slugs[i]!));
  const byId = new Map<string, number>();
  for (const id of ids) byId.set(id, (byId.get(id) ?? 0) + 1);
  const used = new Set<string>();
  return ids.map((id, i) => {
    let out = byId.get(id)! > 1 ? `${slugs[i]}--${urlHash(JSON.stringify(servers[i]), 16)}` : id;
    for (let n = 2; used.has(out); n++) out = `${id}--${n}`; // identical entries only
    used.add(out);
    return out;
  });
}
