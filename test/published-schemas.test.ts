/**
 * What the CLI prints is what its published JSON Schemas (docs/reference/schemas/) say: `probe --json` for a live,
 * a failing and a gone server, `refresh --json` over the same, and `report --json`'s status model; each document
 * validated by ajv against the schema files as published, not by the zod schemas they come from.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { catalogOf, runCli, server, workspace } from './helpers.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

let fleet: Fleet;
const ajv = new Ajv2020({ allErrors: true, strict: false });

before(async () => {
  fleet = await startFleet();
  const dir = new URL('../../docs/reference/schemas/', import.meta.url);
  for (const name of await readdir(dir)) ajv.addSchema(JSON.parse(await readFile(new URL(name, dir), 'utf8')));
});
after(() => fleet.close());

function holds(name: string, value: unknown): void {
  const validate = ajv.getSchema(`${name}.schema.json`) as ValidateFunction | undefined;
  assert.ok(validate, `${name} is published`);
  assert.ok(validate(value), `${name}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
}

describe('the published JSON Schemas hold for what the CLI prints', () => {
  it('probe --json, refresh --json and report --json', { timeout: 120_000 }, async () => {
    const urls = [fleet.url('ok-json'), fleet.url('http-500'), fleet.url('http-410')];
    const probe = await runCli(['probe', '--json', '--matrix', ...urls]);
    const probed = JSON.parse(probe.stdout) as unknown[];
    assert.equal(probed.length, 3, probe.stderr);
    for (const result of probed) holds('ProbeResult', result);

    const ws = await workspace(catalogOf(urls.map((url, i) => server(`S${i}`, url))));
    const refresh = await runCli(['refresh', '--json', '--record', '--allow-http', '--catalog', ws.catalogPath]);
    const plan = JSON.parse(refresh.stdout) as { plan: unknown[] };
    assert.equal(plan.plan.length, 3, refresh.stderr);
    holds('RefreshJson', plan);

    const report = await runCli(['report', '--json', '--catalog', ws.catalogPath]);
    const { historyProblems: _, ...model } = JSON.parse(report.stdout) as Record<string, unknown>;
    holds('StatusModel', model);
    // The schemas can fail: a status without a field it requires is refused.
    const [first] = (model as { servers: Array<Record<string, unknown>> }).servers;
    delete first!.uptime30;
    assert.equal(ajv.getSchema('StatusModel.schema.json')!(model), false);
  });
});
