/** `onetap census`: every remote of the official MCP Registry attested, published as verification records. */
import type { Command } from 'commander';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { CLIENT_PROFILES } from '../attest/profile.js';
import { ONETAP_VERSION } from '../util/version.js';
import { inert } from '../text/escape.js';
import { flagError, positiveInt, profileId, timeoutMs, UsageError, vantageList } from './args.js';
import { STORE_OPTION, storeUrl, workersStore } from './store.js';
import { NO_OPT_OUT, parseOptOut, type OptOut } from '../census/hosts.js';

/** The census's default client: the spec-correct one of the current protocol (the registry serves every client). */
export const CENSUS_PROFILE = 'mcp-2025-11-25';
/**
 * Names onetap and a page: the publisher's own (`--contact`, where a server's owner reads how to opt out), else
 * onetap's.
 */
export const censusUserAgent = (contact = 'https://www.npmjs.com/package/onetap') =>
  `onetap-census/${ONETAP_VERSION} (+${contact})`;

interface CensusFlags {
  registry: string;
  publisher: string;
  out: string;
  stateDir?: string;
  resume?: boolean;
  profile: string;
  matrix?: boolean;
  vantages?: string[];
  store?: string;
  deadline?: number;
  optOut?: string;
  expiresAfter: number;
  timeout?: number;
  concurrency: number;
  allowPrivate?: boolean;
  allowHttp?: boolean;
  contact?: string;
}

/** `--census` and `--census-previous` of `serve` and `site`: each given file must exist (exit 2 naming the flag). */
export function checkCensusFiles(census: string, previous: string | undefined): void {
  for (const [flag, path] of [
    ['--census', census],
    ['--census-previous', previous],
  ] as const)
    if (path !== undefined && !existsSync(path)) throw flagError(flag, 'no such file', path);
}

/** A reverse-domain name (`io.example`, `com.example.census`). */
const PUBLISHER = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

/** Hosts, one per line (`#` starts a comment): a line that is not a host is a usage error naming the flag. */
function readOptOut(path: string): OptOut {
  try {
    return parseOptOut(readFileSync(path, 'utf8'));
  } catch (err) {
    throw flagError('--opt-out', (err as Error).message, path);
  }
}

export function registerCensus(program: Command): void {
  program
    .command('census')
    .description(
      'attest every remote of the official MCP Registry as a good guest (resumable) and publish the results as ' +
        'verification records; never touches a curated catalog',
    )
    .requiredOption(
      '--registry <url|file>',
      'the registry (https://registry.modelcontextprotocol.io, or its /v0.1/servers), or a dump file of its list shape',
    )
    .requiredOption(
      '--publisher <reverse-domain>',
      'who publishes the records (io.example): the records sit under "<publisher>/verification" in each item\'s _meta',
    )
    .requiredOption(
      '--out <file>',
      'the verification records: one v0.1 list document; the evidence beside it in evidence/<digest>.json',
    )
    .option('--state-dir <dir>', "the census's state: the registry as read and what is done (default: <out>.state)")
    .option('--resume', 'go on with the census in --state-dir: what is done is not probed again')
    .option(
      '--profile <id>',
      `the deciding client profile: ${Object.keys(CLIENT_PROFILES).join(', ')}`,
      profileId,
      CENSUS_PROFILE,
    )
    .option('--matrix', 'also run every other client profile (one handshake more per profile and server)')
    .option(
      '--vantages <list>',
      'through the workers of these vantages (`onetap worker --vantage <name>`), on the queue of --store: one probe ' +
        "per host over every worker; each URL's answers made one verdict (a majority decides a drop)",
      vantageList,
    )
    .option(...STORE_OPTION)
    .option('--deadline <ms>', 'with --vantages: how long to wait for the workers (default 24 hours)', timeoutMs)
    .option(
      '--opt-out <file>',
      'hosts never contacted, one per line (host: every port of it, or host:port; # comments), however a remote spells them',
    )
    .option(
      '--contact <url>',
      "the page named in the User-Agent, where a server's owner reads about the census and how to opt out (default: onetap's npm page)",
    )
    .option('--expires-after <days>', 'days until the records expire', positiveInt, 14)
    .option('--timeout <ms>', "per-request time limit (default: the profile's own)", timeoutMs)
    .option('--concurrency <n>', 'probes in flight at once (always one per host)', positiveInt, 16)
    .option('--allow-private', 'permit loopback and private addresses (local fixtures only)')
    .option('--allow-http', 'permit http:// remotes (with --allow-private: local fixtures only)')
    .action(async (flags: CensusFlags) => {
      if (flags.contact !== undefined && !/^https?:\/\/[^\s()]+$/.test(flags.contact))
        throw flagError('--contact', 'not an http(s) URL', flags.contact);
      if (!PUBLISHER.test(flags.publisher))
        throw flagError('--publisher', 'must be a reverse-domain name (io.example)', flags.publisher);
      if (flags.vantages !== undefined) workersStore('--vantages', flags.store);
      if (flags.vantages === undefined && flags.deadline !== undefined)
        throw new UsageError('--deadline: only with --vantages');
      if (existsSync(flags.out) && statSync(flags.out).isDirectory())
        throw flagError('--out', 'is a directory', flags.out);
      if (flags.optOut !== undefined && !existsSync(flags.optOut))
        throw flagError('--opt-out', 'no such file', flags.optOut);
      const optOut = flags.optOut === undefined ? NO_OPT_OUT : readOptOut(flags.optOut);
      const stateDir = flags.stateDir ?? `${flags.out}.state`;
      if (existsSync(stateDir) && !statSync(stateDir).isDirectory())
        throw flagError('--state-dir', 'exists and is not a directory', stateDir);
      if (flags.resume && !existsSync(`${stateDir}/registry.jsonl`))
        throw flagError('--resume', `no census in ${stateDir} to go on with`, stateDir);
      if (!/^https?:\/\//i.test(flags.registry) && !existsSync(flags.registry))
        throw flagError('--registry', 'not an http(s) URL nor a file', flags.registry);
      const { runCensus, RegistryUnreadable } = await import('../census/census.js');
      let result;
      try {
        result = await runCensus({
          registry: flags.registry,
          publisher: flags.publisher,
          out: flags.out,
          stateDir,
          resume: !!flags.resume,
          profile: CLIENT_PROFILES[flags.profile]!,
          matrix: !!flags.matrix,
          optOut,
          expiresAfterDays: flags.expiresAfter,
          timeoutMs: flags.timeout,
          concurrency: flags.concurrency,
          allowPrivate: !!flags.allowPrivate,
          allowHttp: !!flags.allowHttp,
          userAgent: censusUserAgent(flags.contact),
          ...(flags.vantages
            ? { vantages: { names: flags.vantages, storeUrl: storeUrl(flags.store)!, deadlineMs: flags.deadline } }
            : {}),
        });
      } catch (err) {
        if (!(err instanceof RegistryUnreadable)) throw err;
        process.stderr.write(`onetap: the registry could not be read: ${inert((err as Error).message)}\n`);
        process.exitCode = 1;
        return;
      }
      const said =
        `${result.servers} servers, ${result.remotes} remotes: ${result.probed} probed ` +
        `(${result.probedNow} in this run), ${result.skipped} not probed by rule${
          result.serversSkipped
            ? `; ${result.serversSkipped} servers skipped (over the limits, or invalid against the registry's schema)`
            : ''
        }`;
      if (result.code === 3) {
        process.stderr.write(
          `onetap: outage guard: ${inert(result.outage!)}; nothing published (${said}; --resume goes on from the state)\n`,
        );
      } else {
        process.stdout.write(`census: ${said}; wrote ${inert(flags.out)}\n`);
      }
      process.exitCode = result.code;
    });
}
