/**
 * Published identifiers belong to servers, not to positions: `publish --out` twice, with a server deleted in
 * between, and the bytes on disk compared. Also: `publish --out` removes only the cards it wrote.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverIds } from '../src/catalog/ids.js';
import { publication } from '../src/publish/publish.js';
import { statusModel } from '../src/status/model.js';
import type { Catalog } from '../src/index.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';

// Two servers named alike (on different hosts), and ordinary ones around them.
const SERVERS = [
  server('Alpha Search', 'https://alpha.example/mcp'),
  server('Weather', 'https://weather-one.example/mcp'),
  server('Beta Docs', 'https://beta.example/mcp'),
  server('Weather', 'https://weather-two.example/mcp'),
  server('Gamma', 'https://gamma.example/mcp'),
];

/** `publish --out` in a fresh or given directory; returns the directory and every card file's bytes. */
async function publish(catalog: Catalog, out?: string) {
  const ws = await workspace(catalog);
  const dir = out ?? (await mkdtemp(join(tmpdir(), 'onetap-pubids-')));
  const r = await runCli(['publish', '--out', dir, '--catalog', ws.catalogPath, '--publisher', 'lists.example.org']);
  assert.equal(r.code, 0, r.stderr);
  return { dir, stdout: r.stdout, files: await cardFiles(dir) };
}

async function cardFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(dir, 'cards'))).sort())
    out[name] = await readFile(join(dir, 'cards', name), 'utf8');
  return out;
}

/** url → the identifier the AI Catalog gives it (read back through the card's remote). */
async function idsByUrl(dir: string): Promise<Record<string, string>> {
  const ai = JSON.parse(await readFile(join(dir, '.well-known', 'ai-catalog.json'), 'utf8')) as {
    entries: Array<{ identifier: string; url: string }>;
  };
  const out: Record<string, string> = {};
  for (const e of ai.entries) {
    const card = JSON.parse(await readFile(join(dir, e.url), 'utf8')) as { remotes: Array<{ url: string }> };
    out[card.remotes[0]!.url] = e.identifier;
  }
  return out;
}

describe('stable identifiers', () => {
  it('an id is a function of the server: names slug alike → slug--hash of the URL, for both', () => {
    const ids = serverIds(SERVERS);
    assert.deepEqual(
      ids.map((id) => id.replace(/--[0-9a-f]{8}$/, '--H')),
      ['alpha-search', 'weather--H', 'beta-docs', 'weather--H', 'gamma'],
    );
    assert.notEqual(ids[1], ids[3]);
    // Reordering changes no id; neither does deleting a server that collides with nobody.
    const reversed = serverIds([...SERVERS].reverse()).reverse();
    assert.deepEqual(reversed, ids);
    assert.deepEqual(serverIds(SERVERS.filter((_, i) => i !== 0)), ids.slice(1));
    // The status page's /servers/<id> and the published cards use the same id.
    const catalog = catalogOf(SERVERS);
    assert.deepEqual(
      statusModel(catalog, () => ({ points: [], last: null }), null, new Date()).servers.map((s) => s.id),
      ids,
    );
    assert.deepEqual(
      publication(catalog).cards.map((c) => c.path),
      ids.map((id) => `/cards/${id}.json`),
    );
  });

  it('deleting one of two servers named alike never hands its id to the other', () => {
    const before = serverIds(SERVERS);
    for (const gone of [1, 3]) {
      const rest = SERVERS.filter((_, i) => i !== gone);
      const after = serverIds(rest);
      const formerIds = new Map(SERVERS.map((s, i) => [before[i]!, s.url]));
      rest.forEach((s, i) => {
        const owner = formerIds.get(after[i]!);
        assert.ok(owner === undefined || owner === s.url, `${s.url} took the id "${after[i]}" of ${owner}`);
      });
    }
  });

  it('delete a server, publish again: every other card and id unchanged byte for byte, the stale card removed, foreign files kept', async () => {
    const first = await publish(catalogOf(SERVERS));
    const idsBefore = await idsByUrl(first.dir);
    // Files onetap did not write: a card-looking one and another.
    await writeFile(join(first.dir, 'cards', 'hand-made.json'), '{"mine":true}\n');
    await writeFile(join(first.dir, 'cards', 'README.txt'), "not onetap's\n");
    const deleted = SERVERS[2]!; // Beta Docs
    const second = await publish(catalogOf(SERVERS.filter((s) => s !== deleted)), first.dir);
    const idsAfter = await idsByUrl(second.dir);
    assert.deepEqual(idsAfter, Object.fromEntries(Object.entries(idsBefore).filter(([url]) => url !== deleted.url)));
    const goneCard = 'beta-docs.json';
    assert.ok(goneCard in first.files);
    assert.equal(existsSync(join(second.dir, 'cards', goneCard)), false, 'the stale card is removed');
    for (const [name, bytes] of Object.entries(first.files)) {
      if (name === goneCard || name.startsWith('.')) continue;
      assert.equal(second.files[name], bytes, `${name} unchanged byte for byte`);
    }
    assert.equal(second.files['hand-made.json'], '{"mine":true}\n');
    assert.equal(second.files['README.txt'], "not onetap's\n");
    assert.match(second.stdout, /removed 1 card of servers no longer in the catalog:\n {2}.*beta-docs\.json\n/);
    const manifest = JSON.parse(second.files['.onetap-manifest.json']!) as { cards: Record<string, string> };
    assert.deepEqual(
      Object.keys(manifest.cards),
      Object.keys(second.files).filter((n) => n !== 'hand-made.json' && n !== 'README.txt' && !n.startsWith('.')),
    );
  });

  it('a stale card changed since it was written is kept (and said); a manifest naming files outside cards/ deletes nothing', async () => {
    const first = await publish(catalogOf(SERVERS));
    await writeFile(join(first.dir, 'cards', 'gamma.json'), '{"edited":"by hand"}\n');
    const outside = join(first.dir, 'outside.json');
    await writeFile(outside, 'keep me\n');
    const manifestPath = join(first.dir, 'cards', '.onetap-manifest.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    const { createHash } = await import('node:crypto');
    manifest.cards['../outside.json'] = createHash('sha256').update('keep me\n').digest('hex');
    await writeFile(manifestPath, JSON.stringify(manifest));
    const second = await publish(catalogOf(SERVERS.filter((s) => s.name !== 'Gamma')), first.dir);
    assert.equal(second.files['gamma.json'], '{"edited":"by hand"}\n');
    assert.match(second.stdout, /kept 1 card .*changed since onetap wrote them.*\n {2}.*gamma\.json\n/);
    assert.equal(await readFile(outside, 'utf8'), 'keep me\n');
    assert.ok(
      !('gamma.json' in JSON.parse(second.files['.onetap-manifest.json']!).cards),
      "no longer onetap's to remove",
    );
  });
});
