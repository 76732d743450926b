/**
 * The store: where recorded runs, their rows, the tool snapshots they saw and the acceptances of tool lists live.
 * One interface, one file per backend (Gatus's split): the text history in git beside the catalog
 * (`./text-store.ts`) is the default; a database backend implements the same. Decisions read it; the prober
 * never does. Everything is async: a database driver is.
 */
import type { LockEntry, ToolsLock } from '../model/acceptance.js';
import type { CanaryCheck, HistoryProblems, PlanRow, RecordedRun, VerdictPoint } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import type { Observation } from '../model/observation.js';
import type { FileWrite } from '../util/atomic.js';
import type { SnapshotRead } from './snapshots.js';
import type { VantageKeys } from './signatures.js';

/** A URL's verdicts since a day, and the newest row among them (null when there is none). */
export interface UrlHistory {
  points: VerdictPoint[];
  last: PlanRow | null;
}

/** Which runs: the last `last` recorded, or those started on or after `since` (an ISO day or time). */
export interface RunSelection {
  last?: number;
  since?: string;
}

/** What a run records besides its rows: the tool lists it saw, and the acceptances it made (on first use). */
export interface RunChanges {
  snapshots: readonly StoredSnapshot[];
  /** The acceptances after this run (null: unchanged). */
  lock: ToolsLock | null;
  /** Files of the catalog's own written with the run's, all or none (the catalog, the generated lists). */
  files: readonly FileWrite[];
  /**
   * Write the snapshot files even when their bytes differ only in format (a `--write` run, which also updates the
   * lock).
   */
  rewriteSnapshots: boolean;
}

/**
 * A run id is recorded once: `record` refuses an id the store holds already (nothing of the run is written). A re-run
 * with the same id (GitHub's "Re-run jobs" keeps it) shows the recorded run instead of recording a second one.
 */
export class RunRecordedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is recorded already (a run id is recorded once)`);
  }
}

/**
 * A run across vantages as its first enqueue registered it (`startedAt` as the run gave it, `registeredAt` by the
 * store's clock).
 */
export interface RunRegistration {
  id: string;
  startedAt: string;
  vantages: string[];
  registeredAt: string;
}

/** The URL a vantage's canaries job is registered and queued under (one per run and vantage): a key, not an address. */
export const CANARIES_URL = '#canaries';

/**
 * A store that workers record observations to as their jobs finish (PostgreSQL): what a run across vantages reads.
 * Only what a job the run enqueued recorded after it was enqueued counts; with keys, only what its vantage signed.
 */
export interface VantageObservations {
  /** Registers the run (once) and the jobs about to be enqueued (each once), before they are on the queue. */
  registerRun(
    run: { id: string; startedAt: string },
    vantages: readonly string[],
    jobs: ReadonlyArray<{ url: string; vantage: string }>,
  ): Promise<{ registration: RunRegistration; discarded: number }>;
  /** How many observations of these vantages a run has so far (cheap: what a waiting run polls). */
  observationCount(runId: string, vantages: readonly string[]): Promise<number>;
  /** Which of these jobs of a run have an observation that counts (a few: the jobs that failed for good). */
  observedOf(
    runId: string,
    jobs: ReadonlyArray<{ url: string; vantage: string }>,
  ): Promise<Array<{ url: string; vantage: string }>>;
  /** The observations recorded for a run, every vantage's (validated; with `keys`, verified). */
  observationsOf(runId: string, keys?: VantageKeys): Promise<Observation[]>;
  /** What each vantage's canaries said in a run (with `keys`, verified). */
  canariesOf(runId: string, keys?: VantageKeys): Promise<Map<string, CanaryCheck>>;
}

export interface Store {
  /** The rows of a URL's recorded runs (aborted runs never count), newest first. */
  recent(url: string, limit: number): Promise<PlanRow[]>;
  /** The rows of a URL observed on or after `since` (an ISO day or time), oldest first. */
  since(url: string, since: string): Promise<PlanRow[]>;
  /** The verdicts of a URL observed on or after `since`, oldest first: what day bars and uptime read. */
  verdicts(url: string, since: string): Promise<VerdictPoint[]>;
  /**
   * Per URL, `verdicts(url, since)` and the newest of those rows as `recent(url, 1)` gives it (null when there are
   * no verdicts since): what the status pages read, in one call for a whole catalog.
   */
  histories(urls: readonly string[], since: string): Promise<Map<string, UrlHistory>>;
  /**
   * A token that differs whenever a run was recorded or marked, or the history's problems changed, since it was
   * taken (acceptances aside): equal tokens, same answers. The status pages compute their model once per token.
   */
  stamp(): Promise<string>;
  /** The run recorded under `id` (an aborted one too), with its rows, or null; retention does not hide it. */
  recordedRun(id: string): Promise<RecordedRun | null>;
  /**
   * Held while a run of this id is decided and recorded: a second holder waits (`onBusy` called once when it must)
   * until the first releases it or its process ends. Resolves to the release.
   */
  holdRun(id: string, onBusy?: () => void): Promise<() => Promise<void>>;
  /** The newest recorded run (an aborted one too), with its rows. */
  latestRun(): Promise<RecordedRun | null>;
  /** Recorded runs, oldest first. */
  runs(select: RunSelection): Promise<RecordedRun[]>;
  /** The accepted tool lists. */
  acceptances(): Promise<ToolsLock>;
  /** A stored snapshot, verified against the SHA-256 recorded for it (when given). */
  snapshot(hash: string, sha256?: string | null): Promise<SnapshotRead>;
  /** Per snapshot, the SHA-256 its stored bytes have once a run recording it is recorded (what rows record). */
  snapshotDigests(snapshots: readonly StoredSnapshot[], rewrite: boolean): Promise<Map<string, string>>;
  /**
   * Records a run: its rows, the snapshots it saw and the acceptances it made, with `changes.files`, all or none.
   * When the files cannot be written, the run is recorded as not applied (and the error thrown). Resolves to the
   * paths whose bytes changed (a file already holding its content is not written), history files included.
   * A run whose id is recorded already is refused (`RunRecordedError`), nothing written.
   */
  record(run: RecordedRun, changes: RunChanges): Promise<string[]>;
  /**
   * Applies a run that is recorded but not applied: `changes` written all or none, and the run marked applied;
   * nothing else is recorded. When the files cannot be written the run stays not applied (and the error is thrown).
   */
  applyRecorded(id: string, changes: RunChanges): Promise<string[]>;
  /** Accepts a tool list for a URL (`onetap accept`). */
  accept(url: string, entry: LockEntry): Promise<void>;
  /** What of the history could not be read (lines skipped, never fatal): how many, and the first few. */
  problems(): Promise<HistoryProblems>;
  close(): Promise<void>;
}
