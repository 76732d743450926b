/**
 * What every surface says of an observation in one line (pure, zod-free): its outcome, what went wrong, what the app
 * itself would say when that adds something, where it redirects, how it asks to be authenticated. `probe`'s table,
 * the MCP `probe` tool, `add`'s refusal and the status overview read these parts from here; each surface escapes them
 * for its own output. The words before the app's own error are declared here, once per wording in use.
 */
import type { Observation } from './observation.js';
import type { ToolChanges } from './plan.js';
import type { Reason, VerdictName } from './words.js';

/** Before the app's own error in `probe`'s table, the MCP `probe` tool and `report`'s heading. */
export const APP_WOULD_SAY = 'the app would say';
/**
 * Before the app's own error in `add`'s refusal, `refresh`'s review section and the status pages (capitalised there).
 */
export const APP_SAYS = 'the app says';

/**
 * An observation, a plan row or a server's status: whatever records a verdict and its errors (`verdict` null: none
 * yet).
 */
export type Describable = Pick<Observation, 'error' | 'appError'> &
  Partial<Pick<Observation, 'location' | 'auth'>> & {
    verdict: VerdictName | null;
    reason: Reason | null;
  };

export interface Description {
  /** `verdict/reason`, or null when nothing was observed yet. */
  outcome: string | null;
  /** What went wrong, as the record says it; null when nothing did. */
  error: string | null;
  /** What the app itself would say, only when it says something: null when it says nothing or the same as `error`. */
  appSays: string | null;
  /** Where the server redirected, or null. */
  location: string | null;
  /** How the server asks to be authenticated, or null. */
  auth: Observation['auth'];
}

export function describe(o: Describable): Description {
  return {
    outcome: o.verdict === null ? null : `${o.verdict}/${o.reason}`,
    error: o.error,
    appSays: o.appError && o.appError !== o.error ? o.appError : null,
    location: o.location ?? null,
    auth: o.auth ?? null,
  };
}

/** The word for each profile of the matrix in a one-line matrix (a list's own profile is named by its id). */
export const MATRIX_LABELS = {
  'kai-9000': 'app',
  'kai-fallback': 'app fork',
  'mcp-2025-11-25': '2025-11-25',
  'mcp-2026-07-28': '2026-07-28',
} as const;

/** One line per server: "app ✓ · 2025-11-25 ✓ · 2026-07-28 ✗" (the mark and the word, never colour alone). */
export function matrixLine(matrix: Readonly<Record<string, { works: boolean }>>): string {
  return Object.entries(matrix)
    .map(
      ([id, cell]) =>
        `${Object.hasOwn(MATRIX_LABELS, id) ? MATRIX_LABELS[id as keyof typeof MATRIX_LABELS] : id} ${cell.works ? '✓' : '✗'}`,
    )
    .join(' · ');
}

/** "added: a, b; changed: c; removed: d" (empty when nothing changed). */
export function describeToolChanges(c: ToolChanges | null | undefined): string {
  if (!c) return '';
  const parts = (['added', 'changed', 'removed'] as const)
    .filter((k) => c[k].length)
    .map((k) => `${k}: ${c[k].join(', ')}`);
  if (c.unlisted) parts.push('the tool list changed beyond what the stored digests name');
  return parts.join('; ');
}

/** What a maintainer reads about a row's tools, one line; null when there is nothing to say. */
export function toolReviewLine(
  r: {
    reason: string;
    toolsHash?: string | null;
    acceptedHash?: string | null;
    toolChanges?: ToolChanges | null;
    firstUse?: boolean;
    heldOut?: boolean;
    findingsSeen?: number;
  },
  applied = true,
): string | null {
  const parts: string[] = [];
  const diff = describeToolChanges(r.toolChanges);
  if (diff) parts.push(diff);
  if (r.findingsSeen) parts.push(`${r.findingsSeen} screening finding${r.findingsSeen === 1 ? '' : 's'}`);
  // Only a --write run accepts anything; a plan says what one would.
  if (r.firstUse)
    parts.push(
      applied
        ? `tools ${r.toolsHash} accepted on first use`
        : `tools ${r.toolsHash} would be accepted on first use by a --write run`,
    );
  if (!parts.length && r.reason !== 'suspicious-tools') return null;
  if (r.toolsHash && r.acceptedHash !== r.toolsHash && !r.firstUse)
    parts.push(`snapshot ${r.toolsHash}${r.acceptedHash ? ` (accepted: ${r.acceptedHash})` : ''}`);
  if (r.heldOut) parts.push('held out of the runtime lists until accepted');
  return parts.join('; ');
}
