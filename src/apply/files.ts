/** What `refresh --write` writes, computed without I/O: the next catalog and every generated file. */
import { join } from 'node:path';
import { serializeCatalog, type Catalog } from '../catalog/model.js';
import type { Plan } from '../model/plan.js';
import { REASON_TEXT } from '../policy/policy.js';
import { runtimeJson, runtimeKotlin, runtimeServers, runtimeTypeScript } from '../outputs/runtime-list.js';
import { logMarkdown, snapshotMarkdown, type RefreshModel } from '../outputs/snapshot.js';
import type { FileWrite } from '../util/atomic.js';
import type { ResolvedOutputs } from '../catalog/outputs.js';

/** The catalog's path and the generated files' paths, from the outputs that are on (relative to `outDir`). */
export function outputPaths(outputs: ResolvedOutputs, outDir: string): ResolvedOutputs {
  const at = (path: string | undefined) => (path === undefined ? undefined : join(outDir, path));
  return {
    json: at(outputs.json),
    ts: at(outputs.ts),
    snapshot: at(outputs.snapshot),
    log: at(outputs.log),
    ...(outputs.kotlin ? { kotlin: { ...outputs.kotlin, path: join(outDir, outputs.kotlin.path) } } : {}),
  };
}

/** Dropped rows leave `servers` and join `removed` with reason, date and a decision record. */
export function nextCatalog(catalog: Catalog, plan: Plan, at: string): Catalog {
  const dropped = new Map(plan.rows.filter((r) => r.decision === 'drop').map((r) => [r.url, r]));
  if (dropped.size === 0) return catalog;
  const day = at.slice(0, 10);
  return {
    ...catalog,
    servers: catalog.servers.filter((s) => !dropped.has(s.url)),
    removed: [
      ...catalog.removed,
      ...catalog.servers
        .filter((s) => dropped.has(s.url))
        .map((s) => {
          const r = dropped.get(s.url)!;
          return {
            // The description and the decision that added it are kept: `onetap restore` puts the entry back as it was.
            name: s.name,
            url: s.url,
            description: s.description,
            reason: r.reason,
            removedAt: day,
            ...(s.decision ? { added: s.decision } : {}),
            ...(r.error ? { note: r.error } : {}),
            decision: {
              by: 'onetap refresh',
              at,
              why: `policy must-drop: ${REASON_TEXT[r.reason]}${r.dropStreak > 1 ? ` (${r.dropStreak} consecutive runs)` : ''}`,
            },
          };
        }),
    ],
  };
}

/**
 * Every file of an applied refresh: the generated files that are on (`paths`, from `outputPaths`), then the catalog
 * (the others derive from it); held-out rows leave the runtime lists only.
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export function refreshFiles(
  model: RefreshModel,
  catalogPath: string,
  paths: ResolvedOutputs,
  existingLog: string | null,
  heldOut: ReadonlySet<string> = new Set(),
): FileWrite[] {
  // Rows in review for identity-changed or suspicious-tools stay out of what the app ships until accepted.
  const servers = runtimeServers({
    ...model.catalog,
    servers: model.catalog.servers.filter((s) => !heldOut.has(s.url)),
  });
  const files: FileWrite[] = [];
  if (paths.json) files.push({ path: paths.json, content: runtimeJson(servers) });
  if (paths.ts) files.push({ path: paths.ts, content: runtimeTypeScript(servers) });
  if (paths.kotlin) files.push({ path: paths.kotlin.path, content: runtimeKotlin(servers, paths.kotlin.package) });
  if (paths.snapshot) files.push({ path: paths.snapshot, content: snapshotMarkdown(model) });
  if (paths.log) files.push({ path: paths.log, content: logMarkdown(model, existingLog) });
  files.push({ path: catalogPath, content: serializeCatalog(model.catalog) });
  return files;
}
