import type { Command } from 'commander';
import { PROBE_MANY_DEFAULTS, probeMany } from '../attest/probe-many.js';
import { jsonInvisibleEscaped } from '../text/escape.js';
import type { ProbeResult } from '../attest/probe.js';
import { probeJson } from '../views/probe.js';
import { CLIENT_PROFILES, DEFAULT_PROFILE_ID } from '../attest/profile.js';
import {
  findingLines,
  mismatchText,
  OrderedJsonArray,
  paint,
  Progress,
  table,
  tokensCell,
  useColor,
  withoutKeyText,
} from './render.js';
import { inert } from '../text/escape.js';
import { matrixLine } from '../model/describe.js';
import { majority } from '../policy/vantages.js';
import { APP_WOULD_SAY, describe } from '../model/describe.js';
import {
  flagError,
  parseHeader,
  positiveInt,
  probeHeaderFlag,
  profileId,
  runIdFlag,
  timeoutMs,
  UsageError,
  vantageList,
} from './args.js';
import { pgUrlFlag, STORE_OPTION, storeUrl, workersStore } from './store.js';
import { isLoopbackUrl } from '../catalog/url.js';
import { keysFrom } from '../attest/keys.js';
import type { ProbeHeader } from '../catalog/model.js';

export function registerProbe(program: Command): void {
  program
    .command('probe')
    .description("attest remote MCP servers with the app's handshake and print a verdict per URL")
    .argument('<url...>', 'MCP endpoint URLs (http:// is accepted: probe is a diagnostic)')
    .option('--json', 'print one JSON array, one object per URL in input order')
    .option('--requires-auth', 'treat every URL as auth-optional (initialize without a key is enough)')
    .option(
      '--profile <id>',
      `the deciding client profile: ${Object.keys(CLIENT_PROFILES).join(', ')}`,
      profileId,
      DEFAULT_PROFILE_ID,
    )
    .option('--matrix', 'also run every other profile; --json adds matrix: {profile: {works, verdict, reason, tools}}')
    .option(
      '--timeout <ms>',
      "per-request time limit override (default: the profile's own, 60000 for the app)",
      timeoutMs,
    )
    .option('--header <line>', 'extra request header "Name: value" (repeatable)', parseHeader)
    .option(
      '--probe-header <line>',
      "with --requires-auth: a key, 'Name: prefix${VARIABLE}', read from the environment variable: the keyless " +
        'handshake decides, a second session with the key lists the tools; redacted from everything printed (repeatable)',
      probeHeaderFlag,
    )
    .option('--concurrency <n>', 'probes in flight at once', positiveInt, PROBE_MANY_DEFAULTS.concurrency)
    .option(
      '--per-host <n>',
      'probes in flight per host (politeness towards shared gateways)',
      positiveInt,
      PROBE_MANY_DEFAULTS.perHost,
    )
    .option(
      '--user-agent <ua>',
      'User-Agent override for the deciding profile (diagnostic; the app sends "Ktor client")',
    )
    .option(
      '--vantages <list>',
      'probe from the workers of these vantages instead of here (comma-separated; `onetap worker --vantage <name>` ' +
        'takes the jobs; needs a PostgreSQL store); the verdict combines them as a refresh does',
      vantageList,
    )
    .option(
      '--quorum <n>',
      'with --vantages: how many must see a URL dead for a drop verdict (default: a majority)',
      positiveInt,
    )
    .option(
      '--deadline <ms>',
      'with --vantages: how long to wait for the workers (default: the worst case of one URL)',
      timeoutMs,
    )
    .option('--run-id <id>', "with --vantages: the jobs' run id (default: probe- and the start time)", runIdFlag)
    .option(...STORE_OPTION)
    .option('--queue <url>', "with --vantages: the queue's PostgreSQL URL (default: the store's)", pgUrlFlag('--queue'))
    .action(async (urls: string[], opts: ProbeFlags) => {
      for (const url of urls) checkUrl(url);
      if (opts.probeHeader && !opts.requiresAuth)
        throw new UsageError(
          '--probe-header: needs --requires-auth (a key for probing is only for an auth-optional server)',
        );
      if (opts.vantages === undefined) {
        for (const [flag, given] of [
          ['--quorum', opts.quorum],
          ['--deadline', opts.deadline],
          ['--run-id', opts.runId],
          ['--queue', opts.queue],
          ['--store', opts.store],
        ] as const)
          if (given !== undefined) throw new UsageError(`${flag}: only with --vantages`);
      } else {
        if (opts.quorum !== undefined && opts.quorum > opts.vantages.length)
          throw flagError('--quorum', `more than the ${opts.vantages.length} vantages asked`, String(opts.quorum));
        workersStore('--vantages', opts.store);
        for (const url of urls)
          if (!/^https:/i.test(url) && !isLoopbackUrl(url))
            throw new UsageError(
              `<url>: a worker probes https URLs only (http on loopback for fixtures), got "${url}"`,
            );
        process.exitCode = await probeAcross(urls, opts, opts.vantages);
        return;
      }
      const keyed = opts.probeHeader ? keysFrom(opts.probeHeader, process.env) : {};
      const progress = new Progress(urls, !opts.json && urls.length > 1 && !!process.stderr.isTTY);
      // --json streams the array in input order as results arrive: nothing is kept but what still waits its turn.
      const out = opts.json ? new OrderedJsonArray((text) => process.stdout.write(text), jsonInvisibleEscaped) : null;
      let allLive = true;
      const results = await probeMany(
        urls.map((url) => ({ url, requiresAuth: opts.requiresAuth, ...keyed })),
        {
          timeoutMs: opts.timeout,
          profile: opts.profile,
          matrix: opts.matrix,
          headers: opts.header,
          concurrency: opts.concurrency,
          perHost: opts.perHost,
          userAgent: opts.userAgent,
          retain: !opts.json,
          onStart: (i) => progress.start(i),
          onResult: (r, i) => {
            progress.done(i);
            allLive &&= r.verdict === 'live';
            out?.put(i, probeJson(r));
          },
        },
      );
      progress.clear();
      if (out) out.end();
      else process.stdout.write(renderProbeTable(results, useColor(process.stdout)) + '\n');
      process.exitCode = allLive ? 0 : 1;
    });
}

interface ProbeFlags {
  json?: boolean;
  requiresAuth?: boolean;
  timeout?: number;
  header?: Record<string, string>;
  concurrency: number;
  perHost: number;
  userAgent?: string;
  profile: string;
  matrix?: boolean;
  probeHeader?: Record<string, ProbeHeader>;
  vantages?: string[];
  quorum?: number;
  deadline?: number;
  runId?: string;
  store?: string;
  queue?: string;
}

/**
 * `probe --vantages`: one job per URL and vantage for the workers, their observations read back from the store at
 * the end (or at the deadline), each URL's made one verdict by the rules a refresh uses. Nothing is recorded as a run.
 */
async function probeAcross(urls: string[], opts: ProbeFlags, vantages: string[]): Promise<number> {
  const { gatherAcross, defaultDeadlineMs } = await import('../refresh/across.js');
  const { acrossVantages, unansweredAt } = await import('../decide/decide.js');
  const { openPgStore } = await import('../store/pg-store.js');
  const { vantagesLine } = await import('../status/model.js');
  const profile = CLIENT_PROFILES[opts.profile]!;
  const startedAt = new Date().toISOString();
  const run = { id: opts.runId ?? `probe-${startedAt.replace(/[^0-9TZ]/g, '')}`, startedAt };
  const quorum = opts.quorum ?? majority(vantages.length);
  const store = await openPgStore(storeUrl(opts.store)!, {});
  try {
    // http:// reaches a worker only on loopback (checked above): the run's permission for local fixtures.
    const gathered = await gatherAcross(
      urls.map((url) => ({
        url,
        name: url,
        requiresAuth: !!opts.requiresAuth,
        headers: opts.header ?? {},
        ...(opts.probeHeader ? { probeHeaders: opts.probeHeader } : {}),
      })),
      [],
      store,
      run,
      {
        profile,
        timeoutMs: opts.timeout,
        matrix: !!opts.matrix,
        allowHttp: urls.some((u) => u.startsWith('http:')),
        perHost: opts.perHost,
      },
      {
        vantages,
        queueUrl: opts.queue ?? storeUrl(opts.store)!,
        deadlineMs: opts.deadline ?? defaultDeadlineMs(profile, opts.timeout),
        onWaiting: (until, jobs) => {
          process.stderr.write(
            `onetap: ${jobs} jobs for vantages ${vantages.join(', ')} on the queue (run ${run.id}); waiting until ${until.toISOString()} at the latest\n`,
          );
        },
      },
    );
    const results = urls.map((url) =>
      acrossVantages(gathered.byUrl.get(url) ?? [], vantages, quorum, () => unansweredAt(url, run, vantages[0]!)),
    );
    if (opts.json)
      process.stdout.write(
        jsonInvisibleEscaped(
          JSON.stringify(
            results.map((r) => probeJson(r.observation, r)),
            null,
            2,
          ),
        ) + '\n',
      );
    else {
      const notes = results.map(
        (r) => `  ${inert(r.observation.url)}: ${vantagesLine(r.vantages)}${r.note ? ` (${inert(r.note)})` : ''}`,
      );
      process.stdout.write(
        renderProbeTable(
          results.map((r) => ({ ...r.observation, snapshot: null })),
          useColor(process.stdout),
        ) +
          '\n\n' +
          notes.join('\n') +
          '\n',
      );
    }
    return results.every((r) => r.observation.verdict === 'live') ? 0 : 1;
  } finally {
    await store.close();
  }
}

function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`<url>: not a URL, got "${url}"`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new UsageError(`<url>: not an http(s) URL, got "${url}"`);
}

export function renderProbeTable(results: ProbeResult[], color: boolean): string {
  const rows = results.map((r) => [
    r.verdict,
    r.reason,
    r.httpStatus === null ? '-' : String(r.httpStatus),
    r.tools === null ? '-' : String(r.tools.length),
    String(r.attempts),
    `${r.durationMs}`,
    inert(r.url),
    tokensCell(r.tokens),
  ]);
  const out = table(['VERDICT', 'REASON', 'HTTP', 'TOOLS', 'TRIES', 'MS', 'URL', 'TOKENS'], rows, (text, row, col) =>
    col === 0 ? paint(text, results[row]!.verdict, color) : text,
  );
  const notes = results.flatMap((r) => {
    const lines: string[] = [];
    const d = describe(r);
    if (d.error) lines.push(`  ${inert(r.url)}: ${inert(d.error)}`);
    if (d.appSays) lines.push(`  ${inert(r.url)}: ${APP_WOULD_SAY}: ${inert(d.appSays)}`);
    if (d.location) lines.push(`  ${inert(r.url)}: redirects to ${inert(d.location)}`);
    if (d.auth) lines.push(`  ${inert(r.url)}: auth: ${d.auth}`);
    if (r.cutShort) lines.push(`  ${inert(r.url)}: cut short by --timeout before the client's own limit`);
    if (r.matrix) lines.push(`  ${inert(r.url)}: ${matrixLine(r.matrix)}`);
    if (r.quirks.length) lines.push(`  ${inert(r.url)}: quirks: ${r.quirks.join(', ')}`);
    const keys = r.probe?.keys;
    if (keys?.missing.length || keys?.refused?.length)
      lines.push(`  ${inert(r.url)}: probed without its key (${withoutKeyText(keys)})`);
    else if (keys && !keys.listed)
      lines.push(`  ${inert(r.url)}: the keyed session listed no tools${keys.error ? ` (${inert(keys.error)})` : ''}`);
    if (r.findings.length)
      lines.push(
        `  ${inert(r.url)}: screening: ${r.findings.length} finding${r.findings.length === 1 ? '' : 's'} in its tool list`,
        ...findingLines(r.findings),
      );
    if (r.cardMismatches?.length) lines.push(`  ${inert(r.url)}: card vs runtime: ${mismatchText(r.cardMismatches)}`);
    return lines;
  });
  const live = results.filter((r) => r.verdict === 'live').length;
  return [out, ...(notes.length ? ['', ...notes] : []), '', `${live}/${results.length} live`].join('\n');
}
