/**
 * The census page (pure): verdict counts, the distribution of what tool lists cost, the hosts with the most entries
 * and how many of them work, what changed since the previous census, and a searchable table. Every value is the
 * registry's or a server's, so every one is escaped; the one script (the search) is allowed by its hash.
 *
 * Only the census's own records are its verdicts: those under the key of the publisher the document names
 * (`metadata.publisher`). Any other `…/verification` in an item's `_meta` came with the registry's item and is shown
 * as claimed by its key, never as a verdict. A record past its `expiresAt` is marked expired, here and in what
 * `censusListPage` serves.
 */
import { createHash } from 'node:crypto';
import { html, trusted } from '../status/html.js';
import { isObject } from '../util/json.js';
import type { RemoteRecord, Verification } from '../model/census.js';
import type { CensusEntry } from './records.js';

/** The list document `onetap census --out` writes (`publisher`: whose records it holds; absent before 0.5). */
export interface CensusDocument {
  servers: CensusEntry[];
  metadata: { count: number; publisher?: string };
}

/** The publisher whose records the document holds, or null when it names none. */
export function publisherOf(doc: CensusDocument): string | null {
  const p = doc.metadata?.publisher;
  return typeof p === 'string' && p.length > 0 ? p : null;
}

/** A record says nothing once its `expiresAt` has passed (or when it says no time it can be read as). */
export function isExpired(v: Pick<Verification, 'expiresAt'>, now: Date): boolean {
  const until = typeof v.expiresAt === 'string' ? Date.parse(v.expiresAt) : NaN;
  return !(until >= now.getTime());
}

/** What a reader takes of an item: the census's own record (or null), whether it expired, and who else claims one. */
export interface ItemRecords {
  own: Verification | null;
  expired: boolean;
  claims: string[];
}

export function recordsOf(item: CensusEntry, publisher: string | null, now: Date): ItemRecords {
  const ownKey = publisher === null ? null : `${publisher}/verification`;
  const meta = isObject(item._meta) ? item._meta : {};
  const value = ownKey === null ? undefined : meta[ownKey];
  const own = isObject(value) && Array.isArray(value.remotes) ? (value as unknown as Verification) : null;
  const claims = Object.keys(meta).filter((k) => k.endsWith('/verification') && k !== ownKey);
  return { own, expired: own !== null && isExpired(own, now), claims };
}

interface Row {
  name: string;
  remote: RemoteRecord;
  host: string;
  expired: boolean;
  claims: string[];
}

/**
 * Every remote of the census's own records, with its server's name and host, whether the record expired, and the item's
 * other claims.
 */
export function censusRows(doc: CensusDocument, now: Date): Row[] {
  const publisher = publisherOf(doc);
  return doc.servers.flatMap((item) => {
    const { own, expired, claims } = recordsOf(item, publisher, now);
    return (own?.remotes ?? []).map((remote) => {
      let host = '';
      try {
        host = new URL(remote.url).host;
      } catch {
        /* not a URL */
      }
      return { name: String(item.server.name), remote, host, expired, claims };
    });
  });
}

/**
 * When the next of the census's records expires after `now` (ms since the epoch), or Infinity: a page made now is right
 * until then.
 */
export function nextExpiry(doc: CensusDocument, now: Date): number {
  const publisher = publisherOf(doc);
  let next = Infinity;
  for (const item of doc.servers) {
    const until = Date.parse(String(recordsOf(item, publisher, now).own?.expiresAt));
    if (until >= now.getTime() && until < next) next = until;
  }
  return next;
}

/** An item as a reader serves it: the census's own record marked `expired` once its time has passed. */
export function asRead(item: CensusEntry, publisher: string | null, now: Date): CensusEntry {
  const { own, expired } = recordsOf(item, publisher, now);
  if (!own || !expired) return item;
  return { ...item, _meta: { ...item._meta, [`${publisher}/verification`]: { ...own, expired: true } } };
}

const SEARCH =
  `const q=document.getElementById('q');const rows=[...document.querySelectorAll('#remotes tbody ` +
  `tr')];q.addEventListener('input',()=>{const s=q.value.toLowerCase();for(const r of rows)r.hidden=!r.dataset.s.includes(s)});`;
export const CENSUS_CSP =
  `default-src 'none'; style-src 'unsafe-inline'; script-src ` +
  `'sha256-${createHash('sha256').update(SEARCH).digest('base64')}'; base-uri 'none'; form-action 'none'`;

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
    toolsChanged: now.filter((r) => {
      const w = was.get(r.remote.url);
      return !!w && !!w.toolsHash && !!r.remote.toolsHash && w.toolsHash !== r.remote.toolsHash;
    }),
  };
}

export function censusPage(doc: CensusDocument, previous: CensusDocument | null, now: Date): string {
  const publisher = publisherOf(doc);
  const rows = censusRows(doc, now);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.remote.verdict, (counts.get(r.remote.verdict) ?? 0) + 1);
  const tokens = rows
    .flatMap((r) => (typeof r.remote.tokens === 'number' ? [r.remote.tokens] : []))
    .sort((a, b) => a - b);
  const buckets = BUCKETS.map((top, i) => ({
    label: top === Infinity ? `≥ ${n(BUCKETS[i - 1]!)}` : `< ${n(top)}`,
    count: tokens.filter((t) => t < top && (i === 0 || t >= BUCKETS[i - 1]!)).length,
  }));
  const most = Math.max(1, ...buckets.map((b) => b.count));
  const byHost = new Map<string, { entries: number; live: number }>();
  for (const r of rows) {
    const h = byHost.get(r.host) ?? { entries: 0, live: 0 };
    h.entries++;
    if (r.remote.verdict === 'live') h.live++;
    byHost.set(r.host, h);
  }
  const hosts = [...byHost].sort((a, b) => b[1].entries - a[1].entries).slice(0, 20);
  const changes = previous ? censusChanges(rows, censusRows(previous, now)) : null;
  const records = doc.servers.map((item) => recordsOf(item, publisher, now));
  const first = records.find((r) => r.own)?.own;
  const verifiedAt = typeof first?.verifiedAt === 'string' ? first.verifiedAt : '';
  const expiredAt = first && isExpired(first, now) ? String(first.expiresAt ?? '') : null;
  const notVerified = records.filter((r) => typeof r.own?.skipped === 'string').length;
  const claimed = records.filter((r) => r.claims.length > 0).length;
  const claimsOf = (claims: string[]) =>
    [
      ...claims.slice(0, 3).map((k) => `claimed by ${k}`),
      ...(claims.length > 3 ? [`and ${claims.length - 3} more`] : []),
    ].join(', ');
  const list = (title: string, items: Row[]) =>
    html`<h3>${title} (${items.length})</h3><ul>${items.slice(0, 50).map((r) => html`<li>${r.name} <span class="meta">${r.remote.url}</span></li>`)}</ul>`;
  const body = html`<h1>MCP Registry census</h1>
<p class="meta">${n(doc.servers.length)} servers, ${n(rows.length)} remotes${
    verifiedAt
      ? html`, verified <time datetime="${verifiedAt}">${verifiedAt.slice(0, 16).replace('T', ' ')} UTC</time>`
      : ''
  }${publisher ? html` by ${publisher}` : ''}. The records are unsigned.</p>
${
  publisher
    ? ''
    : html`<p class="expired">This document names no publisher: none of its records is shown as the \
census's own.</p>`
}${
  expiredAt !== null
    ? html`<p class="expired">These records expired at <time datetime="${expiredAt}">\
${expiredAt}</time>: they say nothing now.</p>`
    : ''
}${
  notVerified
    ? html`<p class="meta">${n(notVerified)} servers not verified (over the limits, or invalid against \
the registry's schema).</p>`
    : ''
}${
  claimed
    ? html`<p class="meta">${n(claimed)} servers carry a verification claimed by another key: shown as \
claimed by it, never as this census's verdict.</p>`
    : ''
}
<section id="verdicts"><h2>Verdicts</h2><ul class="counts">${[...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([v, c]) => html`<li><strong>${n(c)}</strong> ${v}</li>`)}</ul></section>
<section id="tokens"><h2>What tool lists cost</h2>
${
  tokens.length
    ? html`<p>${n(tokens.length)} counted: median ${n(quantile(tokens, 0.5))}, p90 ${n(
        quantile(tokens, 0.9),
      )}, p99 ${n(quantile(tokens, 0.99))}, largest ${n(tokens.at(-1)!)} tokens (o200k).</p>
<div class="hist" role="img" aria-label="remotes per token range">${buckets.map(
        (b) =>
          html`<div><i style="height:${Math.round((b.count / most) * 100)}%" title="${b.count} remotes"></i><span>${b.label}</span></div>`,
      )}</div>`
    : html`<p>No tool list counted.</p>`
}</section>
<section id="hosts"><h2>Hosts with the most entries</h2><table><thead><tr><th>Host</th><th>Entries</th><th>Live</th>\
</tr></thead><tbody>${hosts.map(([h, c]) => html`<tr><td>${h}</td><td>${n(c.entries)}</td><td>${n(c.live)}</td></tr>`)}</tbody></table></section>
${
  changes
    ? html`<section id="changes"><h2>Since the previous census</h2>${list(
        'Newly dead',
        changes.newlyDead,
      )}${list('Recovered', changes.recovered)}${list('Changed tools', changes.toolsChanged)}</section>`
    : ''
}
<section><h2>Every remote</h2><input id="q" type="search" placeholder="filter by name, URL or verdict" aria-label="filter">
<table id="remotes"><thead><tr><th>Server</th><th>Remote</th><th>Verdict</th><th>Tokens</th><th>Same tools as</th>\
<th>Other claims</th></tr></thead><tbody>${rows.map(
    (r) =>
      html`<tr data-s="${`${r.name} ${r.remote.url} ${r.remote.verdict}/${r.remote.reason}${
        r.expired ? ' expired' : ''
      }`.toLowerCase()}"><td>${r.name}</td><td>${r.remote.url}</td><td>\
${r.remote.verdict}/${r.remote.reason}${
        r.expired ? html` <span class="expired">(expired)</span>` : ''
      }</td><td>${typeof r.remote.tokens === 'number' ? n(r.remote.tokens) : '—'}</td><td>${(r.remote.sameToolsAs ?? [])
        .slice(0, 3)
        .map((s) => s.name)
        .join(', ')}</td><td>${claimsOf(r.claims)}</td></tr>`,
  )}</tbody></table></section>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CENSUS_CSP}"><title>MCP Registry census</title><style>\
${CSS}</style></head><body>${body}<script>${trusted(SEARCH)}</script></body></html>`;
}

const CSS = `body{font:15px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1b1f24}.meta{color:#59636e;font-size:13px}
.counts{display:flex;flex-wrap:wrap;gap:14px;list-style:none;padding:0}table{border-collapse:collapse;width:100%;\
font-size:13px}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #d1d9e0;word-break:break-all}
.hist{display:flex;gap:6px;align-items:flex-end;height:120px;margin:8px 0 28px}.hist div{flex:1;display:flex;\
flex-direction:column;justify-content:flex-end;height:100%;position:relative}
.expired{color:#9a6700;font-weight:600}.hist i{display:block;background:#1f883d;border-radius:2px 2px 0 0;\
min-height:1px}.hist span{position:absolute;bottom:-20px;font-size:11px;color:#59636e}#q{width:100%;padding:6px;margin:8px 0;font:inherit}`;

/**
 * A page of the document as the registry's list API answers (`cursor`: where the page starts; `limit` at most 100),
 * each census record past its `expiresAt` at `now` marked `expired: true` (the v0.1 shape otherwise as written).
 */
export function censusListPage(
  doc: CensusDocument,
  cursor: string | null,
  limit: number,
  now: Date,
): { servers: CensusDocument['servers']; metadata: { count: number; nextCursor?: string } } | null {
  const start = cursor === null ? 0 : /^o:\d{1,9}$/.test(cursor) ? Number(cursor.slice(2)) : -1;
  if (start < 0 || start > doc.servers.length) return null;
  const publisher = publisherOf(doc);
  const servers = doc.servers.slice(start, start + limit).map((item) => asRead(item, publisher, now));
  const next = start + limit < doc.servers.length ? `o:${start + limit}` : undefined;
  return { servers, metadata: { count: servers.length, ...(next ? { nextCursor: next } : {}) } };
}

/**
 * What `site --census` writes: the page, and the whole list as `v0.1/servers` (the text as written, each expired record
 * marked).
 */
export function censusSite(text: string, previous: CensusDocument | null, now: Date): { page: string; list: string } {
  const doc = JSON.parse(text) as CensusDocument;
  const publisher = publisherOf(doc);
  const servers = doc.servers.map((item) => asRead(item, publisher, now));
  const marked = servers.some((item, i) => item !== doc.servers[i]);
  return {
    page: censusPage(doc, previous, now),
    list: marked ? `${JSON.stringify({ ...doc, servers }, null, 2)}\n` : text,
  };
}
