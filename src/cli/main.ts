/** The CLI: wires arguments to library calls. Exit codes: 0 ok, 1 a finding or an error, 2 usage. */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { registerProbe } from './probe.js';
import { registerCatalogCommands } from './catalog.js';
import { registerRefresh } from './refresh.js';
import { registerDiscovery } from './discovery.js';
import { registerReport } from './report.js';
import { registerAccept } from './accept.js';
import { registerSite } from './site.js';
import { registerMcp } from './mcp.js';
import { runDemo } from '../demo/demo.js';
import { UsageError } from './args.js';
import { CatalogError } from '../catalog/model.js';
import { LockBusyError } from '../util/atomic.js';

export async function main(argv: string[]): Promise<number> {
  const program = new Command('onetap')
    .description('keeps a curated list of one-tap remote MCP servers honest')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });
  registerProbe(program);
  registerCatalogCommands(program);
  registerRefresh(program);
  registerDiscovery(program);
  registerReport(program);
  registerAccept(program);
  registerSite(program);
  registerMcp(program);
  program
    .command('demo')
    .description('refresh the shipped catalog against a loopback fleet that plays it, in a temporary workspace (offline)')
    .action(async () => { process.exitCode = await runDemo(); });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      return 2;
    }
    if (err instanceof CatalogError || err instanceof LockBusyError) {
      process.stderr.write(`onetap: ${err.message}\n`);
      return 1;
    }
    if (err instanceof UsageError || err instanceof InvalidArgumentError) {
      process.stderr.write(`onetap: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`onetap: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
