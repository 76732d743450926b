/**
 * A run id is recorded once, on the text history (issue 34): a re-run with the same `--run-id` probes nothing and
 * records nothing; a run recorded with `--record` and decided again with `--write` has its recorded plan applied
 * (marked applied, no second run); two deciders of one run id at once on one catalog: one records, the other waits
 * for it and shows its plan. Loopback fixtures, real processes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { catalogOf, runCli, server, workspace } from './helpers.js';
import { answer, startFleet, type Fleet } from './fleet/fleet.js';

interface Printed {
  plan: Array<{ name: string; decision: string; dropStreak: number; note: string | null }>;
  summary: Record<string, number>;
  alreadyRecorded?: true;
  written: string[];
}

describe('a run id is recorded once (the text history)', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await startFleet({
      slow: (c) => (c.msg?.method === 'initialize' ? void setTimeout(() => answer(c), 2_000) : answer(c)),
    });
  });
  after(() => fleet.close());

  const runLinesOf = async (dir: string) =>
    (await readFile(join(dirname(dir), 'history', `${new Date().toISOString().slice(0, 7)}.jsonl`), 'utf8'))
      .split('\n')
      .filter((l) => l.includes('"type":"run"'))
      .map((l) => JSON.parse(l) as { id: string; applied: boolean });
  const initializes = () => fleet.hits('ok-json').POST + fleet.hits('ok-sse').POST;

  it('a re-run records nothing and drops nothing; a --record run decided again with --write is applied as recorded, once', async () => {
    const ws = await workspace(
      catalogOf(
        [
          server('One', fleet.url('ok-json')),
          server('Two', fleet.url('ok-sse')),
          server('Dead', 'http://127.0.0.1:9/mcp'),
        ],
        { policy: { confirmDrops: 2, authOptionalHosts: [], sharedGatewayHosts: ['127.0.0.1'] } },
      ),
    );
    const args = (...more: string[]) => [
      'refresh',
      '--catalog',
      ws.catalogPath,
      '--allow-http',
      '--run-id',
      'week-1',
      ...more,
    ];
    const first = await runCli(args('--record', '--json'));
    assert.equal(first.code, 0, first.stderr);
    const recorded = JSON.parse(first.stdout) as Printed;
    assert.deepEqual(
      recorded.plan.map((r) => [r.name, r.decision, r.dropStreak]),
      [
        ['One', 'keep', 0],
        ['Two', 'keep', 0],
        ['Dead', 'keep-failed', 1],
      ],
    );
    const catalog = await readFile(ws.catalogPath, 'utf8');
    const probes = initializes();

    // Decided again with --write (GitHub's "Re-run jobs" keeps the id): the recorded plan is applied, nothing probed.
    const applied = await runCli(args('--write', '--json'));
    assert.equal(applied.code, 0, applied.stderr);
    const a = JSON.parse(applied.stdout) as Printed;
    assert.deepEqual(
      a.plan.map((r) => [r.name, r.decision, r.dropStreak]),
      recorded.plan.map((r) => [r.name, r.decision, r.dropStreak]),
      'its plan as recorded: Dead not dropped on one run',
    );
    assert.equal(initializes(), probes, 'no server asked again');
    assert.deepEqual(
      (await runLinesOf(ws.catalogPath)).map((r) => [r.id, r.applied]),
      [['week-1', true]],
      'one run, now applied',
    );
    assert.equal(a.alreadyRecorded, true);
    assert.ok(
      a.written.some((p) => p.endsWith('.jsonl')),
      `the run marked applied: ${JSON.stringify(a.written)}`,
    );
    assert.ok(
      a.written.some((p) => p.endsWith('servers.md')),
      'the generated files of its plan',
    );
    assert.match(await readFile(ws.catalogPath, 'utf8'), /"Dead"/);
    assert.equal(JSON.parse(await readFile(ws.catalogPath, 'utf8')).servers.length, JSON.parse(catalog).servers.length);

    // And again: applied already, so its plan is shown, nothing written.
    const again = await runCli(args('--write'));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /Would drop|Probe failed \(kept\)/);
    assert.match(
      again.stdout,
      /\nRun week-1 was recorded already: this is its plan as recorded; nothing was probed, recorded or written again\.\n$/,
    );
    assert.equal(initializes(), probes);
    assert.deepEqual(
      (await runLinesOf(ws.catalogPath)).map((r) => [r.id, r.applied]),
      [['week-1', true]],
    );
  });

  it('two deciders of one run id at once on one catalog: one records, the other waits and shows its plan', async () => {
    const ws = await workspace(
      catalogOf([server('Slow', fleet.url('slow')), server('One', fleet.url('ok-json'))], {
        policy: { authOptionalHosts: [], sharedGatewayHosts: ['127.0.0.1'] },
      }),
    );
    const args = ['refresh', '--catalog', ws.catalogPath, '--allow-http', '--record', '--json', '--run-id', 'twins-1'];
    const both = await Promise.all([runCli(args), runCli(args)]);
    assert.deepEqual(
      both.map((r) => r.code),
      [0, 0],
      both.map((r) => r.stderr).join('\n'),
    );
    assert.deepEqual(
      (await runLinesOf(ws.catalogPath)).map((r) => r.id),
      ['twins-1'],
      'recorded once',
    );
    const printed = both.map((r) => JSON.parse(r.stdout) as Printed);
    assert.deepEqual(printed.map((p) => p.alreadyRecorded ?? false).sort(), [false, true]);
    assert.match(
      both[printed.findIndex((p) => p.alreadyRecorded)]!.stderr,
      /run twins-1 is being decided by another process: waiting for it to end/,
    );
  });

  it('a run the outage guard aborted decided nothing: re-run with its id once the network is back, it probes and records', async () => {
    const policy = (canary: string) => ({
      authOptionalHosts: [],
      sharedGatewayHosts: ['127.0.0.1'],
      canaries: [canary],
    });
    const ws = await workspace(
      catalogOf([server('One', fleet.url('ok-json'))], { policy: policy('http://127.0.0.1:9/') }),
    );
    const args = ['refresh', '--catalog', ws.catalogPath, '--allow-http', '--write', '--json', '--run-id', 'outage-1'];
    const down = await runCli(args);
    assert.equal(down.code, 3, down.stderr);
    const probes = initializes();
    // The network is back (its canary answers): the re-run of the job, same id.
    const catalog = JSON.parse(await readFile(ws.catalogPath, 'utf8')) as { policy: Record<string, unknown> };
    catalog.policy = policy(fleet.url('canary'));
    await writeFile(ws.catalogPath, JSON.stringify(catalog, null, 2));
    const up = await runCli(args);
    assert.equal(up.code, 0, up.stderr);
    assert.equal((JSON.parse(up.stdout) as Printed).alreadyRecorded, undefined, 'decided, not shown');
    assert.ok(initializes() > probes, 'probed again');
    assert.deepEqual(
      (await runLinesOf(ws.catalogPath)).map((r) => [r.id, r.applied]),
      [
        ['outage-1', false],
        ['outage-1', true],
      ],
      'the abort as it happened, then the run',
    );
    const again = await runCli(args);
    assert.equal((JSON.parse(again.stdout) as Printed).alreadyRecorded, true, 'now it is recorded');
  });
});
