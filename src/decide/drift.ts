/**
 * Tool drift (pure): what changed between the accepted tool list and the latest one. Judged on the whole list:
 * a tools digest other than the accepted one is a change, always (src/model/snapshot-hash.ts defines the digests);
 * the per-tool digests only say which tools. A serverInfo change alone (a version bump) is reported, not
 * reviewed. A server that turned into another one (serverInfo.name differs and fewer than half of the accepted
 * tool names remain) is `identity-changed`. Removed tools are a change too: the list a maintainer vetted is gone.
 */
import type { Observation } from '../model/observation.js';
import type { ToolChanges } from '../model/plan.js';
import type { StoredSnapshot, ToolDigest } from '../model/snapshot.js';
import type { Reason } from '../model/words.js';

type Digests = Pick<StoredSnapshot, 'digests'>;

/** Per name, the digests of its copies, sorted (a name served twice has two). */
function byName(digests: readonly ToolDigest[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const d of digests) {
    const list = m.get(d.name);
    if (list) list.push(d.digest);
    else m.set(d.name, [d.digest]);
  }
  for (const list of m.values()) list.sort();
  return m;
}

/** Format-1 files kept 12 hex digits per tool, today's 16: compared on what both have. */
const sameDigest = (a: string, b: string) => (a.length <= b.length ? b.startsWith(a) : a.startsWith(b));
const sameCopies = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((d, i) => sameDigest(d, b[i]!));

/** Which tools were added, removed or changed (a name whose copies differ in number or content is changed). */
export function toolChanges(accepted: Digests, latest: Digests): ToolChanges {
  const before = byName(accepted.digests);
  const after = byName(latest.digests);
  const names = (m: Map<string, string[]>, keep: (n: string, d: string[]) => boolean) =>
    [...m]
      .filter(([n, d]) => keep(n, d))
      .map(([n]) => n)
      .sort();
  return {
    added: names(after, (n) => !before.has(n)),
    removed: names(before, (n) => !after.has(n)),
    changed: names(after, (n, d) => before.has(n) && !sameCopies(before.get(n)!, d)),
  };
}

/**
 * Whether the tools differ from the accepted ones: the tools digests when both have one (every tool counted,
 * duplicates included); for a format-1 accepted file, its complete per-tool digests and its count.
 */
export function toolsDiffer(
  accepted: Pick<StoredSnapshot, 'toolsDigest' | 'digests' | 'toolsSeen'>,
  latest: Pick<StoredSnapshot, 'toolsDigest' | 'digests' | 'toolsSeen'>,
): boolean {
  if (accepted.toolsDigest && latest.toolsDigest) return accepted.toolsDigest !== latest.toolsDigest;
  if (
    accepted.toolsSeen !== latest.toolsSeen ||
    accepted.digests.length < accepted.toolsSeen ||
    latest.digests.length < latest.toolsSeen
  )
    return true;
  const c = toolChanges(accepted, latest);
  return c.added.length > 0 || c.removed.length > 0 || c.changed.length > 0;
}

export function identityChanged(
  accepted: Pick<StoredSnapshot, 'serverInfo' | 'digests'>,
  latest: Pick<StoredSnapshot, 'serverInfo' | 'digests'>,
): boolean {
  if (accepted.serverInfo.name === latest.serverInfo.name) return false;
  const names = new Set(accepted.digests.map((d) => d.name));
  const present = new Set(latest.digests.map((d) => d.name));
  const kept = [...names].filter((n) => present.has(n)).length;
  return kept * 2 < names.size;
}

/** What the lock says was accepted, and the accepted snapshot when its file could be read and matched. */
export interface Acceptance {
  hash: string;
  /** The accepted tools digest, when the lock entry records it. */
  toolsDigest?: string | null;
  snapshot: StoredSnapshot | null;
}

/**
 * The row's tools against their acceptance (pure). Without a readable accepted snapshot the lock's tools digest
 * decides; without that either, a different snapshot hash counts as a change (it cannot be shown unchanged).
 */
export function reviewAgainst(accepted: Acceptance | null, latest: StoredSnapshot | null): ToolReview {
  if (!accepted) return { ...NO_TOOL_REVIEW, firstUse: latest !== null };
  const base: ToolReview = { ...NO_TOOL_REVIEW, acceptedHash: accepted.hash };
  if (!latest) return base;
  if (accepted.hash === latest.hash) return { ...base, changes: { added: [], removed: [], changed: [] } };
  const a = accepted.snapshot;
  if (!a) {
    const differ = accepted.toolsDigest && latest.toolsDigest ? accepted.toolsDigest !== latest.toolsDigest : true;
    return {
      ...base,
      toolsChanged: differ,
      changes: differ ? { added: [], removed: [], changed: [], unlisted: true } : null,
    };
  }
  const differ = toolsDiffer(a, latest);
  const changes = toolChanges(a, latest);
  const named = changes.added.length + changes.removed.length + changes.changed.length > 0;
  return {
    ...base,
    toolsChanged: differ,
    changes: differ && !named ? { ...changes, unlisted: true } : changes,
    serverInfoChanged:
      a.serverInfo.name !== latest.serverInfo.name || a.serverInfo.version !== latest.serverInfo.version,
    identityChanged: identityChanged(a, latest),
  };
}

/** What a refresh knows about a row's tools against their acceptance (tools.lock.json). */
export interface ToolReview {
  /** The accepted snapshot's hash, or null when none was accepted yet. */
  acceptedHash: string | null;
  /**
   * Which tools changed against the accepted snapshot; null without a tool list or an accepted snapshot to compare
   * with.
   */
  changes: ToolChanges | null;
  /** The decision: the tools differ from the accepted ones (the tools digest). */
  toolsChanged: boolean;
  /** serverInfo (name or version) differs from the accepted snapshot's: reported, never reviewed on its own. */
  serverInfoChanged: boolean;
  identityChanged: boolean;
  /** No acceptance yet: a recorded `--write` run accepts this list on first use (unless screening flagged it). */
  firstUse: boolean;
}

export const NO_TOOL_REVIEW: ToolReview = {
  acceptedHash: null,
  changes: null,
  toolsChanged: false,
  serverInfoChanged: false,
  identityChanged: false,
  firstUse: false,
};

/**
 * The row's verdict after tool review, for a row that is otherwise live (policy DRIFT_RULES): identity-changed,
 * then suspicious-tools, then tools-changed; every one in `reasons`. A list whose tools a maintainer accepted
 * keeps its findings accepted too (a version bump alone does not undo that).
 */
export function reviewTools(
  o: Pick<Observation, 'verdict' | 'reason' | 'reasons' | 'toolsHash'>,
  t: ToolReview,
): Pick<Observation, 'verdict' | 'reason' | 'reasons'> {
  const suspicious = o.reason === 'suspicious-tools';
  if (o.verdict !== 'live' && !suspicious) return o;
  const accepted =
    t.acceptedHash !== null && o.toolsHash !== null && (t.acceptedHash === o.toolsHash || !t.toolsChanged);
  const underlying = suspicious ? o.reasons.filter((r) => r !== 'suspicious-tools') : o.reasons;
  const drift: Reason[] = [];
  if (t.identityChanged) drift.push('identity-changed');
  if (suspicious && !accepted) drift.push('suspicious-tools');
  if (t.toolsChanged) drift.push('tools-changed');
  if (drift.length === 0)
    return suspicious
      ? { verdict: 'live', reason: underlying[0] ?? 'ok', reasons: underlying.length ? underlying : ['ok'] }
      : o;
  return { verdict: 'review', reason: drift[0]!, reasons: [...drift, ...underlying] };
}

/**
 * After tool review: a live row whose tool list costs more than `maxToolTokens` goes to review (policy
 * BUDGET_RULES), and so does one whose count ran out of its time (`tokensError`: no count, and no way under a budget
 * by being too costly to count). A row recorded before tokens were counted is never judged by a guess.
 */
export function reviewBudget<T extends Pick<Observation, 'verdict' | 'reason' | 'reasons' | 'tokens' | 'tokensError'>>(
  o: T,
  maxToolTokens: number | undefined,
): Pick<Observation, 'verdict' | 'reason' | 'reasons'> {
  if (maxToolTokens === undefined || o.verdict !== 'live') return o;
  const over = typeof o.tokens === 'number' ? o.tokens > maxToolTokens : typeof o.tokensError === 'string';
  if (!over) return o;
  return { verdict: 'review', reason: 'context-budget', reasons: ['context-budget', ...o.reasons] };
}

/**
 * Rows held out of the generated runtime lists until a maintainer accepts them (or, for `unprocessable`, until
 * the server answers something onetap can vet: what it could not read was neither screened nor compared).
 */
export const HELD_OUT: ReadonlySet<Reason> = new Set(['identity-changed', 'suspicious-tools', 'unprocessable']);
