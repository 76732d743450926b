/** The status page and its JSON API (filled in by the status-page work). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServeContext } from '../serve/server.js';

export interface StatusOptions { statePath: string }

export function statusRoutes(_opts: StatusOptions): Array<(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ServeContext) => Promise<boolean>> {
  return [];
}
