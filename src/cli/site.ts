import type { Command } from 'commander';
import { loadCatalog } from '../catalog/model.js';
import { formatProblems } from '../catalog/lint.js';
import { leakProblems, publishProblems } from '../publish/publish.js';
import { publishable } from './discovery.js';
import { inert } from '../text/escape.js';
import { describeHistoryProblems } from '../store/problems.js';
import { openStore, STATE_OPTION, STORE_OPTION } from './store.js';
import { siteFiles, writeSite } from '../site/site.js';
import { flagError } from './args.js';
import { RETENTION_OPTION } from './report.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { checkCensusFiles } from './census.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAllAtomic } from '../util/atomic.js';

export function registerSite(program: Command): void {
  program
    .command('site')
    .description(
      'write what serve serves as files for any static host: status pages, discovery documents, cards, JSON API',
    )
    .requiredOption('--out <dir>', 'directory to write the site into')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option(...STORE_OPTION)
    .option(
      '--base-url <url>',
      'absolute base for the URLs in the catalogs, e.g. https://owner.github.io/repo (default: root-relative paths)',
    )
    .option('--publisher <domain>', "publisher domain in urn:air identifiers (default: the base URL's host)")
    .option('--allow-http', 'accept http:// server URLs on loopback addresses (local fixtures and demos only)')
    .option(...RETENTION_OPTION)
    .option(
      '--census <file>',
      "write a census's verification records instead (onetap census --out): index.html (the census page) and v0.1/servers (the whole list)",
    )
    .option('--census-previous <file>', 'with --census: the census before it, for what changed')
    .action(
      async (opts: {
        out: string;
        catalog: string;
        baseUrl?: string;
        publisher?: string;
        allowHttp?: boolean;
        retentionDays: number;
        store?: string;
        census?: string;
        censusPrevious?: string;
      }) => {
        if (opts.baseUrl !== undefined && !/^https?:\/\/[^/]+/.test(opts.baseUrl))
          throw flagError('--base-url', 'not an absolute http(s) URL', opts.baseUrl);
        if (!opts.out.trim()) throw flagError('--out', 'must name a directory', opts.out);
        if (opts.census !== undefined) {
          checkCensusFiles(opts.census, opts.censusPrevious);
          const { censusSite } = await import('../census/page.js');
          const previous = opts.censusPrevious ? JSON.parse(await readFile(opts.censusPrevious, 'utf8')) : null;
          const site = censusSite(await readFile(opts.census, 'utf8'), previous, new Date());
          await writeAllAtomic([
            { path: join(opts.out, 'index.html'), content: site.page },
            { path: join(opts.out, 'v0.1', 'servers'), content: site.list },
          ]);
          process.stdout.write(`wrote the census to ${inert(opts.out)}\n`);
          return;
        }
        const { catalog } = await loadCatalog(opts.catalog);
        // As serve: a catalog that would leak a secret is refused; one that fails lint gets its status pages with the
        // findings, without the published documents.
        if (leakProblems(catalog).length && !publishable(opts.catalog, catalog, { allowHttp: opts.allowHttp })) return;
        const lintProblems = publishProblems(catalog, { allowHttp: opts.allowHttp });
        const store = await openStore(opts.catalog, { store: opts.store, retentionDays: opts.retentionDays });
        try {
          const files = await siteFiles(catalog, store, {
            baseUrl: opts.baseUrl,
            publisher: opts.publisher,
            lintProblems,
          });
          // Named, as publish names them; the site is still written (as serve still serves), so a weekly run goes on.
          if (lintProblems.length)
            process.stderr.write(
              `${lintProblems
                .map((p) => inert(formatProblems(opts.catalog, [p])))
                .join(
                  '\n',
                )}\nonetap: the catalog fails lint: the status pages are written with the findings, the published documents are not\n`,
            );
          await writeSite(opts.out, files);
          const skipped = describeHistoryProblems(await store.problems());
          if (skipped) process.stderr.write(`onetap: ${skipped}\n`);
          process.stdout.write(
            `wrote ${files.length} files to ${opts.out} (${catalog.servers.length} servers${(await store.latestRun()) ? '' : ', no history yet'})\n`,
          );
        } finally {
          await store.close();
        }
      },
    );
}
