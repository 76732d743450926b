/** The Markdown snapshot (like the app's `servers.md`) and the dated log entry of an applied refresh. */
import type { Catalog } from '../catalog/model.js';
import type { Plan, PlanRow } from '../model/plan.js';
import { REASON_TEXT } from '../policy/policy.js';
import { md, mdTrusted, type Md } from '../text/escape.js';

export interface RefreshModel {
  /** The catalog as it is after this refresh. */
  catalog: Catalog;
  plan: Plan;
  probedAt: string;
  /** About 14 days after probedAt: when the snapshot should no longer be trusted. */
  staleAfter: string;
}

const MARK: Record<PlanRow['decision'], string> = {
  keep: '✅ kept',
  'keep-failed': '⚠️ kept, probe failed',
  review: '🔎 review',
  drop: '❌ dropped',
};

/** The decision's mark and words; anything unknown (a history store is untrusted) as escaped text. */
const mark = (decision: string) =>
  Object.hasOwn(MARK, decision) ? mdTrusted(MARK[decision as PlanRow['decision']]) : md`${decision}`;
const verdictReason = (verdict: string, reason: string) => md`${verdict}/${reason}`;

function probeCell(r: PlanRow): Md {
  return md`${mark(r.decision)} · ${verdictReason(r.verdict, r.reason)}${r.attempts > 1 ? md` (${r.attempts} tries)` : ''}`;
}

/** Every interpolation below goes through `md` (escaped unless it is already Markdown). */
export function snapshotMarkdown(m: RefreshModel): string {
  const byUrl = new Map(m.plan.rows.map((r) => [r.url, r]));
  const s = m.plan.summary;
  const lines: Md[] = [
    md`# One-tap MCP servers — snapshot`,
    md``,
    md`- generated: ${m.probedAt}`,
    md`- stale_after: ${m.staleAfter}`,
    md`- servers: ${m.catalog.servers.length} (kept ${s.keep}, probe failed ${s.keepFailed}, review ${s.review}, dropped this run ${s.drop})`,
    md``,
    md`| Name | URL | Auth | Probe | Tools |`,
    md`|---|---|---|---|---|`,
  ];
  for (const server of m.catalog.servers) {
    const r = byUrl.get(server.url);
    lines.push(
      md`| ${server.name} | ${server.url} | ${server.requiresAuth ? 'optional key' : 'none'} | ${
        r ? probeCell(r) : 'not probed'
      } | ${r?.tools ? mdToolList(r.tools) : '—'} |`,
    );
  }
  const dropped = m.plan.rows.filter((r) => r.decision === 'drop');
  lines.push(md``, md`## Dropped this run`, md``);
  lines.push(
    ...(dropped.length
      ? dropped.map(
          (r) =>
            md`- ${r.name} (${r.url}): ${r.reason}, ${REASON_TEXT[r.reason] ?? ''}${r.error ? md`; ${r.error}` : ''}`,
        )
      : [md`None.`]),
  );
  const attention = m.plan.rows.filter((r) => r.decision === 'keep-failed' || r.decision === 'review');
  if (attention.length) {
    lines.push(md``, md`## Needs attention (kept)`, md``);
    lines.push(
      ...attention.map(
        (r) =>
          md`- ${r.name}: ${r.decision}, ${verdictReason(r.verdict, r.reason)}${r.note ? md` (${r.note})` : ''}${r.error ? md`; ${r.error}` : ''}`,
      ),
    );
  }
  return lines.join('\n') + '\n';
}

function mdToolList(tools: string[]): Md {
  return md`${tools.length}: ${tools.map((t, i) => (i ? md`, ${t}` : md`${t}`))}`;
}

const LOG_HEADER = '# Refresh log\n\nNewest first. One entry per `onetap refresh --write` that changed something.\n';
/** The header logs written before 0.3 start with: replaced by today's. */
const OLD_LOG_HEADER = '# Refresh log\n\nNewest first. One entry per applied `onetap refresh --write`.\n';

/** Prepends this refresh's entry to the existing log (or starts one). */
export function logMarkdown(m: RefreshModel, existing: string | null): string {
  const s = m.plan.summary;
  const entry = [
    md`## ${m.probedAt.slice(0, 10)} (${m.probedAt})`,
    md``,
    md`${s.total} probed: ${s.keep} kept, ${s.keepFailed} probe failed (kept), ${s.review} review, ${s.drop} dropped; ${s.changed} changed since the last run.`,
    ...m.plan.rows.filter((r) => r.decision === 'drop').map((r) => md`- dropped ${r.name} (${r.url}): ${r.reason}`),
    // `previous` comes from the history store: escaped like any other text.
    ...m.plan.rows
      .filter((r) => r.changed && r.decision !== 'drop')
      .map(
        (r) =>
          md`- ${r.name}: ${r.previous ? verdictReason(r.previous.verdict, r.previous.reason) : 'first probe'} → ${verdictReason(r.verdict, r.reason)}`,
      ),
    md``,
  ].join('\n');
  const header = [LOG_HEADER, OLD_LOG_HEADER].find((h) => existing?.startsWith(h));
  const body = header ? existing!.slice(header.length) : existing ? `\n${existing}` : '';
  return `${LOG_HEADER}\n${entry}${body.replace(/^\n+/, '\n')}`;
}

/**
 * A snapshot whose rows did not change, with only its dates refreshed (a quiet week that would otherwise let it go
 * stale); null when it does not carry both date lines.
 */
export function snapshotWithDates(existing: string, probedAt: string, staleAfter: string): string | null {
  const generated = /^- generated: .*$/m;
  const stale = /^- stale_after: .*$/m;
  if (!generated.test(existing) || !stale.test(existing)) return null;
  return existing
    .replace(generated, () => md`- generated: ${probedAt}`.toString())
    .replace(stale, () => md`- stale_after: ${staleAfter}`.toString());
}

/** The `stale_after` day a snapshot states, or null. */
export function snapshotStaleAfter(existing: string): string | null {
  return /^- stale_after: (\d{4}-\d{2}-\d{2})$/m.exec(existing)?.[1] ?? null;
}
