/**
 * A server's tool list as one canonical, hashable document: what the deciding client saw (serverInfo and per
 * tool its name, title, description, inputSchema and annotations). Pure. The hash is taken over the full
 * text; the stored copy is clipped (a hostile server cannot make the history large), and says how much was seen.
 */
import { hash as digestOf } from 'node:crypto';

/** sha256 in hex, one shot (no Hash object per call: a probe hashes each tool). */
const sha256 = (text: string) => digestOf('sha256', text, 'hex');
import type { ToolDefinition } from './observation.js';

export interface ToolListSnapshot {
  serverInfo: { name: string | null; version: string | null };
  /** Sorted by name; canonical JSON (sorted keys) inside. */
  tools: ToolDefinition[];
}

/** What a stored snapshot keeps at most, and says it cut. */
export const SNAPSHOT_LIMITS = { tools: 500, digests: 5_000, nameChars: 128, textChars: 2_000, schemaChars: 16_384 } as const;

export interface StoredSnapshot extends ToolListSnapshot {
  hash: string;
  /** Per tool name, the hash of its full definition: drift is judged on these, never on clipped text. */
  digests: Record<string, string>;
  /** Tools the server listed (the stored list may hold fewer). */
  toolsSeen: number;
  /** True when any tool, text or schema was clipped for storage. */
  clipped: boolean;
}

/** JSON with object keys sorted at every level: the same content always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value as object).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
  }
  return value;
}

export function toolListSnapshot(serverInfo: { name: string; version: string | null } | null, tools: readonly ToolDefinition[]): ToolListSnapshot {
  const canonical = tools.map((t) => sortKeys({
    name: t.name,
    ...(t.title !== undefined ? { title: t.title } : {}),
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.inputSchema !== undefined ? { inputSchema: t.inputSchema } : {}),
    ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
  }) as ToolDefinition);
  canonical.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { serverInfo: { name: serverInfo?.name ?? null, version: serverInfo?.version ?? null }, tools: canonical };
}

/** The snapshot's keys are already sorted (toolListSnapshot builds it so): its JSON is canonical as it stands. */
export function snapshotHash(snapshot: ToolListSnapshot): string {
  return sha256(JSON.stringify(snapshot)).slice(0, 16);
}

/** The copy kept in the history: hashed on the full text first, then clipped. */
export function storedSnapshot(snapshot: ToolListSnapshot): StoredSnapshot {
  // One serialisation per tool, shared by the list's hash, the tool's digest and the size checks.
  const texts = snapshot.tools.map((t) => JSON.stringify(t));
  const hash = sha256(`{"serverInfo":${JSON.stringify(snapshot.serverInfo)},"tools":[${texts.join(',')}]}`).slice(0, 16);
  const L = SNAPSHOT_LIMITS;
  let clipped = snapshot.tools.length > L.tools;
  const clip = (text: string, max: number) => {
    if (text.length <= max) return text;
    clipped = true;
    return `${text.slice(0, max)}…`;
  };
  const tools = snapshot.tools.slice(0, L.tools).map((t, i) => {
    if (texts[i]!.length <= L.textChars && t.name.length <= L.nameChars) return t; // small: nothing to clip
    const out: ToolDefinition = { name: clip(t.name, L.nameChars) };
    if (t.title !== undefined) out.title = clip(t.title, L.textChars);
    if (t.description !== undefined) out.description = clip(t.description, L.textChars);
    for (const key of ['inputSchema', 'annotations'] as const) {
      if (t[key] === undefined) continue;
      const text = JSON.stringify(t[key]);
      if (text.length > L.schemaChars) clipped = true;
      out[key] = text.length > L.schemaChars ? { clipped: true, chars: text.length } : t[key];
    }
    return out;
  });
  const digests: Record<string, string> = {};
  snapshot.tools.slice(0, L.digests).forEach((t, i) => { digests[t.name] = sha256(texts[i]!).slice(0, 12); });
  return { hash, digests, serverInfo: snapshot.serverInfo, tools, toolsSeen: snapshot.tools.length, clipped };
}
