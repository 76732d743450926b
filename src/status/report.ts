/**
 * `report --markdown`: the status for a pull request body (pure). The history store is untrusted input like
 * any remote text (a server wrote the tool names and errors; anyone with the file can write the rest), so
 * every value goes through the `md` template and unknown enum values print as escaped text.
 */
import { md, mdCodeWord, mdTrusted, type Md } from '../outputs/escape.js';
import type { DayBar, StatusModel } from './model.js';

const SQUARE: Record<string, string> = { live: '🟩', review: '🟨', failed: '🟧', drop: '🟥', none: '⬜' };
const DECISION: Record<string, string> = { keep: '✅ kept', 'keep-failed': '⚠️ kept, probe failed', review: '🔎 review', drop: '❌ dropped' };

const known = (table: Record<string, string>, key: unknown): Md | null =>
  typeof key === 'string' && Object.hasOwn(table, key) ? mdTrusted(table[key]!) : null;

const strip = (days: DayBar[]) => mdTrusted(days.map((d) => SQUARE[typeof d.verdict === 'string' && Object.hasOwn(SQUARE, d.verdict) ? d.verdict : 'none']).join(''));
const pct = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? `${(Math.floor(v * 1000) / 10).toFixed(1)}%` : '—');
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '?');
const verdictReason = (verdict: unknown, reason: unknown) => mdCodeWord(`${String(verdict)}/${String(reason)}`);

export function markdownReport(m: StatusModel): string {
  const r = m.lastRefresh;
  const lines: Md[] = [md`## One-tap MCP servers: status`, md``];
  if (r) {
    const s = r.summary ?? {};
    lines.push(md`Last refresh ${r.startedAt} (${r.applied === true ? 'applied' : 'plan only'}): ${count(s.keep)} kept, ${count(s.keepFailed)} probe failed (kept), ${count(s.review)} review, ${count(s.drop)} dropped; ${count(s.changed)} changed.`, md``);
    if (r.aborted) lines.push(md`> **Outage guard:** ${r.aborted}`, md``);
    const plan = Array.isArray(r.plan) ? r.plan : [];
    const dropped = plan.filter((x) => x.decision === 'drop');
    if (dropped.length) lines.push(md`**Dropped**`, md``, ...dropped.map((x) => md`- ${x.name} (${x.url}): ${mdCodeWord(x.reason)}`), md``);
    const changed = plan.filter((x) => x.changed === true && x.decision !== 'drop');
    if (changed.length) lines.push(md`**Changed**`, md``, ...changed.map((x) => md`- ${x.name}: ${x.previous ? verdictReason(x.previous.verdict, x.previous.reason) : 'first probe'} → ${verdictReason(x.verdict, x.reason)}`), md``);
  } else {
    lines.push(md`No refresh recorded yet.`, md``);
  }
  lines.push(md`| Server | Status | Reason | Tools | 30 days | Uptime 30 d | Uptime 90 d |`, md`|---|---|---|---|---|---|---|`);
  for (const s of m.servers) {
    const status = s.decision ? known(DECISION, s.decision) ?? md`${s.decision}` : md`${s.verdict ?? 'not probed'}`;
    const tools = Array.isArray(s.tools) ? String(s.tools.length) : '—';
    lines.push(md`| ${s.name} | ${status} | ${s.reason ? verdictReason(s.verdict, s.reason) : '—'} | ${tools} | ${strip(s.days30)} | ${pct(s.uptime30)} | ${pct(s.uptime90)} |`);
  }
  lines.push(md``, md`🟩 live · 🟨 review · 🟧 probe failed · 🟥 must drop · ⬜ no probe (one square per day, the worst verdict of the day). Generated ${m.generatedAt}.`);
  return lines.join('\n') + '\n';
}
