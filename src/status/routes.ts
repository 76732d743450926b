/**
 * The status page and its JSON API, as routes of `onetap serve`:
 * `/`, `/servers/<id>`, `/api/servers`, `/api/servers/<id>/history?days=N`, `/api/refreshes/latest`.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from '../catalog/model.js';
import type { HistoryStore } from '../history/store.js';
import { DEFAULT_RETENTION_DAYS, HistoryIndex, historyProblemsOf, openHistory, type Retention } from '../history/open.js';
import { describeHistoryProblems } from '../history/text.js';
import { SqliteHistoryStore } from '../history/sqlite.js';
import { ServiceUnavailable, type ServeContext } from '../serve/server.js';
import { sendDocument, sendJson } from '../serve/http.js';
import { historyAnswer, refreshView, statusModel, type StatusModel } from './model.js';
import { CONTENT_SECURITY_POLICY, overviewPage, serverPage } from './page.js';

export interface StatusOptions {
  statePath: string;
  /** The catalog whose text history the index follows (synced on each request); without it the store is only read. */
  catalogPath?: string;
  now?: () => Date;
  refreshMs?: number;
  /**
   * Pages are rendered on a clock that moves in steps of this size (default 5 minutes) or when new data
   * arrives, so an unchanged page keeps its bytes and its ETag and a poll gets 304.
   */
  clockStepMs?: number;
  /** Days of runs the index keeps (default `DEFAULT_RETENTION_DAYS`); with `catalogPath` only (the index it builds). */
  retentionDays?: number;
  /**
   * Where the operator hears of history lines left out (not of the line format): once at start, and again
   * whenever a pull changes them. Default: stderr.
   */
  log?: (line: string) => void;
}

const DAY = 86_400_000;

/**
 * The history, opened once it exists (a refresh may create it while we serve). With the catalog path it is
 * the index of the text history, synced before each use (a pull may have brought new runs); else read-only.
 */
function lazyStore(path: string, catalogPath: string | undefined, retention: Retention, built: (store: HistoryStore) => void): () => Promise<HistoryStore | null> {
  let store: HistoryStore | null = null;
  // One opening at a time: two first requests (or the one at start) share it.
  let opening: Promise<HistoryStore | null> | null = null;
  return async () => {
    try {
      if (catalogPath === undefined) return (store ??= existsSync(path) ? new SqliteHistoryStore(path, { readonly: true }) : null);
      if (!store) {
        opening ??= openHistory(catalogPath, path, { retention }).finally(() => { opening = null; });
        const opened = await opening;
        if (!store && opened) { store = opened; built(store); }
      }
      if (store instanceof HistoryIndex && store.sync()) built(store);
      return store;
    } catch (err) {
      throw new ServiceUnavailable('the history store cannot be opened', { cause: err });
    }
  };
}

/** The newest moment the model has data for (a probe or a refresh), in ms, or 0. */
function newestData(m: StatusModel): number {
  const times = [m.lastRefresh?.finishedAt, m.lastRefresh?.startedAt, ...m.servers.map((s) => s.lastProbeAt)].map((t) => (t ? Date.parse(t) : 0));
  return Math.max(0, ...times.filter(Number.isFinite));
}

/**
 * The status model on the page clock: wall time rounded down to the step, moved forward to the newest
 * data when that is later. "Updated", "… ago" and the day bars then change only when data or the step does.
 */
function steppedModel(catalog: Catalog, store: HistoryStore | null, wall: Date, stepMs: number): StatusModel {
  const stepped = new Date(Math.floor(wall.getTime() / stepMs) * stepMs);
  const m = buildStatus(catalog, store, stepped);
  const newest = newestData(m);
  return newest > stepped.getTime() && newest <= wall.getTime() ? buildStatus(catalog, store, new Date(newest)) : m;
}

/** A path segment decoded, or null when its % escapes are malformed. */
function decodeSegment(segment: string): string | null {
  try { return decodeURIComponent(segment); } catch { return null; }
}

export function buildStatus(catalog: Catalog, store: HistoryStore | null, now: Date): StatusModel {
  const since = new Date(now.getTime() - 89 * DAY).toISOString().slice(0, 10);
  return statusModel(catalog, (url) => store?.since(url, since) ?? [], store?.latestRun() ?? null, now);
}

export function statusRoutes(opts: StatusOptions): Array<(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ServeContext) => Promise<boolean>> {
  const now = opts.now ?? (() => new Date());
  const log = opts.log ?? ((line: string) => void process.stderr.write(`onetap serve: ${line}\n`));
  let told = '';
  /** Each time the index is (re)built: say which history lines it left out, when that changed. */
  const built = (s: HistoryStore) => {
    const problems = historyProblemsOf(s);
    const line = describeHistoryProblems(problems);
    const key = JSON.stringify(problems);
    if (key === told) return;
    told = key;
    if (line) log(line);
  };
  const store = lazyStore(opts.statePath, opts.catalogPath, { days: opts.retentionDays ?? DEFAULT_RETENTION_DAYS, now }, built);
  // At start: the operator hears of skipped history lines before the first request (a failure waits for it).
  if (opts.catalogPath !== undefined) void store().catch(() => {});
  const stepMs = opts.clockStepMs ?? 5 * 60_000;
  const page = (req: IncomingMessage, res: ServerResponse, body: string) => {
    res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
    res.setHeader('link', '</.well-known/ai-catalog.json>; rel="ai-catalog"'); // AI Catalog discovery by link relation
    sendDocument(req, res, body, 'text/html; charset=utf-8', 'no-cache');
  };
  return [async (req, res, url, ctx) => {
    const path = url.pathname;
    const model = async () => steppedModel(await ctx.catalog(), await store(), now(), stepMs);
    if (path === '/' || path === '/index.html') {
      const m = await model();
      page(req, res, overviewPage(m, { refreshMs: opts.refreshMs, historyProblems: historyProblemsOf(await store()) }));
      return true;
    }
    if (path === '/api/servers') {
      sendJson(req, res, await model());
      return true;
    }
    if (path === '/api/refreshes/latest') {
      const latest = refreshView((await store())?.latestRun() ?? null);
      if (latest) sendJson(req, res, latest);
      else sendJson(req, res, { error: 'no refresh recorded yet' }, 404);
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
    const m = await model();
    const server = m.servers.find((s) => s.id === id);
    if (!server) {
      sendJson(req, res, { error: 'no such server', id }, 404);
      return true;
    }
    if (serverMatch) {
      const since = new Date(now().getTime() - 89 * DAY).toISOString().slice(0, 10);
      page(req, res, serverPage(server, (await store())?.since(server.url, since) ?? [], m.generatedAt, { refreshMs: opts.refreshMs }));
      return true;
    }
    const days = url.searchParams.has('days') ? Number(url.searchParams.get('days')) : 90;
    if (!Number.isInteger(days) || days < 1 || days > 365) {
      sendJson(req, res, { error: 'days must be a whole number from 1 to 365' }, 400);
      return true;
    }
    const since = new Date(now().getTime() - (days - 1) * DAY).toISOString().slice(0, 10);
    const observations = (await store())?.since(server.url, since) ?? [];
    sendJson(req, res, historyAnswer(server, observations, days, now()));
    return true;
  }];
}
