import type { Command } from 'commander';
import { loadCatalog } from '../catalog/model.js';
import { openHistory } from '../history/open.js';
import { buildStatus } from '../status/routes.js';
import { overviewPage } from '../status/page.js';
import { markdownReport } from '../status/report.js';
import { writeFileAtomic } from '../util/atomic.js';
import { UsageError } from './args.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { DEFAULT_STATE } from './refresh.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('the status page as one self-contained HTML file (--html) and/or Markdown for a pull request (--markdown)')
    .option('--html <file>', 'write the status page as one static file (no network needed to open it)')
    .option('--markdown', 'print the status as Markdown on stdout')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--state <path>', 'history index (rebuilt from <catalog dir>/history/ when missing or behind)', DEFAULT_STATE)
    .action(async (opts: { html?: string; markdown?: boolean; catalog: string; state: string }) => {
      if (!opts.html && !opts.markdown) throw new UsageError('report needs --html <file> or --markdown (or both)');
      const { catalog } = await loadCatalog(opts.catalog);
      const store = await openHistory(opts.catalog, opts.state);
      try {
        const model = buildStatus(catalog, store, new Date());
        if (opts.html) {
          await writeFileAtomic(opts.html, overviewPage(model, { standalone: true }));
          process.stderr.write(`wrote ${opts.html}\n`);
        }
        if (opts.markdown) process.stdout.write(markdownReport(model));
      } finally {
        store?.close();
      }
    });
}
