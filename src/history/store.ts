/**
 * The history store: what every refresh observed, and the plans it made. Decisions read it; the prober
 * never does. SQLite (`./sqlite.ts`) is the default; a server database can implement the same interface.
 */
import type { ProbeOutcome } from '../attest/result.js';

export type { ProbeOutcome };

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
