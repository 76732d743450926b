import type { Command } from 'commander';
import { acceptTools, NothingToAccept } from '../curate/accept.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { openStore, STATE_OPTION, STORE_OPTION } from './store.js';
import { inert } from '../text/escape.js';
import { flagError } from './args.js';

export function registerAccept(program: Command): void {
  program
    .command('accept')
    .description("accept a server's latest recorded tool list (or --snapshot <hash>) in tools.lock.json; never probes")
    .argument('<server>', "the server's name or URL")
    .requiredOption('--decision <who: why>', 'who accepts and why')
    .option('--snapshot <hash>', 'the snapshot that was reviewed (16 hex digits; the plan and PR body print it)')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option(...STORE_OPTION)
    .action(async (server: string, opts: { decision: string; snapshot?: string; catalog: string; store?: string }) => {
      if (opts.snapshot !== undefined && !/^[0-9a-f]{16}$/.test(opts.snapshot))
        throw flagError('--snapshot', 'expected 16 hex digits', opts.snapshot);
      if (!/^[^:]+:.+$/.test(opts.decision.trim()))
        throw flagError('--decision', 'must read "who: why"', opts.decision);
      // The history as git has it (a fresh clone builds its index in memory).
      const store = await openStore(opts.catalog, { store: opts.store });
      try {
        const { url, entry, previous } = await acceptTools({
          catalogPath: opts.catalog,
          store,
          server,
          decision: opts.decision,
          snapshot: opts.snapshot,
        });
        process.stdout.write(
          `accepted ${inert(entry.name)} (${inert(url)}): tools ${entry.hash}${
            previous ? ` (was ${previous.hash})` : ''
          } by ${inert(entry.by)}: ${inert(entry.why)}\n`,
        );
        process.exitCode = 0;
      } catch (err) {
        if (!(err instanceof NothingToAccept)) throw err;
        process.stderr.write(`onetap: ${err.message}\n`);
        process.exitCode = 1;
      } finally {
        await store.close();
      }
    });
}
