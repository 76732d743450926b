/** What screening reads (a tool as `tools/list` returned it) and what it reports. */

/** One tool as the client saw it, the full text before any clipping: the one tool type (src/attest/observation.ts). */
export type { ToolDefinition as ToolSnapshot } from '../attest/observation.js';

/**
 * One suspicious place in one tool. `field` is 'name', 'title', 'description', or a path into the tool such as
 * 'inputSchema.properties.path.description' or 'inputSchema.properties.mode.enum[2]'. `excerpt` is a short,
 * inert quote (no control, bidi or invisible characters survive: they are shown as [U+XXXX]).
 */
export interface Finding {
  tool: string;
  field: string;
  rule: string;
  excerpt: string;
}

/** A rule as documented: the table a reader holds beside the examples. */
export interface ScreenRuleDoc {
  id: string;
  title: string;
  why: string;
  example: string;
}
