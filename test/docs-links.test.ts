/**
 * Links and paths in the documentation and the code work from a clone: every relative link names a file inside the
 * repository, and every repository path written in the README, the docs and the code's comments exists.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Relative Markdown link targets `[text](target)` outside code blocks, without their #fragment. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'))
    .map((t) => decodeURIComponent(t.replace(/#.*$/, '')));
}

function brokenLinks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return relativeLinks(text).filter((target) => {
    const path = resolve(ROOT, dirname(file), target);
    return relative(ROOT, path).startsWith('..') || !existsSync(path);
  });
}

const docs = ['DESIGN.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs'), { recursive: true }).map(String).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]
  .filter((f) => existsSync(join(ROOT, f)));

/** Repository paths written in text: `src/…`, `test/…`, `bench/…`, `docs/…`, `action/…`, `conformance/…`. */
function repositoryPaths(text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])((?:src|test|bench|docs|action|conformance)\/[\w.\-/]*[\w/])/g)].map((m) => m[1]!)
    // `src/model/` and `docs/reference/*.md`-like globs name a folder; a `<placeholder>` is not a path.
    .map((p) => p.replace(/\*.*$/, '')).filter((p) => !p.includes('<'));
}

function missingPaths(text: string): string[] {
  return [...new Set(repositoryPaths(text))].filter((p) => !existsSync(join(ROOT, p)) && !existsSync(join(ROOT, 'dist', p)));
}

/** The comments of a TypeScript file (line and block comments), where paths are named. */
function comments(source: string): string {
  return [...source.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]).join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true }).map(String).filter((f) => f.endsWith('.ts') || f.endsWith('.mjs')).map((f) => join(dir, f));
}

describe('documentation links', () => {
  it('the policy the README cites is in the repository', () => {
    assert.match(readFileSync(join(ROOT, 'docs/one-tap-policy.md'), 'utf8'), /^# One-tap server policy/m);
  });

  for (const file of docs) {
    it(`${file}: every relative link resolves inside the repository`, () => assert.deepEqual(brokenLinks(file), []));
  }

  it('README.md: every relative link resolves inside the repository', () => {
    assert.deepEqual(brokenLinks('README.md'), []);
  });

  it('every repository path the README and the docs name exists', () => {
    const missing = ['README.md', ...docs].flatMap((f) => missingPaths(readFileSync(join(ROOT, f), 'utf8')).map((p) => `${f}: ${p}`));
    assert.deepEqual(missing, []);
  });

  it('every repository path a code comment names exists', () => {
    const missing = [...sourceFiles('src'), ...sourceFiles('test'), ...sourceFiles('bench'), ...sourceFiles('action')]
      .flatMap((f) => missingPaths(comments(readFileSync(join(ROOT, f), 'utf8'))).map((p) => `${f}: ${p}`));
    assert.deepEqual(missing, []);
  });

  it('the path check can fail', () => {
    assert.deepEqual(missingPaths('see `src/model/observation.ts` and src/nowhere/gone.ts, not src/model/'), ['src/nowhere/gone.ts']);
  });
});
