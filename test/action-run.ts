/**
 * Running the Action's shell steps outside GitHub, with the inputs GitHub would give them (shared by the Action tests).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.org',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.org',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
export const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();

export interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

/** Runs an action script the way the composite step does, with INPUT_* from `inputs`, its runner files under `tmp`. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
export async function runAction(
  tmp: string,
  script: 'run.sh' | 'check.sh',
  workspace: string,
  inputs: Record<string, string>,
  extraEnv: Record<string, string> = {},
): Promise<ActionRun> {
  const dir = await mkdtemp(join(tmp, 'runner-'));
  const outputFile = join(dir, 'output');
  await writeFile(outputFile, '');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...GIT_ENV,
    NO_COLOR: '1',
    GITHUB_WORKSPACE: workspace,
    GITHUB_OUTPUT: outputFile,
    GITHUB_ACTION_PATH: ROOT,
    RUNNER_TEMP: dir,
    ...extraEnv,
  };
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase().replaceAll('-', '_')}`] = v;
  const child = spawn('bash', [join(ROOT, 'action', script)], { cwd: workspace, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr, outputs: parseOutputs(await readFile(outputFile, 'utf8')) };
}

/** GITHUB_OUTPUT: `name=value` lines and `name<<DELIM` blocks. */
export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const block = /^([\w-]+)<<(.+)$/.exec(lines[i]!);
    if (block) {
      const end = lines.indexOf(block[2]!, i + 1);
      out[block[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (lines[i]!.includes('=')) {
      out[lines[i]!.slice(0, lines[i]!.indexOf('='))] = lines[i]!.slice(lines[i]!.indexOf('=') + 1);
    }
  }
  return out;
}
