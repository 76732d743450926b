/** What `refresh --write` writes, computed without I/O: the next catalog and every generated file. */
import { join } from 'node:path';
import { serializeCatalog, type Catalog } from '../catalog/model.js';
import type { Plan } from '../model/plan.js';
import { REASON_TEXT } from '../policy/policy.js';
import { runtimeJson, runtimeKotlin, runtimeServers, runtimeTypeScript } from '../outputs/runtime-list.js';
import { logMarkdown, snapshotMarkdown, type RefreshModel } from '../outputs/snapshot.js';
import type { FileWrite } from '../util/atomic.js';

export interface OutputPaths {
  catalog: string;
  runtimeJson: string;
  runtimeTs: string;
  runtimeKotlin: string;
  snapshot: string;
  log: string;
}

/** Generated files live beside the catalog unless `outDir` says otherwise. */
export function outputPaths(catalogPath: string, outDir: string): OutputPaths {
  return {
    catalog: catalogPath,
    runtimeJson: join(outDir, 'generated', 'popular-servers.json'),
    runtimeTs: join(outDir, 'generated', 'popular-servers.ts'),
    runtimeKotlin: join(outDir, 'generated', 'PopularMcpServers.kt'),
    snapshot: join(outDir, 'servers.md'),
    log: join(outDir, 'log.md'),
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
      ...catalog.servers.filter((s) => dropped.has(s.url)).map((s) => {
        const r = dropped.get(s.url)!;
        return {
          name: s.name, url: s.url, reason: r.reason, removedAt: day,
          ...(r.error ? { note: r.error } : {}),
          decision: { by: 'onetap refresh', at, why: `policy must-drop: ${REASON_TEXT[r.reason]}${r.dropStreak > 1 ? ` (${r.dropStreak} consecutive runs)` : ''}` },
        };
      }),
    ],
  };
}

/** Every file of an applied refresh, the catalog last (the others derive from it); held-out rows leave the runtime lists only. */
export function refreshFiles(model: RefreshModel, paths: OutputPaths, existingLog: string | null, kotlinPackage?: string, heldOut: ReadonlySet<string> = new Set()): FileWrite[] {
  // Rows in review for identity-changed or suspicious-tools stay out of what the app ships until accepted.
  const servers = runtimeServers({ ...model.catalog, servers: model.catalog.servers.filter((s) => !heldOut.has(s.url)) });
  return [
    { path: paths.runtimeJson, content: runtimeJson(servers) },
    { path: paths.runtimeTs, content: runtimeTypeScript(servers) },
    { path: paths.runtimeKotlin, content: runtimeKotlin(servers, kotlinPackage) },
    { path: paths.snapshot, content: snapshotMarkdown(model) },
    { path: paths.log, content: logMarkdown(model, existingLog) },
    { path: paths.catalog, content: serializeCatalog(model.catalog) },
  ];
}
