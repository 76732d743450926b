/** `report --markdown`: the status for a pull request body (pure). */
import { mdText } from '../outputs/escape.js';
import { matrixLine } from '../attest/profile.js';
import { toolReviewLine } from '../decide/drift.js';
import type { DayBar, StatusModel } from './model.js';

const SQUARE: Record<string, string> = { live: '🟩', review: '🟨', failed: '🟧', drop: '🟥', none: '⬜' };
const DECISION: Record<string, string> = { keep: '✅ kept', 'keep-failed': '⚠️ kept, probe failed', review: '🔎 review', drop: '❌ dropped' };

const strip = (days: DayBar[]) => days.map((d) => SQUARE[d.verdict ?? 'none']).join('');
const pct = (v: number | null) => (v === null ? '—' : `${(Math.floor(v * 1000) / 10).toFixed(1)}%`);

export function markdownReport(m: StatusModel): string {
  const r = m.lastRefresh;
  const lines = ['## One-tap MCP servers: status', ''];
  if (r) {
    const s = r.summary;
    lines.push(`Last refresh ${r.startedAt} (${r.applied ? 'applied' : 'plan only'}): ${s.keep} kept, ${s.keepFailed} probe failed (kept), ${s.review} review, ${s.drop} dropped; ${s.changed} changed.`, '');
    if (r.aborted) lines.push(`> **Outage guard:** ${mdText(r.aborted)}`, '');
    const dropped = r.plan.filter((x) => x.decision === 'drop');
    if (dropped.length) lines.push('**Dropped**', '', ...dropped.map((x) => `- ${mdText(x.name)} (${mdText(x.url)}): \`${x.reason}\``), '');
    const changed = r.plan.filter((x) => x.changed && x.decision !== 'drop');
    if (changed.length) lines.push('**Changed**', '', ...changed.map((x) => `- ${mdText(x.name)}: ${x.previous ? `\`${x.previous.verdict}/${x.previous.reason}\`` : 'first probe'} → \`${x.verdict}/${x.reason}\``), '');
  } else {
    lines.push('No refresh recorded yet.', '');
  }
  lines.push('| Server | Status | Reason | Tools | 30 days | Uptime 30 d | Uptime 90 d |', '|---|---|---|---|---|---|---|');
  for (const s of m.servers) {
    const status = s.decision ? DECISION[s.decision] : s.verdict ?? 'not probed';
    lines.push(`| ${mdText(s.name)} | ${status} | ${s.reason ? `\`${s.verdict}/${s.reason}\`` : '—'} | ${s.tools ? s.tools.length : '—'} | ${strip(s.days30)} | ${pct(s.uptime30)} | ${pct(s.uptime90)} |`);
  }
  const toolRows = (r?.plan ?? []).flatMap((x) => { const line = toolReviewLine(x); return line === null ? [] : [{ x, line }]; });
  if (toolRows.length) {
    lines.push('', '**Tools to review** (accept after review: `onetap accept <name> --decision "who: why" --snapshot <hash>`)', '');
    for (const { x, line } of toolRows) {
      lines.push(`- ${mdText(x.name)}: \`${x.reason}\`; ${mdText(line)}`);
      for (const f of (x.findings ?? []).slice(0, 5)) lines.push(`  - ${mdText(f.tool)} ${mdText(f.field)} \`${f.rule}\`: ${mdText(f.excerpt)}`);
    }
  }
  const matrices = m.servers.filter((s) => s.matrix);
  if (matrices.length) lines.push('', '**Clients** (would connect and list tools)', '', ...matrices.map((s) => `- ${mdText(s.name)}: ${matrixLine(s.matrix!)}`));
  const appErrors = m.servers.filter((s) => s.appError && s.verdict !== 'live');
  if (appErrors.length) lines.push('', '**What the app would say**', '', ...appErrors.map((s) => `- ${mdText(s.name)}: ${mdText(s.appError!)}`));
  lines.push('', `🟩 live · 🟨 review · 🟧 probe failed · 🟥 must drop · ⬜ no probe (one square per day, the worst verdict of the day). Generated ${m.generatedAt}.`);
  return lines.join('\n') + '\n';
}
