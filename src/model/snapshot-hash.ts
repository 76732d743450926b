/**
 * A server's tool list as one canonical, hashable document: what the deciding client saw (serverInfo and per
 * tool its name, title, description, inputSchema and annotations). Pure and zod-free (the prober imports it; the
 * store reads its limits and digests): the schema of the stored file is `./snapshot.ts`.
 *
 * The hashes, defined once here for everything that uses them:
 * - a tool's digest: SHA-256 of the canonical JSON of that one tool (sorted keys at every level);
 * - the tools digest: SHA-256 over every tool's digest, sorted, so order does not matter and a duplicate counts;
 *   drift is judged on it (a different tools digest is a change, always);
 * - the snapshot hash (`hash`, 16 hex): tools plus serverInfo; it names the stored file and the lock entry.
 * Every hash is taken over the full text; the stored copy is clipped (a hostile server cannot make the history
 * large: at most `SNAPSHOT_LIMITS.bytes`, compact), and says how much was seen.
 * Nothing here recurses past `MAX_NESTING` levels: a deeper answer is not processed (review/unprocessable).
 */
import { hash as digestOf } from 'node:crypto';
import type { StoredSnapshot, ToolDefinition, ToolDigest, ToolListSnapshot } from './snapshot.js';

export type { StoredSnapshot, ToolDigest, ToolListSnapshot };
import { clipText } from '../text/clip.js';

/** sha256 in hex, one shot (no Hash object per call: a probe hashes each tool). */
const sha256 = (text: string) => digestOf('sha256', text, 'hex');

import { MAX_NESTING } from '../util/json.js';

/** A value nested deeper than MAX_NESTING: what a server sent is not processed. */
export class NestingTooDeep extends Error {
  constructor() {
    super(`nested deeper than ${MAX_NESTING} levels`);
  }
}

/** What a stored snapshot keeps at most, and says it cut. */
export const SNAPSHOT_LIMITS = {
  /** The stored file, compact JSON, UTF-8. */
  bytes: 1024 * 1024,
  /** Of which the per-tool digest list. */
  digestBytes: 512 * 1024,
  tools: 500,
  nameChars: 128,
  textChars: 2_000,
  schemaChars: 16_384,
} as const;

/** The stored snapshot's format (files without `format` are version 1: digests keyed by name). */
export const SNAPSHOT_FORMAT = 2;

/** JSON with object keys sorted at every level: the same content always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value, 0));
}

function sortKeys(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_NESTING) throw new NestingTooDeep();
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = sortKeys((value as Record<string, unknown>)[k], depth + 1);
    // A key named `__proto__` stays a key (assignment would set the prototype).
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function toolListSnapshot(
  serverInfo: { name: string; version: string | null } | null,
  tools: readonly ToolDefinition[],
): ToolListSnapshot {
  const canonical = tools.map((t) => {
    const d: ToolDefinition = { name: t.name };
    if (t.title !== undefined) d.title = t.title;
    if (t.description !== undefined) d.description = t.description;
    if (t.inputSchema !== undefined) d.inputSchema = t.inputSchema;
    if (t.annotations !== undefined) d.annotations = t.annotations;
    const sorted = sortKeys(d, 0) as ToolDefinition;
    return { tool: sorted, text: JSON.stringify(sorted) };
  });
  // By name, then by content: two copies of one name sort the same way whatever order they came in.
  canonical.sort((a, b) => byText(a.tool.name, b.tool.name) || byText(a.text, b.text));
  return {
    serverInfo: { name: serverInfo?.name ?? null, version: serverInfo?.version ?? null },
    tools: canonical.map((c) => c.tool),
  };
}

/** The snapshot's keys are already sorted (toolListSnapshot builds it so): its JSON is canonical as it stands. */
export function snapshotHash(snapshot: ToolListSnapshot): string {
  return sha256(JSON.stringify(snapshot)).slice(0, 16);
}

/** The tools digest from every tool's full digest (64 hex each). */
export const toolsDigestOf = (fullDigests: readonly string[]) => sha256([...fullDigests].sort().join('\n'));

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The copy kept in the history: hashed on the full text first, then clipped to SNAPSHOT_LIMITS. */
export function storedSnapshot(snapshot: ToolListSnapshot): StoredSnapshot {
  // One serialisation per tool, shared by the list's hash, the tool's digest and the size checks.
  const texts = snapshot.tools.map((t) => JSON.stringify(t));
  const hash = sha256(`{"serverInfo":${JSON.stringify(snapshot.serverInfo)},"tools":[${texts.join(',')}]}`).slice(
    0,
    16,
  );
  const full = texts.map((t) => sha256(t));
  const L = SNAPSHOT_LIMITS;
  let clipped = false;
  const clip = (text: string, max: number) => {
    if (text.length <= max) return text;
    clipped = true;
    return clipText(text, max);
  };
  const digests: ToolDigest[] = [];
  let used = 0;
  for (let i = 0; i < snapshot.tools.length; i++) {
    const d = { name: clip(snapshot.tools[i]!.name, L.nameChars), digest: full[i]!.slice(0, 16) };
    used += jsonBytes(d) + 1;
    if (used > L.digestBytes) {
      clipped = true;
      break;
    }
    digests.push(d);
  }
  const out: StoredSnapshot = {
    format: SNAPSHOT_FORMAT,
    hash,
    toolsDigest: toolsDigestOf(full),
    serverInfo: {
      name: clipOrNull(snapshot.serverInfo.name, clip),
      version: clipOrNull(snapshot.serverInfo.version, clip),
    },
    toolsSeen: snapshot.tools.length,
    clipped,
    digests,
    tools: [],
  };
  // The rest of the file's budget is for the tools themselves, in order, as many as fit.
  let budget = L.bytes - jsonBytes(out) - 64;
  for (let i = 0; i < snapshot.tools.length && i < L.tools; i++) {
    const t = snapshot.tools[i]!;
    const kept =
      texts[i]!.length <= L.textChars && t.name.length <= L.nameChars
        ? t
        : clipTool(t, clip, () => {
            clipped = true;
          });
    const size = kept === t ? Buffer.byteLength(texts[i]!) + 1 : jsonBytes(kept) + 1;
    if (size > budget) break;
    budget -= size;
    out.tools.push(kept);
  }
  out.clipped = clipped || out.tools.length < snapshot.tools.length;
  return out;
}

function clipOrNull(text: string | null, clip: (t: string, max: number) => string): string | null {
  return text === null ? null : clip(text, SNAPSHOT_LIMITS.nameChars);
}

function clipTool(t: ToolDefinition, clip: (t: string, max: number) => string, cut: () => void): ToolDefinition {
  const L = SNAPSHOT_LIMITS;
  const out: ToolDefinition = { name: clip(t.name, L.nameChars) };
  if (t.title !== undefined) out.title = clip(t.title, L.textChars);
  if (t.description !== undefined) out.description = clip(t.description, L.textChars);
  for (const key of ['inputSchema', 'annotations'] as const) {
    if (t[key] === undefined) continue;
    const text = JSON.stringify(t[key]);
    if (text.length > L.schemaChars) cut();
    out[key] = text.length > L.schemaChars ? { clipped: true, chars: text.length } : t[key];
  }
  return out;
}

/**
 * Names served more than once, each with the digests of its copies (a finding: the row goes to review). Read from
 * the full list, before anything is clipped or cut for storage.
 */
export function duplicateNames(s: ToolListSnapshot): Array<{ name: string; digests: string[] }> {
  const count = new Map<string, number>();
  for (const t of s.tools) count.set(t.name, (count.get(t.name) ?? 0) + 1);
  const byName = new Map<string, string[]>();
  for (const t of s.tools) {
    if (count.get(t.name)! < 2) continue;
    byName.set(t.name, [...(byName.get(t.name) ?? []), sha256(JSON.stringify(t)).slice(0, 16)]);
  }
  return [...byName].map(([name, digests]) => ({ name, digests }));
}

/**
 * Keys whose object holds names (of properties, definitions), not annotations: their keys are kept whatever they are.
 */
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** A JSON value without its `description` and `title` annotations at any depth (a property named so is kept). */
function withoutProse(value: unknown, names: boolean): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => withoutProse(v, false));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!names && (k === 'description' || k === 'title')) continue;
    const kept = withoutProse(v, !names && NAMED_SCHEMAS.has(k));
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: kept, enumerable: true, writable: true, configurable: true });
    else out[k] = kept;
  }
  return out;
}

/**
 * Fingerprints of a tool set that survive what a copy changes, beside the exact tools digest (full text, any order):
 * - `nameBlind`: each tool without its name and title (a renamed copy is still found);
 * - `descriptionBlind`: each tool without any description or title, in its schema too (the same interface
 *   reworded).
 * Null for an empty set: no tools matches nothing. `tools` are canonical (toolListSnapshot's).
 */
export function toolSetDigests(
  tools: readonly ToolDefinition[],
): { nameBlind: string; descriptionBlind: string } | null {
  if (!tools.length) return null;
  const setOf = (texts: string[]) =>
    sha256(
      texts
        .map((t) => sha256(t))
        .sort()
        .join('\n'),
    );
  return {
    nameBlind: setOf(tools.map(({ name: _n, title: _t, ...rest }) => JSON.stringify(rest))),
    descriptionBlind: setOf(tools.map((t) => JSON.stringify(withoutProse(t, false)))),
  };
}
