/**
 * The history store: what every refresh observed, and the plans it made. Decisions read it; the prober
 * never does. SQLite (`./sqlite.ts`) is the default; a server database can implement the same interface.
 */
import type { Reason, VerdictName } from '../policy/policy.js';

/** What one probe of one catalog entry came to: the facts a decision and the history need. */
export interface ProbeOutcome {
  url: string;
  name: string;
  verdict: VerdictName;
  reason: Reason;
  attempts: number;
  httpStatus: number | null;
  durationMs: number;
  tools: string[] | null;
  error: string | null;
}

export interface ObservationRecord extends ProbeOutcome {
  /** ISO time of the refresh run that made the observation. */
  at: string;
}

export interface RunRecord {
  id: number;
  startedAt: string;
  finishedAt: string;
  catalog: string;
  /** True when the run wrote the catalog and outputs (`--write`). */
  applied: boolean;
  /** The plan as printed by `refresh --json`. */
  plan: unknown;
}

export interface HistoryStore {
  /** Records one run and its observations in one transaction; returns the run id. */
  recordRun(run: Omit<RunRecord, 'id'>, observations: ObservationRecord[]): number;
  /** The newest observations of a URL, newest first. */
  recent(url: string, limit: number): ObservationRecord[];
  /** Observations of a URL since a time, oldest first. */
  since(url: string, sinceIso: string): ObservationRecord[];
  latestRun(): RunRecord | null;
  close(): void;
}
