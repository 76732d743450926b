/**
 * Which generated files a refresh writes, and where: the catalog's `outputs`, or `--outputs` over it. Each output
 * is on (`true`, or an object naming its path and, for Kotlin, its package) or off (`false`). A catalog without
 * `outputs` gets every one, as before 0.3.
 */
import { isAbsolute, normalize } from 'node:path';
import type { z } from 'zod';
import {
  DEFAULT_KOTLIN_PACKAGE,
  DEFAULT_OUTPUT_PATHS,
  KOTLIN_PACKAGE,
  OUTPUT_NAMES,
  type OutputName,
  type catalogOutputsSchema,
} from './schema.js';

/** An output's setting as loading guarantees it: the Kotlin form, the widest (`lint` refuses a package elsewhere). */
export type OutputSetting = NonNullable<z.output<typeof catalogOutputsSchema>['kotlin']>;
export type CatalogOutputs = Partial<Record<OutputName, OutputSetting>>;

/** The outputs that are on, each with its path (relative to the output directory); Kotlin with its package. */
export interface ResolvedOutputs {
  json?: string;
  ts?: string;
  kotlin?: { path: string; package: string };
  snapshot?: string;
  log?: string;
}

/** `--outputs json,ts,snapshot`: the names, checked (an unknown name throws, naming it). */
export function parseOutputList(text: string): OutputName[] {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const unknown = names.filter((n) => !(OUTPUT_NAMES as readonly string[]).includes(n));
  if (unknown.length)
    throw new Error(
      `unknown output${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')} (known: ${OUTPUT_NAMES.join(', ')})`,
    );
  return [...new Set(names)] as OutputName[];
}

/** Why an output path would write outside the output directory, or null when it stays inside. */
export function outputPathProblem(path: string): string | null {
  if (path.trim() === '' || path.includes('\0')) return 'must name a file';
  if (isAbsolute(path)) return "must be relative to the catalog's directory";
  const n = normalize(path);
  if (n === '..' || n.startsWith('../') || n === '.' || n.endsWith('/'))
    return "must name a file inside the catalog's directory";
  return null;
}

/** Files beside the catalog that onetap keeps itself: no output may write over one. */
const KEPT_BESIDE = ['tools.lock.json', 'history'];

/**
 * What would make the catalog's outputs write outside its directory, over the catalog (`catalogFile`, its name)
 * or what onetap keeps beside it, or two outputs write one file.
 */
export function outputsProblems(outputs: CatalogOutputs | undefined, catalogFile = 'servers.json'): string[] {
  const problems: string[] = [];
  const seen = new Map<string, OutputName>();
  for (const name of OUTPUT_NAMES) {
    const setting = outputs?.[name];
    if (typeof setting !== 'object' || setting === null) continue;
    if (typeof setting.path === 'string') {
      const problem = outputPathProblem(setting.path);
      if (problem) problems.push(`outputs.${name}.path: ${problem}`);
    }
    if (name === 'kotlin' && typeof setting.package === 'string' && !KOTLIN_PACKAGE.test(setting.package))
      problems.push(`outputs.kotlin.package: not a Kotlin package name: "${setting.package}"`);
  }
  for (const [name, path] of Object.entries(resolveOutputs(outputs))) {
    const file = normalize(typeof path === 'string' ? path : path.path);
    const other = seen.get(file);
    if (other) problems.push(`outputs.${name}: writes ${file}, as outputs.${other} does`);
    if (file === catalogFile || KEPT_BESIDE.some((k) => file === k || file.startsWith(`${k}/`)))
      problems.push(`outputs.${name}: ${file} is the catalog's own (choose another path)`);
    seen.set(file, name as OutputName);
  }
  return problems;
}

/**
 * The catalog's outputs, with `only` (from `--outputs`) deciding which are on when given, and `kotlinPackage`
 * (from `--kotlin-package`) over the catalog's package. Paths the catalog names are kept either way.
 */
export function resolveOutputs(
  outputs: CatalogOutputs | undefined,
  only?: readonly OutputName[],
  kotlinPackage?: string,
): ResolvedOutputs {
  const resolved: ResolvedOutputs = {};
  for (const name of OUTPUT_NAMES) {
    const setting = outputs?.[name];
    const on = only ? only.includes(name) : outputs === undefined || (setting !== undefined && setting !== false);
    if (!on) continue;
    const path = (typeof setting === 'object' && setting.path) || DEFAULT_OUTPUT_PATHS[name];
    const named = typeof setting === 'object' ? setting.package : undefined;
    if (name === 'kotlin') resolved.kotlin = { path, package: kotlinPackage ?? named ?? DEFAULT_KOTLIN_PACKAGE };
    else resolved[name] = path;
  }
  return resolved;
}
