import { InvalidArgumentError, type Command } from 'commander';
import type { Plan } from '../model/plan.js';
import type { Store } from '../store/store.js';
import { REASON_TEXT } from '../policy/policy.js';
import { majority } from '../policy/vantages.js';
import { refresh, type RefreshResult } from '../refresh/refresh.js';
import type { WaitEnded } from '../refresh/across.js';
import { planJson } from '../views/plan.js';
import {
  flagError,
  knownProfile,
  positiveInt,
  profileName,
  runIdFlag,
  timeoutMs,
  UsageError,
  vantageList,
} from './args.js';
import { VANTAGE_NAME } from '../queue/queue.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { PROBE_MANY_DEFAULTS } from '../attest/probe-many.js';
import { parseOutputList } from '../catalog/outputs.js';
import { KOTLIN_PACKAGE, OUTPUT_NAMES, type OutputName } from '../catalog/schema.js';
import { jsonInvisibleEscaped } from '../text/escape.js';

/**
 * What the CLI reads of the catalog before the refresh does (which reads and checks it again): the names for the
 * progress line and the own profiles `--profile` may name. An unreadable catalog is the refresh's error to report.
 */
interface Glance {
  labels: string[];
  policy: { profiles?: Record<string, unknown>; vantages?: unknown; quorum?: unknown };
}

function catalogGlance(path: string): Glance {
  try {
    const raw = JSON.parse(readFileSync(path, 'utf8')) as {
      servers: Array<{ name: string }>;
      policy?: Glance['policy'];
    };
    return { labels: raw.servers.map((s) => String(s.name)), policy: raw.policy ?? {} };
  } catch {
    return { labels: [], policy: {} };
  }
}
import { DEFAULT_CATALOG } from './catalog.js';
import {
  findingLines,
  mismatchText,
  paint,
  Progress,
  sameToolsText,
  table,
  tokensCell,
  useColor,
  withoutKeyText,
} from './render.js';
import { inert } from '../text/escape.js';
import { APP_SAYS } from '../model/describe.js';
import { describeHistoryProblems } from '../store/problems.js';
import { openStore, pgUrlFlag, STATE_OPTION, STORE_OPTION, storeUrl, workersStore } from './store.js';
import { matrixLine } from '../model/describe.js';
import { contextCost, costLine } from '../status/cost.js';
import { toolReviewLine } from '../model/describe.js';

/** A name as one shell word (POSIX single quotes). */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface RefreshFlags {
  catalog: string;
  state?: string;
  store?: string;
  vantages?: string[];
  quorum?: number;
  runId?: string;
  deadline?: number;
  queue?: string;
  write?: boolean;
  record?: boolean;
  json?: boolean;
  concurrency: number;
  timeout?: number;
  allowHttp?: boolean;
  confirmDrops?: number;
  out?: string;
  outputs?: OutputName[];
  nextRunDays?: number;
  kotlinPackage?: string;
  profile?: string;
  matrix?: boolean;
  perHost?: number;
}

export function registerRefresh(program: Command): void {
  program
    .command('refresh')
    .description('probe every catalog entry, decide per row, print the plan; --write applies it atomically')
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option(...STORE_OPTION)
    .option(
      '--write',
      'apply the plan: catalog, runtime lists, snapshot, log (atomically); the run is recorded in the history',
    )
    .option('--record', 'record this plan-only run in the history (<catalog dir>/history/YYYY-MM.jsonl) so it counts')
    .option('--json', 'print one JSON object {plan, summary, aborted}')
    .option('--concurrency <n>', 'probes in flight at once', positiveInt, PROBE_MANY_DEFAULTS.concurrency)
    .option(
      '--per-host <n>',
      'probes in flight per host (politeness towards shared gateways; with --vantages, over every worker of every vantage)',
      positiveInt,
      PROBE_MANY_DEFAULTS.perHost,
    )
    .option(
      '--timeout <ms>',
      "per-request time limit override (default: policy.timeoutMs, else the profile's own: 60000 for the app)",
      timeoutMs,
    )
    .option(
      '--profile <id>',
      "the deciding client profile: a built-in one or one of the catalog's policy.profiles (default: policy.clientProfile, else kai-9000)",
      profileName,
    )
    .option('--matrix', 'also run every client profile and record the matrix (informational)')
    .option('--allow-http', 'permit http:// URLs on loopback addresses (local fixtures and demos only)')
    .option(
      '--confirm-drops <n>',
      'consecutive drop-class runs needed before a drop (default: policy.confirmDrops, else 1)',
      positiveInt,
    )
    .option('--out <dir>', "directory for generated files (default: the catalog's directory)")
    .option(
      '--outputs <list>',
      `the generated files to write, comma-separated, over the catalog's outputs: ${OUTPUT_NAMES.join(', ')} (none: "")`,
      outputList,
    )
    .option(
      '--next-run-days <n>',
      'days until the next scheduled run: a --write that changes nothing writes no generated file, but refreshes ' +
        "the snapshot's dates if they would go stale before then (default 7)",
      positiveInt,
    )
    .option(
      '--vantages <list>',
      "a run across vantages: the workers' vantages, comma-separated (`onetap worker --vantage <name>` takes their " +
        'jobs; needs a PostgreSQL store; default: policy.vantages, else a run here)',
      vantageList,
    )
    .option(
      '--quorum <n>',
      'with --vantages: how many vantages must see a server dead before it is dropped (default: policy.quorum, else a majority)',
      positiveInt,
    )
    .option(
      '--run-id <id>',
      "the run's id (default: its start time): letters, digits and . _ : + - (up to 200); enqueueing the same run " +
        'again adds no job; a run id is recorded once: deciding a recorded run again prints its recorded plan and ' +
        'exit code (and applies it with --write when it was only recorded)',
      runIdFlag,
    )
    .option(
      '--deadline <ms>',
      'with --vantages: how long to wait for the workers at most: the wait ends once every job answered or failed ' +
        'for good (default: the worst case of one row)',
      timeoutMs,
    )
    .option('--queue <url>', "with --vantages: the queue's PostgreSQL URL (default: the store's)", pgUrlFlag('--queue'))
    .option(
      '--kotlin-package <name>',
      "package of the generated Kotlin file (default: the catalog's outputs.kotlin.package, else com.inspiredandroid.kai.mcp)",
    )
    .action(async (flags: RefreshFlags) => {
      process.exitCode = await runRefresh(flags, process.stdout);
    });
}

/** `--outputs`: known names only (commander prints the error naming the flag). */
function outputList(value: string): OutputName[] {
  try {
    return parseOutputList(value);
  } catch (err) {
    throw new InvalidArgumentError(`${(err as Error).message}, got "${value}"`);
  }
}

/**
 * The run's vantages and quorum: the flags, else the catalog's policy.vantages and policy.quorum, else none (a run
 * here).
 */
function acrossOf(
  flags: RefreshFlags,
  policy: Glance['policy'],
): { names: string[]; quorum: number; from: string } | null {
  const fromPolicy = flags.vantages === undefined && policy.vantages !== undefined;
  if (
    fromPolicy &&
    (!Array.isArray(policy.vantages) ||
      !policy.vantages.length ||
      !policy.vantages.every((v) => typeof v === 'string' && VANTAGE_NAME.test(v)) ||
      new Set(policy.vantages).size !== policy.vantages.length)
  ) {
    throw flagError(
      'policy.vantages',
      'expected vantage names (a-z, digits, _ and -), each once',
      JSON.stringify(policy.vantages).slice(0, 200),
    );
  }
  const names = flags.vantages ?? (policy.vantages as string[] | undefined);
  const quorumFrom = flags.quorum !== undefined ? '--quorum' : 'policy.quorum';
  const quorum = flags.quorum ?? policy.quorum;
  if (quorum !== undefined && (!Number.isSafeInteger(quorum) || (quorum as number) < 1))
    throw flagError(quorumFrom, 'not a positive whole number', String(quorum));
  if (names === undefined) {
    if (flags.quorum !== undefined) throw new UsageError('--quorum: only with --vantages (or policy.vantages)');
    return null;
  }
  if (quorum !== undefined && (quorum as number) > names.length)
    throw flagError(quorumFrom, `more than the ${names.length} vantages asked`, String(quorum));
  return {
    names,
    quorum: (quorum as number | undefined) ?? majority(names.length),
    from: fromPolicy ? 'policy.vantages' : '--vantages',
  };
}

/** Paths and names checked before the first probe (exit 2 naming the flag). */
function checkFlags(flags: RefreshFlags, across: ReturnType<typeof acrossOf>): void {
  if (across === null) {
    for (const [flag, given] of [
      ['--deadline', flags.deadline],
      ['--queue', flags.queue],
    ] as const)
      if (given !== undefined) throw new UsageError(`${flag}: only with --vantages (or policy.vantages)`);
  } else {
    workersStore(across.from, flags.store);
  }
  if (flags.kotlinPackage !== undefined && !KOTLIN_PACKAGE.test(flags.kotlinPackage))
    throw flagError('--kotlin-package', 'not a Kotlin package name', flags.kotlinPackage);
  if (flags.out !== undefined && existsSync(flags.out) && !statSync(flags.out).isDirectory())
    throw flagError('--out', 'exists and is not a directory', flags.out);
  if (!existsSync(flags.catalog)) throw flagError('--catalog', 'no such file', flags.catalog);
}

export async function runRefresh(
  flags: RefreshFlags,
  out: NodeJS.WriteStream | { write: (s: string) => unknown; isTTY?: boolean },
): Promise<number> {
  const glance = catalogGlance(flags.catalog);
  const across = acrossOf(flags, glance.policy);
  checkFlags(flags, across);
  if (flags.profile !== undefined) knownProfile(flags.profile, glance.policy);
  // A PostgreSQL store is opened (its schema checked) before the first probe; the text store opens in refresh().
  const store =
    storeUrl(flags.store) === undefined ? undefined : await openStore(flags.catalog, { store: flags.store });
  try {
    return await refreshWith(flags, out, store, glance, across);
  } finally {
    await store?.close();
  }
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function refreshWith(
  flags: RefreshFlags,
  out: Parameters<typeof runRefresh>[1],
  store: Store | undefined,
  glance: Glance,
  across: ReturnType<typeof acrossOf>,
): Promise<number> {
  const color = useColor(out as NodeJS.WriteStream);
  // A progress line on a terminal (silent with --json or off a TTY), as probe shows it.
  let progress: Progress | null = null;
  const result: RefreshResult = await refresh({
    catalogPath: flags.catalog,
    write: flags.write,
    record: flags.write || flags.record ? true : undefined,
    concurrency: flags.concurrency,
    timeoutMs: flags.timeout,
    allowHttp: flags.allowHttp,
    confirmDrops: flags.confirmDrops,
    outDir: flags.out,
    outputs: flags.outputs,
    nextRunDays: flags.nextRunDays,
    kotlinPackage: flags.kotlinPackage,
    profile: flags.profile,
    matrix: flags.matrix,
    perHost: flags.perHost,
    store,
    runId: flags.runId,
    ...(across
      ? {
          vantages: {
            names: across.names,
            quorum: across.quorum,
            queueUrl: flags.queue ?? storeUrl(flags.store)!,
            deadlineMs: flags.deadline,
            onWaiting: (until: Date, jobs: number) => {
              process.stderr.write(
                `onetap: ${jobs} jobs for vantages ${across.names.join(', ')} on the queue; deciding at ${until.toISOString()} at the latest\n`,
              );
            },
            onPollFailed: (err: Error, retryInMs: number) => {
              process.stderr.write(`onetap: a poll failed: ${inert(err.message)}; trying again in ${retryInMs} ms\n`);
            },
            onWaited: (w: WaitEnded) => {
              const stood = `${w.answered} of ${w.jobs} jobs answered, ${w.failed} failed for good`;
              process.stderr.write(
                `onetap: ${
                  w.accounted
                    ? `every job accounted for (${stood}): deciding now`
                    : `the deadline passed (${stood}, ${w.outstanding} outstanding): deciding on what arrived`
                }\n`,
              );
            },
          },
        }
      : {}),
    onRunBusy: (id) => {
      process.stderr.write(`onetap: run ${inert(id)} is being decided by another process: waiting for it to end\n`);
    },
    onProbeStart: (i) => {
      progress ??= new Progress(glance.labels, !flags.json && !!process.stderr.isTTY);
      progress.start(i);
    },
    onProbeResult: (i) => progress?.done(i),
    onPlan: (plan) => {
      progress?.clear();
      for (const w of plan.warnings) process.stderr.write(`onetap: warning: ${inert(w)}\n`);
      if (!flags.json) out.write(renderPlan(plan, flags.catalog, color, !!flags.write) + '\n');
    },
  });
  const skipped = describeHistoryProblems(result.historyProblems);
  if (skipped) process.stderr.write(`onetap: ${skipped}\n`);
  if (flags.json) {
    out.write(
      jsonInvisibleEscaped(
        JSON.stringify(
          {
            ...planJson(result.plan),
            probedAt: result.probedAt,
            written: result.written,
            quiet: result.quiet,
            datesOnly: result.datesOnly,
            ...(result.alreadyRecorded ? { alreadyRecorded: true } : {}),
          },
          null,
          2,
        ),
      ) + '\n',
    );
  } else if (result.alreadyRecorded) {
    const id = inert(flags.runId ?? result.probedAt);
    out.write(
      result.written.length
        ? `\nRun ${id} was recorded already, not applied: its recorded plan is applied now (nothing probed or ` +
            `recorded again).\nWrote:\n${result.written.map((p) => `  ${p}`).join('\n')}\n`
        : `\nRun ${id} was recorded already: this is its plan as recorded; nothing was probed, recorded or written ` +
            `again${result.exitCode === 3 ? ' (it was aborted by the outage guard: decide a new run, with another --run-id, to probe again)' : ''}.\n`,
    );
  } else if (result.exitCode === 3) {
    out.write(
      `\nABORTED by the outage guard: ${result.plan.aborted}\nNo file was written${
        flags.write || flags.record ? ' (the aborted run is recorded in the history)' : ''
      }.\n`,
    );
  } else if (result.quiet) {
    out.write(
      `\nNothing changed: ${
        result.datesOnly
          ? "only the snapshot's dates were refreshed (they would have gone " + 'stale before the next run)'
          : 'no generated file written'
      }; the run is in the history.\n${result.written.length ? `Wrote:\n${result.written.map((p) => `  ${p}`).join('\n')}\n` : ''}`,
    );
  } else if (result.written.length) {
    out.write(`\nWrote:\n${result.written.map((p) => `  ${p}`).join('\n')}\n`);
  } else {
    out.write(
      flags.record
        ? '\nRecorded in the history; nothing else written (run with --write to apply this plan).\n'
        : '\nNothing written (run with --write to apply this plan).\n',
    );
  }
  return result.exitCode;
}

function renderPlan(plan: Plan, catalogPath: string, color: boolean, written: boolean): string {
  const rows = plan.rows.map((r) => [
    r.decision,
    `${r.verdict}/${r.reason}`,
    String(r.attempts),
    r.previous ? `${r.previous.verdict}/${r.previous.reason}` : '(first)',
    inert(r.name),
    inert(r.url),
    tokensCell(r.tokens),
  ]);
  const lines = [
    `Refresh plan for ${catalogPath}: ${plan.rows.length} entries`,
    ...(plan.aborted ? ['', `OUTAGE GUARD: ${plan.aborted}`] : []),
    '',
    table(['DECISION', 'VERDICT/REASON', 'TRIES', 'PREVIOUS', 'NAME', 'URL', 'TOKENS'], rows, (text, row, col) =>
      col === 0 ? paint(text, plan.rows[row]!.decision, color) : text,
    ),
  ];
  const section = (title: string, items: string[]) => {
    if (items.length) lines.push('', `${title}:`, ...items.map((i) => `  - ${i}`));
  };
  section(
    written ? 'Dropped' : 'Would drop (plan only: still in the catalog)',
    plan.rows
      .filter((r) => r.decision === 'drop')
      .map((r) => `${inert(r.name)}: ${r.reason}, ${REASON_TEXT[r.reason]}${r.error ? ` (${inert(r.error)})` : ''}`),
  );
  section(
    'Probe failed (kept)',
    plan.rows
      .filter((r) => r.decision === 'keep-failed')
      .map(
        (r) =>
          `${inert(r.name)}: ${r.verdict}/${r.reason}${r.note ? `; ${inert(r.note)}` : ''}${r.error ? ` (${inert(r.error)})` : ''}`,
      ),
  );
  section(
    'Review',
    plan.rows
      .filter((r) => r.decision === 'review')
      .map(
        (r) =>
          `${inert(r.name)}: ${r.reason}, ${REASON_TEXT[r.reason]}${
            r.location ? ` → ${inert(r.location)}` : ''
          }${r.appError ? `; ${APP_SAYS}: ${inert(r.appError)}` : r.error ? ` (${inert(r.error)})` : ''}`,
      ),
  );
  section(
    'Tools',
    plan.rows.flatMap((r) => {
      const line = toolReviewLine(r, written);
      if (line === null) return [];
      const accept =
        r.decision === 'review' && r.toolsHash
          ? ` — after review: onetap accept ${shellQuote(r.name)} --decision "who: why" --snapshot ${r.toolsHash}`
          : '';
      return [`${inert(r.name)}: ${line}${accept}`, ...findingLines(r.findings)];
    }),
  );
  section(
    'Card vs runtime (advisory)',
    plan.rows
      .filter((r) => r.cardMismatches?.length)
      .map((r) => `${inert(r.name)}: ${mismatchText(r.cardMismatches!)}`),
  );
  section(
    'Probe-only keys',
    plan.rows.flatMap((r) => {
      const keys = r.probe?.keys;
      if (!keys) return [];
      if (keys.missing.length || keys.refused?.length)
        return [
          `${inert(r.name)}: probed without its key (${withoutKeyText(keys)}): the tool list is what a user without a key sees`,
        ];
      return keys.listed
        ? []
        : [
            `${inert(r.name)}: the keyed session listed no tools${keys.error ? ` (${inert(keys.error)})` : ''}: the tool list is the keyless one`,
          ];
    }),
  );
  section(
    'Same tool set as another entry',
    plan.rows.filter((r) => r.sameToolsAs?.length).map((r) => `${inert(r.name)}: ${sameToolsText(r.sameToolsAs!)}`),
  );
  section(
    'Client matrix',
    plan.rows.filter((r) => r.matrix).map((r) => `${inert(r.name)}: ${matrixLine(r.matrix!)}`),
  );
  section(
    'Recovered on the retry (a flake, not a failure)',
    plan.rows.filter((r) => r.attempts > 1 && r.verdict === 'live').map((r) => inert(r.name)),
  );
  section(
    'Changed since the last run',
    plan.rows
      .filter((r) => r.changed)
      .map(
        (r) =>
          `${inert(r.name)}: ${r.previous ? `${r.previous.verdict}/${r.previous.reason}` : 'first probe'} → ${r.verdict}/${r.reason}`,
      ),
  );
  const s = plan.summary;
  const cost = costLine(contextCost(plan.rows), inert);
  if (cost) lines.push('', `Context cost: ${cost}.`);
  lines.push(
    '',
    `Summary: ${s.keep} kept, ${s.keepFailed} probe failed (kept), ${s.review} review, ${s.drop} dropped; ${s.changed} changed.`,
  );
  return lines.join('\n');
}
