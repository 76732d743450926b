/**
 * The views of the record are declared once: each record field is in a view or named in its `omits` (so adding a
 * field to the observation record is two edits: its schema and the registry, `src/views/registry.ts`), and each
 * builder's output parses strictly against its view's schema (it neither loses a key nor grows one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { VIEWS } from '../../src/views/registry.js';
import { project } from '../../src/views/project.js';
import { probeJson } from '../../src/views/probe.js';
import { planRowJson } from '../../src/views/plan.js';
import { planRowJsonSchema, probeJsonSchema } from '../../src/model/views.js';
import { observationSchema } from '../../src/model/observation.js';
import { planRowSchema, type PlanRow } from '../../src/model/plan.js';
import type { Observation } from '../../src/model/observation.js';

/** Record fields a view neither includes nor omits, and omits that are not record fields or are included. */
export function registryGaps(view: (typeof VIEWS)[number]): string[] {
  const included = new Set(Object.keys(view.schema.shape));
  const omitted = Object.keys(view.omits);
  const fields = Object.keys(view.record.shape);
  return [
    ...fields.filter((f) => !included.has(f) && !omitted.includes(f)).map((f) => `${f}: in neither`),
    ...omitted.filter((f) => !fields.includes(f)).map((f) => `${f}: omitted but not a record field`),
    ...omitted.filter((f) => included.has(f)).map((f) => `${f}: omitted and included`),
  ];
}

for (const view of VIEWS)
  test(`${view.name}: every record field is included or omitted with a reason`, () => {
    assert.deepEqual(registryGaps(view), []);
  });

test('a field added to the record and to no view is named, for every view', () => {
  for (const view of VIEWS) {
    const grown = { ...view, record: { shape: { ...view.record.shape, addedField: z.string() } } };
    assert.deepEqual(registryGaps(grown), ['addedField: in neither']);
  }
});

test('the projector copies the schema keys in schema order, computed ones in place, undefined left out', () => {
  const view = { shape: { b: 0, a: 0, c: 0, d: 0 } };
  const out = project<Record<string, unknown>>(view, { a: 1, b: 2, c: undefined, d: null, e: 5 }, { c: 3 });
  assert.deepEqual(Object.entries(out), [
    ['b', 2],
    ['a', 1],
    ['c', 3],
    ['d', null],
  ]);
});

/** A realistic record: every field set, the way a live probe with a matrix and a redaction records it. */
function observation(): Observation {
  const cell = { works: true, verdict: 'live', reason: 'ok', tools: ['search'] } as never;
  return {
    url: 'https://mcp.example.com/mcp',
    run: null,
    vantage: 'local',
    observedAt: '2026-12-04T06:00:00.000Z',
    profile: 'app-2026-07',
    probe: null,
    verdict: 'live',
    reason: 'ok',
    reasons: ['ok'],
    attempts: 1,
    durationMs: 84,
    httpStatus: 200,
    protocolVersion: '2025-06-18',
    serverName: 'example',
    serverVersion: '1.0.0',
    tools: ['search'],
    toolCount: 1,
    sessionId: true,
    error: null,
    appError: null,
    quirks: [],
    excludedTools: [],
    cutShort: false,
    auth: null,
    location: null,
    diagnosis: null,
    matrix: { 'app-2026-07': cell },
    toolsHash: 'a'.repeat(16),
    toolsDigest: 'b'.repeat(64),
    tokens: 120,
    tokensError: null,
    nameBlindDigest: 'c'.repeat(64),
    descriptionBlindDigest: 'd'.repeat(64),
    findings: [],
    findingsSeen: 0,
    cardMismatches: [],
    evidence: null,
    redacted: 2,
  } as unknown as Observation;
}

test('probe --json parses strictly against its view, with and without --vantages', () => {
  const r = observationSchema.parse(observation()) as Observation;
  probeJsonSchema.strict().parse(probeJson(r));
  const across = { vantages: [], note: null };
  probeJsonSchema.strict().parse(probeJson(r, across));
  const { matrix: _m, redacted: _r, ...bare } = r;
  probeJsonSchema.strict().parse(probeJson({ ...bare, matrix: null } as Observation));
});

test('a refresh --json row parses strictly against its view', () => {
  const row = {
    ...observation(),
    name: 'Example',
    decision: 'keep',
    previous: { verdict: 'live', reason: 'ok', at: '2026-11-27T06:00:00.000Z' },
    changed: false,
    dropStreak: 0,
    note: null,
    acceptedHash: null,
    toolChanges: null,
    toolsChanged: false,
    serverInfoChanged: false,
    identityChanged: false,
    firstUse: false,
    heldOut: false,
    snapshotSha256: null,
  } as unknown as PlanRow;
  planRowSchema.parse(row);
  planRowJsonSchema.strict().parse(planRowJson(row));
});
