/**
 * A maintainer's own client and outputs (issue 21 item 3): a catalog's profile derived from a built-in one is the
 * one that probes (its clientInfo, User-Agent and headers reach the server) and is recorded by its digest; the
 * catalog's `outputs` say which generated files a refresh writes, and `--outputs` overrides them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFleet, answer, type Ctx, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';
import { CLIENT_PROFILES } from '../src/attest/profile.js';
import { BUILT_IN_PROFILE_IDS } from '../src/catalog/schema.js';
import { builtInProfileIds } from '../src/catalog/lint.js';

/** The deciding profiles' digests recorded in a workspace's history. */
async function digests(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.jsonl'))
      found.push(
        ...[...(await readFile(join(e.parentPath, e.name), 'utf8')).matchAll(/"profileDigest":"([0-9a-f]{16})"/g)].map(
          (m) => m[1]!,
        ),
      );
  }
  return found;
}

describe("a list's own client profile", () => {
  const seen: Array<{ ua: string | undefined; client: unknown; header: string | undefined; version: unknown }> = [];
  const recording = (c: Ctx): void => {
    if (c.msg?.method === 'initialize') {
      seen.push({
        ua: c.req.headers['user-agent'],
        client: c.msg.params?.clientInfo,
        header: c.req.headers['x-client-build'] as string | undefined,
        version: c.msg.params?.protocolVersion,
      });
    }
    answer(c);
  };
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({ recording });
  });
  after(async () => {
    await fleet.close();
  });

  const policy = {
    authOptionalHosts: [],
    sharedGatewayHosts: [],
    clientProfile: 'acme-app',
    profiles: {
      'acme-app': {
        extends: 'mcp-2025-11-25',
        clientInfo: { name: 'Acme', version: '3.1' },
        userAgent: 'Acme/3.1',
        headers: { 'X-Client-Build': '311' },
      },
    },
  };

  it("probes as the catalog says and records the profile's id and digest", async () => {
    const ws = await workspace(catalogOf([server('Rec', fleet.url('recording'))], { policy }));
    seen.length = 0;
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--json', '--record']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(seen[0], {
      ua: 'Acme/3.1',
      client: { name: 'Acme', version: '3.1' },
      header: '311',
      version: CLIENT_PROFILES['mcp-2025-11-25']!.protocolVersion,
    });
    const row = JSON.parse(r.stdout).plan[0];
    assert.equal(row.profile, 'acme-app');
    const first = await digests(ws.dir);
    assert.equal(first.length, 1);

    // A changed definition is another digest: a record says which client it saw.
    const changed = { ...policy, profiles: { 'acme-app': { ...policy.profiles['acme-app'], userAgent: 'Acme/3.2' } } };
    const ws2 = await workspace(catalogOf([server('Rec', fleet.url('recording'))], { policy: changed }));
    await runCli(['refresh', '--catalog', ws2.catalogPath, '--allow-http', '--record']);
    const second = await digests(ws2.dir);
    assert.equal(second.length, 1);
    assert.notEqual(second[0], first[0]);
  });

  it("--profile takes the catalog's ids; an unknown one exits 2 naming the flag and the known ids", async () => {
    const ws = await workspace(catalogOf([server('Rec', fleet.url('recording'))], { policy }));
    const ok = await runCli([
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--profile',
      'kai-9000',
      '--json',
    ]);
    assert.equal(JSON.parse(ok.stdout).plan[0].profile, 'kai-9000');
    const bad = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--profile', 'acme-ap']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^onetap: --profile: unknown profile \(known: kai-9000, .*acme-app\), got "acme-ap"/);
  });

  it('lint: an unknown clientProfile, and an own profile named as a built-in one', async () => {
    const ws = await workspace(
      catalogOf([], {
        policy: { ...policy, clientProfile: 'nope', profiles: { 'kai-9000': { extends: 'kai-9000' } } } as never,
      }),
    );
    const r = await runCli(['lint', '--catalog', ws.catalogPath]);
    assert.equal(r.code, 1);
    assert.match(r.stdout + r.stderr, /policy\.clientProfile: unknown client profile "nope"/);
    assert.match(r.stdout + r.stderr, /policy\.profiles\.kai-9000: "kai-9000" is a built-in profile/);
  });

  it("the schema's built-in ids are the code's", () => {
    assert.deepEqual(builtInProfileIds(), Object.keys(CLIENT_PROFILES));
    assert.deepEqual([...BUILT_IN_PROFILE_IDS], Object.keys(CLIENT_PROFILES));
  });
});

describe('outputs', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet();
  });
  after(async () => {
    await fleet.close();
  });

  const files = async (dir: string) =>
    (await readdir(dir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile() && !e.parentPath.includes('.onetap') && !e.parentPath.includes('history'))
      .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
      .sort();

  it("the catalog's outputs decide which files are written and where; --outputs overrides", async () => {
    const outputs = {
      json: { path: 'dist/list.json' },
      ts: false,
      kotlin: { package: 'org.acme.mcp' },
      snapshot: true,
    };
    const ws = await workspace(catalogOf([server('Ok', fleet.url('ok-json'))], { outputs } as never));
    const r = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await files(join(ws.dir, 'catalog')), [
      'dist/list.json',
      'generated/PopularMcpServers.kt',
      'servers.json',
      'servers.md',
      'tools.lock.json',
    ]);
    assert.match(
      readFileSync(join(ws.dir, 'catalog/generated/PopularMcpServers.kt'), 'utf8'),
      /^package org\.acme\.mcp$/m,
    );

    const ws2 = await workspace(catalogOf([server('Ok', fleet.url('ok-json'))], { outputs } as never));
    const only = await runCli([
      'refresh',
      '--catalog',
      ws2.catalogPath,
      '--allow-http',
      '--write',
      '--outputs',
      'ts,log',
    ]);
    assert.equal(only.code, 0, only.stderr);
    assert.deepEqual(await files(join(ws2.dir, 'catalog')), [
      'generated/popular-servers.ts',
      'log.md',
      'servers.json',
      'tools.lock.json',
    ]);
    assert.ok(!existsSync(join(ws2.dir, 'catalog/dist')));
  });

  it("refuses an unknown output (exit 2) and a path outside the catalog's directory (nothing probed)", async () => {
    const ws = await workspace(
      catalogOf([server('Ok', fleet.url('ok-json'))], { outputs: { json: { path: '../escape.json' } } } as never),
    );
    const unknown = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--outputs', 'json,yaml']);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /^onetap: --outputs: unknown output "yaml" \(known: json, ts, kotlin, snapshot, log\), got "json,yaml"/,
    );
    const hits = { ...fleet.hits('ok-json') };
    const outside = await runCli(['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write']);
    assert.equal(outside.code, 1);
    assert.match(outside.stderr, /outputs\.json\.path: must name a file inside the catalog's directory/);
    assert.deepEqual(fleet.hits('ok-json'), hits, 'nothing probed');
    assert.ok(!existsSync(join(ws.dir, 'escape.json')));
    await readFile(ws.catalogPath, 'utf8');
  });
});
