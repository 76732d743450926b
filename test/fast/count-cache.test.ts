/**
 * Token counts kept in the user's cache (`src/attest/count-cache.ts`): a count comes back only for the same text
 * counted the same way; whatever else is in the folder is a miss, never a count; the folder is bounded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash } from 'node:crypto';
import { CountCache } from '../../src/attest/count-cache.js';

const digest = (text: string) => hash('sha256', text, 'hex');

describe('CountCache', () => {
  const withRoot = async (fn: (root: string) => Promise<void>) => {
    const root = await mkdtemp(join(tmpdir(), 'onetap-count-cache-'));
    try {
      await fn(root);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  };

  it('a kept count comes back for its text, not for another text or another counter', () =>
    withRoot(async (root) => {
      const cache = new CountCache(root, 'counter A');
      await cache.put(digest('x'), 92);
      assert.equal(await cache.get(digest('x')), 92);
      assert.equal(await cache.get(digest('y')), null);
      assert.equal(await new CountCache(root, 'counter B').get(digest('x')), null, 'another counter, another folder');
      assert.equal(await new CountCache(root, 'counter A').get(digest('x')), 92, 'a new process reads it');
    }));

  it('what is not a count is a miss: other text, a negative, a long file, a name that is not a digest', () =>
    withRoot(async (root) => {
      const cache = new CountCache(root, 'c');
      await cache.put(digest('seed'), 1);
      const [folder] = await readdir(root);
      const rows: Array<[string, string]> = [
        ['-5\n', 'negative'],
        ['12abc', 'not a number'],
        [`${'1'.repeat(100)}`, 'over 64 bytes'],
        ['1e3', 'not digits'],
        ['', 'empty'],
      ];
      for (const [content, label] of rows) {
        await writeFile(join(root, folder!, digest(label)), content);
        assert.equal(await cache.get(digest(label)), null, label);
      }
      assert.equal(await cache.get('../../etc/passwd'), null, 'a name that is not a digest is never a path');
      await cache.put('../escape', 3);
      await cache.put(digest('neg'), -1);
      await cache.put(digest('frac'), 1.5);
      assert.equal(await cache.get(digest('neg')), null);
      assert.equal(await cache.get(digest('frac')), null);
      assert.deepEqual((await readdir(root)).sort(), [folder], 'nothing written outside its folder');
    }));

  it('a folder that cannot be written is only a miss', () =>
    withRoot(async (root) => {
      const file = join(root, 'a-file');
      await writeFile(file, '');
      const cache = new CountCache(file, 'c');
      await cache.put(digest('x'), 7);
      assert.equal(await cache.get(digest('x')), null);
    }));

  it('bounded: past its entries, the files written longest ago go', () =>
    withRoot(async (root) => {
      const seed = new CountCache(root, 'c', 1_000);
      for (let i = 0; i < 6; i++) await seed.put(digest(`t${i}`), i);
      const [folder] = await readdir(root);
      for (let i = 0; i < 6; i++) await utimes(join(root, folder!, digest(`t${i}`)), 1_000 + i, 1_000 + i);
      const cache = new CountCache(root, 'c', 4);
      await cache.put(digest('t6'), 6);
      const kept = await Promise.all(Array.from({ length: 7 }, (_, i) => cache.get(digest(`t${i}`))));
      assert.deepEqual(kept, [null, null, null, 3, 4, 5, 6]);
    }));
});
