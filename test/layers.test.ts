/**
 * The layers hold: every import in src/ goes to the same folder or to a folder of a lower layer, and no files
 * import each other in a circle (type-only imports count: a type is a dependency too). DESIGN.md's layer list and
 * the README's Layout name the layers as LAYERS does (a folder added here and not there, or there in another
 * order, fails).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');

/** Bottom first. A folder may import its own files and those of the layers below it, nothing else. */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['util'],
  ['text'],
  ['model'],
  ['net', 'policy', 'screen'],
  ['views'],
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
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Relative imports of a file, static and dynamic, as paths of .ts files under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g),
  ].map((m) => m[1] ?? m[2]!);
  return specs.map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'));
}

const rank = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

export function layerViolations(root = SRC, files = sourceFiles(root)): string[] {
  const folderOf = (file: string) => relative(root, file).split('/')[0]!;
  const problems: string[] = [];
  for (const file of files) {
    const from = folderOf(file);
    if (from.endsWith('.ts')) continue; // src/index.ts, the public API, sits above everything
    if (rank(from) < 0) {
      problems.push(`src/${from}/ is in no layer (test/layers.test.ts)`);
      continue;
    }
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to === from) continue;
      if (rank(to) < 0 || rank(to) >= rank(from))
        problems.push(`${relative(root, file)} imports ${relative(root, target)}: ${to}/ is not below ${from}/`);
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
      if (state.get(g) === 'open')
        circles.push([...stack.slice(stack.indexOf(g)), g].map((x) => relative(root, x)).join(' -> '));
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
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('model/a.ts', "import type { B } from './b.js';\nexport type A = B;\n");
  write('model/b.ts', "import type { A } from './a.js';\nexport type B = A;\n");
  write('policy/p.ts', "export const p = (await import('../cli/main.js')).x;\n");
  write('cli/main.ts', "export { p } from '../policy/p.js';\nexport const x = 1;\n");
  write('nowhere/n.ts', 'export {};\n');
  try {
    assert.deepEqual(layerViolations(root).sort(), [
      'policy/p.ts imports cli/main.ts: cli/ is not below policy/',
      'src/nowhere/ is in no layer (test/layers.test.ts)',
    ]);
    assert.deepEqual(importCircles(root).sort(), [
      'cli/main.ts -> policy/p.ts -> cli/main.ts',
      'model/a.ts -> model/b.ts -> model/a.ts',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/**
 * Imports the layers allow but the design does not: a folder that may not reach another though it sits above it
 * (the store and the status pages read the record, not the prober or the decider: their shapes and words are in
 * src/model/).
 */
export const FORBIDDEN: ReadonlyArray<{ from: string; to: readonly string[] }> = [
  { from: 'store', to: ['attest', 'decide'] },
  { from: 'status', to: ['attest', 'decide'] },
];

/** Forbidden imports still in the tree, each to go. The test fails when one of them is gone and still listed here. */
const FORBIDDEN_FOR_NOW: readonly string[] = [];

export function forbiddenImports(root = SRC, files = sourceFiles(root), table = FORBIDDEN): string[] {
  const folderOf = (file: string) => relative(root, file).split('/')[0]!;
  const problems: string[] = [];
  for (const file of files) {
    const rule = table.find((r) => r.from === folderOf(file));
    if (!rule) continue;
    for (const target of importsOf(file))
      if (rule.to.includes(folderOf(target)))
        problems.push(`${relative(root, file)} imports ${relative(root, target)}`);
  }
  return problems;
}

test('no folder imports one FORBIDDEN to it (store/ and status/: nothing of attest/ or decide/)', () => {
  const found = forbiddenImports();
  assert.deepEqual(
    found.filter((p) => !FORBIDDEN_FOR_NOW.includes(p)),
    [],
  );
  assert.deepEqual(
    FORBIDDEN_FOR_NOW.filter((p) => !found.includes(p)),
    [],
    'gone: take it out of FORBIDDEN_FOR_NOW',
  );
});

test('the FORBIDDEN check can fail: a type-only import of the prober from the store is found', () => {
  const root = mkdtempSync(join(tmpdir(), 'onetap-forbidden-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('attest/probe.ts', 'export type P = 1;\n');
  write('model/m.ts', 'export type M = 1;\n');
  write('store/s.ts', "import type { P } from '../attest/probe.js';\nimport type { M } from '../model/m.js';\n");
  write('status/t.ts', "export const t = await import('../decide/d.js');\n");
  try {
    assert.deepEqual(forbiddenImports(root).sort(), [
      'status/t.ts imports decide/d.ts',
      'store/s.ts imports attest/probe.ts',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** A file's imports that load at run time (type-only ones are erased): relative ones resolved, bare ones as named. */
function runtimeImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const from = /(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;'"]*?from\s*'([^']+)'/.source;
  const bare = /(?:^|\n)\s*import\s*'([^']+)'/.source;
  const dynamic = /\bimport\(\s*'([^']+)'\s*\)/.source;
  const specs = [...text.matchAll(new RegExp(`${from}|${bare}|${dynamic}`, 'g'))].map((m) => m[1] ?? m[2] ?? m[3]!);
  return specs.map((s) => (s.startsWith('.') ? resolve(dirname(file), s).replace(/\.js$/, '.ts') : s));
}

test('the prober loads no schema library: what src/attest/ loads of src/model/ imports no zod, however deep', () => {
  const model = join(SRC, 'model');
  const seen = new Set<string>();
  const zod: string[] = [];
  const visit = (file: string, via: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const target of runtimeImportsOf(file)) {
      if (target === 'zod' || target.startsWith('zod/')) zod.push(`${relative(SRC, file)} (via ${via})`);
      else if (target.startsWith(model)) visit(target, via);
    }
  };
  for (const file of sourceFiles(join(SRC, 'attest')))
    for (const target of runtimeImportsOf(file)) if (target.startsWith(model)) visit(target, relative(SRC, file));
  assert.ok(seen.has(join(model, 'snapshot-hash.ts')), 'the prober hashes with model/snapshot-hash.ts');
  assert.deepEqual(zod, []);
});

/** The README's Layout block as [layer number, folder] pairs, in the order written (`10  src/refresh/  …`). */
export function readmeLayers(readme: string): Array<[number, string]> {
  const section = readme.slice(readme.indexOf('\n## Layout\n'));
  const block = /^```\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? '';
  return [...block.matchAll(/^\s*(\d+)\s+src\/([\w-]+)\//gm)].map((m) => [Number(m[1]), m[2]!]);
}

/** DESIGN.md's layer list (after "Folders are layers, bottom first:"): layers split at `;`, folders in backticks. */
export function designLayers(design: string): string[][] {
  const at = design.indexOf('Folders are layers, bottom first:');
  if (at < 0) return [];
  const text = design.slice(at).replace(/\([^)]*\)/g, '');
  const list = text.slice(text.indexOf(':') + 1, text.search(/\.(\s|$)/));
  return list.split(';').map((layer) => [...layer.matchAll(/`([\w-]+)`/g)].map((m) => m[1]!));
}

const expectedReadme = (): Array<[number, string]> =>
  LAYERS.flatMap((l, i) => l.map((f): [number, string] => [i + 1, f]));
const readmeText = (pairs: Array<[number, string]>) =>
  pairs.map(([n, f]) => `${String(n).padStart(2)}  src/${f}/`).join('\n');
const designText = (layers: ReadonlyArray<readonly string[]>) =>
  layers.map((l) => l.map((f) => `\`${f}\``).join(', ')).join('; ');

test("the README's Layout lists every layer's folders, numbered and in LAYERS' order", () => {
  const found = readmeLayers(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  assert.equal(
    readmeText(found),
    readmeText(expectedReadme()),
    'README.md ## Layout: write the folders as LAYERS has them',
  );
});

test("DESIGN.md's layer list is LAYERS, layer by layer", () => {
  const found = designLayers(readFileSync(join(ROOT, 'DESIGN.md'), 'utf8'));
  assert.equal(designText(found), designText(LAYERS), 'DESIGN.md **Layers.**: list the folders as LAYERS has them');
});

test('the docs checks can fail: a folder left out, a layer split, an order changed are found', () => {
  const readme =
    '# x\n\n## Layout\n\n```\n 1  src/util/       helpers\n 2  src/model/   the record\n 2  src/text/  text\n```\n';
  assert.deepEqual(readmeLayers(readme), [
    [1, 'util'],
    [2, 'model'],
    [2, 'text'],
  ]);
  assert.notEqual(readmeText(readmeLayers(readme)), readmeText(expectedReadme()));
  const design =
    'Folders are layers, bottom first: `util`; `text` (clipping; escaping); `model`, `net` (the fetch). More.';
  assert.deepEqual(designLayers(design), [['util'], ['text'], ['model', 'net']]);
  assert.notEqual(designText(designLayers(design)), designText(LAYERS));
  assert.deepEqual(designLayers('no list here'), []);
});
