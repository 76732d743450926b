/** What screening reads (a tool as `tools/list` returned it) and what it reports (`Finding`, in the record). */
import type { Finding } from '../model/observation.js';
import type { ToolDefinition } from '../model/snapshot.js';

export type { Finding, ToolDefinition as ToolSnapshot };

/** A rule as documented: the table a reader holds beside the examples. */
export interface ScreenRuleDoc {
  id: string;
  title: string;
  why: string;
  example: string;
}
