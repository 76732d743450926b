/** Stable, URL-safe ids for catalog servers (card slugs, status page paths): from the name, deduplicated in order. */
import type { CatalogServer } from './model.js';

function slugify(text: string): string {
  return text.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'server';
}

export function serverIds(servers: readonly Pick<CatalogServer, 'name'>[]): string[] {
  const used = new Set<string>();
  return servers.map((s) => {
    const base = slugify(s.name);
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    return id;
  });
}
