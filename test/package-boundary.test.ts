/**
 * The package ships the product, not its build tools: every package a file under src/ imports (static, dynamic,
 * `require`, type-only: a type import ends up in the published .d.ts) is a Node built-in or one of package.json's
 * `dependencies`, so no devDependency such as `typescript` is needed at run time. The docs generator that does need
 * the compiler lives in scripts/ (`npm run docs`), and nothing of scripts/ is in the packed tarball.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The bare specifiers (not `./`, not `../`) a TypeScript file imports, its comments left out. */
export function bareImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/[^\n]*/g, '$1');
  const patterns = [
    /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"\n]+)['"]/gm, // import … from, export … from, import type … from
    /^\s*import\s*['"]([^'"\n]+)['"]/gm, // import 'side-effect'
    /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g, // import('x'), typeof import('x')
    /\brequire\(\s*['"]([^'"\n]+)['"]\s*\)/g, // createRequire's require('x')
  ];
  return patterns.flatMap((p) => [...code.matchAll(p)].map((m) => m[1]!)).filter((s) => !s.startsWith('.'));
}

/** `@scope/name/deep/path` → `@scope/name`; `name/deep` → `name`. */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');
const builtin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(packageOf(spec));

/** Each import under `dir` of a package that is neither built in nor a runtime dependency, as "file: spec". */
export function nonRuntimeImports(dir: string, dependencies: Record<string, string>): string[] {
  return tsFiles(dir).flatMap((file) =>
    bareImports(readFileSync(file, 'utf8'))
      .filter((spec) => !builtin(spec) && !Object.hasOwn(dependencies, packageOf(spec)))
      .map((spec) => `${relative(dir, file)}: ${spec}`),
  );
}

describe('the product imports only its runtime dependencies', () => {
  it('no file under src/ imports typescript (or any other devDependency)', () => {
    const found = nonRuntimeImports(join(ROOT, 'src'), PACKAGE.dependencies);
    assert.deepEqual(found, [], 'build tools belong in scripts/ (src/ is the package)');
    const typescript = tsFiles(join(ROOT, 'src')).filter((f) =>
      bareImports(readFileSync(f, 'utf8')).some((s) => packageOf(s) === 'typescript'),
    );
    assert.deepEqual(
      typescript.map((f) => relative(ROOT, f)),
      [],
    );
  });

  it('the scan sees src/ at all: it finds the runtime dependencies src/ imports', () => {
    const seen = new Set(
      tsFiles(join(ROOT, 'src')).flatMap((f) => bareImports(readFileSync(f, 'utf8')).map(packageOf)),
    );
    for (const dep of ['commander', 'zod', 'undici', 'ajv', 'pg'])
      assert.ok(seen.has(dep), `no import of ${dep} found in src/`);
  });

  it('the check can fail: static, dynamic, type-only and required imports of a devDependency are found', () => {
    const root = mkdtempSync(join(tmpdir(), 'onetap-boundary-'));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write('cli/gen.ts', "import ts from 'typescript';\nimport { z } from 'zod';\nimport { x } from '../util/x.js';\n");
    write(
      'util/lazy.ts',
      "const m = await import('micromark');\nconst r = require('typescript/lib/tsserverlibrary');\n",
    );
    write(
      'util/types.ts',
      "import type { Page } from 'playwright-core';\nimport { join } from 'node:path';\nimport { EventEmitter } from 'events';\n",
    );
    write(
      'util/quiet.ts',
      "// import ts from 'typescript';\n/** from 'typescript' */\nexport const url = 'https://example.com';\nconst " +
        "said = 'taken from ' + 'typescript';\nconst cmd = 'store import';\n",
    );
    try {
      assert.deepEqual(nonRuntimeImports(root, PACKAGE.dependencies).sort(), [
        'cli/gen.ts: typescript',
        'util/lazy.ts: micromark',
        'util/lazy.ts: typescript/lib/tsserverlibrary',
        'util/types.ts: playwright-core',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('typescript is a devDependency, and the packed tarball holds nothing of scripts/', () => {
    assert.ok(
      Object.hasOwn(PACKAGE.devDependencies, 'typescript') && !Object.hasOwn(PACKAGE.dependencies, 'typescript'),
    );
    // The file list npm would pack, from the build this test runs in (no prepack: it would compile again).
    const out = execFileSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    assert.ok(files.includes('dist/src/cli/main.js'), 'the pack lists the CLI (is dist/ built?)');
    const generator = ['dist/src/cli/reference.js', 'dist/src/cli/docs.js'];
    assert.deepEqual(
      files.filter((f) => /^(dist\/)?scripts\//.test(f) || generator.includes(f)),
      [],
    );
  });
});
