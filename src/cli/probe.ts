import type { Command } from 'commander';
import { PROBE_MANY_DEFAULTS, probeMany } from '../attest/probe-many.js';
import { jsonInvisibleEscaped } from '../text/escape.js';
import type { ProbeResult } from '../attest/probe.js';
import { probeJson } from '../attest/json.js';
import { CLIENT_PROFILES, DEFAULT_PROFILE_ID } from '../attest/profile.js';
import { findingLines, mismatchText, OrderedJsonArray, paint, Progress, table, useColor } from './render.js';
import { inert } from '../text/escape.js';
import { matrixLine } from '../attest/profile.js';
import { parseHeader, positiveInt, probeHeaderFlag, profileId, timeoutMs, UsageError } from './args.js';
import { keysFrom } from '../attest/keys.js';
import type { ProbeHeader } from '../catalog/model.js';

export function registerProbe(program: Command): void {
  program
    .command('probe')
    .description('attest remote MCP servers with the app\'s handshake and print a verdict per URL')
    .argument('<url...>', 'MCP endpoint URLs (http:// is accepted: probe is a diagnostic)')
    .option('--json', 'print one JSON array, one object per URL in input order')
    .option('--requires-auth', 'treat every URL as auth-optional (initialize without a key is enough)')
    .option('--profile <id>', `the deciding client profile: ${Object.keys(CLIENT_PROFILES).join(', ')}`, profileId, DEFAULT_PROFILE_ID)
    .option('--matrix', 'also run every other profile; --json adds matrix: {profile: {works, verdict, reason, tools}}')
    .option('--timeout <ms>', 'per-request time limit override (default: the profile\'s own, 60000 for the app)', timeoutMs)
    .option('--header <line>', 'extra request header "Name: value" (repeatable)', parseHeader)
    .option('--probe-header <line>', 'with --requires-auth: a key, \'Name: prefix${VARIABLE}\', read from the environment variable: the keyless handshake decides, a second session with the key lists the tools; redacted from everything printed (repeatable)', probeHeaderFlag)
    .option('--concurrency <n>', 'probes in flight at once', positiveInt, PROBE_MANY_DEFAULTS.concurrency)
    .option('--per-host <n>', 'probes in flight per host (politeness towards shared gateways)', positiveInt, PROBE_MANY_DEFAULTS.perHost)
    .option('--user-agent <ua>', 'User-Agent override for the deciding profile (diagnostic; the app sends "Ktor client")')
    .action(async (urls: string[], opts: ProbeFlags) => {
      for (const url of urls) checkUrl(url);
      if (opts.probeHeader && !opts.requiresAuth) throw new UsageError('--probe-header: needs --requires-auth (a key for probing is only for an auth-optional server)');
      const keyed = opts.probeHeader ? keysFrom(opts.probeHeader, process.env) : {};
      const progress = new Progress(urls, !opts.json && urls.length > 1 && !!process.stderr.isTTY);
      // --json streams the array in input order as results arrive: nothing is kept but what still waits its turn.
      const out = opts.json ? new OrderedJsonArray((text) => process.stdout.write(text), jsonInvisibleEscaped) : null;
      let allLive = true;
      const results = await probeMany(urls.map((url) => ({ url, requiresAuth: opts.requiresAuth, ...keyed })), {
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
      });
      progress.clear();
      if (out) out.end();
      else process.stdout.write(renderProbeTable(results, useColor(process.stdout)) + '\n');
      process.exitCode = allLive ? 0 : 1;
    });
}

interface ProbeFlags {
  json?: boolean; requiresAuth?: boolean; timeout?: number; header?: Record<string, string>; concurrency: number; perHost: number;
  userAgent?: string; profile: string; matrix?: boolean; probeHeader?: Record<string, ProbeHeader>;
}

function checkUrl(url: string): void {
  let parsed: URL;
  try { parsed = new URL(url); } catch { throw new UsageError(`<url>: not a URL, got "${url}"`); }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new UsageError(`<url>: not an http(s) URL, got "${url}"`);
}

export function renderProbeTable(results: ProbeResult[], color: boolean): string {
  const rows = results.map((r) => [
    r.verdict, r.reason, r.httpStatus === null ? '-' : String(r.httpStatus), r.tools === null ? '-' : String(r.tools.length),
    String(r.attempts), `${r.durationMs}`, inert(r.url),
  ]);
  const out = table(['VERDICT', 'REASON', 'HTTP', 'TOOLS', 'TRIES', 'MS', 'URL'], rows, (text, row, col) => (col === 0 ? paint(text, results[row]!.verdict, color) : text));
  const notes = results.flatMap((r) => {
    const lines: string[] = [];
    if (r.error) lines.push(`  ${inert(r.url)}: ${inert(r.error)}`);
    if (r.appError && r.appError !== r.error) lines.push(`  ${inert(r.url)}: the app would say: ${inert(r.appError)}`);
    if (r.location) lines.push(`  ${inert(r.url)}: redirects to ${inert(r.location)}`);
    if (r.auth) lines.push(`  ${inert(r.url)}: auth: ${r.auth}`);
    if (r.cutShort) lines.push(`  ${inert(r.url)}: cut short by --timeout before the client's own limit`);
    if (r.matrix) lines.push(`  ${inert(r.url)}: ${matrixLine(r.matrix)}`);
    if (r.quirks.length) lines.push(`  ${inert(r.url)}: quirks: ${r.quirks.join(', ')}`);
    const keys = r.probe?.keys;
    if (keys?.missing.length) lines.push(`  ${inert(r.url)}: probed without its key (${keys.missing.map(inert).join(', ')} not set)`);
    else if (keys && !keys.listed) lines.push(`  ${inert(r.url)}: the keyed session listed no tools${keys.error ? ` (${inert(keys.error)})` : ''}`);
    if (r.findings.length) lines.push(`  ${inert(r.url)}: screening: ${r.findings.length} finding${r.findings.length === 1 ? '' : 's'} in its tool list`, ...findingLines(r.findings));
    if (r.cardMismatches?.length) lines.push(`  ${inert(r.url)}: card vs runtime: ${mismatchText(r.cardMismatches)}`);
    return lines;
  });
  const live = results.filter((r) => r.verdict === 'live').length;
  return [out, ...(notes.length ? ['', ...notes] : []), '', `${live}/${results.length} live`].join('\n');
}
