/**
 * What the entries of a list are known to serve, from the history: each one's latest recorded tool list (a removed
 * entry's last list before it went). Records made before set digests were kept are fingerprinted from their stored
 * snapshot when it holds the whole list; a clipped one gives only the exact tools digest.
 */
import { toolSetDigests } from '../model/snapshot-hash.js';
import type { ToolSetPrint } from '../policy/same-tools.js';
import type { Store } from './store.js';

/** How far back an entry's rows are read for its last list (a dead server's newest rows list nothing). */
const ROWS_READ = 20;

export async function toolSetPrints(
  store: Store,
  entries: ReadonlyArray<{ name: string; url: string }>,
): Promise<ToolSetPrint[]> {
  const out: ToolSetPrint[] = [];
  for (const e of entries) {
    const row = (await store.recent(e.url, ROWS_READ)).find((r) => r.toolsDigest && r.toolCount);
    if (!row) continue;
    let { nameBlindDigest, descriptionBlindDigest } = row;
    if (nameBlindDigest === undefined && row.toolsHash) {
      const { snapshot } = await store.snapshot(row.toolsHash);
      const digests = snapshot && !snapshot.clipped ? toolSetDigests(snapshot.tools) : null;
      nameBlindDigest = digests?.nameBlind ?? null;
      descriptionBlindDigest = digests?.descriptionBlind ?? null;
    }
    out.push({
      name: e.name,
      url: e.url,
      toolCount: row.toolCount,
      toolsDigest: row.toolsDigest,
      nameBlindDigest,
      descriptionBlindDigest,
    });
  }
  return out;
}
