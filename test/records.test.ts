/** Honest records and up-front checks: a run says what happened; bad flags stop before the first probe. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet();
});
after(async () => {
  await fleet.close();
});

async function lastRun(dir: string) {
  const files = (await readdir(join(dir, 'catalog', 'history'))).filter((f) => f.endsWith('.jsonl')).sort();
  const lines = (await readFile(join(dir, 'catalog', 'history', files.at(-1)!), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return lines.filter((l) => l.type === 'run').at(-1);
}

describe('records say what happened', () => {
  it('a --write that fails is recorded as not applied, and the catalog is untouched', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json'))]));
    const out = join(ws.dir, 'out');
    await mkdir(out);
    await writeFile(join(out, 'generated'), 'a file where the generated directory should go');
    const before = await readFile(ws.catalogPath, 'utf8');
    const r = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--state',
      ws.statePath,
      '--write',
      '--allow-http',
      '--out',
      out,
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^onetap: /);
    assert.equal((await lastRun(ws.dir)).applied, false);
    assert.equal(await readFile(ws.catalogPath, 'utf8'), before);
  });

  it('a pending drop reads "would drop (1 of 2)" and the row stays', async () => {
    const ws = await workspace(
      catalogOf([
        server('Gone', fleet.url('http-410')),
        server('A', fleet.url('ok-json')),
        server('B', fleet.url('ok-sse')),
      ]),
    );
    const r = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--state',
      ws.statePath,
      '--allow-http',
      '--confirm-drops',
      '2',
      '--json',
    ]);
    const row = JSON.parse(r.stdout).plan.find((x: { name: string }) => x.name === 'Gone');
    assert.equal(row.decision, 'keep-failed');
    assert.equal(row.note, 'would drop (1 of 2 consecutive runs)');
  });
});

describe('flags are checked before the first probe (exit 2 naming the flag)', () => {
  for (const [flag, value, setup] of [
    ['--kotlin-package', 'com.example.bad-name', null],
    ['--out', 'is-a-file', 'file'],
    ['--state', 'is-a-dir', 'dir'],
    ['--timeout', '99999999999', null],
    ['--per-host', '0', null],
    ['--profile', 'kai-9001', null],
  ] as const) {
    it(`${flag} ${value}`, async () => {
      const ws = await workspace(catalogOf([server('A', fleet.url('flag-check-target'))]));
      const path = join(ws.dir, value);
      if (setup === 'file') await writeFile(path, 'x');
      if (setup === 'dir') await mkdir(path);
      const args = flag === '--state' ? ['--state', path] : ['--state', ws.statePath, flag, setup ? path : value];
      const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', ...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^onetap: ${flag}`));
      assert.equal(fleet.hits('flag-check-target').POST, 0, 'no probe was made');
    });
  }
});
