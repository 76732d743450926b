/**
 * The policy forbids duplicates, and a host is not the only way to be one: a server can serve another's tool set
 * under another host, renamed or reworded. Two entries serve the same set when they share a fingerprint (pure):
 * - `tools`: the exact tools digest (every tool's full text);
 * - `name-blind`: the set with tool names and titles left out (a renamed copy);
 * - `description-blind`: the set with every description and title left out (the same interface reworded): reported,
 *   never refused on its own, since small servers with one or two plain tools share interfaces honestly.
 * An empty set matches nothing.
 */
import type { SameToolsDigest } from '../model/plan.js';

/** What an entry's last tool list is known by. */
export interface ToolSetPrint {
  name: string;
  url: string;
  toolCount: number | null;
  toolsDigest: string | null;
  nameBlindDigest?: string | null;
  descriptionBlindDigest?: string | null;
}

/** Each fingerprint in words. */
export const SAME_TOOLS_WORDS: Record<SameToolsDigest, string> = {
  tools: 'the same tools',
  'name-blind': 'the same tools, renamed',
  'description-blind': 'the same interface, reworded',
};

/** A match that refuses an addition (`add` without `--allow-same-tools`): any but the description-blind one alone. */
export const refuses = (digest: SameToolsDigest) => digest !== 'description-blind';

const ORDER: readonly SameToolsDigest[] = ['tools', 'name-blind', 'description-blind'];

/**
 * Entries named per match at most: a gateway serving one set under thousands of URLs names ten, not thousands (each).
 */
export const SAME_TOOLS_LISTED = 10;

/**
 * The entries of `known` that share a fingerprint with a candidate (another URL), strongest first, each once, at most
 * `limit`: an index over `known` by each digest, so a list of thousands is matched in one pass.
 */
export function sameToolsIndex(
  known: readonly ToolSetPrint[],
  limit = SAME_TOOLS_LISTED,
): (candidate: ToolSetPrint) => Array<{ name: string; url: string; digest: SameToolsDigest }> {
  const by = new Map<string, ToolSetPrint[]>();
  const keysOf = (p: ToolSetPrint) =>
    p.toolCount
      ? [
          p.toolsDigest && `tools ${p.toolsDigest}`,
          p.nameBlindDigest && `name-blind ${p.nameBlindDigest}`,
          p.descriptionBlindDigest && `description-blind ${p.descriptionBlindDigest}`,
        ]
      : [];
  for (const k of known) {
    for (const key of keysOf(k)) {
      if (!key) continue;
      const group = by.get(key);
      if (group) group.push(k);
      else by.set(key, [k]);
    }
  }
  return (candidate) => {
    const seen = new Set<string>([candidate.url]);
    const out: Array<{ name: string; url: string; digest: SameToolsDigest }> = [];
    keysOf(candidate).forEach((key, i) => {
      for (const k of (key && by.get(key)) || []) {
        if (out.length >= limit) return;
        if (seen.has(k.url)) continue;
        seen.add(k.url);
        out.push({ name: k.name, url: k.url, digest: ORDER[i]! });
      }
    });
    return out;
  };
}
