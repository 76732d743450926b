/**
 * Every view of the record, with the record fields it deliberately leaves out and why. A view's included fields are
 * its schema's keys (`src/model/views.ts`); a record field must be in one or the other, so a field added to the
 * record is two edits: its schema, and here (or a view's schema, when a view should show it).
 * `test/fast/views-registry.test.ts` holds this.
 */
import { observationSchema } from '../model/observation.js';
import { planRowSchema } from '../model/plan.js';
import { planRowJsonSchema, probeJsonSchema } from '../model/views.js';
import type { ViewShape } from './project.js';

export interface View {
  /** Where a reader meets it. */
  name: string;
  schema: ViewShape;
  /** The record it is built from. */
  record: ViewShape;
  /** Record fields the view leaves out, each with why. */
  omits: Readonly<Record<string, string>>;
}

const NOT_PROBED_HERE = 'a refresh row, not a probe: the catalog and run make it';

export const VIEWS: readonly View[] = [
  {
    name: 'probe --json (and the MCP tool probe_url)',
    schema: probeJsonSchema,
    record: observationSchema,
    omits: {
      run: 'probe records no run',
      vantage: 'in vantages[]',
      probe: 'the settings are the command line the user typed',
      toolCount: 'tools is the whole list',
      cardMismatches: NOT_PROBED_HERE,
      evidence: 'steps summarise the deciding exchanges; the whole evidence is the history line’s',
    },
  },
  {
    name: 'refresh --json rows (the MCP tool plan_refresh, the status model’s plan)',
    schema: planRowJsonSchema,
    record: planRowSchema,
    omits: {
      probe: 'the run’s settings, in its history line',
      protocolVersion: 'the diagnosis of one probe: probe --json shows it',
      serverName: 'the catalog row’s name is the row’s; serverInfoChanged says when it moved',
      serverVersion: 'as serverName',
      sessionId: 'the diagnosis of one probe: probe --json shows it',
      quirks: 'the diagnosis of one probe: probe --json shows it',
      excludedTools: 'the diagnosis of one probe: probe --json shows it',
      cutShort: 'the diagnosis of one probe: probe --json shows it',
      auth: 'the diagnosis of one probe: probe --json shows it',
      diagnosis: 'the diagnosis of one probe: probe --json shows it',
      tokensError: 'tokens null says it was not counted; the history line keeps why',
      evidence: 'the history line keeps it (rejudge reads it there)',
    },
  },
];
