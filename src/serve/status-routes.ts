/**
 * The status page and its JSON API, as routes of `onetap serve`:
 * `/`, `/servers/<id>`, `/api/servers`, `/api/servers/<id>/history?days=N`, `/api/refreshes/latest`, `/badge/<id>.svg`,
 * `/badge/list.svg`.
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
    sendDocument(req, res, body, 'text/html; charset=utf-8', 'no-cache');
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
  return [
    async (req, res, url, ctx) => {
      const path = url.pathname;
      if (path === '/' || path === '/index.html') {
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
      if (path === '/api/servers') {
        sendJson(req, res, await model(ctx));
        return true;
      }
      if (path === '/api/refreshes/latest') {
        const latest = refreshView(await reading((s) => s.latestRun()));
        if (latest) sendJson(req, res, latest);
        else sendJson(req, res, { error: 'no refresh recorded yet' }, 404);
        return true;
      }
      if (path === '/badge/list.svg') {
        const m = await model(ctx);
        sendDocument(
          req,
          res,
          listBadge(m.servers.filter((x) => x.verdict === 'live').length, m.servers.length),
          'image/svg+xml',
          'no-cache',
        );
        return true;
      }
      const badgeMatch = /^\/badge\/([^/]+)\.svg$/.exec(path);
      if (badgeMatch) {
        const id = decodeSegment(badgeMatch[1]!);
        // A removed server (or any id the list does not hold) has no badge.
        const server = id === null ? undefined : (await model(ctx)).servers.find((s) => s.id === id);
        if (server) sendDocument(req, res, serverBadge(server.verdict), 'image/svg+xml', 'no-cache');
        else sendJson(req, res, { error: 'no such server', id }, 404);
        return true;
      }
      const serverMatch = /^\/servers\/([^/]+)$/.exec(path);
      const historyMatch = /^\/api\/servers\/([^/]+)\/history$/.exec(path);
      if (!serverMatch && !historyMatch) return false;
      const id = decodeSegment((serverMatch ?? historyMatch)![1]!);
      if (id === null) {
        sendJson(req, res, { error: 'bad request: malformed % escape in the path' }, 400);
        return true;
      }
      const m = await model(ctx);
      const server = m.servers.find((s) => s.id === id);
      if (!server) {
        sendJson(req, res, { error: 'no such server', id }, 404);
        return true;
      }
      if (serverMatch) {
        const since = new Date(now().getTime() - 89 * DAY).toISOString().slice(0, 10);
        page(
          req,
          res,
          serverPage(server, await reading((s) => s.since(server.url, since)), m.generatedAt, {
            refreshMs: opts.refreshMs,
          }),
        );
        return true;
      }
      const days = url.searchParams.has('days') ? Number(url.searchParams.get('days')) : 90;
      if (!Number.isInteger(days) || days < 1 || days > 365) {
        sendJson(req, res, { error: 'days must be a whole number from 1 to 365' }, 400);
        return true;
      }
      const since = new Date(now().getTime() - (days - 1) * DAY).toISOString().slice(0, 10);
      sendJson(req, res, historyAnswer(server, await reading((s) => s.since(server.url, since)), days, now()));
      return true;
    },
  ];
}
