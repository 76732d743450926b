/**
 * The status page and its JSON API, as routes of `onetap serve` (the paths are `STATUS_ROUTES`'s, which `site`
 * writes as files): `/`, `/servers/<id>`, `/api/servers`, `/api/servers/<id>/history?days=N`,
 * `/api/refreshes/latest`, `/badge/<id>.svg`, `/badge/list.svg`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from '../catalog/model.js';
import type { Store } from '../store/store.js';
import { describeHistoryProblems } from '../store/problems.js';
import { ServiceUnavailable, terminalLog, type ServeContext } from './server.js';
import { sendDocument, sendJson } from './http.js';
import { historyAnswer, refreshView, type StatusModel } from '../status/model.js';
import { buildStatus, DEFAULT_RETENTION_DAYS } from '../status/build.js';
import { CONTENT_SECURITY_POLICY, overviewPage, serverPage } from '../status/page.js';
import { listBadge, serverBadge } from '../status/badge.js';
import { HTML, matchRoute, STATUS_ROUTES } from '../status/routes.js';

export interface StatusOptions {
  /** The catalog whose history the pages show (its text history, unless `store` is given). */
  catalogPath: string;
  /** Where the history is read from (default: `openStore`'s choice, `retentionDays` kept). */
  store?: Store;
  /** Where `openStore` reads ONETAP_STORE_URL when no `store` is given (default: this process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  now?: () => Date;
  refreshMs?: number;
  /**
   * Pages are rendered on a clock that moves in steps of this size (default 5 minutes) or when new data
   * arrives, so an unchanged page keeps its bytes and its ETag and a poll gets 304.
   */
  clockStepMs?: number;
  /** Days of runs the pages and API keep (default `DEFAULT_RETENTION_DAYS`; the text history is never pruned). */
  retentionDays?: number;
  /**
   * Where the operator hears of history lines left out (not of the line format): once at start, and again
   * whenever a pull changes them. Default: stderr.
   */
  log?: (line: string) => void;
}

const DAY = 86_400_000;

/** The newest moment the model has data for (a probe or a refresh), in ms, or 0. */
function newestData(m: StatusModel): number {
  const times = [m.lastRefresh?.finishedAt, m.lastRefresh?.startedAt, ...m.servers.map((s) => s.lastProbeAt)].map(
    (t) => (t ? Date.parse(t) : 0),
  );
  return Math.max(0, ...times.filter(Number.isFinite));
}

/**
 * The status model on the page clock: wall time rounded down to the step, moved forward to the newest
 * data when that is later. "Updated", "… ago" and the day bars then change only when data or the step does.
 */
async function steppedModel(catalog: Catalog, store: Store, wall: Date, stepMs: number): Promise<StatusModel> {
  const stepped = new Date(Math.floor(wall.getTime() / stepMs) * stepMs);
  const m = await buildStatus(catalog, store, stepped);
  const newest = newestData(m);
  return newest > stepped.getTime() && newest <= wall.getTime() ? buildStatus(catalog, store, new Date(newest)) : m;
}

/** A path segment decoded, or null when its % escapes are malformed. */
function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

export function statusRoutes(
  opts: StatusOptions,
): Array<(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ServeContext) => Promise<boolean>> {
  const now = opts.now ?? (() => new Date());
  const log = opts.log ?? ((line: string) => terminalLog(`onetap serve: ${line}`));
  let history: Store | null = opts.store ?? null;
  let told = '';
  /** The store, having said which history lines it leaves out whenever that changed (a pull may change them). */
  const store = async (): Promise<Store> => {
    try {
      history ??= await (await import('../store/open.js')).openStore(opts.catalogPath, {
        ...(opts.env === undefined ? {} : { env: opts.env }),
        retentionDays: opts.retentionDays ?? DEFAULT_RETENTION_DAYS,
        now,
      });
      const problems = await history.problems();
      const key = JSON.stringify(problems);
      if (key !== told) {
        told = key;
        const line = describeHistoryProblems(problems);
        if (line) log(line);
      }
      return history;
    } catch (err) {
      throw new ServiceUnavailable('the history cannot be read', { cause: err });
    }
  };
  // At start: the operator hears of skipped history lines before the first request (a failure waits for it).
  void store().catch(() => {});
  const stepMs = opts.clockStepMs ?? 5 * 60_000;
  const page = (req: IncomingMessage, res: ServerResponse, body: string) => {
    res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
    res.setHeader('link', '</.well-known/ai-catalog.json>; rel="ai-catalog"'); // AI Catalog discovery by link relation
    sendDocument(req, res, body, HTML, 'no-cache');
  };
  /** Reads of the store fail as the service being unavailable, never as a crash. */
  const reading = async <T>(read: (s: Store) => Promise<T>): Promise<T> => {
    const s = await store();
    try {
      return await read(s);
    } catch (err) {
      throw new ServiceUnavailable('the history cannot be read', { cause: err });
    }
  };
  // The model is computed once per catalog version, store stamp and clock step: a fleet's takes seconds.
  let cached: { catalog: Catalog; stamp: string; step: number; model: StatusModel } | null = null;
  const model = async (ctx: ServeContext) => {
    const catalog = await ctx.catalog();
    return reading(async (s) => {
      const [stamp, wall] = [await s.stamp(), now()];
      const step = Math.floor(wall.getTime() / stepMs);
      if (cached?.catalog !== catalog || cached.stamp !== stamp || cached.step !== step)
        cached = { catalog, stamp, step, model: await steppedModel(catalog, s, wall, stepMs) };
      return cached.model;
    });
  };
  /** The server a route names, or the answer (400, 404) sent when it names none the list holds. */
  const serverOf = async (req: IncomingMessage, res: ServerResponse, ctx: ServeContext, encoded: string) => {
    const id = decodeSegment(encoded);
    if (id === null) {
      sendJson(req, res, { error: 'bad request: malformed % escape in the path' }, 400);
      return null;
    }
    const m = await model(ctx);
    const server = m.servers.find((s) => s.id === id);
    if (!server) sendJson(req, res, { error: 'no such server', id }, 404);
    return server ? { m, server } : null;
  };
  return [
    async (req, res, url, ctx) => {
      const route = matchRoute(url.pathname);
      if (!route) return false;
      const { mediaType } = STATUS_ROUTES[route.name];
      switch (route.name) {
        case 'overview': {
          const m = await model(ctx);
          page(
            req,
            res,
            overviewPage(m, {
              refreshMs: opts.refreshMs,
              historyProblems: await reading((s) => s.problems()),
              lintProblems: await ctx.problems(),
            }),
          );
          return true;
        }
        case 'servers':
          sendJson(req, res, await model(ctx));
          return true;
        case 'latestRefresh': {
          const latest = refreshView(await reading((s) => s.latestRun()));
          if (latest) sendJson(req, res, latest);
          else sendJson(req, res, { error: 'no refresh recorded yet' }, 404);
          return true;
        }
        case 'listBadge': {
          const m = await model(ctx);
          const live = m.servers.filter((x) => x.verdict === 'live').length;
          sendDocument(req, res, listBadge(live, m.servers.length), mediaType, 'no-cache');
          return true;
        }
        case 'serverBadge': {
          const id = decodeSegment(route.id!);
          // A removed server (or any id the list does not hold) has no badge.
          const server = id === null ? undefined : (await model(ctx)).servers.find((s) => s.id === id);
          if (server) sendDocument(req, res, serverBadge(server.verdict), mediaType, 'no-cache');
          else sendJson(req, res, { error: 'no such server', id }, 404);
          return true;
        }
        case 'serverPage': {
          const found = await serverOf(req, res, ctx, route.id!);
          if (!found) return true;
          const since = new Date(now().getTime() - 89 * DAY).toISOString().slice(0, 10);
          const observations = await reading((s) => s.since(found.server.url, since));
          page(req, res, serverPage(found.server, observations, found.m.generatedAt, { refreshMs: opts.refreshMs }));
          return true;
        }
        case 'history': {
          const found = await serverOf(req, res, ctx, route.id!);
          if (!found) return true;
          const days = url.searchParams.has('days') ? Number(url.searchParams.get('days')) : 90;
          if (!Number.isInteger(days) || days < 1 || days > 365) {
            sendJson(req, res, { error: 'days must be a whole number from 1 to 365' }, 400);
            return true;
          }
          const since = new Date(now().getTime() - (days - 1) * DAY).toISOString().slice(0, 10);
          const observations = await reading((s) => s.since(found.server.url, since));
          sendJson(req, res, historyAnswer(found.server, observations, days, now()));
          return true;
        }
      }
    },
  ];
}
