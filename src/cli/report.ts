import type { Command } from 'commander';
import { loadCatalog } from '../catalog/model.js';
import { describeHistoryProblems } from '../store/problems.js';
import { buildStatus, DEFAULT_RETENTION_DAYS } from '../status/build.js';
import { overviewPage } from '../status/page.js';
import { markdownReport } from '../status/report.js';
import { writeFileAtomic } from '../util/atomic.js';
import { flagError, positiveInt, UsageError } from './args.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { openStore, STATE_OPTION, STORE_OPTION } from './store.js';
import { printJson } from './render.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      'the status as one self-contained HTML file (--html), Markdown for a pull request (--markdown) or JSON (--json)',
    )
    .option('--html <file>', 'write the status page as one static file (no network needed to open it)')
    .option('--markdown', 'print the status as Markdown on stdout')
    .option('--json', 'print the status as one JSON object on stdout (the shape of GET /api/servers)')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option(...STORE_OPTION)
    .option(...RETENTION_OPTION)
    .action(
      async (opts: {
        html?: string;
        markdown?: boolean;
        json?: boolean;
        catalog: string;
        retentionDays: number;
        store?: string;
      }) => {
        if (!opts.html && !opts.markdown && !opts.json)
          throw new UsageError('--html, --markdown, --json: report needs one of them');
        if (opts.markdown && opts.json) throw new UsageError('--markdown, --json: both print on stdout, choose one');
        const { catalog } = await loadCatalog(opts.catalog);
        const store = await openStore(opts.catalog, { store: opts.store, retentionDays: opts.retentionDays });
        try {
          let model: Awaited<ReturnType<typeof buildStatus>>;
          try {
            model = await buildStatus(catalog, store, new Date());
          } catch (err) {
            throw new Error(`cannot read the history of ${opts.catalog} (${(err as Error).message})`);
          }
          // Lines of the text history that are not of its format were left out of the index: say how many and where.
          const historyProblems = await store.problems();
          const skipped = describeHistoryProblems(historyProblems);
          if (skipped) process.stderr.write(`onetap: ${skipped}\n`);
          if (opts.html) {
            await writeFileAtomic(opts.html, overviewPage(model, { standalone: true, historyProblems }));
            if (!opts.json) process.stderr.write(`wrote ${opts.html}\n`);
          }
          if (opts.markdown) process.stdout.write(markdownReport(model, historyProblems));
          if (opts.json)
            printJson({
              generatedAt: model.generatedAt,
              lastRefresh: model.lastRefresh,
              servers: model.servers,
              historyProblems,
              cost: model.cost,
            });
        } finally {
          await store.close();
        }
      },
    );
}

/** The most days `--retention-days` takes (about 270 years; beyond it dates stop being dates). */
const MAX_RETENTION_DAYS = 100_000;

/** `--retention-days <n>`: a whole number of days, 1 to 100,000; the usage error names the flag. */
export function retentionDaysFlag(value: string): number {
  let n: number;
  try {
    n = positiveInt(value);
  } catch (err) {
    throw new UsageError(`--retention-days: ${(err as Error).message}`);
  }
  if (n > MAX_RETENTION_DAYS) throw flagError('--retention-days', `at most ${MAX_RETENTION_DAYS}`, value);
  return n;
}

/** The option as serve, report and site declare it. */
export const RETENTION_OPTION = [
  '--retention-days <n>',
  'days of runs the history index, pages and API keep (the text history in git is never pruned; accepted tool snapshots are kept)',
  retentionDaysFlag,
  DEFAULT_RETENTION_DAYS,
] as const;
