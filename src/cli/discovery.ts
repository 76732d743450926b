import { readFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { loadCatalog, parseCatalog, type Catalog } from '../catalog/model.js';
import { validateDocument, type Validation } from '../discover/card.js';
import { discover, DISCOVERY_LIMITS, NO_CARD_READ, type DiscoverResult } from '../discover/discover.js';
import { addCommand } from '../discover/eligibility.js';
import { FetchRefused, guardedGet } from '../net/fetcher.js';
import { MEDIA } from '../discover/documents.js';
import {
  leakProblems,
  publication,
  publishProblems,
  UnpublishableCatalog,
  writePublication,
} from '../publish/publish.js';
import { formatProblems, type LintOptions } from '../catalog/lint.js';
import { startServer } from '../serve/server.js';
import { flagError, portNumber, positiveInt, timeoutMs, UsageError } from './args.js';
import { DEFAULT_CATALOG, knownToolSets } from './catalog.js';
import { findingLines, mismatchText, paint, sameToolsText, table, useColor } from './render.js';
import { inert } from '../text/escape.js';
import { statusRoutes } from '../serve/status-routes.js';
import { openStore, STATE_OPTION, STORE_OPTION, storeUrl } from './store.js';
import { RETENTION_OPTION } from './report.js';
import { checkCensusFiles } from './census.js';

/** The curated catalog when there is one; discovery still works without it (nothing curated, nothing removed). */
async function curatedOrEmpty(path: string): Promise<Catalog> {
  if (existsSync(path)) return (await loadCatalog(path)).catalog;
  if (path !== DEFAULT_CATALOG) throw flagError('--catalog', 'no such file', path);
  return parseCatalog('{"servers":[]}');
}

export function registerDiscovery(program: Command): void {
  program
    .command('discover')
    .description(
      'find candidate servers through AI Catalog, MCP Catalog and Server Cards; validate, judge, optionally probe',
    )
    .argument(
      '<source>',
      'a domain (example.com), an origin (https://host[:port]) or a URL (catalog, card or MCP endpoint)',
    )
    .option('--json', 'print one JSON object {source, catalogs, candidates, unread, unreadCount}')
    .option('--probe', 'attest each eligible remote with the prober; only live ones stay eligible')
    .option('--allow-private', 'permit http:// and loopback/private addresses (local testing only)')
    .option('--catalog <file>', 'the curated catalog (removed list, duplicate hosts)', DEFAULT_CATALOG)
    .option('--timeout <ms>', 'time limit per document (fetching and validating)', timeoutMs, 10_000)
    .option(
      '--max-documents <n>',
      'documents (catalogs and cards) read in one run',
      countFlag('--max-documents'),
      DISCOVERY_LIMITS.maxDocuments,
    )
    .option(
      '--max-per-origin <n>',
      'documents fetched from one origin in one run',
      countFlag('--max-per-origin'),
      DISCOVERY_LIMITS.maxPerOrigin,
    )
    .option(...STORE_OPTION)
    .action(
      async (
        source: string,
        opts: {
          json?: boolean;
          probe?: boolean;
          allowPrivate?: boolean;
          catalog: string;
          timeout: number;
          maxDocuments: number;
          maxPerOrigin: number;
          store?: string;
        },
      ) => {
        const catalog = await curatedOrEmpty(opts.catalog);
        // With --probe, what the list's entries last served (its history): a candidate serving the same set says so.
        const known = opts.probe && existsSync(opts.catalog) ? await knownToolSets(opts.catalog, opts.store) : [];
        let result: DiscoverResult;
        try {
          result = await discover(source, {
            catalog,
            probe: opts.probe,
            allowPrivate: opts.allowPrivate,
            timeoutMs: opts.timeout,
            maxDocuments: opts.maxDocuments,
            maxPerOrigin: opts.maxPerOrigin,
            known,
          });
        } catch (err) {
          if (!(err instanceof FetchRefused)) throw err;
          process.stderr.write(`onetap: refused: ${err.message}\n`);
          process.exitCode = 1;
          return;
        }
        // The proposed command adds to the same catalog discovery judged against.
        if (opts.catalog !== DEFAULT_CATALOG)
          for (const c of result.candidates)
            if (c.addCommand) c.addCommand = addCommand(c, ['--catalog', opts.catalog]);
        process.stdout.write(
          opts.json
            ? JSON.stringify(result, null, 2) + '\n'
            : renderDiscovery(result, useColor(process.stdout), !!opts.probe) + '\n',
        );
        process.exitCode = result.candidates.some(cardWasRead) ? 0 : 1;
      },
    );

  program
    .command('validate')
    .description(
      'validate a Server Card (or a registry server.json, by its $schema); print each error with its JSON pointer',
    )
    .argument('<file-or-url>', 'a file path or an http(s) URL')
    .option(
      '--json',
      'print one JSON object {target, kind, valid, schema, errors, errorCount, errorsComplete, warnings}',
    )
    .option('--legacy', 'accept a card that passes only the earlier (seed-era) schema, with a warning')
    .option('--allow-private', 'permit http:// and loopback/private addresses for a URL')
    .action(async (target: string, opts: { json?: boolean; legacy?: boolean; allowPrivate?: boolean }) => {
      let text: string;
      try {
        text = await readTarget(target, !!opts.allowPrivate);
      } catch (err) {
        if (!(err instanceof Unreadable)) throw err;
        process.stderr.write(`onetap: ${err.message}\n`);
        process.exitCode = 1;
        return;
      }
      let v: Validation;
      try {
        v = validateDocument(JSON.parse(text), { legacy: opts.legacy });
      } catch (err) {
        // Not JSON is a finding about the document, reported like a schema error.
        v = {
          kind: 'server-card',
          valid: false,
          schema: null,
          errors: [{ pointer: '/', message: `not JSON (${(err as Error).message})` }],
          errorCount: 1,
          errorsComplete: true,
          warnings: [],
          elapsedMs: 0,
        };
      }
      if (opts.json) {
        const { elapsedMs: _elapsed, ...data } = v;
        process.stdout.write(JSON.stringify({ target, ...data }, null, 2) + '\n');
      } else process.stdout.write(renderValidation(target, v) + '\n');
      process.exitCode = v.valid ? 0 : 1;
    });

  program
    .command('publish')
    .description(
      'write the curated list as .well-known/ai-catalog.json, .well-known/mcp/catalog.json and one Server Card per server',
    )
    .requiredOption('--out <dir>', 'output directory (the root of the site that serves it)')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--base-url <url>', 'absolute base for the URLs in the catalogs (default: root-relative paths)')
    .option(
      '--publisher <domain>',
      "publisher domain in urn:air identifiers (default: the base URL's host; without --base-url, onetap.local)",
    )
    .option('--allow-http', 'accept http:// server URLs on loopback addresses (local fixtures and demos only)')
    .action(
      async (opts: { out: string; catalog: string; baseUrl?: string; publisher?: string; allowHttp?: boolean }) => {
        const baseUrl = opts.baseUrl === undefined ? undefined : baseUrlFlag(opts.baseUrl);
        if (opts.publisher !== undefined && !DOMAIN.test(opts.publisher))
          throw flagError('--publisher', 'must be a domain name (example.org)', opts.publisher);
        outDirFlag(opts.out);
        const { catalog } = await loadCatalog(opts.catalog);
        if (!publishable(opts.catalog, catalog, { allowHttp: opts.allowHttp })) return;
        const { written, removed, kept } = await writePublication(
          publication(catalog, { baseUrl, publisher: opts.publisher }),
          opts.out,
        );
        const list = (paths: string[]) => paths.map((p) => `  ${inert(p)}`).join('\n');
        let out = `published ${catalog.servers.length} servers:\n${list(written)}\n`;
        if (removed.length)
          out += `removed ${removed.length} card${removed.length === 1 ? '' : 's'} of servers no longer in the catalog:\n${list(removed)}\n`;
        if (kept.length)
          out += `kept ${kept.length} card${
            kept.length === 1 ? '' : 's'
          } of servers no longer in the catalog, changed since onetap wrote them (remove by hand):\n${list(kept)}\n`;
        process.stdout.write(out);
      },
    );

  program
    .command('serve')
    .description('serve the published documents and the status page over HTTP')
    .option('--port <n>', 'port, 0 to 65535 (0 picks a free one)', portNumber, 8787)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option(...STORE_OPTION)
    .option('--base-url <url>', "absolute base for the URLs in the catalogs (default: this server's origin)")
    .option('--allow-http', 'accept http:// server URLs on loopback addresses (local fixtures and demos only)')
    .option(...RETENTION_OPTION)
    .option(
      '--census <file>',
      "serve a census's verification records instead (onetap census --out): /v0.1/servers with cursor paging, and the census page",
    )
    .option('--census-previous <file>', 'with --census: the census before it, for what changed')
    .action(
      async (opts: {
        port: number;
        host: string;
        catalog: string;
        baseUrl?: string;
        allowHttp?: boolean;
        retentionDays: number;
        store?: string;
        census?: string;
        censusPrevious?: string;
      }) => {
        const baseUrl = opts.baseUrl === undefined ? undefined : baseUrlFlag(opts.baseUrl);
        if (!opts.host.trim()) throw flagError('--host', 'must name an address to listen on', opts.host);
        if (opts.census !== undefined) return serveCensus(opts.census, opts.censusPrevious, opts);
        const { catalog } = await loadCatalog(opts.catalog); // fail early, with the catalog's own error
        // Lint findings are shown on the status page; a catalog that would leak a secret is not served at all.
        if (leakProblems(catalog).length && !publishable(opts.catalog, catalog, { allowHttp: opts.allowHttp })) return;
        // A PostgreSQL store shows what any machine recorded; it is opened (its schema checked) before serving.
        const store =
          storeUrl(opts.store) === undefined
            ? undefined
            : await openStore(opts.catalog, { store: opts.store, retentionDays: opts.retentionDays });
        const running = await startServer({
          catalogPath: opts.catalog,
          host: opts.host,
          port: opts.port,
          baseUrl,
          lint: { allowHttp: opts.allowHttp },
          routes: statusRoutes({ catalogPath: opts.catalog, retentionDays: opts.retentionDays, store }),
        });
        process.stdout.write(
          `serving ${running.url}/ (status page), ${running.url}/.well-known/ai-catalog.json; Ctrl-C stops\n`,
        );
        await new Promise<void>((resolve) => {
          const stop = () => {
            void running
              .close()
              .then(() => store?.close())
              .then(resolve);
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      },
    );
}

/** `serve --census`: the census alone, no catalog. */
async function serveCensus(
  file: string,
  previous: string | undefined,
  opts: { host: string; port: number },
): Promise<void> {
  checkCensusFiles(file, previous);
  const { serveCensusFile } = await import('../serve/census-routes.js');
  const running = await serveCensusFile(file, previous, opts.host, opts.port);
  process.stdout.write(`serving ${running.url}/ (census page), ${running.url}/v0.1/servers; Ctrl-C stops\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      void running.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * The gate of every command that publishes the list: false (findings on stderr, exit code 1) when the
 * catalog fails lint or would leak a secret. Call it after loading the catalog, before any work.
 */
export function publishable(file: string, catalog: Catalog, opts: LintOptions = {}): boolean {
  const problems = publishProblems(catalog, opts);
  if (!problems.length) return true;
  process.stderr.write(`${formatProblems(file, problems)}\nonetap: ${new UnpublishableCatalog(problems).message}\n`);
  process.exitCode = 1;
  return false;
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** An absolute http(s) base without credentials, query or fragment; returned without a trailing slash. */
function baseUrlFlag(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw flagError('--base-url', 'must be an absolute http(s) URL', value);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw flagError('--base-url', 'must be an http(s) URL', value);
  if (u.username || u.password)
    throw new UsageError('--base-url: must not carry credentials (user:password@): they would be published');
  if (u.search || u.hash) throw flagError('--base-url', 'must not have a query or fragment', value);
  return `${u.origin}${u.pathname}`.replace(/\/+$/, '');
}

function outDirFlag(path: string): void {
  if (!path.trim()) throw flagError('--out', 'must name a directory', path);
  if (existsSync(path) && !statSync(path).isDirectory())
    throw flagError('--out', 'must be a directory, not a file', path);
}

/** A positive whole number; the usage error names the flag. */
const countFlag =
  (flag: string) =>
  (value: string): number => {
    try {
      return positiveInt(value);
    } catch (err) {
      throw new UsageError(`${flag}: ${(err as Error).message}`);
    }
  };

class Unreadable extends Error {}

/** The document's text from a file or (through the guarded fetcher) a URL; Unreadable when it cannot be had. */
async function readTarget(target: string, allowPrivate: boolean): Promise<string> {
  if (/^https?:\/\//i.test(target)) {
    try {
      const got = await guardedGet(target, `${MEDIA.serverCard}, application/json;q=0.9`, {
        allowPrivate,
        maxBytes: 256 * 1024,
      });
      if (got.status !== 200) throw new Unreadable(`HTTP ${got.status} for ${inert(target)}`);
      return got.text;
    } catch (err) {
      if (err instanceof FetchRefused) throw new Unreadable(`refused: ${inert(err.message)}`);
      throw err;
    }
  }
  return readFile(target, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new Unreadable(
      `cannot read ${inert(target)}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'a directory' : (err.code ?? err.message)}`,
    );
  });
}

const KIND_LABEL: Record<Validation['kind'], string> = {
  'server-card': 'Server Card',
  'registry-server': 'registry server.json',
};

function renderValidation(target: string, v: Validation): string {
  const label = KIND_LABEL[v.kind];
  const verdict = v.valid
    ? v.schema === 'legacy'
      ? `valid ${label} (legacy: the earlier seed-era schema)`
      : `valid ${label}`
    : `invalid ${label}`;
  const lines = [`${inert(target)}: ${verdict}`, ...v.errors.map((e) => `  ${inert(e.pointer)}: ${inert(e.message)}`)];
  const more = v.errorCount - v.errors.length;
  if (more > 0)
    lines.push(
      `  … ${more} more error${more === 1 ? '' : 's'} (${v.errorCount} found, the first ${v.errors.length} shown)`,
    );
  for (const w of v.warnings) lines.push(`  warning: ${inert(w)}`);
  if (!v.valid && v.schema === 'legacy')
    lines.push('  (it passes the earlier seed-era schema: --legacy accepts it, with this warning)');
  return lines.join('\n');
}

/** A candidate whose Server Card was actually read (valid or not), not only looked for. */
const cardWasRead = (c: DiscoverResult['candidates'][number]) => c.why !== NO_CARD_READ;

function renderDiscovery(r: DiscoverResult, color: boolean, probed: boolean): string {
  const lines = [`Discovery from ${inert(r.source)}`, '', 'Documents read:'];
  for (const c of r.catalogs)
    lines.push(
      `  ${c.error ? 'x' : '✓'} ${inert(c.url)} (${c.kind}${
        c.specVersion ? ` ${inert(c.specVersion)}` : ''
      }, ${c.entries} entries)${c.error ? `: ${inert(c.error)}` : ''}`,
    );
  if (r.unreadCount) {
    lines.push(
      '',
      `Left unread: ${r.unreadCount} document${r.unreadCount === 1 ? '' : 's'}${
        r.unreadCount > r.unread.length ? ` (the first ${r.unread.length} listed)` : ''
      }`,
    );
    for (const u of r.unread) lines.push(`  - ${inert(u.url)}: ${inert(u.why)}`);
  }
  if (!r.candidates.some(cardWasRead)) lines.push('', 'No Server Card found.');
  if (!r.candidates.length) return lines.join('\n');
  const rows = r.candidates.map((c) => [
    inert(c.title ?? c.name ?? '?'),
    c.valid ? (c.schema === 'legacy' ? 'legacy' : 'valid') : cardWasRead(c) ? 'invalid' : 'none',
    c.eligible ? (c.curated ? 'curated' : 'eligible') : 'no',
    c.verdict ? `${c.verdict}/${c.reason}` : '-',
    inert(c.url ?? c.cardUrl ?? '-'),
  ]);
  lines.push(
    '',
    table(['NAME', 'CARD', 'ONE-TAP', 'PROBE', 'URL'], rows, (text, row, col) =>
      col === 2 ? paint(text, r.candidates[row]!.eligible ? 'live' : 'drop', color) : text,
    ),
  );
  lines.push(
    '',
    ...r.candidates.map((c) => {
      const more = c.errorCount - Math.min(c.errors.length, 5);
      const details = [
        ...c.errors.slice(0, 5),
        ...(more > 0 ? [`… ${more} more error${more === 1 ? '' : 's'}`] : []),
        ...c.warnings.map((w) => `warning: ${w}`),
      ];
      const probed = [
        ...(c.findings.length
          ? [
              `screening: ${c.findings.length} finding${c.findings.length === 1 ? '' : 's'} in its tool list`,
              ...findingLines(c.findings, '  '),
            ]
          : []),
        ...(c.mismatches.length ? [`card vs runtime: ${mismatchText(c.mismatches)}`] : []),
        ...(c.sameToolsAs.length ? [`same tool set as: ${sameToolsText(c.sameToolsAs)}`] : []),
      ];
      return `  ${inert(c.title ?? c.name ?? '?')}: ${inert(c.why)}${[...details.map(inert), ...probed].map((d) => `\n    ${d}`).join('')}`;
    }),
  );
  const fresh = r.candidates.filter((c) => c.addCommand);
  lines.push(
    '',
    `${r.candidates.length} candidates, ${fresh.length} new and eligible${probed ? ' (attested live)' : ''}. Nothing was added.`,
  );
  if (fresh.length) {
    lines.push(
      `To propose one, write your decision into its command and run it${probed ? '' : ' (add probes it live first)'}:`,
    );
    for (const c of fresh) lines.push(`  ${inert(c.addCommand!)}`);
  }
  return lines.join('\n');
}
