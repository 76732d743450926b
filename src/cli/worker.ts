/** `onetap worker --vantage <name>`: take probe jobs of that vantage, record the observations in the store. */
import type { Command } from 'commander';
import { positiveInt, timeoutMs, UsageError, vantageName } from './args.js';
import { pgUrlFlag, storeUrl, STORE_ENV } from './store.js';
import { redactStoreUrl } from '../store/url.js';
import { inert } from '../text/escape.js';

interface WorkerFlags { vantage: string; concurrency: number; store?: string; queue?: string; drain: number }

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('take the probe jobs of one vantage from the queue and record each observation in the store, until SIGTERM or SIGINT')
    .requiredOption('--vantage <name>', 'this worker\'s vantage (a-z, digits, _, -): it takes that vantage\'s jobs', vantageName)
    .option('--concurrency <n>', 'jobs in flight at once', positiveInt, 8)
    .option('--store <url>', `PostgreSQL store the observations are recorded to (default $${STORE_ENV}; one of them is needed)`, pgUrlFlag('--store'))
    .option('--queue <url>', 'the queue\'s PostgreSQL URL (default: the store\'s)', pgUrlFlag('--queue'))
    .option('--drain <ms>', 'on SIGTERM: how long jobs in flight may finish before the rest go back to the queue', timeoutMs, 30_000)
    .action(async (flags: WorkerFlags) => {
      const url = storeUrl(flags.store);
      if (url === undefined) throw new UsageError(`--store: a PostgreSQL URL is needed (or set ${STORE_ENV})`);
      const [{ openPgStore }, { startWorker }] = await Promise.all([import('../store/pg-store.js'), import('../worker/worker.js')]);
      const store = await openPgStore(url);
      const log = (line: string) => void process.stderr.write(`onetap worker ${inert(line)}\n`);
      const worker = await startWorker({ vantage: flags.vantage, store, queueUrl: flags.queue ?? url, concurrency: flags.concurrency, log });
      log(`${flags.vantage}: taking jobs from ${redactStoreUrl(flags.queue ?? url)} (concurrency ${flags.concurrency})`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          log(`${flags.vantage}: ${signal}: taking no more jobs; those in flight have ${flags.drain} ms`);
          void worker.stop(flags.drain).then(() => store.close()).then(resolve);
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      log(`${flags.vantage}: stopped`);
    });
}
