/**
 * The status page (pure HTML from the status model): an overview of every curated server with 30- and 90-day
 * history bars and the last refresh's plan, and a page per server with its probe history. No external assets;
 * every piece of server-supplied text goes through the escaping `html` template.
 */
import { clipText } from '../text/clip.js';
import { createHash } from 'node:crypto';
import type { HistoryProblems, PlanRow } from '../model/plan.js';
import { SAME_TOOLS_WORDS } from '../policy/same-tools.js';
import type { Decision, VerdictName } from '../model/words.js';
import { REASON_TEXT } from '../policy/policy.js';
import { APP_SAYS, describe } from '../model/describe.js';
import { matrixLine } from '../model/describe.js';
import { toolReviewLine } from '../model/describe.js';
import { html, trusted, type Html } from './html.js';
import { VERDICT_COLOUR } from './badge.js';
import { servedPath, sitePath, STATUS_ROUTES } from './routes.js';
import {
  clipTools,
  dayBars,
  LIMITS,
  vantagesLine,
  type DayBar,
  type RefreshView,
  type ServerStatus,
  type StatusModel,
} from './model.js';

const VERDICT_WORD: Record<VerdictName, string> = {
  live: 'live',
  review: 'needs review',
  failed: 'probe failed',
  drop: 'must drop',
};
const DECISION_WORD: Record<Decision, string> = {
  keep: 'Kept',
  'keep-failed': 'Kept, probe failed',
  review: 'Review',
  drop: 'Dropped',
};
const DECISION_TONE: Record<Decision, VerdictName> = {
  keep: 'live',
  'keep-failed': 'failed',
  review: 'review',
  drop: 'drop',
};
const MARK: Record<VerdictName | 'none', string> = { live: '✓', review: '?', failed: '!', drop: '✕', none: '·' };

/*
 * What the history says is untrusted (it arrives through pull requests): a verdict, decision or reason reaches
 * a class name, a data attribute or a table lookup only through these whitelists; anything else is `unknown`
 * (or treated as no value), and text always goes through the escaping `html` template.
 */
const known = <K extends string>(table: Readonly<Record<K, unknown>>, v: unknown): v is K =>
  typeof v === 'string' && Object.hasOwn(table, v);
const verdictOf = (v: unknown): VerdictName | null => (known(VERDICT_WORD, v) ? v : null);
const decisionOf = (d: unknown): Decision | null => (known(DECISION_WORD, d) ? d : null);
/** A verdict as a class or attribute word: the verdict, `none` without one, `unknown` for anything else. */
const verdictWord = (v: unknown): VerdictName | 'none' | 'unknown' =>
  v === null || v === undefined ? 'none' : (verdictOf(v) ?? 'unknown');
const reasonText = (r: unknown): string => (known(REASON_TEXT, r) ? REASON_TEXT[r] : '');
/** A line computed from a record of any shape: one that does not fit gives a placeholder, not a crash. */
function safely(make: () => string | null): string | null {
  try {
    return make();
  } catch {
    return '(an unreadable record)';
  }
}

/** The filters of the overview: every decision, "needs attention" (all but kept), and all. */
const FILTERS = ['all', 'attention', 'drop', 'review', 'keep-failed', 'none', 'keep'] as const;
type Filter = (typeof FILTERS)[number];

/**
 * Filtering is CSS only (a radio per filter, outside the region the page refreshes, and \`:has()\`): it works
 * without script, in the static site and the standalone report, and survives each in-place refresh.
 */
const FILTER_CSS =
  FILTERS.filter((f) => f !== 'all')
    .map(
      (f) =>
        `body:has(#show-${f}:checked) .server${f === 'attention' ? '[data-filter=keep]' : `:not([data-filter=${f}])`}{display:none}` +
        `body:has(#show-${f}:checked) label[for=show-${f}]{background:var(--card);box-shadow:0 0 0 2px currentColor}`,
    )
    .join('\n') +
  '\nbody:has(#show-all:checked) label[for=show-all]{background:var(--card);box-shadow:0 0 0 2px currentColor}';

/** Rows that need attention first: dropped, review, probe failed, not probed yet, then kept. */
const ATTENTION: Record<Exclude<Filter, 'all' | 'attention'>, number> = {
  drop: 0,
  review: 1,
  'keep-failed': 2,
  none: 3,
  keep: 4,
};

const FILTER_WORD: Record<Filter, string> = {
  all: 'all',
  attention: 'need attention',
  drop: 'dropped',
  review: 'review',
  'keep-failed': 'kept, probe failed',
  none: 'not probed yet',
  keep: 'kept',
};

const filterOf = (s: Pick<ServerStatus, 'decision'>): Exclude<Filter, 'all' | 'attention'> =>
  decisionOf(s.decision) ?? 'none';

/**
 * The overview's order: attention first (vantages that disagree before anything), the catalog's order within each group
 * (a stable sort).
 */
export function attentionOrder<T extends Pick<ServerStatus, 'decision'> & { reason?: ServerStatus['reason'] }>(
  servers: readonly T[],
): T[] {
  const rank = (s: T) => (s.reason === 'vantage-split' ? -1 : (ATTENTION[filterOf(s)] ?? ATTENTION.none));
  return [...servers].sort((a, b) => rank(a) - rank(b));
}

const CSS = `
:root{--live:${VERDICT_COLOUR.live};--review:${VERDICT_COLOUR.review};--failed:${VERDICT_COLOUR.failed};\
--drop:${VERDICT_COLOUR.drop};--none:#d0d7de;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--card:#fff}
@media (prefers-color-scheme:dark){:root{--live:#3fb950;--review:#d29922;--failed:#f0883e;--drop:#f85149;\
--none:#3d444d;--fg:#f0f6fc;--muted:#9198a1;--line:#3d444d;--bg:#0d1117;--card:#151b23}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:inherit}main{max-width:1120px;margin:0 auto;padding:24px 16px 48px}
header.top{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px 16px;margin-bottom:16px}h1{font-size:24px;margin:0}h2{font-size:18px;margin:32px 0 12px}
.sub{color:var(--muted)}.counts{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0 20px}
.pill{display:inline-flex;align-items:center;gap:6px;padding:2px 10px;border-radius:999px;font-weight:600;\
font-size:13px;border:1px solid currentColor;white-space:nowrap}
.t-live{color:var(--live)}.t-review{color:var(--review)}.t-failed{color:var(--failed)}.t-drop{color:var(--drop)}.t-none,.t-unknown{color:var(--muted)}
.banner{border:1px solid var(--drop);color:var(--drop);background:var(--card);border-radius:8px;padding:10px 14px;margin:0 0 16px}
.banner.notice{border-color:var(--review);color:var(--fg)}.banner.notice ul{margin:4px 0 0;padding-left:20px;font-size:13px;color:var(--muted)}
.servers{display:grid;gap:10px}
.server{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;display:grid;\
grid-template-columns:minmax(0,1.2fr) minmax(0,1fr) 300px;gap:6px 20px;align-items:start}
@media (max-width:900px){.server{grid-template-columns:1fr}}
.name{font-weight:650;font-size:16px;text-decoration:none}.name:hover{text-decoration:underline}.url{color:var(--muted);font-size:13px;word-break:break-all}
.desc{margin:2px 0 0}.reason{margin:6px 0 0;font-size:14px}.meta{color:var(--muted);font-size:13px}
details{font-size:13px}summary{cursor:pointer;color:var(--muted)}.tools{margin:4px 0 0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:4px}
.tools li{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:0 5px}
.bars{display:flex;gap:2px;align-items:flex-end;height:28px}.bars.thin{gap:1px;height:14px}
.bar{flex:1;min-width:3px;height:100%;border-radius:2px;background:var(--none)}.bars.thin .bar{min-width:1px;border-radius:1px}
.bar.v-live{background:var(--live)}.bar.v-review{background:var(--review)}.bar.v-failed{background:var(--failed)}.bar.v-drop{background:var(--drop)}
.barlabel{display:flex;justify-content:space-between;color:var(--muted);font-size:12px;margin:2px 0 8px}
.legend{display:flex;flex-wrap:wrap;gap:14px;color:var(--muted);font-size:13px;margin:10px 0 0}.legend span{display:inline-flex;align-items:center;gap:6px}
.sw{width:10px;height:10px;border-radius:2px;display:inline-block;background:var(--none)}
.plan{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin-top:24px}\
.plan h2{margin:0 0 6px}.plan ul{margin:4px 0 0;padding-left:20px}
.plan h3{font-size:12px;margin:14px 0 2px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}.summary{margin:0}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:10px;overflow:hidden;font-size:14px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}th{background:var(--bg);font-weight:600}
footer{margin-top:32px;color:var(--muted);font-size:13px}
.more{color:var(--muted);font-size:12px;margin:4px 0 0}
.cost{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin:0 0 16px}\
.cost h2{margin:0 0 6px;font-size:16px}.cost p{margin:0 0 8px}
.costbars{display:flex;gap:1px;align-items:flex-end;height:64px}.costbars i{flex:1;min-width:1px;background:var(--live);border-radius:1px 1px 0 0}
.show{position:absolute;opacity:0;width:1px;height:1px;margin:0}
.counts label{cursor:pointer}.counts label:hover{text-decoration:underline}
body:has(.show:focus-visible) .counts{outline:2px solid var(--muted);outline-offset:4px;border-radius:8px}
${FILTER_CSS}
`;

/** Refresh in place: fetch this page again (revalidating with its ETag) and swap the live region. */
const SCRIPT = `
(() => {
  const root = document.documentElement;
  if (root.dataset.live !== 'true') return;
  let etag = null;
  async function refresh() {
    try {
      const res = await fetch(location.pathname + location.search, { headers: etag ? { 'If-None-Match': etag } : {}, cache: 'no-cache' });
      if (res.status !== 200) return;
      etag = res.headers.get('ETag');
      const next = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('live');
      const here = document.getElementById('live');
      if (!next || !here) return;
      // Keep what the reader opened: expanded tool lists stay expanded across refreshes.
      const open = new Set([...here.querySelectorAll('details[open][data-key]')].map((d) => d.dataset.key));
      for (const d of next.querySelectorAll('details[data-key]')) if (open.has(d.dataset.key)) d.open = true;
      here.replaceWith(document.importNode(next, true));
      root.dataset.refreshedAt = new Date().toISOString();
    } catch { /* offline: keep what is shown */ }
  }
  setInterval(refresh, Number(root.dataset.refreshMs) || 30000);
})();
`;

/**
 * Defence in depth behind the escaping: only this page's own script may run (by hash), nothing loads from
 * elsewhere, and the page may only talk to its own origin.
 */
export const CONTENT_SECURITY_POLICY =
  `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; ` +
  `connect-src 'self'; script-src 'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'; base-uri 'none'; form-action 'none'`;

/**
 * Where the page links to: the server's routes, or (static) files relative to the page (`root` is the way up to the
 * site's root).
 */
interface Links {
  server: (id: string) => string;
  home: string;
  file: (path: string) => string;
}

const SERVED_LINKS: Links = {
  server: (id) => servedPath('serverPage', id),
  home: servedPath('overview'),
  file: (path) => `/${path}`,
};

function staticLinks(root: string): Links {
  return {
    server: (id) => root + sitePath('serverPage', { id: encodeURIComponent(id) }),
    home: root + sitePath('overview'),
    file: (path) => `${root}${path}`,
  };
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function layout(title: string, body: Html, live: boolean, refreshMs: number, catalogHref: string | null): string {
  return html`<!doctype html>
<html lang="en" data-live="${String(live)}" data-refresh-ms="${refreshMs}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<title>${title}</title>${catalogHref === null ? '' : html`<link rel="ai-catalog" href="${catalogHref}">`}<style>${trusted(CSS)}</style></head>
<body><main>${body}</main><script>${trusted(SCRIPT)}</script></body></html>
`.value;
}

function ago(iso: string | null, now: string): string {
  if (!iso) return 'never';
  const s = Math.max(0, (Date.parse(now) - Date.parse(iso)) / 1000);
  if (s < 90) return 'just now';
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/**
 * Uptime as the page says it: the share of probes in which the server was usable (the deciding client listed tools).
 */
const pct = (v: number | null) => (v === null ? 'no data' : `${(Math.floor(v * 1000) / 10).toFixed(1)}% usable`);

function statusPill(s: Pick<ServerStatus, 'decision' | 'verdict'>): Html {
  const decision = decisionOf(s.decision);
  if (decision)
    return html`<span class="pill t-${DECISION_TONE[decision]}" data-decision="${decision}">${MARK[DECISION_TONE[decision]]} ${DECISION_WORD[decision]}</span>`;
  const verdict = verdictOf(s.verdict);
  if (verdict)
    return html`<span class="pill t-${verdict}" data-verdict="${verdict}">${MARK[verdict]} ${VERDICT_WORD[verdict]}</span>`;
  if (s.verdict !== null && s.verdict !== undefined)
    return html`<span class="pill t-unknown" data-verdict="unknown">${MARK.none} unknown verdict</span>`;
  return html`<span class="pill t-none">${MARK.none} not probed yet</span>`;
}

/**
 * A day per bar, its verdict in the class, the counts in the label. Lean on purpose: the overview draws one
 * per server and day, so only a server's own page (`titles`) says each day's date and verdict on hover.
 */
export function bars(days: DayBar[], thin = false, titles = true): Html {
  const counts = { live: 0, review: 0, failed: 0, drop: 0, none: 0 };
  // A day's verdict is a class name: only a known word, else the day shows as one without data.
  const verdicts = days.map((d) => verdictOf(d.verdict));
  for (const v of verdicts) counts[v ?? 'none']++;
  const label =
    `${days.length}-day history: ${counts.live} live, ${counts.review} review, ${counts.failed} failed, ` +
    `${counts.drop} drop, ${counts.none} without data`;
  return html`<div class="bars${thin ? ' thin' : ''}" role="img" aria-label="${label}" data-days="${days.length}">${days.map(
    (d, i) => {
      const v = verdicts[i]!;
      if (!v) return BAR.none;
      if (!titles) return BAR[v];
      const probes = Number.isSafeInteger(d.observations) && d.observations > 1 ? ` (${d.observations} probes)` : '';
      return html`<i class="bar v-${v}" title="${d.date}: ${VERDICT_WORD[v]}${probes}"></i>`;
    },
  )}</div>`;
}

/** One day's bar without a title, per verdict: constants (the overview draws thousands). */
const BAR: Record<VerdictName | 'none', Html> = Object.fromEntries(
  (['live', 'review', 'failed', 'drop', 'none'] as const).map((v) => [v, trusted(`<i class="bar v-${v}"></i>`)]),
) as Record<VerdictName | 'none', Html>;

/** The first names the model kept, and how many more the server listed (on its own page, more are shown). */
function toolList(s: ServerStatus, tools: string[], more: string | null): Html {
  const count = s.toolCount ?? tools.length;
  const rest = count - tools.length;
  return html`<details data-key="${s.id}"><summary><span class="tool-count">${count}</span> tool${
    count === 1 ? '' : 's'
  }</summary><ul class="tools">${tools.map((t) => html`<li>${t}</li>`)}</ul>${
    rest > 0
      ? html`<p class="more">and ${rest} more${more ? html` (<a href="${more}">the server's page</a> lists up to ${LIMITS.toolsOnServerPage})` : ''}</p>`
      : ''
  }</details>`;
}

/** The words before the app's own error, at the start of a sentence. */
const APP_SAYS_SENTENCE = APP_SAYS.charAt(0).toUpperCase() + APP_SAYS.slice(1);

function serverRow(s: ServerStatus, now: string, standalone: boolean, links: Links): Html {
  const tools = s.tools;
  const d = describe(s);
  return html`<article class="server" id="server-${s.id}" data-id="${s.id}" data-filter="${filterOf(s)}">
  <div>
    <a class="name" href="${standalone ? `#server-${s.id}` : links.server(s.id)}">${s.name}</a>
    <div class="url">${s.url}${s.requiresAuth ? ' · optional API key' : ''}</div>
    <p class="desc">${s.description}</p>
  </div>
  <div>
    ${statusPill(s)}
    <p class="reason">${
      s.verdict ? html`<strong>${s.verdict}/${s.reason}</strong>: ${s.reasonText}` : 'No probe recorded yet.'
    }${
      d.error && s.verdict !== 'live' && s.reason !== 'zero-tools' ? html`<br><span class="meta">${d.error}</span>` : ''
    }${d.appSays ? html`<br><span class="meta">${APP_SAYS_SENTENCE}: ${d.appSays}</span>` : ''}${
      d.location ? html`<br><span class="meta">Redirects to ${d.location}</span>` : ''
    }</p>
    ${s.matrix ? html`<p class="meta matrix" title="which clients would connect and list tools">${safely(() => matrixLine(s.matrix!))}</p>` : ''}
    ${s.vantages ? html`<p class="meta vantages" title="what each vantage saw">${safely(() => vantagesLine(s.vantages!))}</p>` : ''}
    <div class="meta">Last probe: <time datetime="${s.lastProbeAt ?? ''}" title="${
      s.lastProbeAt ?? ''
    }">${ago(s.lastProbeAt, now)}</time>${
      s.attempts && s.attempts > 1 ? ` · ${s.attempts} tries` : ''
    }${s.durationMs !== null ? ` · ${s.durationMs} ms` : ''}${tokensText(s)}</div>
    ${sameToolsNote(s)}
    ${tools ? toolList(s, tools, standalone ? null : links.server(s.id)) : html`<div class="meta">Tools: unknown</div>`}
  </div>
  <div>
    ${bars(s.days30, false, false)}
    <div class="barlabel"><span>30 days: ${pct(s.uptime30)}</span><span>90 days: ${pct(s.uptime90)}</span></div>
  </div>
</article>`;
}

const tokensText = (s: Pick<ServerStatus, 'tokens'>) =>
  typeof s.tokens === 'number' ? ` · ${s.tokens.toLocaleString('en')} tokens` : '';

function sameToolsNote(s: Pick<ServerStatus, 'sameToolsAs'>): Html | '' {
  return Array.isArray(s.sameToolsAs) && s.sameToolsAs.length
    ? html`<p class="meta same-tools">Same tool set as ${s.sameToolsAs.map(
        (x, i) =>
          html`${
            i ? ', ' : ''
          }<span title="${x.url}">${x.name}</span> (${SAME_TOOLS_WORDS[x.digest] ?? 'a shared digest'})`,
      )}</p>`
    : '';
}

/** Bars in the context-cost chart: the largest servers; the rest are in the total. */
const COST_BARS = 120;

/**
 * What adding every server costs a conversation: the total, its change since the run before, and tokens per server
 * (sorted).
 */
function costSection(m: StatusModel): Html | '' {
  const c = m.cost;
  if (!c?.counted) return ''; // (a model made before context cost was counted has none)
  const counted = m.servers.filter((s) => typeof s.tokens === 'number').sort((a, b) => b.tokens! - a.tokens!);
  const shown = counted.slice(0, COST_BARS);
  const top = Math.max(1, shown[0]!.tokens!);
  const change = c.lastRun !== null && c.previousRun !== null ? c.lastRun - c.previousRun : null;
  return html`<section class="cost" id="cost" aria-label="Context cost"><h2>Context cost</h2>
<p>Adding every server puts <strong>${c.total.toLocaleString('en')}</strong>\
 tokens of tool definitions into each conversation (${c.counted} of ${m.servers.length} servers counted;\
 o200k tokens of the compact list)${
   change === null
     ? ''
     : html`: <span class="change">${
         change === 0 ? 'no change' : `${change > 0 ? '+' : '−'}${Math.abs(change).toLocaleString('en')}`
       } since the run before</span>`
 }.</p>
<div class="costbars" role="img" aria-label="tokens per server, largest first">${shown.map(
    (s) =>
      html`<i style="height:${Math.max(
        1,
        Math.round((s.tokens! / top) * 100),
      )}%" data-id="${s.id}" title="${s.name}: ${s.tokens!.toLocaleString('en')} tokens"></i>`,
  )}</div>
${counted.length > shown.length ? html`<p class="more">the ${shown.length} largest of ${counted.length}</p>` : ''}</section>`;
}

/** Rows per list of the last refresh's plan (the rows themselves are above, attention first). */
const PLAN_ROWS_LISTED = 50;

function planSection(r: RefreshView | null, now: string): Html {
  if (!r)
    return html`<section class="plan" id="plan"><h2>Last refresh</h2><p>No refresh recorded yet. Run <code>onetap refresh</code>.</p></section>`;
  const list = (title: string, rows: RefreshView['plan'], line: (x: RefreshView['plan'][number]) => Html) =>
    rows.length
      ? html`<h3>${title} (${rows.length})</h3><ul>${rows
          .slice(0, PLAN_ROWS_LISTED)
          .map((x) => html`<li>${line(x)}</li>`)}</ul>${
          rows.length > PLAN_ROWS_LISTED
            ? html`<p class="more">and ${
                rows.length - PLAN_ROWS_LISTED
              } more (the servers above, or /api/refreshes/latest)</p>`
            : ''
        }`
      : '';
  const s = r.summary;
  return html`<section class="plan" id="plan">
  <h2>Last refresh: <time datetime="${r.startedAt}" title="${r.startedAt}">${ago(r.startedAt, now)}</time> ${r.applied ? '(applied)' : '(plan only)'}</h2>
  ${r.aborted ? html`<div class="banner" role="alert">Outage guard: ${r.aborted}</div>` : ''}
  <p class="summary">${s.keep} kept · ${s.keepFailed} probe failed (kept) · ${s.review} review · ${s.drop} dropped · ${s.changed} changed</p>
  ${list(
    r.applied ? 'Dropped' : 'Would drop (plan only: still in the catalog)',
    r.plan.filter((x) => x.decision === 'drop'),
    (x) => html`<strong>${x.name}</strong>: ${x.reason}, ${reasonText(x.reason)}`,
  )}
  ${list(
    'Probe failed (kept)',
    r.plan.filter((x) => x.decision === 'keep-failed'),
    (x) => html`<strong>${x.name}</strong>: ${x.verdict}/${x.reason}${x.error ? html` (${x.error})` : ''}`,
  )}
  ${list(
    'Review',
    r.plan.filter((x) => x.decision === 'review'),
    (x) => {
      const tools = safely(() => toolReviewLine(x));
      const findings = Array.isArray(x.findings)
        ? x.findings.filter((f) => f && typeof f === 'object').slice(0, 5)
        : [];
      return html`<strong>${x.name}</strong>: ${x.reason}, ${reasonText(x.reason)}${
        tools ? html`<br><span class="meta">Tools: ${tools}</span>` : ''
      }${
        findings.length
          ? html`<ul class="findings">${findings.map(
              (f) => html`<li><code>${f.tool}</code> ${f.field} [${f.rule}]: ${f.excerpt}</li>`,
            )}</ul>`
          : ''
      }`;
    },
  )}
  ${list(
    'Changed since the run before',
    r.plan.filter((x) => x.changed === true),
    (x) =>
      html`<strong>${x.name}</strong>: ${
        x.previous && typeof x.previous === 'object' ? `${x.previous.verdict}/${x.previous.reason}` : 'first probe'
      } → ${x.verdict}/${x.reason}`,
  )}
</section>`;
}

const legend = html`<div class="legend" aria-label="Legend">${(['live', 'review', 'failed', 'drop'] as const).map(
  (v) => html`<span><i class="sw bar v-${v}"></i>${VERDICT_WORD[v]}</span>`,
)}<span><i class="sw"></i>no probe</span><span>usable: the app's client listed the tools (live, or in review for what they say)</span></div>`;

export interface PageOptions {
  /** Refresh in place from the server (off for a static report). */
  live?: boolean;
  refreshMs?: number;
  /** A self-contained file: no links to server routes. */
  standalone?: boolean;
  /**
   * One page of a static site (`onetap site`): links relative to the page (`servers/<id>.html`, `api/…json`),
   * so it works on any static host and from file://; no live refresh unless `live` says so.
   */
  static?: boolean;
  /** Lines of the text history left out (not of the line format): the overview says how many and where. */
  historyProblems?: HistoryProblems;
  /** The catalog's lint findings (`serve` shows the page anyway and withholds the published documents). */
  lintProblems?: ReadonlyArray<{ where: string; message: string }>;
}

/** The overview's banner of a catalog that fails lint: each finding, escaped, and what is withheld. */
function lintBanner(problems: PageOptions['lintProblems']): Html | '' {
  if (!problems?.length) return '';
  return html`<div class="banner" role="alert" id="lint-problems"><strong>\
The catalog fails lint (${problems.length} finding${
    problems.length === 1 ? '' : 's'
  })</strong>: the published documents (AI Catalog, MCP Catalog, Server Cards) are withheld until it passes.<ul>\
${problems.slice(0, 20).map((p) => html`<li><code>${p.where}</code> ${p.message}</li>`)}</ul></div>`;
}

/**
 * The overview's notice of history lines left out: counts, file names, line numbers and onetap's own words, escaped all
 * the same.
 */
function problemsNotice(p: HistoryProblems | undefined): Html | '' {
  if (!p || !(p.count > 0)) return '';
  const first = Array.isArray(p.first) ? p.first.slice(0, 10) : [];
  return html`<div class="banner notice" role="status" id="history-problems"><strong>\
${p.count} history line${p.count === 1 ? '' : 's'} skipped</strong>\
: not of the history's line format (or of a run cut short), so this page is drawn without ${
    p.count === 1 ? 'it' : 'them'
  }.${first.length ? html`<ul>${first.map((x) => html`<li><code>${x.file}:${x.line}</code> ${x.problem}</li>`)}</ul>` : ''}</div>`;
}

export function overviewPage(m: StatusModel, opts: PageOptions = {}): string {
  const counts = new Map<Filter, number>();
  for (const s of m.servers) counts.set(filterOf(s), (counts.get(filterOf(s)) ?? 0) + 1);
  const attention = m.servers.length - (counts.get('keep') ?? 0);
  const links = opts.static ? staticLinks('') : SERVED_LINKS;
  // Outside #live: the in-place refresh replaces #live, and the reader's filter stays chosen.
  const radios = FILTERS.map(
    (f) =>
      html`<input type="radio" class="show" name="show" id="show-${f}" value="${f}"${
        f === 'all' ? trusted(' checked') : ''
      } aria-label="show ${FILTER_WORD[f]}">`,
  );
  const filter = (f: Filter, n: number, tone: string) =>
    html`<label for="show-${f}" class="pill t-${tone}" data-show="${f}">${n} ${FILTER_WORD[f]}</label>`;
  const body = html`${radios}<div id="live">
<header class="top"><h1>One-tap MCP servers</h1><span class="sub">\
${m.servers.length} curated remote servers · checked with the app's own handshake · updated <time \
datetime="${m.generatedAt}">${m.generatedAt.slice(0, 16).replace('T', ' ')} UTC</time></span></header>
<div class="counts" aria-label="Show">${filter('all', m.servers.length, 'none')}${
    attention ? filter('attention', attention, 'drop') : ''
  }${(['drop', 'review', 'keep-failed', 'none', 'keep'] as const)
    .filter((d) => counts.get(d))
    .map((d) => filter(d, counts.get(d)!, d === 'none' ? 'none' : DECISION_TONE[d]))}</div>
${m.lastRefresh?.aborted ? html`<div class="banner" role="alert">The last refresh was stopped by the outage guard: ${m.lastRefresh.aborted}</div>` : ''}
${lintBanner(opts.lintProblems)}${problemsNotice(opts.historyProblems)}
${costSection(m)}
<section class="servers" aria-label="Servers">${attentionOrder(m.servers).map((s) => serverRow(s, m.generatedAt, !!opts.standalone, links))}</section>
${legend}
${planSection(m.lastRefresh, m.generatedAt)}
${
  opts.standalone
    ? html`<footer>A static report generated by onetap at ${m.generatedAt}.</footer>`
    : opts.static
      ? html`<footer>JSON: <a href="${links.file(sitePath('servers'))}">${sitePath('servers')}</a>\
 · <a href="${links.file(sitePath('latestRefresh'))}">${sitePath('latestRefresh')}</a>\
 · Discovery: <a href="${links.file('.well-known/ai-catalog.json')}">AI Catalog</a>\
, <a href="${links.file('.well-known/mcp/catalog.json')}">MCP Catalog</a> · generated ${m.generatedAt}</footer>`
      : html`<footer>JSON: <a href="${servedPath('servers')}">${servedPath('servers')}</a>\
 · <a href="${servedPath('latestRefresh')}">${servedPath('latestRefresh')}</a>\
 · Discovery: <a href="/.well-known/ai-catalog.json">AI Catalog</a>\
, <a href="/.well-known/mcp/catalog.json">MCP Catalog</a></footer>`
}
</div>`;
  return layout(
    'One-tap MCP servers: status',
    body,
    opts.live ?? !(opts.standalone || opts.static),
    opts.refreshMs ?? 30_000,
    opts.standalone ? null : links.file('.well-known/ai-catalog.json'),
  );
}

/** One probe on a server's page: its verdict as a known word (class, attribute, mark), every value escaped. */
function observationRow(o: PlanRow): Html {
  const v = verdictWord(o.verdict);
  const at = o.observedAt;
  return html`<tr data-verdict="${v}"><td><time datetime="${at}">${at
    .slice(0, 19)
    .replace('T', ' ')}</time></td><td><span class="pill t-${v}">${v === 'unknown' ? '?' : MARK[v]} ${
    v === 'unknown' ? 'unknown verdict' : v === 'none' ? 'no verdict' : VERDICT_WORD[v]
  }</span></td><td>${o.reason}</td><td>${o.attempts}</td><td>${o.durationMs} ms</td><td>${
    o.httpStatus ?? '—'
  }</td><td>${typeof o.error === 'string' ? clipText(o.error, LIMITS.textChars) : ''}</td></tr>`;
}

/** What each vantage of the last run across vantages saw of the server: its verdict, time taken, and when. */
function vantageTable(vantages: NonNullable<ServerStatus['vantages']>): Html {
  return html`<h2>Vantages</h2>
<table id="vantages"><thead><tr><th>Vantage</th><th>Verdict</th><th>Latency</th><th>When (UTC)</th></tr></thead>
<tbody>${vantages.map((v) => {
    const word = v.verdict === null ? 'none' : verdictWord(v.verdict);
    return html`<tr data-verdict="${word}"><td>${v.vantage}</td><td>${
      v.verdict === null
        ? v.left
          ? html`left out: ${v.left}`
          : 'no answer'
        : html`<span class="pill t-${word}">${v.verdict}/${v.reason}</span>${v.left ? html` <span class="meta">(left out: ${v.left})</span>` : ''}`
    }</td><td>${v.latencyMs === null ? '—' : `${v.latencyMs} ms`}</td><td>${
      v.observedAt ? html`<time datetime="${v.observedAt}">${v.observedAt.slice(0, 19).replace('T', ' ')}</time>` : '—'
    }</td></tr>`;
  })}</tbody></table>`;
}

export function serverPage(
  s: ServerStatus,
  observations: PlanRow[],
  generatedAt: string,
  opts: PageOptions = {},
): string {
  const rows = [...observations].reverse();
  const links = opts.static ? staticLinks('../') : SERVED_LINKS;
  const days30 = dayBars(observations, 30, new Date(generatedAt));
  const days90 = dayBars(observations, 90, new Date(generatedAt));
  // The latest probe's list, longer than the overview's (still bounded); else what the model kept.
  const last = observations.at(-1);
  const allTools = last && last.observedAt === s.lastProbeAt ? last.tools : null;
  const tools = allTools ? clipTools(allTools, LIMITS.toolsOnServerPage, LIMITS.toolNameCharsOnServerPage)! : s.tools;
  const toolCount = allTools ? allTools.length : (s.toolCount ?? s.tools?.length ?? 0);
  // The history link's text names the id as it is; its href percent-encodes it.
  const history = opts.static
    ? {
        href: links.file(sitePath('history', { id: s.id, days: 90 })),
        text: sitePath('history', { id: s.id, days: 90 }),
      }
    : {
        href: `${servedPath('history', s.id)}?days=90`,
        text: `${STATUS_ROUTES.history.served.replace('{id}', s.id)}?days=90`,
      };
  const body = html`<div id="live">
<p><a href="${links.home}">← All servers</a></p>
<header class="top"><h1>${s.name}</h1>${statusPill(s)}</header>
<div class="url">${s.url}</div><p class="desc">${s.description}</p>
<p class="reason">${
    s.verdict ? html`<strong>${s.verdict}/${s.reason}</strong>: ${s.reasonText}` : 'No probe recorded yet.'
  }${s.appError ? html`<br><span class="meta">${APP_SAYS_SENTENCE}: ${s.appError}</span>` : ''}</p>
${s.matrix ? html`<p class="meta matrix">Clients: ${safely(() => matrixLine(s.matrix!))}</p>` : ''}
${
  typeof s.tokens === 'number'
    ? html`<p class="meta tokens">\
Its tools cost ${s.tokens.toLocaleString('en')} tokens in every conversation (o200k, the compact list).</p>`
    : ''
}${sameToolsNote(s)}
${s.vantages ? vantageTable(s.vantages) : ''}
<h2>History</h2>
${bars(days30)}<div class="barlabel"><span>30 days</span><span>${pct(s.uptime30)}</span></div>
${bars(days90, true)}<div class="barlabel"><span>90 days</span><span>${pct(s.uptime90)}</span></div>
${legend}
${
  tools
    ? html`<h2>Tools (${toolCount})</h2><ul class="tools">${tools.map(
        (t) => html`<li>${t}</li>`,
      )}</ul>${toolCount > tools.length ? html`<p class="more">and ${toolCount - tools.length} more</p>` : ''}`
    : ''
}
<h2>Probes (last 90 days)</h2>
<table id="observations"><thead><tr><th>Time (UTC)</th><th>Verdict</th><th>Reason</th><th>Tries</th><th>Duration</th><th>HTTP</th><th>Error</th></tr></thead>
<tbody>${rows.length ? rows.map(observationRow) : html`<tr><td colspan="7">No probes recorded.</td></tr>`}</tbody></table>
<footer>JSON: <a href="${history.href}">${history.text}</a> · generated ${generatedAt}</footer>
</div>`;
  return layout(
    `${s.name}: status`,
    body,
    opts.live ?? !opts.static,
    opts.refreshMs ?? 30_000,
    links.file('.well-known/ai-catalog.json'),
  );
}
