import type { Command } from 'commander';
import { addServer, AddRefused } from '../catalog/add.js';
import { formatProblems, lintCatalog } from '../catalog/lint.js';
import { loadCatalog } from '../catalog/model.js';
import { timeoutMs } from './args.js';
import { inert } from './render.js';

export const DEFAULT_CATALOG = 'catalog/servers.json';

export function registerCatalogCommands(program: Command): void {
  program
    .command('lint')
    .description('check the catalog against the curation rules; exit 1 when any problem is found')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--allow-http', 'permit http:// URLs on loopback addresses (local fixtures and demos only)')
    .action(async (opts: { catalog: string; allowHttp?: boolean }) => {
      const { catalog } = await loadCatalog(opts.catalog);
      const problems = lintCatalog(catalog, { allowHttp: opts.allowHttp });
      if (problems.length) {
        process.stdout.write(formatProblems(opts.catalog, problems).split('\n').map(inert).join('\n') + '\n');
        process.stderr.write(`${problems.length} problem(s)\n`);
        process.exitCode = 1;
      } else {
        process.stdout.write(`${opts.catalog}: ${catalog.servers.length} servers, ${catalog.removed.length} removed, no problems\n`);
      }
    });

  program
    .command('add')
    .description('add a server: refuses duplicates, removed hosts and lint failures, and probes it live first')
    .argument('<url>', 'the Streamable HTTP endpoint (https)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--description <text>', 'what the server does for a user')
    .requiredOption('--decision <who: why>', 'the product decision record, as "who: why"')
    .option('--requires-auth', 'auth-optional entry (the host must be in policy.authOptionalHosts)')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--timeout <ms>', 'per-request time limit override (default: policy.timeoutMs, else the profile\'s own)', timeoutMs)
    .option('--allow-http', 'permit http:// URLs on loopback addresses (local fixtures and demos only)')
    .action(async (url: string, opts: { name: string; description: string; decision: string; requiresAuth?: boolean; catalog: string; timeout?: number; allowHttp?: boolean }) => {
      try {
        const { entry, probe } = await addServer({
          catalogPath: opts.catalog, url, name: opts.name, description: opts.description, decision: opts.decision,
          requiresAuth: opts.requiresAuth, allowHttp: opts.allowHttp, probe: { timeoutMs: opts.timeout },
        });
        process.stdout.write(`added ${inert(entry.name)} (${inert(entry.url)}): ${probe.verdict}/${probe.reason}, ${probe.tools?.length ?? 0} tools\n`);
      } catch (err) {
        if (!(err instanceof AddRefused)) throw err;
        process.stderr.write(`refused ${inert(url)}:\n${err.problems.map((p) => `  - ${inert(p)}`).join('\n')}\n`);
        process.exitCode = 1;
      }
    });
}
