import { realpathSync } from 'node:fs';
import type { Command } from 'commander';
import { MCP_LIMITS } from '../mcp/limits.js';
import type { RunningMcp } from '../mcp/server.js';
import { portNumber, positiveInt, UsageError } from './args.js';
import { STORE_OPTION, storeUrl } from './store.js';

interface McpFlags {
  http?: boolean;
  port?: number;
  host?: string;
  allowPrivate?: boolean;
  maxUrls: number;
  callTimeout: number;
  heartbeat: number;
  store?: string;
}

export const DEFAULT_MCP_PORT = 8788;

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description(
      'run onetap as an MCP server (read-only tools: probe, lint, plan_refresh, discover, explain); stdio unless --http',
    )
    .option('--http', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio')
    .option('--port <n>', `HTTP port, 0 picks a free one (default ${DEFAULT_MCP_PORT}; with --http)`, portNumber)
    .option('--host <address>', 'HTTP address to listen on (default 127.0.0.1; with --http)')
    .option('--allow-private', 'permit loopback, private and link-local targets and http:// (local testing only)')
    .option('--max-urls <n>', 'URLs per probe call', positiveInt, MCP_LIMITS.maxUrls)
    .option(
      '--call-timeout <ms>',
      'time limit of one tool call; what finished is returned',
      positiveInt,
      MCP_LIMITS.callTimeMs,
    )
    .option('--heartbeat <ms>', 'progress notification interval while a call runs', positiveInt, MCP_LIMITS.heartbeatMs)
    .option(...STORE_OPTION)
    .action(async (flags: McpFlags) => {
      if (!flags.http && (flags.port !== undefined || flags.host !== undefined))
        throw new UsageError(`${flags.port !== undefined ? '--port' : '--host'}: needs --http`);
      const store = storeUrl(flags.store);
      const opts = {
        root: realpathSync(process.cwd()),
        ...(store === undefined ? {} : { store }),
        allowPrivate: flags.allowPrivate === true,
        limits: { maxUrls: flags.maxUrls, callTimeMs: flags.callTimeout, heartbeatMs: flags.heartbeat },
      };
      // The MCP SDK is loaded only for this command: every other command starts without it.
      const { serveHttp, serveStdio } = await import('../mcp/server.js');
      let running: RunningMcp;
      if (flags.http) {
        running = await serveHttp({ ...opts, host: flags.host ?? '127.0.0.1', port: flags.port ?? DEFAULT_MCP_PORT });
        process.stderr.write(
          `onetap mcp: listening on ${running.url} (Streamable HTTP${opts.allowPrivate ? ', private targets allowed' : ''}); Ctrl-C stops\n`,
        );
      } else {
        running = await serveStdio(opts);
        process.stderr.write(
          `onetap mcp: serving over stdio${opts.allowPrivate ? ' (private targets allowed)' : ''}\n`,
        );
      }
      const stop = () => {
        void running.close();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await running.closed;
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      // Probes still in flight end on their own time limits; a stopped server does not wait for them.
      setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
    });
}
