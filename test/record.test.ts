/**
 * The record: every form is a view of it, and nothing a server sends or a probe is given reaches it unbounded.
 * Views are held to their schemas (no field lost, none added unannounced); a probe-only header's value never
 * reaches a record, even when the server sends it back; the published JSON Schemas validate real records.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { probe, observationSchema, planRowSchema, refresh, TextStore } from '../src/index.js';
import { probeJson } from '../src/views/probe.js';
import { planJson } from '../src/views/plan.js';
import { planJsonSchema, probeJsonSchema } from '../src/model/views.js';
import { recordJsonSchemas } from '../src/model/json-schema.js';
import { json, startFleet, type Fleet } from './fleet/fleet.js';
import { catalogOf, server, workspace } from './helpers.js';
import { ONETAP_VERSION } from '../src/util/version.js';
import { readFileSync } from 'node:fs';

const SECRET = 'sk-live-5ecret-never-recorded';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet({
    // Answers with the key it was given, in its body, an error and a header.
    echo: (c) => {
      const key = String(c.req.headers.authorization ?? '');
      c.res.setHeader('www-authenticate', `Bearer realm="${key}"`);
      json(c.res, 401, { jsonrpc: '2.0', id: c.msg?.id ?? null, error: { code: -32001, message: `bad key ${key}` } });
    },
    // Sends back the token alone, where the kept first 2,048 characters of a body end inside it.
    edge: (c) => {
      const token = String(c.req.headers.authorization ?? '').replace(/^Bearer /, '');
      c.res.writeHead(503, { 'content-type': 'text/plain' }).end(`${'x'.repeat(2_040)}${token} and more`);
    },
  });
});
after(async () => {
  await fleet.close();
});

describe('the record', () => {
  it('probe --json and refresh --json are their schemas exactly (strict: no field missing, none unannounced)', async () => {
    for (const scenario of ['ok-json', 'http-404', 'sse-data-without-space']) {
      const r = await probe(fleet.url(scenario), { matrix: scenario === 'ok-json', retryDelayMs: 10 });
      assert.ok(observationSchema.safeParse(r).success, `${scenario}: the probe's result is a valid record`);
      const view = probeJson(r);
      assert.deepEqual(probeJsonSchema.strict().parse(view), view, scenario);
    }
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json')), server('B', fleet.url('http-410'))]));
    const { plan } = await refresh({ catalogPath: ws.catalogPath, allowHttp: true, matrix: true, timeoutMs: 2_000 });
    const view = planJson(plan);
    assert.deepEqual(
      planJsonSchema.extend({ plan: planJsonSchema.shape.plan.element.strict().array() }).parse(view),
      view,
    );
  });

  it('the published JSON Schemas validate what is recorded', async () => {
    const ws = await workspace(catalogOf([server('A', fleet.url('ok-json')), server('B', fleet.url('zero-tools'))]));
    await refresh({ catalogPath: ws.catalogPath, record: true, allowHttp: true, matrix: true, timeoutMs: 2_000 });
    const rows = (await new TextStore(ws.catalogPath).latestRun())!.rows;
    const ajv = new Ajv2020({ strict: false });
    const schemas = recordJsonSchemas();
    for (const s of Object.values(schemas)) ajv.addSchema(s);
    const valid = ajv.getSchema('PlanRow.schema.json')!;
    for (const row of rows) assert.ok(valid(row), JSON.stringify(valid.errors));
    // And the generated copies in docs/ are these.
    for (const [name] of Object.entries(schemas))
      assert.ok(
        readFileSync(new URL(`../../docs/reference/schemas/${name}.schema.json`, import.meta.url), 'utf8').includes(
          `"$id": "${name}.schema.json"`,
        ),
      );
    assert.ok(planRowSchema.safeParse(rows[0]).success);
  });

  it("a probe-only header's value never reaches a record, even when the server sends it back", async () => {
    const url = fleet.url('echo');
    const r = await probe(url, {
      headers: { Authorization: `Bearer ${SECRET}`, 'X-Mode': 'initialize' },
      retryDelayMs: 10,
    });
    assert.equal(r.reason, 'auth-required');
    assert.ok(
      !JSON.stringify(r).includes(SECRET) && !JSON.stringify(r).includes(SECRET.slice(0, 12)),
      'no field of the record holds the key',
    );
    assert.deepEqual(r.probe?.headers, ['authorization', 'x-mode'], 'the headers are named, their values are not');
    assert.match(JSON.stringify(r.evidence), /bad key \[redacted\]/, 'what the server echoed is recorded redacted');
    assert.equal(r.url, url, 'only what the server sent is redacted: the URL, steps and words of the record are not');
    assert.equal(r.evidence!.deciding.steps[0]!.step, 'initialize');
    assert.equal(r.probe?.version, ONETAP_VERSION);
    assert.ok(observationSchema.safeParse(r).success);
    // The token alone, cut where the first 2,048 characters of the body end: no prefix of it survives.
    const edge = await probe(fleet.url('edge'), { headers: { Authorization: `Bearer ${SECRET}` }, retryDelayMs: 10 });
    const snippets = JSON.stringify(edge.evidence);
    assert.ok(!snippets.includes(SECRET.slice(0, 6)), snippets.slice(-400));
    assert.match(snippets, /x\[redact/, 'the cut key is redacted, even where the kept text then ends');
  });

  it("the version on record is the package's", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(ONETAP_VERSION, pkg.version);
  });
});
