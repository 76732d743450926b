/** The status model from a store: what `serve`, `report` and `site` show. */
import type { Catalog } from '../catalog/model.js';
import type { Store } from '../store/store.js';
import { statusModel, type ServerHistory, type StatusModel } from './model.js';

/** The default of `--retention-days` (serve, report, site): what the pages and the API keep of the history. */
export const DEFAULT_RETENTION_DAYS = 400;

const DAY = 86_400_000;

/**
 * The status of every catalog server from the store: its verdicts of the last 90 days and its latest row among them.
 */
export async function buildStatus(catalog: Catalog, store: Store | null, now: Date): Promise<StatusModel> {
  const since = new Date(now.getTime() - 89 * DAY).toISOString().slice(0, 10);
  const found =
    (await store?.histories(
      catalog.servers.map((s) => s.url),
      since,
    )) ?? new Map<string, ServerHistory>();
  const history = (url: string): ServerHistory => {
    const h = found.get(url);
    return { points: h?.points ?? [], last: h?.last && h.last.observedAt >= since ? h.last : null };
  };
  // The last two runs: the list's context cost then and before (its change since the last run).
  const [previous, last] = store
    ? await store.runs({ last: 2 }).then((r) => (r.length === 2 ? r : [null, r[0] ?? null]))
    : [null, null];
  return statusModel(catalog, history, last ?? null, now, previous ?? null);
}
