import type { Command } from 'commander';
import { probeMany } from '../attest/probe-many.js';
import type { ProbeResult } from '../attest/probe.js';
import { inert, paint, table, useColor } from './render.js';
import { parseHeader, positiveInt, UsageError } from './args.js';

export function registerProbe(program: Command): void {
  program
    .command('probe')
    .description('attest remote MCP servers with the app\'s handshake and print a verdict per URL')
    .argument('<url...>', 'MCP endpoint URLs (http:// is accepted: probe is a diagnostic)')
    .option('--json', 'print one JSON array, one object per URL in input order')
    .option('--requires-auth', 'treat every URL as auth-optional (initialize without a key is enough)')
    .option('--timeout <ms>', 'time limit per attempt of the whole handshake', positiveInt, 15_000)
    .option('--header <line>', 'extra request header "Name: value" (repeatable)', parseHeader, {} as Record<string, string>)
    .option('--concurrency <n>', 'probes in flight at once', positiveInt, 16)
    .option('--user-agent <ua>', 'User-Agent to send (default: a browser-like agent; edges 403 bots)')
    .action(async (urls: string[], opts: { json?: boolean; requiresAuth?: boolean; timeout: number; header: Record<string, string>; concurrency: number; userAgent?: string }) => {
      for (const url of urls) checkUrl(url);
      const showProgress = !opts.json && urls.length > 1 && !!process.stderr.isTTY;
      let done = 0;
      const results = await probeMany(urls.map((url) => ({ url, requiresAuth: opts.requiresAuth })), {
        timeoutMs: opts.timeout,
        headers: opts.header,
        concurrency: opts.concurrency,
        userAgent: opts.userAgent,
        onResult: () => {
          done++;
          if (showProgress) process.stderr.write(`\rprobed ${done}/${urls.length}`);
        },
      });
      if (showProgress) process.stderr.write('\r\x1b[K');
      process.stdout.write(opts.json ? JSON.stringify(results.map(probeJson), null, 2) + '\n' : renderProbeTable(results, useColor(process.stdout)) + '\n');
      process.exitCode = results.every((r) => r.verdict === 'live') ? 0 : 1;
    });
}

function checkUrl(url: string): void {
  let parsed: URL;
  try { parsed = new URL(url); } catch { throw new UsageError(`not a URL: ${url}`); }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new UsageError(`not an http(s) URL: ${url}`);
}

/** The `probe --json` object: the contract fields, then extras. */
function probeJson(r: ProbeResult) {
  return {
    url: r.url,
    verdict: r.verdict,
    reason: r.reason,
    attempts: r.attempts,
    httpStatus: r.httpStatus,
    protocolVersion: r.protocolVersion,
    serverName: r.serverName,
    tools: r.tools,
    sessionId: r.sessionId,
    durationMs: r.durationMs,
    error: r.error,
    detail: r.detail,
    serverVersion: r.serverVersion,
    quirks: r.quirks,
    steps: r.observation.steps.map((s) => ({ step: s.step, status: s.status, contentType: s.contentType, body: s.body, problem: s.problem, errorCode: s.errorCode, durationMs: s.durationMs })),
  };
}

function renderProbeTable(results: ProbeResult[], color: boolean): string {
  const rows = results.map((r) => [
    r.verdict, r.reason, r.httpStatus === null ? '-' : String(r.httpStatus), r.tools === null ? '-' : String(r.tools.length),
    String(r.attempts), `${r.durationMs}`, inert(r.url),
  ]);
  const out = table(['VERDICT', 'REASON', 'HTTP', 'TOOLS', 'TRIES', 'MS', 'URL'], rows, (text, row, col) => (col === 0 ? paint(text, results[row]!.verdict, color) : text));
  const notes = results.flatMap((r) => {
    const lines: string[] = [];
    if (r.error) lines.push(`  ${inert(r.url)}: ${inert(r.error)}`);
    if (r.quirks.length) lines.push(`  ${inert(r.url)}: quirks: ${r.quirks.join(', ')}`);
    return lines;
  });
  const live = results.filter((r) => r.verdict === 'live').length;
  return [out, ...(notes.length ? ['', ...notes] : []), '', `${live}/${results.length} live`].join('\n');
}
