/** Catalog paths given to the MCP tools stay inside the directory the server was started in. */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

export class PathRefused extends Error {}

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
};

/**
 * The real path of `input` (relative to `root`, or absolute), refused when it or the file a symlink leads to
 * lies outside `root` (itself a real path). The returned path has no symlink left to swap.
 */
export async function confinedPath(root: string, input: string): Promise<string> {
  if (input.includes('\0')) throw new PathRefused('a path with a NUL byte is refused');
  const wanted = resolve(root, input);
  if (!inside(root, wanted))
    throw new PathRefused(`${input} is outside the directory this server was started in (${root})`);
  let real: string;
  try {
    real = await realpath(wanted);
  } catch (err) {
    throw new PathRefused(`${input}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!inside(root, real))
    throw new PathRefused(`${input} leads outside the directory this server was started in (a symlink to ${real})`);
  if (!(await stat(real)).isFile()) throw new PathRefused(`${input} is not a file`);
  return real;
}
