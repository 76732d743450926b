/**
 * The record's JSON Schemas (draft 2020-12), derived from its schemas: one document per named part, each
 * referring to the others (`#/$defs/<Name>`). What `docs/reference/schemas/` publishes and the MCP tools declare.
 */
import { z } from 'zod';
import { clientRunSchema, evidenceSchema, exchangeSchema } from './evidence.js';
import {
  diagnosisSummarySchema,
  findingSchema,
  matrixCellSchema,
  observationSchema,
  probeSettingsSchema,
} from './observation.js';
import { planRowSchema, runRecordSchema, toolChangesSchema } from './plan.js';
import { lockEntrySchema, toolsLockSchema } from './acceptance.js';
import { storedSnapshotSchema } from './snapshot.js';
import { planRowJsonSchema, probeJsonSchema, refreshJsonSchema } from './views.js';
import {
  costViewSchema,
  historyAnswerSchema,
  observationViewSchema,
  refreshViewSchema,
  serverStatusSchema,
  statusModelSchema,
} from './status.js';
import { verificationSchema } from './census.js';
import { jobFieldsSchema } from './jobs.js';

/**
 * Each published part: its name, its schema, and where it is declared (the docs take the field comments from there,
 * and from the parts it `inherits` for fields it copies from them). The record first, then its views.
 */
export const RECORD_SCHEMAS = [
  { name: 'Observation', schema: observationSchema, file: 'src/model/observation.ts', declared: ['observationSchema'] },
  { name: 'Evidence', schema: evidenceSchema, file: 'src/model/evidence.ts', declared: ['evidenceSchema'] },
  { name: 'ClientRun', schema: clientRunSchema, file: 'src/model/evidence.ts', declared: ['clientRunSchema'] },
  { name: 'Exchange', schema: exchangeSchema, file: 'src/model/evidence.ts', declared: ['exchangeSchema'] },
  {
    name: 'ProbeSettings',
    schema: probeSettingsSchema,
    file: 'src/model/observation.ts',
    declared: ['probeSettingsSchema'],
  },
  {
    name: 'DiagnosisSummary',
    schema: diagnosisSummarySchema,
    file: 'src/model/observation.ts',
    declared: ['diagnosisSummarySchema'],
  },
  { name: 'MatrixCell', schema: matrixCellSchema, file: 'src/model/observation.ts', declared: ['matrixCellSchema'] },
  { name: 'Finding', schema: findingSchema, file: 'src/model/observation.ts', declared: ['findingSchema'] },
  { name: 'PlanRow', schema: planRowSchema, file: 'src/model/plan.ts', declared: ['planRowSchema'] },
  { name: 'ToolChanges', schema: toolChangesSchema, file: 'src/model/plan.ts', declared: ['toolChangesSchema'] },
  { name: 'RunRecord', schema: runRecordSchema, file: 'src/model/plan.ts', declared: ['runRecordSchema'] },
  { name: 'ToolsLock', schema: toolsLockSchema, file: 'src/model/acceptance.ts', declared: ['toolsLockSchema'] },
  { name: 'LockEntry', schema: lockEntrySchema, file: 'src/model/acceptance.ts', declared: ['lockEntrySchema'] },
  {
    name: 'StoredSnapshot',
    schema: storedSnapshotSchema,
    file: 'src/model/snapshot.ts',
    declared: ['storedSnapshotSchema'],
  },
  {
    name: 'ProbeResult',
    shows: '`onetap probe --json`: one per URL; the MCP tool `probe`’s results',
    schema: probeJsonSchema,
    file: 'src/model/views.ts',
    declared: ['probeJsonSchema'],
    inherits: ['Observation'],
  },
  {
    name: 'RefreshJson',
    shows: '`onetap refresh --json`; the MCP tool `plan_refresh`',
    schema: refreshJsonSchema,
    file: 'src/model/views.ts',
    declared: ['planJsonSchema', 'refreshJsonSchema'],
  },
  {
    name: 'RefreshRow',
    shows: 'one row of `refresh --json`’s plan',
    schema: planRowJsonSchema,
    file: 'src/model/views.ts',
    declared: ['planRowJsonSchema'],
    inherits: ['PlanRow', 'Observation'],
  },
  {
    name: 'StatusModel',
    shows: '`serve`’s `/api/servers`; the site’s `api/servers.json`',
    schema: statusModelSchema,
    file: 'src/model/status.ts',
    declared: ['statusModelSchema'],
  },
  {
    name: 'CostView',
    shows: 'the status model’s `cost`',
    schema: costViewSchema,
    file: 'src/model/status.ts',
    declared: ['costViewSchema'],
  },
  {
    name: 'ServerStatus',
    shows: 'one server of `/api/servers`',
    schema: serverStatusSchema,
    file: 'src/model/status.ts',
    declared: ['serverStatusSchema'],
    inherits: ['PlanRow', 'Observation'],
  },
  {
    name: 'RefreshView',
    shows: '`serve`’s `/api/refreshes/latest`; the site’s `api/refreshes/latest.json`',
    schema: refreshViewSchema,
    file: 'src/model/status.ts',
    declared: ['refreshViewSchema'],
  },
  {
    name: 'HistoryAnswer',
    shows: '`serve`’s `/api/servers/<id>/history?days=N`; the site’s `history-N.json`',
    schema: historyAnswerSchema,
    file: 'src/model/status.ts',
    declared: ['historyAnswerSchema'],
  },
  {
    name: 'HistoryObservation',
    shows: 'one observation of a history answer',
    schema: observationViewSchema,
    file: 'src/model/status.ts',
    declared: ['observationViewSchema'],
    inherits: ['PlanRow', 'Observation'],
  },
  {
    name: 'Verification',
    shows: '`onetap census`: each item’s `_meta["<publisher>/verification"]`',
    schema: verificationSchema,
    file: 'src/model/census.ts',
    declared: ['verificationSchema'],
  },
  {
    name: 'ProbeJob',
    shows: 'a job on the queue (`onetap worker` reads it; `probeJobSchema` also checks the fields together)',
    schema: jobFieldsSchema,
    file: 'src/model/jobs.ts',
    declared: ['jobFieldsSchema'],
  },
] as const;

export type JsonSchema = Record<string, unknown>;

/** Every part's JSON Schema, by name (references between them by file name, `<Name>.schema.json`). */
export function recordJsonSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const s of RECORD_SCHEMAS) registry.add(s.schema as z.ZodType, { id: s.name });
  return z.toJSONSchema(registry, { uri: (id) => `${id}.schema.json` }).schemas as Record<string, JsonSchema>;
}
