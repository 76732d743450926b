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
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
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

const docs = [
  'DESIGN.md',
  'BENCHMARKS.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
].filter((f) => existsSync(join(ROOT, f)));

/**
 * Repository paths written in text: `src/…`, `test/…`, `bench/…`, `docs/…`, `action/…`, `conformance/…`, `scripts/…`.
 */
function repositoryPaths(text: string): string[] {
  return (
    [...text.matchAll(/(?<![\w./-])((?:src|test|bench|docs|action|conformance|scripts)\/[\w.\-/]*[\w/])/g)]
      .map((m) => m[1]!)
      // `src/model/` and `docs/reference/*.md`-like globs name a folder; a `<placeholder>` is not a path.
      .map((p) => p.replace(/\*.*$/, ''))
      .filter((p) => !p.includes('<'))
  );
}

/**
 * A text vendored verbatim from the shared research (its first line says so: docs/one-tap-policy.md,
 * docs/app-client.md): the paths it writes are those of the repositories it was read from, not of this one.
 */
const vendored = (text: string) => text.startsWith('<!-- Vendored verbatim');

/**
 * Where a text cites the planning repository's notes, which a clone does not have (what the code needs is vendored).
 */
const outsideNotes = (text: string) => [...text.matchAll(/(?:shared\/)?notes\/[\w.-]+\.md/g)].map((m) => m[0]);

function missingPaths(text: string): string[] {
  return [...new Set(repositoryPaths(text))].filter(
    (p) => !existsSync(join(ROOT, p)) && !existsSync(join(ROOT, 'dist', p)),
  );
}

/** The comments of a TypeScript file (line and block comments), where paths are named. */
function comments(source: string): string {
  return [...source.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]).join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts') || f.endsWith('.mjs'))
    .map((f) => join(dir, f));
}

describe('documentation links', () => {
  it('the policy the README cites is in the repository', () => {
    assert.match(readFileSync(join(ROOT, 'docs/one-tap-policy.md'), 'utf8'), /^# One-tap server policy/m);
  });

  it('the app client the prober emulates is in the repository, with the sections the code cites', () => {
    const text = readFileSync(join(ROOT, 'docs/app-client.md'), 'utf8');
    assert.ok(vendored(text));
    for (const section of ['4.1', '4.2', '4.3', '4.4', '4.5', '4.6'])
      assert.match(text, new RegExp(`^### ${section.replace('.', '\\.')} `, 'm'), section);
    assert.match(text, /^## 8\. The app's HTTP engines/m);
  });

  it("no code comment, doc or README cites the planning repository's notes (docs/app-client.md holds what the code uses)", () => {
    const texts = [
      'README.md',
      ...docs,
      ...sourceFiles('src'),
      ...sourceFiles('test'),
      ...sourceFiles('bench'),
      ...sourceFiles('scripts'),
    ];
    const cited = texts.flatMap((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      return vendored(text) ? [] : outsideNotes(f.endsWith('.md') ? text : comments(text)).map((n) => `${f}: ${n}`);
    });
    assert.deepEqual(cited, []);
    assert.deepEqual(outsideNotes('as shared/notes/transport.md §4.2 says, and notes/anchors.md'), [
      'shared/notes/transport.md',
      'notes/anchors.md',
    ]);
  });

  for (const file of docs) {
    it(`${file}: every relative link resolves inside the repository`, () => assert.deepEqual(brokenLinks(file), []));
  }

  it('README.md: every relative link resolves inside the repository', () => {
    assert.deepEqual(brokenLinks('README.md'), []);
  });

  it('every repository path the README and the docs name exists', () => {
    const missing = ['README.md', ...docs].flatMap((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      return vendored(text) ? [] : missingPaths(text).map((p) => `${f}: ${p}`);
    });
    assert.deepEqual(missing, []);
  });

  it('every repository path a code comment names exists', () => {
    const missing = [
      ...sourceFiles('src'),
      ...sourceFiles('test'),
      ...sourceFiles('bench'),
      ...sourceFiles('action'),
      ...sourceFiles('scripts'),
    ].flatMap((f) => missingPaths(comments(readFileSync(join(ROOT, f), 'utf8'))).map((p) => `${f}: ${p}`));
    assert.deepEqual(missing, []);
  });

  it('the path check can fail', () => {
    assert.deepEqual(missingPaths('see `src/model/observation.ts` and src/nowhere/gone.ts, not src/model/'), [
      'src/nowhere/gone.ts',
    ]);
  });
});
