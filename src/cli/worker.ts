/** `onetap worker --vantage <name>`: take probe jobs of that vantage, record the observations in the store. */
import { InvalidArgumentError, type Command } from 'commander';
import { positiveInt, timeoutMs, UsageError, vantageName } from './args.js';
import { pgUrlFlag, storeUrl, STORE_ENV } from './store.js';
import { ENV_NAME } from '../queue/queue.js';
import { VANTAGE_KEY_ENV, vantageKeyProblem } from '../store/signatures.js';
import { redactStoreUrl } from '../store/url.js';
import { inert } from '../text/escape.js';

interface WorkerFlags {
  vantage: string;
  concurrency: number;
  store?: string;
  queue?: string;
  drain: number;
  keyEnv?: string[];
  allowHttp?: boolean;
}

/** The environment variable that lists the probe keys' variables when `--key-env` does not. */
export const KEY_ENV_ENV = 'ONETAP_WORKER_KEY_ENV';

/**
 * `--key-env A,B`: the only variables a job may make this worker read a probe key from. Never one of onetap's own
 * (`ONETAP_*`: the store's URL, the vantage's key), whatever the operator lists.
 */
function keyEnvProblem(value: string): { names: string[] } | string {
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const bad = names.find((n) => !ENV_NAME.test(n));
  if (bad !== undefined)
    return `a list of environment variable names (A-Z, a-z, digits, _), got "${bad.slice(0, 130)}"`;
  const own = names.find((n) => n.toUpperCase().startsWith('ONETAP_'));
  if (own !== undefined) return `${own} is onetap's own, never a probe key`;
  return { names };
}

function keyEnvFlag(value: string): string[] {
  const r = keyEnvProblem(value);
  if (typeof r === 'string') throw new InvalidArgumentError(r);
  return r.names;
}

/** A URL given on the command line shows in `ps` to every user of the machine: a password in it is worth a warning. */
const hasPassword = (url: string) => redactStoreUrl(url) !== url;

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'take the probe jobs of one vantage from the queue and record each observation in the store, until SIGTERM or SIGINT',
    )
    .requiredOption(
      '--vantage <name>',
      "this worker's vantage (a-z, digits, _, -): it takes that vantage's jobs",
      vantageName,
    )
    .option('--concurrency <n>', 'jobs in flight at once', positiveInt, 8)
    .option(
      '--store <url>',
      `PostgreSQL store the observations are recorded to (default $${STORE_ENV}; one of them is needed; a password ` +
        `is better in $${STORE_ENV}: a flag shows in ps)`,
      pgUrlFlag('--store'),
    )
    .option('--queue <url>', "the queue's PostgreSQL URL (default: the store's)", pgUrlFlag('--queue'))
    .option(
      '--drain <ms>',
      'on SIGTERM: how long jobs in flight may finish before the rest go back to the queue',
      timeoutMs,
      30_000,
    )
    .option(
      '--key-env <names>',
      `the environment variables probe-only keys may be read from, comma-separated (default $${KEY_ENV_ENV}; neither: none): a job naming any other is refused`,
      keyEnvFlag,
    )
    .option(
      '--allow-http',
      'probe http:// URLs, and https:// ones, on loopback addresses when the run asks for it (local fixtures only): no job opens it alone',
    )
    .action(async (flags: WorkerFlags) => {
      const url = storeUrl(flags.store);
      if (url === undefined) throw new UsageError(`--store: a PostgreSQL URL is needed (or set ${STORE_ENV})`);
      let keyEnv = flags.keyEnv;
      if (keyEnv === undefined && process.env[KEY_ENV_ENV]) {
        const r = keyEnvProblem(process.env[KEY_ENV_ENV]!);
        if (typeof r === 'string') throw new UsageError(`${KEY_ENV_ENV}: ${r}`);
        keyEnv = r.names;
      }
      const signingKey = process.env[VANTAGE_KEY_ENV] || null;
      const keyProblem = signingKey === null ? null : vantageKeyProblem(signingKey);
      if (keyProblem) throw new UsageError(`${VANTAGE_KEY_ENV}: ${keyProblem} (its value is not shown)`);
      const log = (line: string) => void process.stderr.write(`onetap worker ${inert(line)}\n`);
      for (const [flag, value] of [
        ['--store', flags.store],
        ['--queue', flags.queue],
      ] as const) {
        if (value !== undefined && hasPassword(value))
          log(
            `warning: ${flag} carries a password, which every user of this machine sees in ps: set ${STORE_ENV} instead`,
          );
      }
      const [{ openPgStore }, { startWorker }] = await Promise.all([
        import('../store/pg-store.js'),
        import('../worker/worker.js'),
      ]);
      const store = await openPgStore(url);
      const permits = { keyEnv: new Set(keyEnv ?? []), allowHttp: !!flags.allowHttp };
      const worker = await startWorker({
        vantage: flags.vantage,
        store,
        queueUrl: flags.queue ?? url,
        concurrency: flags.concurrency,
        permits,
        signingKey,
        log,
      });
      log(
        `${flags.vantage}: taking jobs from ${redactStoreUrl(
          flags.queue ?? url,
        )} (concurrency ${flags.concurrency}; probe keys from ${permits.keyEnv.size ? [...permits.keyEnv].join(', ') : 'no variable'}` +
          `${permits.allowHttp ? '; http on loopback' : ''}; observations ${signingKey ? 'signed' : 'unsigned'})`,
      );
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          log(`${flags.vantage}: ${signal}: taking no more jobs; those in flight have ${flags.drain} ms`);
          void worker
            .stop(flags.drain)
            .then(() => store.close())
            .then(resolve);
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      log(`${flags.vantage}: stopped`);
    });
}
