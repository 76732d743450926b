/**
 * The status model (pure): the catalog, the history and the last refresh, shaped for the status page,
 * its JSON API and the report. Time is passed in, so the same inputs always give the same page.
 */
import type { Catalog } from '../catalog/model.js';
import { serverIds } from '../catalog/ids.js';
import type { ObservationRecord, RunRecord } from '../history/store.js';
import type { MatrixCell } from '../attest/result.js';
import type { PlanRowJson } from '../decide/plan-json.js';
import { REASON_TEXT, type Reason, type VerdictName } from '../policy/policy.js';
import type { Decision } from '../decide/decide.js';

/** Worst first: a day's bar shows the worst verdict observed that day. */
const SEVERITY: Record<VerdictName, number> = { drop: 3, failed: 2, review: 1, live: 0 };

export interface DayBar { date: string; verdict: VerdictName | null; observations: number }

export interface ServerStatus {
  id: string;
  name: string;
  url: string;
  description: string;
  requiresAuth: boolean;
  /** The decision of the last refresh that probed this server, or null. */
  decision: Decision | null;
  verdict: VerdictName | null;
  reason: Reason | null;
  reasonText: string | null;
  tools: string[] | null;
  lastProbeAt: string | null;
  attempts: number | null;
  durationMs: number | null;
  httpStatus: number | null;
  error: string | null;
  /** The app's own error, when it would not list tools. */
  appError: string | null;
  /** Where a redirected initialize points. */
  location: string | null;
  /** Per client profile, when the last probe ran the matrix. */
  matrix: Record<string, MatrixCell> | null;
  /** Share of observations that were live, 0..1, or null without observations. */
  uptime30: number | null;
  uptime90: number | null;
  days30: DayBar[];
  days90: DayBar[];
}

/** A plan row as recorded (`refresh --json`). */
export type PlanRowView = PlanRowJson;

export interface RefreshView {
  startedAt: string;
  finishedAt: string;
  applied: boolean;
  summary: { total: number; keep: number; keepFailed: number; review: number; drop: number; changed: number };
  aborted: string | null;
  plan: PlanRowView[];
}

export interface StatusModel {
  generatedAt: string;
  lastRefresh: RefreshView | null;
  servers: ServerStatus[];
}

function utcDay(iso: string): string {
  return iso.slice(0, 10);
}

/** `days` bars ending today (UTC), oldest first. */
export function dayBars(observations: readonly ObservationRecord[], days: number, now: Date): DayBar[] {
  const byDay = new Map<string, DayBar>();
  const bars: DayBar[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const date = new Date(now.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    const bar: DayBar = { date, verdict: null, observations: 0 };
    byDay.set(date, bar);
    bars.push(bar);
  }
  for (const o of observations) {
    const bar = byDay.get(utcDay(o.at));
    if (!bar) continue;
    bar.observations++;
    if (bar.verdict === null || SEVERITY[o.verdict] > SEVERITY[bar.verdict]) bar.verdict = o.verdict;
  }
  return bars;
}

function uptime(observations: readonly ObservationRecord[], sinceIso: string): number | null {
  const inRange = observations.filter((o) => o.at >= sinceIso);
  return inRange.length ? inRange.filter((o) => o.verdict === 'live').length / inRange.length : null;
}

export function refreshView(run: RunRecord | null): RefreshView | null {
  if (!run) return null;
  const p = run.plan as { plan?: PlanRowView[]; summary?: RefreshView['summary']; aborted?: string | null };
  return {
    startedAt: run.startedAt, finishedAt: run.finishedAt, applied: run.applied,
    summary: p.summary ?? { total: 0, keep: 0, keepFailed: 0, review: 0, drop: 0, changed: 0 },
    aborted: p.aborted ?? null,
    plan: p.plan ?? [],
  };
}

/**
 * `history(url)` gives a server's observations of the last 90 days, oldest first.
 */
export function statusModel(catalog: Catalog, history: (url: string) => ObservationRecord[], lastRun: RunRecord | null, now: Date): StatusModel {
  const ids = serverIds(catalog.servers);
  const lastRefresh = refreshView(lastRun);
  const planByUrl = new Map(lastRefresh?.plan.map((r) => [r.url, r]) ?? []);
  const since30 = new Date(now.getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
  const since90 = new Date(now.getTime() - 89 * 86_400_000).toISOString().slice(0, 10);
  return {
    generatedAt: now.toISOString(),
    lastRefresh,
    servers: catalog.servers.map((s, i): ServerStatus => {
      const observations = history(s.url);
      const last = observations.at(-1) ?? null;
      return {
        id: ids[i]!, name: s.name, url: s.url, description: s.description, requiresAuth: s.requiresAuth,
        decision: planByUrl.get(s.url)?.decision ?? null,
        verdict: last?.verdict ?? null, reason: last?.reason ?? null, reasonText: last ? REASON_TEXT[last.reason] ?? last.reason : null,
        tools: last?.tools ?? null, lastProbeAt: last?.at ?? null, attempts: last?.attempts ?? null, durationMs: last?.durationMs ?? null,
        httpStatus: last?.httpStatus ?? null, error: last?.error ?? null,
        appError: last?.appError ?? null, location: last?.location ?? null, matrix: last?.matrix ?? null,
        uptime30: uptime(observations, since30), uptime90: uptime(observations, since90),
        days30: dayBars(observations, 30, now), days90: dayBars(observations, 90, now),
      };
    }),
  };
}
