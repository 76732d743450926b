import type { Command } from 'commander';
import { loadCatalog } from '../catalog/model.js';
import { historyProblemsOf, openHistory } from '../history/open.js';
import { describeHistoryProblems } from '../history/text.js';
import { buildStatus } from '../status/routes.js';
import { overviewPage } from '../status/page.js';
import { markdownReport } from '../status/report.js';
import { writeFileAtomic } from '../util/atomic.js';
import { positiveInt, UsageError } from './args.js';
import { DEFAULT_RETENTION_DAYS } from '../history/open.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { DEFAULT_STATE } from './refresh.js';
import { printJson } from './render.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('the status as one self-contained HTML file (--html), Markdown for a pull request (--markdown) or JSON (--json)')
    .option('--html <file>', 'write the status page as one static file (no network needed to open it)')
    .option('--markdown', 'print the status as Markdown on stdout')
    .option('--json', 'print the status as one JSON object on stdout (the shape of GET /api/servers)')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--state <path>', 'history index (rebuilt from <catalog dir>/history/ when missing or behind)', DEFAULT_STATE)
    .option(...RETENTION_OPTION)
    .action(async (opts: { html?: string; markdown?: boolean; json?: boolean; catalog: string; state: string; retentionDays: number }) => {
      if (!opts.html && !opts.markdown && !opts.json) throw new UsageError('report needs --html <file>, --markdown or --json');
      if (opts.markdown && opts.json) throw new UsageError('--markdown and --json both print on stdout: choose one');
      const { catalog } = await loadCatalog(opts.catalog);
      let store: Awaited<ReturnType<typeof openHistory>>;
      try {
        store = await openHistory(opts.catalog, opts.state, { retention: { days: opts.retentionDays } });
      } catch (err) {
        throw new Error(`${opts.state}: cannot open the history (${(err as Error).message})`);
      }
      try {
        const model = buildStatus(catalog, store, new Date());
        // Lines of the text history that are not of its format were left out of the index: say how many and where.
        const historyProblems = historyProblemsOf(store);
        const skipped = describeHistoryProblems(historyProblems);
        if (skipped) process.stderr.write(`onetap: ${skipped}\n`);
        if (opts.html) {
          await writeFileAtomic(opts.html, overviewPage(model, { standalone: true, historyProblems }));
          if (!opts.json) process.stderr.write(`wrote ${opts.html}\n`);
        }
        if (opts.markdown) process.stdout.write(markdownReport(model, historyProblems));
        if (opts.json) printJson({ ...model, historyProblems });
      } finally {
        store?.close();
      }
    });
}

/** The most days `--retention-days` takes (about 270 years; beyond it dates stop being dates). */
const MAX_RETENTION_DAYS = 100_000;

/** `--retention-days <n>`: a whole number of days, 1 to 100,000; the usage error names the flag. */
export function retentionDaysFlag(value: string): number {
  let n: number;
  try { n = positiveInt(value); } catch (err) { throw new UsageError(`--retention-days: ${(err as Error).message}`); }
  if (n > MAX_RETENTION_DAYS) throw new UsageError(`--retention-days: at most ${MAX_RETENTION_DAYS}, got "${value}"`);
  return n;
}

/** The option as serve, report and site declare it. */
export const RETENTION_OPTION = [
  '--retention-days <n>',
  'days of runs the history index, pages and API keep (the text history in git is never pruned; accepted tool snapshots are kept)',
  retentionDaysFlag,
  DEFAULT_RETENTION_DAYS,
] as const;
