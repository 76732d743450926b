/** `onetap init` writes no file through a symbolic link: it would copy, or write over, whatever the link points to. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, snapshotDir } from './helpers.js';

async function twoDirs(): Promise<{ list: string; outside: string }> {
  const root = await mkdtemp(join(tmpdir(), 'onetap-init-'));
  await mkdir(join(root, 'list'));
  await mkdir(join(root, 'outside'));
  await writeFile(join(root, 'outside', 'secret.txt'), "not the list's\n");
  return { list: join(root, 'list'), outside: join(root, 'outside') };
}

describe('onetap init and symbolic links', () => {
  const cases: Array<[what: string, make: (d: { list: string; outside: string }) => Promise<string>]> = [
    [
      'a .gitignore linked to a file elsewhere',
      async ({ list, outside }) => {
        await symlink(join(outside, 'secret.txt'), join(list, '.gitignore'));
        return join(list, '.gitignore');
      },
    ],
    [
      'a catalog/ linked to a directory elsewhere',
      async ({ list, outside }) => {
        await symlink(outside, join(list, 'catalog'));
        return join(list, 'catalog');
      },
    ],
    [
      'a dangling link where the catalog goes',
      async ({ list, outside }) => {
        await mkdir(join(list, 'catalog'));
        await symlink(join(outside, 'gone.json'), join(list, 'catalog', 'servers.json'));
        return join(list, 'catalog', 'servers.json');
      },
    ],
    [
      'a .github/ linked elsewhere',
      async ({ list, outside }) => {
        await symlink(outside, join(list, '.github'));
        return join(list, '.github');
      },
    ],
  ];
  for (const [what, make] of cases) {
    it(`${what}: exit 1 naming the link, nothing written on either side`, async () => {
      const dirs = await twoDirs();
      const link = await make(dirs);
      const before = [await snapshotDir(dirs.list), await snapshotDir(dirs.outside)];
      const r = await runCli(['init', '--dir', dirs.list]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(
        r.stderr,
        `onetap: ${link} is a symbolic link: init writes no file through one (nothing was written)\n`,
      );
      assert.deepEqual([await snapshotDir(dirs.list), await snapshotDir(dirs.outside)], before);
      assert.deepEqual(await readdir(dirs.outside), ['secret.txt']);
    });
  }

  it("without links: the files are written (and the list directory given as a link is the user's choice)", async () => {
    const { list, outside } = await twoDirs();
    await symlink(list, join(outside, 'via-link'));
    const r = await runCli(['init', '--dir', join(outside, 'via-link')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(await readFile(join(list, '.gitignore'), 'utf8'), /^\.onetap\/$/m);
    assert.ok((await readdir(join(list, 'catalog'))).includes('servers.json'));
  });
});
