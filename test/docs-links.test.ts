/** Links in the documentation work from a clone: every relative link names a file inside the repository. */
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
    // docs/readme/*.md are README fragments: their links are written as the README will hold them.
    const base = file.startsWith(join('docs', 'readme')) ? '.' : dirname(file);
    const path = resolve(ROOT, base, target);
    return relative(ROOT, path).startsWith('..') || !existsSync(path);
  });
}

const docs = ['DESIGN.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs'), { recursive: true }).map(String).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]
  .filter((f) => existsSync(join(ROOT, f)));

describe('documentation links', () => {
  it('the policy the README cites is in the repository', () => {
    assert.match(readFileSync(join(ROOT, 'docs/one-tap-policy.md'), 'utf8'), /^# One-tap server policy/m);
  });

  for (const file of docs) {
    it(`${file}: every relative link resolves inside the repository`, () => assert.deepEqual(brokenLinks(file), []));
  }

  // The README itself is edited by the lead when the branches merge; until its policy link points at
  // docs/one-tap-policy.md this check is reported as a TODO rather than failing every other branch.
  const readmeOutdated = readFileSync(join(ROOT, 'README.md'), 'utf8').includes('](../shared/spec/one-tap-policy.md)');
  it('README.md: every relative link resolves inside the repository', { todo: readmeOutdated && 'README still links ../shared/spec/one-tap-policy.md (docs/readme/md.md says what to change)' }, () => {
    assert.deepEqual(brokenLinks('README.md'), []);
  });
});
