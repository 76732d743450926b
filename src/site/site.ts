/**
 * `onetap site`: what `serve` serves, as files for any static host (GitHub Pages, a bucket, file://).
 * The documents come from the same renderers as `serve` (publishedDocuments, buildStatus, overviewPage,
 * serverPage); only the links are relative and the JSON API has fixed windows instead of query parameters.
 */
import { listBadge, serverBadge } from '../status/badge.js';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Catalog } from '../catalog/model.js';
import type { Store } from '../store/store.js';
import { publication, publishedDocuments, type PublishOptions } from '../publish/publish.js';
import { historyAnswer, refreshView } from '../status/model.js';
import { overviewPage, serverPage } from '../status/page.js';
import { buildStatus } from '../status/build.js';
import { sitePath } from '../status/routes.js';
import { writeAllAtomic, type FileWrite } from '../util/atomic.js';

/** The history windows written per server (`api/servers/<id>/history-<days>.json`). */
export const HISTORY_WINDOWS = [30, 90] as const;

const DAY = 86_400_000;

export interface SiteOptions extends PublishOptions {
  now?: Date;
  /** The catalog's lint findings: the published documents are left out and the overview names them. */
  lintProblems?: ReadonlyArray<{ where: string; message: string }>;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** Every file of the site (paths relative to its root, forward slashes), in memory. Reads the store; writes nothing. */
export async function siteFiles(catalog: Catalog, store: Store | null, opts: SiteOptions = {}): Promise<FileWrite[]> {
  const now = opts.now ?? new Date();
  const files: FileWrite[] = [];
  // Discovery documents, byte for byte what `serve` answers (absolute URLs only with a base URL); withheld, as serve
  // withholds them, from a catalog that fails lint (the overview names the findings).
  if (!opts.lintProblems?.length)
    for (const doc of publishedDocuments(publication(catalog, opts)))
      files.push({ ...doc, path: doc.path.replace(/^\//, '') });
  const model = await buildStatus(catalog, store, now);
  files.push({ path: sitePath('servers'), content: json(model) });
  const latest = refreshView((await store?.latestRun()) ?? null);
  // Before the first refresh there is no such document (serve answers 404): no file.
  if (latest) files.push({ path: sitePath('latestRefresh'), content: json(latest) });
  const since = (days: number) => new Date(now.getTime() - (days - 1) * DAY).toISOString().slice(0, 10);
  for (const server of model.servers) {
    const observations90 = (await store?.since(server.url, since(90))) ?? [];
    files.push({
      path: sitePath('serverPage', { id: server.id }),
      content: serverPage(server, observations90, model.generatedAt, { static: true }),
    });
    for (const days of HISTORY_WINDOWS) {
      const observations = days === 90 ? observations90 : ((await store?.since(server.url, since(days))) ?? []);
      files.push({
        path: sitePath('history', { id: server.id, days }),
        content: json(historyAnswer(server, observations, days, now)),
      });
    }
  }
  for (const server of model.servers)
    files.push({ path: sitePath('serverBadge', { id: server.id }), content: serverBadge(server.verdict) });
  files.push({
    path: sitePath('listBadge'),
    content: listBadge(model.servers.filter((s) => s.verdict === 'live').length, model.servers.length),
  });
  // GitHub Pages deployed from a branch runs Jekyll, which drops dot-folders (.well-known) without this.
  files.push({ path: '.nojekyll', content: '' });
  // Last: it links to everything above, so a reader never follows a link to a file not yet written.
  files.push({
    path: sitePath('overview'),
    content: overviewPage(model, {
      static: true,
      historyProblems: (await store?.problems()) ?? undefined,
      lintProblems: opts.lintProblems,
    }),
  });
  return files;
}

/** The folders only the site writes: stale files in them (a removed server's page) are deleted. */
const OWNED_FOLDERS = ['badge', 'servers', 'cards', 'api/servers'];

/**
 * Writes the site under `outDir`: every file staged then renamed (atomic per file), then the pages, cards and
 * histories of servers no longer in the catalog are removed. Other files in `outDir` are left alone.
 */
export async function writeSite(outDir: string, files: FileWrite[]): Promise<string[]> {
  const targets = files.map((f) => ({ path: join(outDir, ...f.path.split('/')), content: f.content }));
  await writeAllAtomic(targets);
  const keep = new Set(files.map((f) => f.path));
  for (const folder of OWNED_FOLDERS) {
    const entries = await readdir(join(outDir, ...folder.split('/')), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const rel = `${folder}/${e.name}`;
      const stale = e.isDirectory() ? ![...keep].some((p) => p.startsWith(`${rel}/`)) : !keep.has(rel);
      if (stale) await rm(join(outDir, ...rel.split('/')), { recursive: true, force: true });
    }
  }
  return targets.map((t) => t.path);
}
