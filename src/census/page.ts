/**
 * The census page (pure): verdict counts, the distribution of what tool lists cost, the hosts with the most entries
 * and how many of them work, what changed since the previous census, and a searchable table. Every value is the
 * registry's or a server's, so every one is escaped; the one script (the search) is allowed by its hash.
 */
import { createHash } from 'node:crypto';
import { html, trusted } from '../status/html.js';
import type { CensusEntry, RemoteRecord, Verification } from './records.js';

/** The list document `onetap census --out` writes. */
export interface CensusDocument { servers: CensusEntry[]; metadata: { count: number } }

interface Row { name: string; remote: RemoteRecord; host: string }

/** Every remote of the document, with its server's name and host (a record without the publisher's field is left out). */
export function censusRows(doc: CensusDocument, publisher?: string): Row[] {
  return doc.servers.flatMap((item) => {
    const key = publisher ? `${publisher}/verification` : Object.keys(item._meta).find((k) => k.endsWith('/verification'));
    const v = key ? (item._meta[key] as Verification | undefined) : undefined;
    if (!v || !Array.isArray(v.remotes)) return [];
    return v.remotes.map((remote) => {
      let host = '';
      try { host = new URL(remote.url).host; } catch { /* not a URL */ }
      return { name: String(item.server.name), remote, host };
    });
  });
}

const SEARCH = `const q=document.getElementById('q');const rows=[...document.querySelectorAll('#remotes tbody tr')];q.addEventListener('input',()=>{const s=q.value.toLowerCase();for(const r of rows)r.hidden=!r.dataset.s.includes(s)});`;
export const CENSUS_CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${createHash('sha256').update(SEARCH).digest('base64')}'; base-uri 'none'; form-action 'none'`;

const BUCKETS = [500, 1_000, 2_000, 5_000, 10_000, 30_000, Infinity];
const n = (x: number) => x.toLocaleString('en');
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** What differs from the previous census, by remote URL. */
export function censusChanges(now: Row[], before: Row[]): { newlyDead: Row[]; recovered: Row[]; toolsChanged: Row[] } {
  const was = new Map(before.map((r) => [r.remote.url, r.remote]));
  const live = (r: RemoteRecord | undefined) => r?.verdict === 'live';
  return {
    newlyDead: now.filter((r) => live(was.get(r.remote.url)) && r.remote.verdict === 'drop'),
    recovered: now.filter((r) => was.has(r.remote.url) && !live(was.get(r.remote.url)) && live(r.remote)),
    toolsChanged: now.filter((r) => { const w = was.get(r.remote.url); return !!w && !!w.toolsHash && !!r.remote.toolsHash && w.toolsHash !== r.remote.toolsHash; }),
  };
}

export function censusPage(doc: CensusDocument, previous: CensusDocument | null = null): string {
  const rows = censusRows(doc);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.remote.verdict, (counts.get(r.remote.verdict) ?? 0) + 1);
  const tokens = rows.flatMap((r) => (typeof r.remote.tokens === 'number' ? [r.remote.tokens] : [])).sort((a, b) => a - b);
  const buckets = BUCKETS.map((top, i) => ({ label: top === Infinity ? `≥ ${n(BUCKETS[i - 1]!)}` : `< ${n(top)}`, count: tokens.filter((t) => t < top && (i === 0 || t >= BUCKETS[i - 1]!)).length }));
  const most = Math.max(1, ...buckets.map((b) => b.count));
  const byHost = new Map<string, { entries: number; live: number }>();
  for (const r of rows) {
    const h = byHost.get(r.host) ?? { entries: 0, live: 0 };
    h.entries++;
    if (r.remote.verdict === 'live') h.live++;
    byHost.set(r.host, h);
  }
  const hosts = [...byHost].sort((a, b) => b[1].entries - a[1].entries).slice(0, 20);
  const changes = previous ? censusChanges(rows, censusRows(previous)) : null;
  const verifiedAt = (Object.values(doc.servers[0]?._meta ?? {}).find((v) => (v as Verification)?.verifiedAt) as Verification | undefined)?.verifiedAt ?? '';
  const list = (title: string, items: Row[]) => html`<h3>${title} (${items.length})</h3><ul>${items.slice(0, 50).map((r) => html`<li>${r.name} <span class="meta">${r.remote.url}</span></li>`)}</ul>`;
  const body = html`<h1>MCP Registry census</h1>
<p class="meta">${n(doc.servers.length)} servers, ${n(rows.length)} remotes${verifiedAt ? html`, verified <time datetime="${verifiedAt}">${verifiedAt.slice(0, 16).replace('T', ' ')} UTC</time>` : ''}. The records are unsigned.</p>
<section id="verdicts"><h2>Verdicts</h2><ul class="counts">${[...counts].sort((a, b) => b[1] - a[1]).map(([v, c]) => html`<li><strong>${n(c)}</strong> ${v}</li>`)}</ul></section>
<section id="tokens"><h2>What tool lists cost</h2>
${tokens.length ? html`<p>${n(tokens.length)} counted: median ${n(quantile(tokens, 0.5))}, p90 ${n(quantile(tokens, 0.9))}, p99 ${n(quantile(tokens, 0.99))}, largest ${n(tokens.at(-1)!)} tokens (o200k).</p>
<div class="hist" role="img" aria-label="remotes per token range">${buckets.map((b) => html`<div><i style="height:${Math.round((b.count / most) * 100)}%" title="${b.count} remotes"></i><span>${b.label}</span></div>`)}</div>` : html`<p>No tool list counted.</p>`}</section>
<section id="hosts"><h2>Hosts with the most entries</h2><table><thead><tr><th>Host</th><th>Entries</th><th>Live</th></tr></thead><tbody>${hosts.map(([h, c]) => html`<tr><td>${h}</td><td>${n(c.entries)}</td><td>${n(c.live)}</td></tr>`)}</tbody></table></section>
${changes ? html`<section id="changes"><h2>Since the previous census</h2>${list('Newly dead', changes.newlyDead)}${list('Recovered', changes.recovered)}${list('Changed tools', changes.toolsChanged)}</section>` : ''}
<section><h2>Every remote</h2><input id="q" type="search" placeholder="filter by name, URL or verdict" aria-label="filter">
<table id="remotes"><thead><tr><th>Server</th><th>Remote</th><th>Verdict</th><th>Tokens</th><th>Same tools as</th></tr></thead><tbody>${rows.map((r) => html`<tr data-s="${`${r.name} ${r.remote.url} ${r.remote.verdict}/${r.remote.reason}`.toLowerCase()}"><td>${r.name}</td><td>${r.remote.url}</td><td>${r.remote.verdict}/${r.remote.reason}</td><td>${typeof r.remote.tokens === 'number' ? n(r.remote.tokens) : '—'}</td><td>${(r.remote.sameToolsAs ?? []).slice(0, 3).map((s) => s.name).join(', ')}</td></tr>`)}</tbody></table></section>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CENSUS_CSP}"><title>MCP Registry census</title><style>${CSS}</style></head><body>${body}<script>${trusted(SEARCH)}</script></body></html>`;
}

const CSS = `body{font:15px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1b1f24}.meta{color:#59636e;font-size:13px}
.counts{display:flex;flex-wrap:wrap;gap:14px;list-style:none;padding:0}table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #d1d9e0;word-break:break-all}
.hist{display:flex;gap:6px;align-items:flex-end;height:120px;margin:8px 0 28px}.hist div{flex:1;display:flex;flex-direction:column;justify-content:flex-end;height:100%;position:relative}
.hist i{display:block;background:#1f883d;border-radius:2px 2px 0 0;min-height:1px}.hist span{position:absolute;bottom:-20px;font-size:11px;color:#59636e}#q{width:100%;padding:6px;margin:8px 0;font:inherit}`;

/** A page of the document as the registry's list API answers (`cursor`: where the page starts; `limit` at most 100). */
export function censusListPage(doc: CensusDocument, cursor: string | null, limit: number): { servers: CensusDocument['servers']; metadata: { count: number; nextCursor?: string } } | null {
  const start = cursor === null ? 0 : /^o:\d{1,9}$/.test(cursor) ? Number(cursor.slice(2)) : -1;
  if (start < 0 || start > doc.servers.length) return null;
  const servers = doc.servers.slice(start, start + limit);
  const next = start + limit < doc.servers.length ? `o:${start + limit}` : undefined;
  return { servers, metadata: { count: servers.length, ...(next ? { nextCursor: next } : {}) } };
}
