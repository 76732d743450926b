import { readFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { loadCatalog, parseCatalog, type Catalog } from '../catalog/model.js';
import { validateDocument } from '../discover/card.js';
import { discover, type DiscoverResult } from '../discover/discover.js';
import { FetchRefused, guardedGet } from '../discover/fetcher.js';
import { MEDIA } from '../discover/documents.js';
import { publication, publishProblems, UnpublishableCatalog, writePublication } from '../publish/publish.js';
import { formatProblems, type LintOptions } from '../catalog/lint.js';
import { startServer } from '../serve/server.js';
import { positiveInt, UsageError } from './args.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { inert, paint, table, useColor } from './render.js';
import { statusRoutes } from '../status/routes.js';
import { DEFAULT_STATE } from './refresh.js';

/** The curated catalog when there is one; discovery still works without it (nothing curated, nothing removed). */
async function curatedOrEmpty(path: string): Promise<Catalog> {
  if (existsSync(path)) return (await loadCatalog(path)).catalog;
  if (path !== DEFAULT_CATALOG) throw new UsageError(`no catalog at ${path}`);
  return parseCatalog('{"servers":[]}');
}

export function registerDiscovery(program: Command): void {
  program
    .command('discover')
    .description('find candidate servers through AI Catalog, MCP Catalog and Server Cards; validate, judge, optionally probe')
    .argument('<source>', 'a domain (example.com), an origin (https://host[:port]) or a URL (catalog, card or MCP endpoint)')
    .option('--json', 'print one JSON object {source, catalogs, candidates}')
    .option('--probe', 'attest each eligible remote with the prober')
    .option('--allow-private', 'permit http:// and loopback/private addresses (local testing only)')
    .option('--catalog <file>', 'the curated catalog (removed list, duplicate hosts)', DEFAULT_CATALOG)
    .option('--timeout <ms>', 'time limit per document', positiveInt, 10_000)
    .action(async (source: string, opts: { json?: boolean; probe?: boolean; allowPrivate?: boolean; catalog: string; timeout: number }) => {
      let result: DiscoverResult;
      try {
        result = await discover(source, { catalog: await curatedOrEmpty(opts.catalog), probe: opts.probe, allowPrivate: opts.allowPrivate, timeoutMs: opts.timeout, probeTimeoutMs: 15_000 });
      } catch (err) {
        if (!(err instanceof FetchRefused)) throw err;
        process.stderr.write(`onetap: refused: ${err.message}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(opts.json ? JSON.stringify(result, null, 2) + '\n' : renderDiscovery(result, useColor(process.stdout)) + '\n');
      const found = result.candidates.length > 0 || result.catalogs.some((c) => !c.error);
      process.exitCode = found ? 0 : 1;
    });

  program
    .command('validate')
    .description('validate a Server Card (or a registry server.json, by its $schema); print each error with its JSON pointer')
    .argument('<file-or-url>', 'a file path or an http(s) URL')
    .option('--allow-private', 'permit http:// and loopback/private addresses for a URL')
    .action(async (target: string, opts: { allowPrivate?: boolean }) => {
      let text: string;
      if (/^https?:\/\//i.test(target)) {
        try {
          const got = await guardedGet(target, `${MEDIA.serverCard}, application/json;q=0.9`, { allowPrivate: opts.allowPrivate, maxBytes: 256 * 1024 });
          if (got.status !== 200) throw new FetchRefused('http', `HTTP ${got.status} for ${target}`, got.status);
          text = got.text;
        } catch (err) {
          if (!(err instanceof FetchRefused)) throw err;
          process.stderr.write(`onetap: ${err.code === 'http' ? '' : 'refused: '}${err.message}\n`);
          process.exitCode = 1;
          return;
        }
      } else {
        text = await readFile(target, 'utf8').catch((err: NodeJS.ErrnoException) => { throw new Error(`cannot read ${target} (${err.code})`); }); // exit 1, as the README says
      }
      let value: unknown;
      try { value = JSON.parse(text); } catch (err) {
        process.stdout.write(`${inert(target)}: not JSON (${(err as Error).message})\n`);
        process.exitCode = 1;
        return;
      }
      const v = validateDocument(value);
      const label = v.kind === 'server-card' ? 'Server Card' : 'registry server.json';
      if (v.valid) process.stdout.write(`${inert(target)}: valid ${label}\n`);
      else process.stdout.write(`${inert(target)}: invalid ${label}\n${v.errors.map((e) => `  ${inert(e.pointer)}: ${inert(e.message)}`).join('\n')}\n`);
      process.exitCode = v.valid ? 0 : 1;
    });

  program
    .command('publish')
    .description('write the curated list as .well-known/ai-catalog.json, .well-known/mcp/catalog.json and one Server Card per server')
    .requiredOption('--out <dir>', 'output directory (the root of the site that serves it)')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--base-url <url>', 'absolute base for the URLs in the catalogs (default: root-relative paths)')
    .option('--publisher <domain>', 'publisher domain in urn:air identifiers (default: the base URL\'s host)')
    .option('--allow-http', 'accept http:// server URLs on loopback addresses (local fixtures and demos only)')
    .action(async (opts: { out: string; catalog: string; baseUrl?: string; publisher?: string; allowHttp?: boolean }) => {
      const baseUrl = opts.baseUrl === undefined ? undefined : baseUrlFlag(opts.baseUrl);
      if (opts.publisher !== undefined && !DOMAIN.test(opts.publisher)) throw new UsageError(`--publisher must be a domain name (example.org), got "${inert(opts.publisher)}"`);
      outDirFlag(opts.out);
      const { catalog } = await loadCatalog(opts.catalog);
      if (!publishable(opts.catalog, catalog, { allowHttp: opts.allowHttp })) return;
      const written = await writePublication(publication(catalog, { baseUrl, publisher: opts.publisher }), opts.out);
      process.stdout.write(`published ${catalog.servers.length} servers:\n${written.map((p) => `  ${inert(p)}`).join('\n')}\n`);
    });

  program
    .command('serve')
    .description('serve the published documents and the status page over HTTP')
    .option('--port <n>', 'port, 0 to 65535 (0 picks a free one)', '8787')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--state <path>', 'history index for the status page (rebuilt from <catalog dir>/history/)', DEFAULT_STATE)
    .option('--base-url <url>', 'absolute base for the URLs in the catalogs (default: this server\'s origin)')
    .option('--allow-http', 'accept http:// server URLs on loopback addresses (local fixtures and demos only)')
    .action(async (opts: { port: string; host: string; catalog: string; state: string; baseUrl?: string; allowHttp?: boolean }) => {
      const port = portFlag(opts.port);
      const baseUrl = opts.baseUrl === undefined ? undefined : baseUrlFlag(opts.baseUrl);
      if (!opts.host.trim()) throw new UsageError('--host must name an address to listen on');
      statePathFlag(opts.state);
      const { catalog } = await loadCatalog(opts.catalog); // fail early, with the catalog's own error
      if (!publishable(opts.catalog, catalog, { allowHttp: opts.allowHttp })) return;
      const running = await startServer({
        catalogPath: opts.catalog, host: opts.host, port, baseUrl, lint: { allowHttp: opts.allowHttp }, routes: statusRoutes({ statePath: opts.state, catalogPath: opts.catalog }),
      });
      process.stdout.write(`serving ${running.url}/ (status page), ${running.url}/.well-known/ai-catalog.json; Ctrl-C stops\n`);
      await new Promise<void>((resolve) => {
        const stop = () => { void running.close().then(resolve); };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}

/**
 * The gate of every command that publishes the list: false (findings on stderr, exit code 1) when the
 * catalog fails lint or would leak a secret. Call it after loading the catalog, before any work.
 */
export function publishable(file: string, catalog: Catalog, opts: LintOptions = {}): boolean {
  const problems = publishProblems(catalog, opts);
  if (!problems.length) return true;
  process.stderr.write(`${problems.map((p) => inert(formatProblems(file, [p]))).join('\n')}\nonetap: ${new UnpublishableCatalog(problems).message}\n`);
  process.exitCode = 1;
  return false;
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function portFlag(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535, got "${inert(value)}"`);
  return Number(value);
}

/** An absolute http(s) base without credentials, query or fragment; returned without a trailing slash. */
function baseUrlFlag(value: string): string {
  let u: URL;
  try { u = new URL(value); } catch { throw new UsageError(`--base-url must be an absolute http(s) URL, got "${inert(value)}"`); }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UsageError(`--base-url must be an http(s) URL, got ${inert(u.protocol)}`);
  if (u.username || u.password) throw new UsageError('--base-url must not carry credentials (user:password@): they would be published');
  if (u.search || u.hash) throw new UsageError('--base-url must not have a query or fragment');
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

function outDirFlag(path: string): void {
  if (!path.trim()) throw new UsageError('--out must name a directory');
  if (existsSync(path) && !statSync(path).isDirectory()) throw new UsageError(`--out must be a directory, but ${inert(path)} is a file`);
}

function statePathFlag(path: string): void {
  if (!path.trim() || path.includes('\0')) throw new UsageError('--state must name a file');
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`--state must be a file, but ${inert(path)} is a directory`);
}

function renderDiscovery(r: DiscoverResult, color: boolean): string {
  const lines = [`Discovery from ${inert(r.source)}`, '', 'Documents read:'];
  for (const c of r.catalogs) lines.push(`  ${c.error ? 'x' : '✓'} ${inert(c.url)} (${c.kind}${c.specVersion ? ` ${inert(c.specVersion)}` : ''}, ${c.entries} entries)${c.error ? `: ${inert(c.error)}` : ''}`);
  if (!r.candidates.length) return [...lines, '', 'No Server Card found.'].join('\n');
  const rows = r.candidates.map((c) => [
    inert(c.title ?? c.name ?? '?'), c.valid ? 'valid' : 'invalid', c.eligible ? (c.curated ? 'curated' : 'eligible') : 'no', c.verdict ? `${c.verdict}/${c.reason}` : '-', inert(c.url ?? c.cardUrl ?? '-'),
  ]);
  lines.push('', table(['NAME', 'CARD', 'ONE-TAP', 'PROBE', 'URL'], rows, (text, row, col) => (col === 2 ? paint(text, r.candidates[row]!.eligible ? 'live' : 'drop', color) : text)));
  lines.push('', ...r.candidates.map((c) => `  ${inert(c.title ?? c.name ?? '?')}: ${inert(c.why)}${c.errors.length ? `\n    ${c.errors.slice(0, 5).map(inert).join('\n    ')}` : ''}`));
  const fresh = r.candidates.filter((c) => c.eligible && !c.curated).length;
  lines.push('', `${r.candidates.length} candidates, ${fresh} new and eligible. Nothing was added: use onetap add <url> --decision "who: why".`);
  return lines.join('\n');
}
