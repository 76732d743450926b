/**
 * Retention: the history index (and so the status page and API) keeps `--retention-days` of runs; older runs
 * are absent, and present again with a larger window. The text history in git and the accepted tool
 * snapshots are never touched by it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { refresh } from '../src/index.js';
import { startServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, runCli, server, snapshotDir, workspace } from './helpers.js';

const DAY = 86_400_000;
/** Real time: the CLI commands below keep days back from the wall clock. */
const NOW = new Date();
const RUN_DAYS_AGO = [20, 6, 0];

let fleet: Fleet;
let ws: Awaited<ReturnType<typeof workspace>>;
let historyBefore: Record<string, string>;

before(async () => {
  fleet = await startFleet({});
  ws = await workspace(catalogOf([server('Steady', fleet.url('ok-json'))]));
  for (const d of RUN_DAYS_AGO) {
    const clock = new Date(NOW.getTime() - d * DAY);
    await refresh({ catalogPath: ws.catalogPath, write: true, allowHttp: true, timeoutMs: 2_000, now: () => clock });
  }
  historyBefore = await snapshotDir(join(ws.dir, 'catalog', 'history'));
});
after(async () => {
  await fleet?.close();
});

interface Seen {
  observations: string[];
  pageRows: number;
  latest: string | null;
  daysWithData: number;
}

/** What `serve` shows with a retention window: the history API, the server page and the overview's bars. */
async function seenWith(retentionDays: number): Promise<Seen> {
  const site = await startServer({
    catalogPath: ws.catalogPath,
    port: 0,
    routes: statusRoutes({ catalogPath: ws.catalogPath, now: () => NOW, retentionDays }),
  });
  try {
    const history = (await (await fetch(`${site.url}/api/servers/steady/history?days=30`)).json()) as {
      observations: Array<{ at: string }>;
    };
    const page = await (await fetch(`${site.url}/servers/steady`)).text();
    const servers = (await (await fetch(`${site.url}/api/servers`)).json()) as {
      lastRefresh: { startedAt: string } | null;
      servers: Array<{ days30: Array<{ observations: number }> }>;
    };
    return {
      observations: history.observations.map((o) => o.at),
      pageRows: [...page.matchAll(/<tr data-verdict=/g)].length,
      latest: servers.lastRefresh?.startedAt ?? null,
      daysWithData: servers.servers[0]!.days30.filter((d) => d.observations > 0).length,
    };
  } finally {
    await site.close();
  }
}

const ago = (d: number) => new Date(NOW.getTime() - d * DAY).toISOString();

describe('retention of the history index', () => {
  it('runs older than the window are absent from the pages and API, present again with a larger window', async () => {
    const narrow = await seenWith(10);
    assert.deepEqual(narrow.observations, [ago(6), ago(0)]);
    assert.equal(narrow.pageRows, 2);
    assert.equal(narrow.daysWithData, 2);
    assert.equal(narrow.latest, ago(0));
    const wide = await seenWith(30);
    assert.deepEqual(wide.observations, [ago(20), ago(6), ago(0)]);
    assert.equal(wide.pageRows, 3);
    assert.equal(wide.daysWithData, 3);
    const narrowAgain = await seenWith(3);
    assert.deepEqual(narrowAgain.observations, [ago(0)]);
  });

  it('the text history and the accepted tool snapshots are untouched', async () => {
    await seenWith(1);
    const after = await snapshotDir(join(ws.dir, 'catalog', 'history'));
    assert.deepEqual(after, historyBefore);
    assert.ok(
      Object.keys(after).some((p) => p.includes(`${join('history', 'snapshots')}`)),
      'refresh wrote a tool snapshot',
    );
    assert.equal(Object.keys(after).filter((p) => p.endsWith('.jsonl')).length >= 1, true);
  });

  it('report --json and site keep --retention-days; the default keeps 400 days; a bad value is exit 2 naming the flag', async () => {
    const report = async (...extra: string[]) => {
      const r = await runCli(['report', '--json', '--catalog', ws.catalogPath, '--state', ws.statePath, ...extra]);
      assert.equal(r.code, 0, r.stderr);
      return (
        JSON.parse(r.stdout) as { servers: Array<{ days30: Array<{ observations: number }> }> }
      ).servers[0]!.days30.filter((d) => d.observations > 0).length;
    };
    assert.equal(await report('--retention-days', '10'), 2);
    assert.equal(await report(), 3);
    const out = join(ws.dir, 'site');
    const site = await runCli([
      'site',
      '--out',
      out,
      '--catalog',
      ws.catalogPath,
      '--state',
      ws.statePath,
      '--retention-days',
      '1',
    ]);
    assert.equal(site.code, 0, site.stderr);
    const { readFile } = await import('node:fs/promises');
    const history = JSON.parse(await readFile(join(out, 'api/servers/steady/history-30.json'), 'utf8')) as {
      observations: unknown[];
    };
    assert.equal(history.observations.length, 1);
    for (const [command, value] of [
      ['report', '0'],
      ['site', 'soon'],
      ['serve', '-3'],
      ['report', '100001'],
    ] as const) {
      const extra = command === 'report' ? ['--json'] : command === 'site' ? ['--out', out] : ['--port', '0'];
      const r = await runCli([
        command,
        ...extra,
        '--catalog',
        ws.catalogPath,
        '--state',
        ws.statePath,
        '--retention-days',
        value,
      ]);
      assert.equal(r.code, 2, `${command} --retention-days ${value}: ${r.stderr}`);
      assert.match(r.stderr, /^onetap: .*--retention-days/m);
    }
    assert.deepEqual(await snapshotDir(join(ws.dir, 'catalog', 'history')), historyBefore);
  });
});
