/**
 * A server's tool list as one canonical, hashable document: what the deciding client saw (serverInfo and per
 * tool its name, title, description, inputSchema and annotations). Pure.
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
import type { ToolDefinition } from './observation.js';
import { clipText } from '../util/text.js';

/** sha256 in hex, one shot (no Hash object per call: a probe hashes each tool). */
const sha256 = (text: string) => digestOf('sha256', text, 'hex');

/** Deeper JSON than this is not processed (canonical JSON, hashing and screening stop here). */
export const MAX_NESTING = 256;

/** A value nested deeper than MAX_NESTING: what a server sent is not processed. */
export class NestingTooDeep extends Error {
  constructor() { super(`nested deeper than ${MAX_NESTING} levels`); }
}

/** Whether a JSON value nests deeper than `limit` levels (arrays and objects), without recursion. */
export function nestsDeeperThan(value: unknown, limit = MAX_NESTING): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

export interface ToolListSnapshot {
  serverInfo: { name: string | null; version: string | null };
  /** Sorted by name, then by content; canonical JSON (sorted keys) inside. */
  tools: ToolDefinition[];
}

/** What a stored snapshot keeps at most, and says it cut. */
export const SNAPSHOT_LIMITS = {
  /** The stored file, compact JSON, UTF-8. */
  bytes: 1024 * 1024,
  /** Of which the per-tool digest list. */
  digestBytes: 512 * 1024,
  tools: 500, nameChars: 128, textChars: 2_000, schemaChars: 16_384,
} as const;

/** The stored snapshot's format (files without `format` are version 1: digests keyed by name). */
export const SNAPSHOT_FORMAT = 2;

export interface ToolDigest { name: string; digest: string }

export interface StoredSnapshot extends ToolListSnapshot {
  format: number;
  hash: string;
  /** SHA-256 over every tool's digest (64 hex); null for a format-1 file, which did not record it. */
  toolsDigest: string | null;
  /** Every tool's digest, in the list's order (16 hex; 12 in format-1 files); cut only past `digestBytes`. */
  digests: ToolDigest[];
  /** Tools the server listed (the stored list may hold fewer). */
  toolsSeen: number;
  /** True when any tool, text, schema or digest was clipped for storage. */
  clipped: boolean;
}

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
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function toolListSnapshot(serverInfo: { name: string; version: string | null } | null, tools: readonly ToolDefinition[]): ToolListSnapshot {
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
  return { serverInfo: { name: serverInfo?.name ?? null, version: serverInfo?.version ?? null }, tools: canonical.map((c) => c.tool) };
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
  const hash = sha256(`{"serverInfo":${JSON.stringify(snapshot.serverInfo)},"tools":[${texts.join(',')}]}`).slice(0, 16);
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
    if (used > L.digestBytes) { clipped = true; break; }
    digests.push(d);
  }
  const out: StoredSnapshot = {
    format: SNAPSHOT_FORMAT, hash, toolsDigest: toolsDigestOf(full), serverInfo: { name: clipOrNull(snapshot.serverInfo.name, clip), version: clipOrNull(snapshot.serverInfo.version, clip) },
    toolsSeen: snapshot.tools.length, clipped, digests, tools: [],
  };
  // The rest of the file's budget is for the tools themselves, in order, as many as fit.
  let budget = L.bytes - jsonBytes(out) - 64;
  for (let i = 0; i < snapshot.tools.length && i < L.tools; i++) {
    const t = snapshot.tools[i]!;
    const kept = texts[i]!.length <= L.textChars && t.name.length <= L.nameChars ? t : clipTool(t, clip, () => { clipped = true; });
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

const DIGEST_1 = /^[0-9a-f]{12}$/;
const DIGEST_2 = /^[0-9a-f]{16}$/;

/**
 * A snapshot file as read back (untrusted: it sits in the repository). Format 1 files (digests keyed by name,
 * no tools digest) are read into today's shape; anything else that does not fit is null.
 */
export function parseStoredSnapshot(value: unknown, expectedHash: string): StoredSnapshot | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (v.hash !== expectedHash) return null;
  const info = v.serverInfo as Record<string, unknown> | undefined;
  const nullableText = (x: unknown) => x === null || typeof x === 'string';
  if (!info || typeof info !== 'object' || !nullableText(info.name) || !nullableText(info.version)) return null;
  if (!Array.isArray(v.tools) || !v.tools.every((t) => t && typeof t === 'object' && typeof (t as ToolDefinition).name === 'string')) return null;
  if (typeof v.toolsSeen !== 'number' || !Number.isInteger(v.toolsSeen) || v.toolsSeen < 0) return null;
  let digests: ToolDigest[];
  if (Array.isArray(v.digests)) {
    if (!v.digests.every((d) => d && typeof d === 'object' && typeof (d as ToolDigest).name === 'string' && typeof (d as ToolDigest).digest === 'string' && DIGEST_2.test((d as ToolDigest).digest))) return null;
    digests = (v.digests as ToolDigest[]).map((d) => ({ name: d.name, digest: d.digest }));
  } else if (v.digests && typeof v.digests === 'object') {
    // Format 1: keyed by the full name, 12 hex digits; names clipped as today's digests are, so both compare.
    const entries = Object.entries(v.digests as Record<string, unknown>);
    if (!entries.every(([, d]) => typeof d === 'string' && DIGEST_1.test(d))) return null;
    digests = entries.map(([name, digest]) => ({ name: clipText(name, SNAPSHOT_LIMITS.nameChars), digest: digest as string }));
  } else return null;
  const toolsDigest = typeof v.toolsDigest === 'string' && /^[0-9a-f]{64}$/.test(v.toolsDigest) ? v.toolsDigest : null;
  return {
    format: typeof v.format === 'number' ? v.format : 1, hash: expectedHash, toolsDigest,
    serverInfo: { name: (info.name as string | null) ?? null, version: (info.version as string | null) ?? null },
    toolsSeen: v.toolsSeen, clipped: v.clipped === true, digests, tools: v.tools as ToolDefinition[],
  };
}

/** The stored file's text: compact JSON and a newline. */
export const snapshotText = (s: StoredSnapshot) => JSON.stringify(s) + '\n';
