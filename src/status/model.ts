/**
 * The status model (pure): the catalog, the history and the last refresh, shaped for the status page,
 * its JSON API and the report. Time is passed in, so the same inputs always give the same page.
 */
import type { Catalog } from '../catalog/model.js';
import { serverIds } from '../catalog/ids.js';
import type { PlanRow, RecordedRun, VerdictPoint } from '../model/plan.js';
import type { DayBar, HistoryAnswer, PlanRowView, RefreshView, ServerStatus, StatusModel } from '../model/status.js';
import { contextCost } from './cost.js';
import type { VerdictName } from '../model/words.js';
import type { PlanRowJson } from '../model/views.js';
import { planRowJson } from '../views/plan.js';
import { REASON_TEXT, usable } from '../policy/policy.js';
import { clipText } from '../text/clip.js';

export type { DayBar, HistoryAnswer, PlanRowView, RefreshView, ServerStatus, StatusModel };

/** Worst first: a day's bar shows the worst verdict observed that day. */
const SEVERITY: Record<VerdictName, number> = { drop: 3, failed: 2, review: 1, live: 0 };

/**
 * What one server may cost in the pages and the API, whatever it sends: at 2,000 servers the overview and
 * `/api/servers` stay a few MB. Text is clipped with "…"; a clipped list keeps its full count beside it.
 */
export const LIMITS = {
  /** Tool names per server in the overview, `/api/servers` and plan rows. */
  toolsListed: 10,
  /** Tool names on a server's own page. */
  toolsOnServerPage: 500,
  /** Characters of a tool name. */
  toolNameChars: 64,
  /** Characters of a tool name on a server's own page. */
  toolNameCharsOnServerPage: 200,
  /** Characters of an error, the app's error, a redirect target or a note. */
  textChars: 300,
  /** Names per list of tool changes (added, changed, removed) and screening findings per row. */
  changesListed: 20,
  findingsListed: 5,
  /** Vantages per server. */
  vantagesListed: 20,
  /** Other servers named as serving the same tool set. */
  sameToolsListed: 10,
} as const;

const clipNullable = (text: string | null | undefined, max: number = LIMITS.textChars) =>
  typeof text === 'string' ? clipText(text, max) : (text ?? null);

/** The first `count` names, each clipped. */
export function clipTools(
  tools: readonly string[] | null | undefined,
  count: number = LIMITS.toolsListed,
  chars: number = LIMITS.toolNameChars,
): string[] | null {
  return Array.isArray(tools) ? tools.slice(0, count).map((t) => clipText(String(t), chars)) : null;
}

/**
 * An observation as the history API answers it (a view of the recorded row): tools and remote text clipped, `toolCount`
 * beside the tools.
 */
export function observationView(o: PlanRow) {
  return {
    url: o.url,
    name: o.name,
    at: o.observedAt,
    verdict: o.verdict,
    reason: o.reason,
    attempts: o.attempts,
    httpStatus: o.httpStatus,
    durationMs: o.durationMs,
    tools: clipTools(o.tools),
    error: clipNullable(o.error),
    profile: o.profile,
    reasons: o.reasons,
    appError: clipNullable(o.appError),
    location: clipNullable(o.location),
    matrix: o.matrix,
    toolsHash: o.toolsHash,
    findings: o.findings.slice(0, LIMITS.findingsListed).map((f) => ({
      ...f,
      tool: clipText(String(f.tool), LIMITS.toolNameChars),
      excerpt: clipNullable(f.excerpt) as string,
    })),
    findingsSeen: o.findingsSeen,
    snapshotSha256: o.snapshotSha256,
    toolCount: o.toolCount ?? o.tools?.length ?? null,
    decision: o.decision,
    run: o.run,
    vantage: o.vantage,
    tokens: typeof o.tokens === 'number' ? o.tokens : null,
  };
}

/** The answer of `/api/servers/<id>/history?days=N` (and the static site's `history-N.json`). */
export function historyAnswer(
  s: Pick<ServerStatus, 'id' | 'name' | 'url'>,
  observations: readonly PlanRow[],
  days: number,
  now: Date,
): HistoryAnswer {
  return {
    id: s.id,
    name: s.name,
    url: s.url,
    days,
    observations: observations.map(observationView),
    daily: dayBars(observations, days, now),
  };
}

function clipPlanRow(r: PlanRowJson): PlanRowView {
  // (a view of a recorded row: `planRowJson`, then clipped)
  const changes =
    r.toolChanges && typeof r.toolChanges === 'object'
      ? (Object.fromEntries(
          Object.entries(r.toolChanges).map(([k, v]) => [k, Array.isArray(v) ? clipTools(v, LIMITS.changesListed) : v]),
        ) as unknown as PlanRowJson['toolChanges'])
      : r.toolChanges;
  return {
    ...r,
    tools: clipTools(r.tools),
    toolCount: Array.isArray(r.tools) ? r.tools.length : null,
    error: clipNullable(r.error),
    appError: clipNullable(r.appError),
    location: clipNullable(r.location),
    note: clipNullable(r.note),
    ...(r.toolChanges === undefined ? {} : { toolChanges: changes }),
    ...(Array.isArray(r.findings)
      ? {
          findings: r.findings.slice(0, LIMITS.findingsListed).map((f) =>
            f && typeof f === 'object'
              ? {
                  ...f,
                  tool: clipNullable(f.tool, LIMITS.toolNameChars) as string,
                  excerpt: clipNullable(f.excerpt) as string,
                }
              : f,
          ),
        }
      : {}),
  };
}

function utcDay(iso: string): string {
  return iso.slice(0, 10);
}

/** `days` bars ending today (UTC), oldest first. */
export function dayBars(observations: readonly VerdictPoint[], days: number, now: Date): DayBar[] {
  const byDay = new Map<string, DayBar>();
  const bars: DayBar[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const date = new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    const bar: DayBar = { date, verdict: null, observations: 0 };
    byDay.set(date, bar);
    bars.push(bar);
  }
  for (const o of observations) {
    const bar = byDay.get(utcDay(o.observedAt));
    if (!bar) continue;
    bar.observations++;
    // Only a known verdict colours a day (a store of any origin may hold other words).
    if (!Object.hasOwn(SEVERITY, o.verdict)) continue;
    if (bar.verdict === null || SEVERITY[o.verdict] > SEVERITY[bar.verdict]) bar.verdict = o.verdict;
  }
  return bars;
}

/** The share of observations since `sinceIso` in which the server was usable (the policy's `usable`), or null. */
function uptime(observations: readonly VerdictPoint[], sinceIso: string): number | null {
  const inRange = observations.filter((o) => o.observedAt >= sinceIso);
  return inRange.length ? inRange.filter(usable).length / inRange.length : null;
}

export function refreshView(recorded: RecordedRun | null): RefreshView | null {
  if (!recorded) return null;
  const { run, rows } = recorded;
  return {
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    applied: run.applied,
    summary: run.summary,
    aborted: run.aborted,
    plan: rows.map((r) => clipPlanRow(planRowJson(r))),
  };
}

/**
 * What the status of one server reads: its verdicts of the last 90 days (oldest first) and the latest row among them.
 */
export interface ServerHistory {
  points: readonly VerdictPoint[];
  last: PlanRow | null;
}

/**
 * `history(url)` gives a server's verdicts of the last 90 days and its latest row (null without one in them).
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export function statusModel(
  catalog: Catalog,
  history: (url: string) => ServerHistory,
  lastRun: RecordedRun | null,
  now: Date,
  previousRun: RecordedRun | null = null,
): StatusModel {
  const ids = serverIds(catalog.servers);
  const lastRefresh = refreshView(lastRun);
  const planByUrl = new Map(lastRefresh?.plan.map((r) => [r.url, r]) ?? []);
  const since30 = new Date(now.getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
  const since90 = new Date(now.getTime() - 89 * 86_400_000).toISOString().slice(0, 10);
  const servers = catalog.servers.map((s, i): ServerStatus => {
    const { points: observations, last } = history(s.url);
    return {
      id: ids[i]!,
      name: s.name,
      url: s.url,
      description: s.description,
      requiresAuth: s.requiresAuth,
      decision: planByUrl.get(s.url)?.decision ?? null,
      verdict: last?.verdict ?? null,
      reason: last?.reason ?? null,
      reasonText: last
        ? Object.hasOwn(REASON_TEXT, last.reason)
          ? REASON_TEXT[last.reason]
          : String(last.reason)
        : null,
      tools: clipTools(last?.tools),
      toolCount: last ? (last.toolCount ?? last.tools?.length ?? null) : null,
      lastProbeAt: last?.observedAt ?? null,
      attempts: last?.attempts ?? null,
      durationMs: last?.durationMs ?? null,
      httpStatus: last?.httpStatus ?? null,
      error: clipNullable(last?.error),
      appError: clipNullable(last?.appError),
      location: clipNullable(last?.location),
      matrix: last?.matrix ?? null,
      uptime30: uptime(observations, since30),
      uptime90: uptime(observations, since90),
      days30: dayBars(observations, 30, now),
      // Added with runs across vantages (issue 23): after the fields the API had.
      vantages: Array.isArray(last?.vantages)
        ? last.vantages.slice(0, LIMITS.vantagesListed).map((v) => ({
            vantage: clipText(String(v.vantage), LIMITS.toolNameChars),
            verdict: v.verdict,
            reason: v.reason,
            latencyMs: v.latencyMs,
            observedAt: v.observedAt,
            left: v.left ? clipText(String(v.left), LIMITS.textChars) : null,
          }))
        : null,
      // Added with context cost and fingerprints (issue 24).
      tokens: typeof last?.tokens === 'number' ? last.tokens : null,
      sameToolsAs:
        Array.isArray(last?.sameToolsAs) && last.sameToolsAs.length
          ? last.sameToolsAs.slice(0, LIMITS.sameToolsListed).map((x) => ({
              name: clipText(String(x.name), LIMITS.toolNameChars),
              url: clipText(String(x.url), LIMITS.textChars),
              digest: x.digest,
            }))
          : null,
    };
  });
  const runTotal = (run: RecordedRun | null) => {
    const c = run ? contextCost(run.rows) : null;
    return c?.counted ? c.total : null;
  };
  return {
    generatedAt: now.toISOString(),
    lastRefresh,
    servers,
    cost: { ...contextCost(servers), lastRun: runTotal(lastRun), previousRun: runTotal(previousRun) },
  };
}

/** What each vantage saw, on one line: "eu live/ok 40 ms · us no answer". */
export function vantagesLine(vantages: NonNullable<ServerStatus['vantages']>): string {
  return vantages
    .map(
      (v) =>
        `${v.vantage} ${v.verdict ? `${v.verdict}/${v.reason}` : 'no answer'}${v.latencyMs !== null && v.verdict ? ` ${v.latencyMs} ms` : ''}`,
    )
    .join(' · ');
}
