import type { Command } from 'commander';
import { addServer, AddRefused, restoreServer } from '../curate/add.js';
import { formatProblems, lintCatalog, type LintProblem } from '../catalog/lint.js';
import { CatalogError, loadCatalog, type Catalog, type ProbeHeader } from '../catalog/model.js';
import type { ProbeResult } from '../attest/probe.js';
import { probeHeaderFlag, timeoutMs } from './args.js';
import { printJson } from './render.js';
import { inert } from '../text/escape.js';
import type { SameTools } from '../model/plan.js';
import { SAME_TOOLS_WORDS, type ToolSetPrint } from '../policy/same-tools.js';
import { toolSetPrints } from '../store/tool-sets.js';
import { openStore, STORE_OPTION } from './store.js';

export const DEFAULT_CATALOG = 'catalog/servers.json';

/** `lint --json`: the findings as data. */
export interface LintJson {
  catalog: string;
  /** Entry counts, or null when the file's structure is broken (the problems say where). */
  servers: number | null;
  removed: number | null;
  problems: LintProblem[];
}

/** `add --json`: what happened, as data. */
export interface AddJson {
  added: boolean;
  url: string;
  /** The entry as written (null when refused). */
  entry: Catalog['servers'][number] | null;
  /** Why it was refused: lint rules, the decision format, or the probe's verdict. Empty when added. */
  problems: string[];
  /** The live probe, or null when a rule refused the entry before probing. */
  probe: ProbeSummary | null;
  /** Entries (curated or removed) whose last tool list is the same set, and which digest matched. */
  sameToolsAs: SameTools[];
}

export interface ProbeSummary {
  verdict: string;
  reason: string;
  attempts: number;
  httpStatus: number | null;
  tools: string[] | null;
  durationMs: number;
  error: string | null;
  tokens: number | null;
}

const probeSummary = (r: ProbeResult): ProbeSummary => ({
  verdict: r.verdict,
  reason: r.reason,
  attempts: r.attempts,
  httpStatus: r.httpStatus,
  tools: r.tools,
  durationMs: r.durationMs,
  error: r.error,
  tokens: r.tokens ?? null,
});

/** What the list's curated and removed entries last served, from its history (the text history, or `--store`). */
export async function knownToolSets(catalogPath: string, store: string | undefined): Promise<ToolSetPrint[]> {
  let catalog: Catalog;
  try {
    ({ catalog } = await loadCatalog(catalogPath));
  } catch {
    return [];
  } // add reports an unreadable catalog itself
  const opened = await openStore(catalogPath, { store });
  try {
    return await toolSetPrints(opened, [...catalog.servers, ...catalog.removed]);
  } finally {
    await opened.close();
  }
}

/** The matches `add` reports without refusing (the description-blind digest alone), one line each. */
const sameToolsNotes = (label: string, same: readonly SameTools[]) =>
  same
    .filter((s) => s.digest === 'description-blind')
    .map(
      (s) =>
        `onetap: note: ${inert(label)} serves ${SAME_TOOLS_WORDS[s.digest]} as ${inert(s.name)} (${inert(s.url)}): reported, not refused\n`,
    )
    .join('');

/** Lint findings, including a catalog whose structure is wrong (those are findings too, not a crash). */
async function lintFile(path: string, allowHttp: boolean | undefined): Promise<LintJson> {
  try {
    const { catalog } = await loadCatalog(path);
    return {
      catalog: path,
      servers: catalog.servers.length,
      removed: catalog.removed.length,
      problems: lintCatalog(catalog, { allowHttp }),
    };
  } catch (err) {
    if (err instanceof CatalogError && err.problems.length)
      return { catalog: path, servers: null, removed: null, problems: err.problems };
    throw err; // unreadable or not JSON: an error (stderr, exit 1), not a finding
  }
}

export function registerCatalogCommands(program: Command): void {
  program
    .command('lint')
    .description('check the catalog against the curation rules; exit 1 when any problem is found')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option('--allow-http', 'permit http:// URLs on loopback addresses (local fixtures and demos only)')
    .option('--json', 'print one JSON object {catalog, servers, removed, problems: [{where, message}]}')
    .action(async (opts: { catalog: string; allowHttp?: boolean; json?: boolean }) => {
      const result = await lintFile(opts.catalog, opts.allowHttp);
      process.exitCode = result.problems.length ? 1 : 0;
      if (opts.json) return printJson(result);
      if (result.problems.length) {
        process.stdout.write(formatProblems(opts.catalog, result.problems) + '\n');
        process.stderr.write(`onetap: ${result.problems.length} problem(s) in ${inert(opts.catalog)}\n`);
      } else {
        process.stdout.write(
          `${inert(opts.catalog)}: ${result.servers} servers, ${result.removed} removed, no problems\n`,
        );
      }
    });

  const add = program
    .command('add')
    .description('add a server: refuses duplicates, removed hosts and lint failures, and probes it live first')
    .argument('<url>', 'the Streamable HTTP endpoint (https)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--description <text>', 'what the server does for a user')
    .requiredOption('--decision <who: why>', 'the product decision record, as "who: why"');
  entryOptions(add)
    .option('--json', 'print one JSON object {added, url, entry, problems, probe}')
    .action(async (url: string, opts: EntryFlags & { name: string; description: string }) => {
      let result: AddJson;
      try {
        const { entry, probe, sameToolsAs } = await addServer({
          catalogPath: opts.catalog,
          url,
          name: opts.name,
          description: opts.description,
          decision: opts.decision,
          requiresAuth: opts.requiresAuth,
          probeHeaders: opts.probeHeader,
          allowHttp: opts.allowHttp,
          probe: { timeoutMs: opts.timeout },
          known: await knownToolSets(opts.catalog, opts.store),
          allowSameTools: opts.allowSameTools,
        });
        result = { added: true, url, entry, problems: [], probe: probeSummary(probe), sameToolsAs };
      } catch (err) {
        if (!(err instanceof AddRefused)) throw err;
        result = {
          added: false,
          url,
          entry: null,
          problems: err.problems,
          probe: err.probeResult ? probeSummary(err.probeResult) : null,
          sameToolsAs: err.sameToolsAs,
        };
      }
      process.exitCode = result.added ? 0 : 1;
      if (opts.json) return printJson(result);
      process.stderr.write(sameToolsNotes(opts.name, result.sameToolsAs));
      if (result.added) {
        process.stdout.write(
          `added ${inert(result.entry!.name)} (${inert(result.entry!.url)}): ` +
            `${result.probe!.verdict}/${result.probe!.reason}, ${
              result.probe!.tools?.length ?? 0
            } tools${result.probe!.tokens === null ? '' : `, ${result.probe!.tokens.toLocaleString('en')} tokens`}\n`,
        );
      } else {
        process.stderr.write(result.problems.map((p) => `onetap: refused ${inert(url)}: ${inert(p)}\n`).join(''));
      }
    });

  const restore = program
    .command('restore')
    .description(
      'put a removed entry back (a server that recovered): probes it live first, as add does; refuses entries marked permanent',
    )
    .argument('<name>', "the removed entry's name")
    .requiredOption('--decision <who: why>', 'the product decision record, as "who: why"')
    .option('--description <text>', 'what the server does for a user (default: the description it had)');
  entryOptions(restore)
    .option('--json', 'print one JSON object {restored, name, entry, problems, probe}')
    .action(async (name: string, opts: EntryFlags & { description?: string }) => {
      let result: {
        restored: boolean;
        name: string;
        entry: unknown;
        problems: string[];
        probe: unknown;
        sameToolsAs: SameTools[];
      };
      try {
        const { entry, probe, sameToolsAs } = await restoreServer({
          catalogPath: opts.catalog,
          name,
          description: opts.description,
          decision: opts.decision,
          requiresAuth: opts.requiresAuth,
          probeHeaders: opts.probeHeader,
          allowHttp: opts.allowHttp,
          probe: { timeoutMs: opts.timeout },
          known: await knownToolSets(opts.catalog, opts.store),
          allowSameTools: opts.allowSameTools,
        });
        result = { restored: true, name, entry, problems: [], probe: probeSummary(probe), sameToolsAs };
        process.exitCode = 0;
        if (!opts.json)
          process.stdout.write(
            `restored ${inert(entry.name)} (${inert(entry.url)}): ${probe.verdict}/${probe.reason}, ${probe.toolCount ?? 0} tools\n`,
          );
      } catch (err) {
        if (!(err instanceof AddRefused)) throw err;
        result = {
          restored: false,
          name,
          entry: null,
          problems: err.problems,
          probe: err.probeResult ? probeSummary(err.probeResult) : null,
          sameToolsAs: err.sameToolsAs,
        };
        process.exitCode = 1;
        if (!opts.json)
          process.stderr.write(result.problems.map((p) => `onetap: refused ${inert(name)}: ${inert(p)}\n`).join(''));
      }
      if (opts.json) printJson(result);
    });
}

interface EntryFlags {
  decision: string;
  requiresAuth?: boolean;
  probeHeader?: Record<string, ProbeHeader>;
  catalog: string;
  timeout?: number;
  allowHttp?: boolean;
  json?: boolean;
  store?: string;
  allowSameTools?: boolean;
}

/** What `add` and `restore` both take: how the entry is probed before it goes in, and what it must not copy. */
function entryOptions(cmd: Command): Command {
  return cmd
    .option(
      '--allow-same-tools',
      'add it even when it serves the same tool set as a curated or removed entry (by the exact or the name-blind digest); its decision record says so',
    )
    .option(...STORE_OPTION)
    .option('--requires-auth', 'auth-optional entry (the host must be in policy.authOptionalHosts)')
    .option(
      '--probe-header <line>',
      "with --requires-auth: a probe-only key, 'Name: prefix${VARIABLE}', its value read from the environment " +
        "variable and never written (repeatable; the entry keeps the variable's name)",
      probeHeaderFlag,
    )
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(
      '--timeout <ms>',
      "per-request time limit override (default: policy.timeoutMs, else the profile's own)",
      timeoutMs,
    )
    .option('--allow-http', 'permit http:// URLs on loopback addresses (local fixtures and demos only)');
}
