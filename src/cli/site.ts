import type { Command } from 'commander';
import { loadCatalog } from '../catalog/model.js';
import { describeHistoryProblems } from '../store/problems.js';
import { openStore, STATE_OPTION } from './store.js';
import { siteFiles, writeSite } from '../site/site.js';
import { flagError } from './args.js';
import { RETENTION_OPTION } from './report.js';
import { DEFAULT_CATALOG } from './catalog.js';

export function registerSite(program: Command): void {
  program
    .command('site')
    .description('write what serve serves as files for any static host: status pages, discovery documents, cards, JSON API')
    .requiredOption('--out <dir>', 'directory to write the site into')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option('--base-url <url>', 'absolute base for the URLs in the catalogs, e.g. https://owner.github.io/repo (default: root-relative paths)')
    .option('--publisher <domain>', 'publisher domain in urn:air identifiers (default: the base URL\'s host)')
    .option(...RETENTION_OPTION)
    .action(async (opts: { out: string; catalog: string; baseUrl?: string; publisher?: string; retentionDays: number }) => {
      if (opts.baseUrl !== undefined && !/^https?:\/\/[^/]+/.test(opts.baseUrl)) throw flagError('--base-url', 'not an absolute http(s) URL', opts.baseUrl);
      if (!opts.out.trim()) throw flagError('--out', 'must name a directory', opts.out);
      const { catalog } = await loadCatalog(opts.catalog);
      const store = await openStore(opts.catalog, opts.retentionDays);
      try {
        const files = await siteFiles(catalog, store, { baseUrl: opts.baseUrl, publisher: opts.publisher });
        await writeSite(opts.out, files);
        const skipped = describeHistoryProblems(await store.problems());
        if (skipped) process.stderr.write(`onetap: ${skipped}\n`);
        process.stdout.write(`wrote ${files.length} files to ${opts.out} (${catalog.servers.length} servers${(await store.latestRun()) ? '' : ', no history yet'})\n`);
      } finally {
        await store.close();
      }
    });
}
