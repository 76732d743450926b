/**
 * What every surface says of an observation in one line (pure, zod-free): its outcome, what went wrong, what the app
 * itself would say when that adds something, where it redirects, how it asks to be authenticated. `probe`'s table,
 * the MCP `probe` tool, `add`'s refusal and the status overview read these parts from here; each surface escapes them
 * for its own output. The words before the app's own error are declared here, once per wording in use.
 */
import type { Observation } from './observation.js';
import type { Reason, VerdictName } from './words.js';

/** Before the app's own error in `probe`'s table, the MCP `probe` tool and `report`'s heading. */
export const APP_WOULD_SAY = 'the app would say';
/** Before the app's own error in `add`'s refusal, `refresh`'s review section and the status pages (capitalised there). */
export const APP_SAYS = 'the app says';

/** An observation, a plan row or a server's status: whatever records a verdict and its errors (`verdict` null: none yet). */
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
