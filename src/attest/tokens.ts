/**
 * What a tool list costs a conversation: the o200k token count of exactly
 * `JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema ?? {} })))`
 * over the full list (before anything is clipped), the compact form a registry census counts, so figures compare.
 * The tokenizer (gpt-tokenizer, pure JS) is loaded the first time a list is counted: about 260 ms and 66 MB of
 * resident memory (20 MB of heap), once per process (BENCHMARKS.md); `onetap` commands that count nothing never load it.
 */
import type { ToolDefinition } from '../model/snapshot.js';

type Counter = (text: string) => number;

let loading: Promise<Counter> | null = null;
let counter: Counter | null = null;

/** The text that is counted. */
export const contextText = (tools: readonly Pick<ToolDefinition, 'name' | 'description' | 'inputSchema'>[]): string =>
  JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema ?? {} })));

/** Loads the tokenizer (once); `countTokens` works after it. */
export function loadTokenizer(): Promise<Counter> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => (counter = (text: string) => m.countTokens(text)));
  return loading;
}

/** The list's o200k count, or null when the tokenizer is not loaded (call `loadTokenizer` first). */
export function countTokens(tools: readonly Pick<ToolDefinition, 'name' | 'description' | 'inputSchema'>[]): number | null {
  return counter ? counter(contextText(tools)) : null;
}
