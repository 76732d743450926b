/**
 * `onetap rejudge`: recorded evidence judged again. With unchanged rules, a recorded run over every fleet
 * behaviour judges the same (exit 0): the record keeps everything the classifier reads. A changed setting (the
 * catalog's requiresAuth, another deciding profile) shows as a difference (exit 1); a profile the run has no
 * evidence of is `no evidence`, never a difference. Tool review is judged against the acceptance of that day.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { refresh, rejudge, type Evidence, type RecordedRun } from '../src/index.js';
import { startFleet, type Fleet } from './fleet/fleet.js';
import { CASES, FIXTURE } from './fixtures/record-observations.js';
import { catalogOf, recordedRow, recordedRun, runCli, server, snapshotDir, workspace } from './helpers.js';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet();
});
after(async () => {
  await fleet.close();
});

interface RejudgeJson {
  profile: string;
  differences: number;
  noEvidence: number;
  runs: Array<{
    id: string;
    rows: Array<{
      name: string;
      recorded: { verdict: string; reason: string };
      today: { verdict: string; reason: string } | null;
      differs: boolean;
    }>;
  }>;
}

/** Every fleet behaviour of the recorded observations, once, as a catalog row (auth-optional where the case says). */
function fleetCatalog() {
  const seen = new Set<string>();
  return CASES.filter(([scenario, options]) => {
    const key = `${scenario}:${!!options.requiresAuth}`;
    if (seen.has(key) || options.maxBodyBytes) return false;
    seen.add(key);
    return true;
  }).map(([scenario, options], i) =>
    server(`${scenario}${options.requiresAuth ? ' (key)' : ''}`, `${fleet.url(scenario)}?row=${i}`, {
      requiresAuth: !!options.requiresAuth,
    }),
  );
}

describe('rejudge', () => {
  it('over a recorded run of every fleet behaviour, unchanged rules judge the same (exit 0); a changed setting differs (exit 1)', async () => {
    const servers = fleetCatalog();
    const ws = await workspace(
      catalogOf(servers, {
        policy: { authOptionalHosts: [new URL(fleet.origin).host], sharedGatewayHosts: [new URL(fleet.origin).host] },
      }),
    );
    const r = await refresh({
      catalogPath: ws.catalogPath,
      record: true,
      allowHttp: true,
      timeoutMs: 1_000,
      probe: { retryDelayMs: 10 },
    });
    assert.equal(r.exitCode, 0);
    assert.ok(new Set(r.plan.rows.map((x) => x.verdict)).size === 4, 'the run covers every verdict class');

    const before = await snapshotDir(ws.dir);
    const hitsBefore = JSON.stringify(servers.map((s) => fleet.hits(new URL(s.url).pathname.slice(1))));
    const same = await runCli(['rejudge', '--catalog', ws.catalogPath, '--json']);
    assert.equal(same.code, 0, same.stderr + same.stdout);
    assert.deepEqual(await snapshotDir(ws.dir), before, 'no file written');
    assert.equal(
      JSON.stringify(servers.map((s) => fleet.hits(new URL(s.url).pathname.slice(1)))),
      hitsBefore,
      'no server contacted',
    );
    const judged = JSON.parse(same.stdout) as RejudgeJson;
    assert.equal(judged.runs.length, 1);
    assert.equal(judged.runs[0]!.rows.length, servers.length);
    assert.deepEqual([judged.differences, judged.noEvidence], [0, 0]);
    for (const row of judged.runs[0]!.rows) assert.deepEqual(row.today, row.recorded, row.name);
    const text = await runCli(['rejudge', '--catalog', ws.catalogPath]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      new RegExp(`Summary: 1 run, ${servers.length} rows judged as kai-9000: 0 differ, 0 without evidence`),
    );

    // The catalog now says an auth-optional entry needs no key: its recorded evidence judges otherwise today.
    const catalog = JSON.parse(await readFile(ws.catalogPath, 'utf8'));
    const keyed = catalog.servers.find((s: { name: string }) => s.name === 'auth-optional (key)');
    keyed.requiresAuth = false;
    await writeFile(ws.catalogPath, JSON.stringify(catalog, null, 2));
    const changed = await runCli(['rejudge', '--catalog', ws.catalogPath, '--json']);
    assert.equal(changed.code, 1, changed.stderr);
    const diff = JSON.parse(changed.stdout) as RejudgeJson;
    assert.equal(diff.differences, 1);
    const row = diff.runs[0]!.rows.find((x) => x.differs)!;
    assert.equal(row.name, 'auth-optional (key)');
    assert.deepEqual(row.recorded, { verdict: 'live', reason: 'auth-optional' });
    assert.notEqual(row.today!.verdict, 'live');

    // Another deciding profile, without --matrix: only rows whose diagnosis ran that era's client (the era check)
    // have its evidence; every other row is no evidence, and no difference.
    const other = await runCli(['rejudge', '--catalog', ws.catalogPath, '--profile', 'mcp-2026-07-28', '--json']);
    const none = JSON.parse(other.stdout) as RejudgeJson;
    assert.equal(other.code, none.differences > 0 ? 1 : 0, other.stderr);
    const rows = none.runs[0]!.rows;
    assert.ok(none.noEvidence > servers.length / 2, `${none.noEvidence} rows without a 2026-07-28 run`);
    assert.ok(rows.filter((x) => x.today === null).every((x) => !x.differs));
    assert.equal(rows.find((x) => x.name === 'ok-json')!.today, null, 'a live server gets no era check');
    assert.deepEqual(
      rows.find((x) => x.name === 'era-2026-only')!.today,
      { verdict: 'live', reason: 'ok' },
      "the era check's run is judged as deciding",
    );
  });

  it('with --matrix recorded, another deciding profile is judged from its run: a 2026-07-28 client fails the classic-only servers', async () => {
    const ws = await workspace(
      catalogOf([server('Classic', fleet.url('ok-json')), server('Stateless', fleet.url('era-2026-only'))]),
    );
    await refresh({
      catalogPath: ws.catalogPath,
      record: true,
      matrix: true,
      allowHttp: true,
      timeoutMs: 2_000,
      probe: { retryDelayMs: 10 },
    });
    const asApp = await runCli(['rejudge', '--catalog', ws.catalogPath, '--json']);
    assert.equal(asApp.code, 0, asApp.stderr);
    const as2026 = await runCli(['rejudge', '--catalog', ws.catalogPath, '--profile', 'mcp-2026-07-28', '--json']);
    assert.equal(as2026.code, 1, as2026.stderr);
    const rows = Object.fromEntries((JSON.parse(as2026.stdout) as RejudgeJson).runs[0]!.rows.map((x) => [x.name, x]));
    assert.deepEqual([rows.Classic!.recorded.verdict, rows.Classic!.differs], ['live', true]);
    assert.deepEqual(
      [rows.Stateless!.recorded, rows.Stateless!.today],
      [
        { verdict: 'review', reason: 'era-incompatible' },
        { verdict: 'live', reason: 'ok' },
      ],
    );
  });

  it('usage: --runs and --since together are exit 2; --since takes a day or a time; no history is exit 0', async () => {
    const ws = await workspace(catalogOf([server('A', 'https://a.example/mcp')]));
    const both = await runCli(['rejudge', '--catalog', ws.catalogPath, '--runs', '2', '--since', '2026-11-01']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^onetap: --runs, --since: give one of them$/m);
    const bad = await runCli(['rejudge', '--catalog', ws.catalogPath, '--since', 'last week']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^onetap: --since: expected a UTC day/m);
    const empty = await runCli(['rejudge', '--catalog', ws.catalogPath, '--since', '2026-11-01']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /No recorded run/);
  });

  it('tool review is judged against the acceptance the row recorded: a later acceptance is no difference', () => {
    const evidence = (
      JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{ scenario: string; evidence: Evidence }>
    ).find((r) => r.scenario === 'ok-json')!.evidence;
    const changedTools = recordedRow(
      'A',
      {
        url: 'https://a.example/mcp',
        verdict: 'review',
        reason: 'tools-changed',
        reasons: ['tools-changed', 'ok'],
        toolsHash: '1111111111111111',
        evidence,
      },
      { acceptedHash: '2222222222222222', toolsChanged: true },
    );
    const accepted = recordedRow(
      'A',
      { url: 'https://a.example/mcp', toolsHash: '1111111111111111', evidence },
      { acceptedHash: '1111111111111111' },
    );
    const runs: RecordedRun[] = [
      recordedRun('2026-11-01T00:00:00.000Z', [changedTools]),
      recordedRun('2026-11-08T00:00:00.000Z', [accepted]),
    ];
    const r = rejudge(runs, { profile: 'kai-9000', requiresAuth: () => false });
    assert.deepEqual(
      r.runs.map((x) => x.rows[0]!.today),
      [
        { verdict: 'review', reason: 'tools-changed' },
        { verdict: 'live', reason: 'ok' },
      ],
    );
    assert.equal(r.differences, 0);
  });
});
