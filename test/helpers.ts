/** Shared test helpers: temporary workspaces with a catalog, and running the CLI as a process. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalog, CatalogServer } from '../src/index.js';
import { AppSseReader } from '../src/attest/app-reader.js';

import { decide, type RowInput } from '../src/decide/decide.js';
import { EMPTY_LOCK } from '../src/model/acceptance.js';
import type { Observation } from '../src/model/observation.js';
import type { Plan, PlanRow, RecordedRun } from '../src/model/plan.js';

export const BIN = fileURLToPath(new URL('../../bin/onetap', import.meta.url));

// Each test process keeps the CLI's token counts in a folder of its own: a count kept by an earlier run, or by
// another test file, never answers for this one.
if (process.env.ONETAP_CACHE_DIR === undefined) {
  const counts = mkdtempSync(join(tmpdir(), 'onetap-counts-'));
  process.env.ONETAP_CACHE_DIR = counts;
  process.on('exit', () => rmSync(counts, { recursive: true, force: true }));
}

export const decision = { by: 'test', at: '2026-11-30', why: 'fixture' };

export function server(name: string, url: string, extra: Partial<CatalogServer> = {}): CatalogServer {
  return { name, url, description: `${name} does a real job`, requiresAuth: false, headers: {}, decision, ...extra };
}

export function catalogOf(servers: CatalogServer[], extra: Partial<Catalog> = {}): Catalog {
  return { policy: { authOptionalHosts: [], sharedGatewayHosts: [] }, servers, removed: [], ...extra };
}

export async function workspace(catalog: Catalog): Promise<{ dir: string; catalogPath: string; statePath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'onetap-test-'));
  await mkdir(join(dir, 'catalog'));
  const catalogPath = join(dir, 'catalog', 'servers.json');
  await writeFile(catalogPath, JSON.stringify(catalog, null, 2) + '\n');
  return { dir, catalogPath, statePath: join(dir, '.onetap', 'history.db') };
}

/** Every file under dir with its content (for "nothing changed" checks). */
export async function snapshotDir(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const p = join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
      out[p] = (await readFile(p)).toString('base64');
    }
  }
  return out;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  opts: { cwd?: string; killAfterMs?: number; env?: Record<string, string> } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer =
      opts.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Starts `onetap mcp --http --port 0 …` in `cwd` (kept in `children` to be killed) and reads its URL from stderr. */
export function startMcpHttp(cwd: string, args: string[], children: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '--port', '0', ...args], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`onetap mcp exited ${code}: ${err}`)));
  });
}

/**
 * An observation record with every field at a neutral value (live/ok), `fields` over them: for tests of the stages
 * after collect.
 */
export function observation(fields: Partial<Observation> & Pick<Observation, 'url'>): Observation {
  return {
    run: 'run-1',
    vantage: 'local',
    observedAt: '2026-11-30T00:00:00.000Z',
    profile: 'kai-9000',
    probe: null,
    verdict: 'live',
    reason: 'ok',
    reasons: [fields.reason ?? 'ok'],
    attempts: 1,
    durationMs: 5,
    httpStatus: 200,
    protocolVersion: null,
    serverName: null,
    serverVersion: null,
    tools: null,
    toolCount: fields.tools?.length ?? null,
    sessionId: false,
    error: null,
    appError: null,
    quirks: [],
    excludedTools: [],
    cutShort: false,
    auth: null,
    location: null,
    diagnosis: null,
    matrix: null,
    toolsHash: null,
    toolsDigest: null,
    findings: [],
    findingsSeen: fields.findings?.length ?? 0,
    cardMismatches: null,
    evidence: null,
    ...fields,
  };
}

/**
 * A plan decided from observations alone (no acceptances, no snapshots), each row's history as given (newest first).
 */
export function planOf(
  rows: Array<{ name: string; observation: Observation; history?: RowInput['history'] }>,
  confirmDrops = 1,
): Plan {
  return decide({
    rows: rows.map((r) => ({ name: r.name, observation: r.observation, history: r.history ?? [] })),
    lock: EMPTY_LOCK,
    snapshots: new Map(),
    confirmDrops,
    canaries: { configured: 0, reachable: 0 },
  });
}

/**
 * A recorded row: an observation decided as its verdict says (keep, review, keep-failed, drop), nothing else to review.
 */
export function recordedRow(
  name: string,
  fields: Partial<Observation> & Pick<Observation, 'url'>,
  plan: Partial<PlanRow> = {},
): PlanRow {
  const o = observation(fields);
  const decision = ({ live: 'keep', review: 'review', failed: 'keep-failed', drop: 'drop' } as const)[o.verdict];
  return {
    ...o,
    name,
    decision,
    previous: null,
    changed: true,
    dropStreak: o.verdict === 'drop' ? 1 : 0,
    note: null,
    acceptedHash: null,
    toolChanges: null,
    toolsChanged: false,
    serverInfoChanged: false,
    identityChanged: false,
    firstUse: false,
    heldOut: false,
    snapshotSha256: null,
    ...plan,
  };
}

/** A recorded run of these rows, at `at` (its id). */
export function recordedRun(at: string, rows: PlanRow[], run: Partial<RecordedRun['run']> = {}): RecordedRun {
  const count = (d: PlanRow['decision']) => rows.filter((r) => r.decision === d).length;
  return {
    run: {
      id: at,
      startedAt: at,
      finishedAt: at,
      catalog: 'servers.json',
      applied: true,
      aborted: null,
      warnings: [],
      summary: {
        total: rows.length,
        keep: count('keep'),
        keepFailed: count('keep-failed'),
        review: count('review'),
        drop: count('drop'),
        changed: 0,
      },
      ...run,
    },
    rows: rows.map((r) => ({ ...r, run: run.id ?? at, observedAt: at })),
  };
}

/** Debian's Chromium (never a downloaded one), or null without it; it may still be installing when a suite starts. */
export async function launchChromium(): Promise<import('playwright-core').Browser | null> {
  for (let i = 0; i < 60 && !existsSync('/usr/bin/chromium'); i++) await new Promise((r) => setTimeout(r, 1_000));
  if (!existsSync('/usr/bin/chromium')) return null;
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** The app's SSE reader fed `chunks` in order (waiting where it asks to), then ended. */
export async function readAsApp(chunks: Array<Buffer | string>): Promise<AppSseReader> {
  const reader = new AppSseReader();
  for (const chunk of chunks) {
    const wait = reader.feed(chunk);
    if (wait !== null) await wait;
  }
  reader.end();
  return reader;
}
