/**
 * The layers hold: every import in src/ goes to the same folder or to a folder of a lower layer, and no files
 * import each other in a circle (type-only imports count: a type is a dependency too). DESIGN.md names the layers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** Bottom first. A folder may import its own files and those of the layers below it, nothing else. */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['util'],
  ['text'],
  ['model'],
  ['net', 'policy', 'screen'],
  ['catalog'],
  ['attest'],
  ['discover', 'decide', 'store', 'outputs', 'runtime'],
  ['collect', 'curate', 'publish', 'status', 'queue'],
  ['apply'],
  ['refresh', 'worker'],
  ['census'],
  ['serve', 'site', 'demo'],
  ['mcp'],
  ['cli'],
];

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Relative imports of a file, static and dynamic, as paths of .ts files under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => m[1] ?? m[2]!);
  return specs.map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'));
}

const rank = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

export function layerViolations(root = SRC, files = sourceFiles(root)): string[] {
  const folderOf = (file: string) => relative(root, file).split('/')[0]!;
  const problems: string[] = [];
  for (const file of files) {
    const from = folderOf(file);
    if (from.endsWith('.ts')) continue; // src/index.ts, the public API, sits above everything
    if (rank(from) < 0) { problems.push(`src/${from}/ is in no layer (test/layers.test.ts)`); continue; }
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to === from) continue;
      if (rank(to) < 0 || rank(to) >= rank(from)) problems.push(`${relative(root, file)} imports ${relative(root, target)}: ${to}/ is not below ${from}/`);
    }
  }
  return problems;
}

/** Each circle of file imports, once, as "a -> b -> a". */
export function importCircles(root = SRC, files = sourceFiles(root)): string[] {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[] = [];
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') circles.push([...stack.slice(stack.indexOf(g)), g].map((x) => relative(root, x)).join(' -> '));
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return circles;
}

test('no import runs up the layers', () => {
  assert.deepEqual(layerViolations(), []);
});

test('no files import each other in a circle', () => {
  assert.deepEqual(importCircles(), []);
});

test('the checks can fail: an import up the layers and a circle are found', () => {
  const root = mkdtempSync(join(tmpdir(), 'onetap-layers-'));
  const write = (path: string, text: string) => { mkdirSync(dirname(join(root, path)), { recursive: true }); writeFileSync(join(root, path), text); };
  write('model/a.ts', "import type { B } from './b.js';\nexport type A = B;\n");
  write('model/b.ts', "import type { A } from './a.js';\nexport type B = A;\n");
  write('policy/p.ts', "export const p = (await import('../cli/main.js')).x;\n");
  write('cli/main.ts', "export { p } from '../policy/p.js';\nexport const x = 1;\n");
  write('nowhere/n.ts', 'export {};\n');
  try {
    assert.deepEqual(layerViolations(root).sort(), ['policy/p.ts imports cli/main.ts: cli/ is not below policy/', 'src/nowhere/ is in no layer (test/layers.test.ts)']);
    assert.deepEqual(importCircles(root).sort(), ['cli/main.ts -> policy/p.ts -> cli/main.ts', 'model/a.ts -> model/b.ts -> model/a.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
