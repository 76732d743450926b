/** The Markdown snapshot (like the app's `servers.md`) and the dated log entry of an applied refresh. */
import type { Catalog } from '../catalog/model.js';
import type { Plan, PlanRow } from '../decide/decide.js';
import { REASON_TEXT } from '../policy/policy.js';
import { mdText } from './escape.js';

export interface RefreshModel {
  /** The catalog as it is after this refresh. */
  catalog: Catalog;
  plan: Plan;
  probedAt: string;
  /** About 14 days after probedAt: when the snapshot should no longer be trusted. */
  staleAfter: string;
}

const MARK: Record<PlanRow['decision'], string> = { keep: '✅ kept', 'keep-failed': '⚠️ kept, probe failed', review: '🔎 review', drop: '❌ dropped' };

function probeCell(r: PlanRow): string {
  return `${MARK[r.decision]} · ${r.verdict}/${r.reason}${r.attempts > 1 ? ` (${r.attempts} tries)` : ''}`;
}

export function snapshotMarkdown(m: RefreshModel): string {
  const byUrl = new Map(m.plan.rows.map((r) => [r.url, r]));
  const lines = [
    '# One-tap MCP servers — snapshot',
    '',
    `- generated: ${m.probedAt}`,
    `- stale_after: ${m.staleAfter}`,
    `- servers: ${m.catalog.servers.length} (kept ${m.plan.summary.keep}, probe failed ${m.plan.summary.keepFailed}, review ${m.plan.summary.review}, dropped this run ${m.plan.summary.drop})`,
    '',
    '| Name | URL | Auth | Probe | Tools |',
    '|---|---|---|---|---|',
  ];
  for (const s of m.catalog.servers) {
    const r = byUrl.get(s.url);
    lines.push(`| ${mdText(s.name)} | ${mdText(s.url)} | ${s.requiresAuth ? 'optional key' : 'none'} | ${r ? mdText(probeCell(r)) : 'not probed'} | ${r?.tools ? mdToolList(r.tools) : '—'} |`);
  }
  const dropped = m.plan.rows.filter((r) => r.decision === 'drop');
  lines.push('', '## Dropped this run', '');
  lines.push(...(dropped.length ? dropped.map((r) => `- ${mdText(r.name)} (${mdText(r.url)}): ${r.reason}, ${mdText(REASON_TEXT[r.reason])}${r.error ? `; ${mdText(r.error)}` : ''}`) : ['None.']));
  const attention = m.plan.rows.filter((r) => r.decision === 'keep-failed' || r.decision === 'review');
  if (attention.length) {
    lines.push('', '## Needs attention (kept)', '');
    lines.push(...attention.map((r) => `- ${mdText(r.name)}: ${r.decision}, ${r.verdict}/${r.reason}${r.note ? ` (${mdText(r.note)})` : ''}${r.error ? `; ${mdText(r.error)}` : ''}`));
  }
  return lines.join('\n') + '\n';
}

function mdToolList(tools: string[]): string {
  return `${tools.length}: ${tools.map(mdText).join(', ')}`;
}

const LOG_HEADER = '# Refresh log\n\nNewest first. One entry per applied `onetap refresh --write`.\n';

/** Prepends this refresh's entry to the existing log (or starts one). */
export function logMarkdown(m: RefreshModel, existing: string | null): string {
  const s = m.plan.summary;
  const entry = [
    `## ${m.probedAt.slice(0, 10)} (${m.probedAt})`,
    '',
    `${s.total} probed: ${s.keep} kept, ${s.keepFailed} probe failed (kept), ${s.review} review, ${s.drop} dropped; ${s.changed} changed since the last run.`,
    ...m.plan.rows.filter((r) => r.decision === 'drop').map((r) => `- dropped ${mdText(r.name)} (${mdText(r.url)}): ${r.reason}`),
    ...m.plan.rows.filter((r) => r.changed && r.decision !== 'drop').map((r) => `- ${mdText(r.name)}: ${r.previous ? `${r.previous.verdict}/${r.previous.reason}` : 'first probe'} → ${r.verdict}/${r.reason}`),
    '',
  ].join('\n');
  const body = existing?.startsWith(LOG_HEADER) ? existing.slice(LOG_HEADER.length) : existing ? `\n${existing}` : '';
  return `${LOG_HEADER}\n${entry}${body.replace(/^\n+/, '\n')}`;
}
