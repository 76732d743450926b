import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A file shipped in the package, by its path from the package root (works from src/ via dist/src/). */
export function packagePath(relative: string): string {
  return fileURLToPath(new URL(`../../../${relative}`, import.meta.url));
}

export function readPackageJson<T = unknown>(relative: string): T {
  return JSON.parse(readFileSync(packagePath(relative), 'utf8')) as T;
}
