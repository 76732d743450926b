/**
 * The status documents, each declared once: the path `serve` answers it at and the file `onetap site` writes for
 * it. `serve` matches requests by this table, `site` names its files by it and the pages link by it, so a document
 * cannot be served at one place, written at another and linked at a third.
 */

export const HTML = 'text/html; charset=utf-8';
export const JSON_TYPE = 'application/json';
export const SVG = 'image/svg+xml';

export interface StatusRoute {
  /** The URL path `serve` answers; `{id}` is a server's id, percent-encoded. */
  served: string;
  /** The file `site` writes, relative to the site's root; `{id}` is a server's id, `{days}` a history window. */
  file: string;
  mediaType: string;
}

export const STATUS_ROUTES = {
  overview: { served: '/', file: 'index.html', mediaType: HTML },
  servers: { served: '/api/servers', file: 'api/servers.json', mediaType: JSON_TYPE },
  latestRefresh: { served: '/api/refreshes/latest', file: 'api/refreshes/latest.json', mediaType: JSON_TYPE },
  listBadge: { served: '/badge/list.svg', file: 'badge/list.svg', mediaType: SVG },
  serverBadge: { served: '/badge/{id}.svg', file: 'badge/{id}.svg', mediaType: SVG },
  serverPage: { served: '/servers/{id}', file: 'servers/{id}.html', mediaType: HTML },
  history: { served: '/api/servers/{id}/history', file: 'api/servers/{id}/history-{days}.json', mediaType: JSON_TYPE },
} as const satisfies Record<string, StatusRoute>;

export type StatusRouteName = keyof typeof STATUS_ROUTES;

/** Other paths `serve` answers with a route's document. */
const ALIASES: Readonly<Record<string, StatusRouteName>> = { '/index.html': 'overview' };

/** The path `serve` answers a route at, for one server (its id percent-encoded). */
export function servedPath(name: StatusRouteName, id = ''): string {
  return STATUS_ROUTES[name].served.replace('{id}', encodeURIComponent(id));
}

/** The file `site` writes for a route, for one server and history window. */
export function sitePath(name: StatusRouteName, params: { id?: string; days?: number } = {}): string {
  return STATUS_ROUTES[name].file.replace('{id}', params.id ?? '').replace('{days}', String(params.days ?? ''));
}

const MATCHERS = Object.entries(STATUS_ROUTES).map(([name, route]) => ({
  name: name as StatusRouteName,
  pattern: new RegExp(`^${route.served.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('\\{id\\}', '([^/]+)')}$`),
}));

/**
 * The route a request path is for, with the server id it names still percent-encoded (`id` undefined for a route
 * of no server); null when no route is.
 */
export function matchRoute(pathname: string): { name: StatusRouteName; id?: string } | null {
  const alias = Object.hasOwn(ALIASES, pathname) ? ALIASES[pathname] : undefined;
  if (alias) return { name: alias };
  for (const { name, pattern } of MATCHERS) {
    const m = pattern.exec(pathname);
    if (m) return m[1] === undefined ? { name } : { name, id: m[1] };
  }
  return null;
}
