/** Shared test helpers: temporary workspaces with a catalog, and running the CLI as a process. */
import { mkdtemp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalog, CatalogServer } from '../src/index.js';

export const BIN = fileURLToPath(new URL('../../bin/onetap', import.meta.url));

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

export interface RunResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

export function runCli(args: string[], opts: { cwd?: string; killAfterMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    if (opts.killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Starts `onetap mcp --http --port 0 …` in `cwd` (kept in `children` to be killed) and reads its URL from stderr. */
export function startMcpHttp(cwd: string, args: string[], children: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '--port', '0', ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
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
