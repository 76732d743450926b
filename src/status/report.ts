/**
 * `report --markdown`: the status for a pull request body (pure). The history store is untrusted input like
 * any remote text (a server wrote the tool names and errors; anyone with the file can write the rest), so
 * every value goes through the `md` template and unknown enum values print as escaped text.
 */
import { md, mdCodeWord, mdTrusted, type Md } from '../text/escape.js';
import { matrixLine } from '../model/describe.js';
import { toolReviewLine } from '../model/describe.js';
import type { HistoryProblems } from '../model/plan.js';
import { APP_WOULD_SAY } from '../model/describe.js';
import { costChange, costLine } from './cost.js';
import { vantagesLine, type DayBar, type StatusModel } from './model.js';

const SQUARE: Record<string, string> = { live: '🟩', review: '🟨', failed: '🟧', drop: '🟥', none: '⬜' };
const DECISION: Record<string, string> = {
  keep: '✅ kept',
  'keep-failed': '⚠️ kept, probe failed',
  review: '🔎 review',
  drop: '❌ dropped',
};

const known = (table: Record<string, string>, key: unknown): Md | null =>
  typeof key === 'string' && Object.hasOwn(table, key) ? mdTrusted(table[key]!) : null;

const strip = (days: DayBar[]) =>
  mdTrusted(
    days
      .map((d) => SQUARE[typeof d.verdict === 'string' && Object.hasOwn(SQUARE, d.verdict) ? d.verdict : 'none'])
      .join(''),
  );
const pct = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) ? `${(Math.floor(v * 1000) / 10).toFixed(1)}%` : '—';
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '?');
const verdictReason = (verdict: unknown, reason: unknown) => mdCodeWord(`${String(verdict)}/${String(reason)}`);

/** A line computed from store records of any shape: a record that does not fit gives a placeholder, not a crash. */
function untrustedLine(make: () => string | null): string | null {
  try {
    return make();
  } catch {
    return '(an unreadable record in the history store)';
  }
}

/** `problems`: lines of the text history left out (not of its line format); the report says how many and where. */
export function markdownReport(m: StatusModel, problems?: HistoryProblems): string {
  const r = m.lastRefresh;
  const lines: Md[] = [md`## One-tap MCP servers: status`, md``];
  if (problems && problems.count > 0) {
    const first = Array.isArray(problems.first) ? problems.first.slice(0, 10) : [];
    lines.push(
      md`> **History:** ${count(problems.count)} line${
        problems.count === 1 ? '' : 's'
      } skipped, not of the history's line format or of a run cut short (the report is made without ${problems.count === 1 ? 'it' : 'them'}):`,
    );
    for (const x of first) lines.push(md`> - ${mdCodeWord(x.file)} line ${count(x.line)}: ${x.problem}`);
    lines.push(md``);
  }
  if (r) {
    const s = r.summary ?? {};
    lines.push(
      md`Last refresh ${r.startedAt} (${
        r.applied === true ? 'applied' : 'plan only'
      }): ${count(s.keep)} kept, ${count(s.keepFailed)} probe failed (kept), ${count(s.review)} review, ${count(s.drop)} dropped; ${count(s.changed)} changed.`,
      md``,
    );
    if (r.aborted) lines.push(md`> **Outage guard:** ${r.aborted}`, md``);
    const plan = Array.isArray(r.plan) ? r.plan : [];
    const dropped = plan.filter((x) => x.decision === 'drop');
    if (dropped.length)
      lines.push(
        r.applied ? md`**Dropped**` : md`**Would drop** (plan only: still in the catalog)`,
        md``,
        ...dropped.map((x) => md`- ${x.name} (${x.url}): ${mdCodeWord(x.reason)}`),
        md``,
      );
    const changed = plan.filter((x) => x.changed === true && x.decision !== 'drop');
    if (changed.length)
      lines.push(
        md`**Changed**`,
        md``,
        ...changed.map(
          (x) =>
            md`- ${x.name}: ${x.previous ? verdictReason(x.previous.verdict, x.previous.reason) : 'first probe'} → ${verdictReason(x.verdict, x.reason)}`,
        ),
        md``,
      );
  } else {
    lines.push(md`No refresh recorded yet.`, md``);
  }
  lines.push(
    md`Usable: the share of probes in which the app's client listed the server's tools (live, or in review only for what its tools say).`,
    md``,
  );
  lines.push(
    md`| Server | Status | Reason | Tools | 30 days | Usable 30 d | Usable 90 d | Tokens |`,
    md`|---|---|---|---|---|---|---|---|`,
  );
  for (const s of m.servers) {
    const status = s.decision ? (known(DECISION, s.decision) ?? md`${s.decision}`) : md`${s.verdict ?? 'not probed'}`;
    // The count the server listed (the row keeps only the first names).
    const tools =
      typeof s.toolCount === 'number' ? String(s.toolCount) : Array.isArray(s.tools) ? String(s.tools.length) : '—';
    lines.push(
      md`| ${s.name} | ${status} | ${
        s.reason ? verdictReason(s.verdict, s.reason) : '—'
      } | ${tools} | ${strip(s.days30)} | ${pct(s.uptime30)} | ${pct(s.uptime90)} | ${typeof s.tokens === 'number' ? s.tokens.toLocaleString('en') : '—'} |`,
    );
  }
  const cost = m.cost ? costLine(m.cost) : null;
  if (cost)
    lines.push(
      md``,
      md`**Context cost**: ${cost}${costChange(m.cost) ?? ''}. Every conversation of a user who adds every server \
carries these tool definitions (o200k tokens; a model's own count runs higher).`,
    );
  const same = m.servers.filter((s) => s.sameToolsAs?.length);
  if (same.length)
    lines.push(
      md``,
      md`**Same tool set as another server** (the policy allows no duplicates)`,
      md``,
      ...same.map((s) => md`- ${s.name}: ${s.sameToolsAs!.map((x) => `${x.name} (${x.digest})`).join(', ')}`),
    );
  const toolRows = (r && Array.isArray(r.plan) ? r.plan : []).flatMap((x) => {
    const line = untrustedLine(() => toolReviewLine(x));
    return line === null ? [] : [{ x, line }];
  });
  if (toolRows.length) {
    lines.push(
      md``,
      md`**Tools to review** (accept after review: \`onetap accept <name> --decision "who: why" --snapshot <hash>\`)`,
      md``,
    );
    for (const { x, line } of toolRows) {
      lines.push(md`- ${x.name}: ${mdCodeWord(x.reason)}; ${line}`);
      for (const f of (Array.isArray(x.findings) ? x.findings : []).slice(0, 5))
        lines.push(md`  - ${f.tool} ${f.field} ${mdCodeWord(f.rule)}: ${f.excerpt}`);
    }
  }
  const matrices = m.servers.filter((s) => s.matrix && typeof s.matrix === 'object');
  if (matrices.length)
    lines.push(
      md``,
      md`**Clients** (would connect and list tools)`,
      md``,
      ...matrices.map((s) => md`- ${s.name}: ${untrustedLine(() => matrixLine(s.matrix!)) ?? '?'}`),
    );
  const across = [
    ...m.servers.filter((s) => s.reason === 'vantage-split'),
    ...m.servers.filter((s) => s.reason !== 'vantage-split'),
  ].filter((s) => Array.isArray(s.vantages));
  if (across.length)
    lines.push(
      md``,
      md`**Vantages** (what each saw)`,
      md``,
      ...across.map((s) => md`- ${s.name}: ${untrustedLine(() => vantagesLine(s.vantages!)) ?? '?'}`),
    );
  const appErrors = m.servers.filter((s) => s.appError && s.verdict !== 'live');
  if (appErrors.length)
    lines.push(md``, md`**What ${APP_WOULD_SAY}**`, md``, ...appErrors.map((s) => md`- ${s.name}: ${s.appError}`));
  lines.push(
    md``,
    md`🟩 live · 🟨 review · 🟧 probe failed · 🟥 must drop · ⬜ no probe (one square per day, the worst verdict of the day). Generated ${m.generatedAt}.`,
  );
  return lines.join('\n') + '\n';
}
