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

/**
 * Each published part: its name, its schema, and where it is declared (the docs take the field comments from there).
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
] as const;

export type JsonSchema = Record<string, unknown>;

/** Every part's JSON Schema, by name (references between them by file name, `<Name>.schema.json`). */
export function recordJsonSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const s of RECORD_SCHEMAS) registry.add(s.schema, { id: s.name });
  return z.toJSONSchema(registry, { uri: (id) => `${id}.schema.json` }).schemas as Record<string, JsonSchema>;
}
