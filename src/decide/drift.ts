/**
 * Tool drift (pure): what changed between the accepted tool list and the latest one. The policy reads it:
 * a changed or added tool is `tools-changed`; a server that turned into another one (serverInfo.name differs
 * and fewer than half of the accepted tool names remain) is `identity-changed`; removed tools alone are
 * reported, not reviewed.
 */
import type { StoredSnapshot } from '../attest/snapshot.js';
import type { ProbeOutcome } from '../attest/result.js';
import type { Reason } from '../policy/policy.js';

export interface ToolChanges { added: string[]; removed: string[]; changed: string[] }

export function toolChanges(accepted: Pick<StoredSnapshot, 'digests'>, latest: Pick<StoredSnapshot, 'digests'>): ToolChanges {
  const before = accepted.digests;
  const after = latest.digests;
  const sorted = (xs: string[]) => xs.sort();
  return {
    added: sorted(Object.keys(after).filter((n) => !Object.hasOwn(before, n))),
    removed: sorted(Object.keys(before).filter((n) => !Object.hasOwn(after, n))),
    changed: sorted(Object.keys(after).filter((n) => Object.hasOwn(before, n) && before[n] !== after[n])),
  };
}

export function identityChanged(accepted: Pick<StoredSnapshot, 'serverInfo' | 'digests'>, latest: Pick<StoredSnapshot, 'serverInfo' | 'digests'>): boolean {
  if (accepted.serverInfo.name === latest.serverInfo.name) return false;
  const names = Object.keys(accepted.digests);
  const kept = names.filter((n) => Object.hasOwn(latest.digests, n)).length;
  return kept * 2 < names.length;
}

export const hasDrift = (c: ToolChanges) => c.added.length > 0 || c.changed.length > 0;

/** What a refresh knows about a row's tools against its acceptance (tools.lock.json). */
export interface ToolReview {
  /** The accepted snapshot's hash, or null when none was accepted yet. */
  acceptedHash: string | null;
  /** Against the accepted snapshot; null without a tool list or an accepted snapshot to compare with. */
  changes: ToolChanges | null;
  identityChanged: boolean;
  /** No acceptance yet: a recorded `--write` run accepts this list on first use (unless screening flagged it). */
  firstUse: boolean;
}

export const NO_TOOL_REVIEW: ToolReview = { acceptedHash: null, changes: null, identityChanged: false, firstUse: false };

/**
 * The row's verdict after tool review, for a row that is otherwise live (policy DRIFT_RULES): identity-changed,
 * then suspicious-tools, then tools-changed; every one in `reasons`. A list whose hash a maintainer accepted
 * keeps its findings accepted too.
 */
export function reviewTools(o: Pick<ProbeOutcome, 'verdict' | 'reason' | 'reasons' | 'toolsHash'>, t: ToolReview): Pick<ProbeOutcome, 'verdict' | 'reason' | 'reasons'> {
  const suspicious = o.reason === 'suspicious-tools';
  if (o.verdict !== 'live' && !suspicious) return o;
  const accepted = t.acceptedHash !== null && t.acceptedHash === o.toolsHash;
  const underlying = suspicious ? o.reasons.filter((r) => r !== 'suspicious-tools') : o.reasons;
  const drift: Reason[] = [];
  if (t.identityChanged) drift.push('identity-changed');
  if (suspicious && !accepted) drift.push('suspicious-tools');
  if (t.changes && hasDrift(t.changes)) drift.push('tools-changed');
  if (drift.length === 0) return suspicious ? { verdict: 'live', reason: underlying[0] ?? 'ok', reasons: underlying.length ? underlying : ['ok'] } : o;
  return { verdict: 'review', reason: drift[0]!, reasons: [...drift, ...underlying] };
}

/** "added: a, b; changed: c; removed: d" (empty when nothing changed). */
export function describeToolChanges(c: ToolChanges | null | undefined): string {
  if (!c) return '';
  return (['added', 'changed', 'removed'] as const).filter((k) => c[k].length).map((k) => `${k}: ${c[k].join(', ')}`).join('; ');
}

/** What a maintainer reads about a row's tools, one line; null when there is nothing to say. */
export function toolReviewLine(r: { reason: string; toolsHash?: string | null; acceptedHash?: string | null; toolChanges?: ToolChanges | null; firstUse?: boolean; heldOut?: boolean; findingsSeen?: number }): string | null {
  const parts: string[] = [];
  const diff = describeToolChanges(r.toolChanges);
  if (diff) parts.push(diff);
  if (r.findingsSeen) parts.push(`${r.findingsSeen} screening finding${r.findingsSeen === 1 ? '' : 's'}`);
  if (r.firstUse) parts.push(`tools ${r.toolsHash} accepted on first use`);
  if (!parts.length && r.reason !== 'suspicious-tools') return null;
  if (r.toolsHash && r.acceptedHash !== r.toolsHash && !r.firstUse) parts.push(`snapshot ${r.toolsHash}${r.acceptedHash ? ` (accepted: ${r.acceptedHash})` : ''}`);
  if (r.heldOut) parts.push('held out of the runtime lists until accepted');
  return parts.join('; ');
}

/** Rows held out of the generated runtime lists until a maintainer accepts them. */
export const HELD_OUT: ReadonlySet<Reason> = new Set(['identity-changed', 'suspicious-tools']);
