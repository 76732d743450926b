import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { DEFAULT_PROFILE_ID } from '../attest/profile.js';
import { loadCatalog } from '../catalog/model.js';
import { rejudge, type Rejudged } from '../decide/rejudge.js';
import { describeHistoryProblems } from '../store/problems.js';
import { inert } from '../text/escape.js';
import { knownProfile, positiveInt, profileName, UsageError } from './args.js';
import { DEFAULT_CATALOG } from './catalog.js';
import { paint, printJson, table, useColor } from './render.js';
import { openStore, STATE_OPTION, STORE_OPTION } from './store.js';

interface RejudgeFlags {
  catalog: string;
  runs?: number;
  since?: string;
  profile?: string;
  json?: boolean;
  store?: string;
}

/** `--since <date>`: a UTC day (YYYY-MM-DD) or an ISO time. */
function sinceFlag(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z)?$/.test(value) || !Number.isFinite(Date.parse(value))) {
    throw new InvalidArgumentError(`expected a UTC day (YYYY-MM-DD) or an ISO time, got "${value}"`);
  }
  return value;
}

export function registerRejudge(program: Command): void {
  program
    .command('rejudge')
    .description(
      "judge recorded evidence again by today's policy table, deciding profile and catalog settings; no network, no file written",
    )
    .option('--catalog <file>', 'catalog file', DEFAULT_CATALOG)
    .option(...STATE_OPTION)
    .option(...STORE_OPTION)
    .option('--runs <n>', 'the last n recorded runs (default: the last one)', positiveInt)
    .option('--since <date>', 'the runs started on or after a UTC day (YYYY-MM-DD) or an ISO time', sinceFlag)
    .option(
      '--profile <id>',
      'judge as this deciding profile (default: policy.clientProfile, else kai-9000); rows without its run say no evidence',
      profileName,
    )
    .option('--json', 'print one JSON object {runs, differences, noEvidence}')
    .action(async (flags: RejudgeFlags) => {
      if (flags.runs !== undefined && flags.since !== undefined)
        throw new UsageError('--runs, --since: give one of them');
      const { catalog } = await loadCatalog(flags.catalog);
      if (flags.profile !== undefined) knownProfile(flags.profile, catalog.policy);
      const store = await openStore(flags.catalog, { store: flags.store });
      try {
        const runs = await store.runs(flags.since !== undefined ? { since: flags.since } : { last: flags.runs ?? 1 });
        const skipped = describeHistoryProblems(await store.problems());
        if (skipped) process.stderr.write(`onetap: ${skipped}\n`);
        const byUrl = new Map(catalog.servers.map((s) => [s.url, s]));
        const profile = flags.profile ?? catalog.policy.clientProfile ?? DEFAULT_PROFILE_ID;
        const result = rejudge(runs, {
          profile,
          requiresAuth: (url) => byUrl.get(url)?.requiresAuth ?? null,
          maxToolTokens: catalog.policy.maxToolTokens,
        });
        if (flags.json) printJson({ profile, ...result });
        else process.stdout.write(renderRejudged(result, profile, useColor(process.stdout)) + '\n');
        process.exitCode = result.differences > 0 ? 1 : 0;
      } finally {
        await store.close();
      }
    });
}

function renderRejudged(r: Rejudged, profile: string, color: boolean): string {
  if (r.runs.length === 0) return 'No recorded run to judge again (refresh with --write or --record records one).';
  const lines: string[] = [];
  for (const run of r.runs) {
    lines.push(
      `Run ${inert(run.id)}${run.id === run.startedAt ? '' : ` (started ${run.startedAt})`}${run.aborted ? ', aborted by the outage guard' : ''}:`,
      '',
    );
    const rows = run.rows.map((x) => [
      x.differs ? 'DIFFERS' : '',
      `${x.recorded.verdict}/${x.recorded.reason}`,
      x.today ? `${x.today.verdict}/${x.today.reason}` : 'no evidence',
      inert(x.name),
      inert(x.url),
    ]);
    lines.push(
      table(['', 'RECORDED', 'TODAY', 'NAME', 'URL'], rows, (text, row, col) =>
        col === 2 && run.rows[row]!.today ? paint(text, run.rows[row]!.today!.verdict, color) : text,
      ),
      '',
    );
  }
  const rows = r.runs.reduce((n, run) => n + run.rows.length, 0);
  lines.push(
    `Summary: ${r.runs.length} run${
      r.runs.length === 1 ? '' : 's'
    }, ${rows} rows judged as ${profile}: ${r.differences} differ, ${r.noEvidence} without evidence (recorded \
before 0.2.0, bounded away, or without a run of ${profile}).`,
  );
  return lines.join('\n');
}
