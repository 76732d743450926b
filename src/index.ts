/**
 * onetap as a library: the stages (collect → decide → apply, and refresh, their composition), the record they pass
 * between them with its schemas, the client profiles and the policy table, the store, and the few helpers a client
 * app embeds. The CLI is a thin layer over these. What moved or became internal in 0.2.0: docs/migration-0.2.md.
 */

// The stages
export { probe, PROBE_DEFAULTS, type ProbeOptions, type ProbeResult } from './attest/probe.js';
export { probeMany, PROBE_MANY_DEFAULTS, type ProbeTarget, type ProbeManyOptions } from './attest/probe-many.js';
export { keepCountsIn } from './attest/tokens.js';
export { collect, type CollectOptions, type Collected } from './collect/collect.js';
export { decide, detectOutage, decideRow, type DecideInput, type RowInput } from './decide/decide.js';
export { applyPlan, type ApplyOptions, type Applied } from './apply/apply.js';
export { refresh, type RefreshOptions, type RefreshResult } from './refresh/refresh.js';
export {
  rejudge,
  rejudgeRow,
  type Rejudged,
  type RejudgedRun,
  type RejudgedRow,
  type RejudgeOptions,
} from './decide/rejudge.js';

// The record, its schemas and its views
export {
  VERDICTS,
  REASONS,
  DECISIONS,
  QUIRKS,
  STEPS,
  type VerdictName,
  type Reason,
  type Decision,
  type Quirk,
  type StepName,
  type AuthKind,
} from './model/words.js';
export { RECORD_LIMITS, RECORD_VERSION, LOCAL_VANTAGE } from './model/limits.js';
export {
  evidenceSchema,
  clientRunSchema,
  exchangeSchema,
  type Evidence,
  type ClientRun,
  type Exchange,
} from './model/evidence.js';
export {
  observationSchema,
  findingSchema,
  matrixCellSchema,
  mismatchSchema,
  type Observation,
  type Finding,
  type MatrixCell,
  type Mismatch,
  type ProbeSettings,
} from './model/observation.js';
export {
  planRowSchema,
  planSchema,
  runRecordSchema,
  toolChangesSchema,
  type PlanRow,
  type Plan,
  type PlanSummary,
  type RunRecord,
  type RecordedRun,
  type ToolChanges,
  type HistoryProblems,
  type CanaryCheck,
  type VerdictPoint,
} from './model/plan.js';
export { toolsLockSchema, lockEntrySchema, type ToolsLock, type LockEntry } from './model/acceptance.js';
export { storedSnapshotSchema, type StoredSnapshot, type ToolDefinition } from './model/snapshot.js';
export { check, type Checked } from './model/validate.js';
export { probeJson, type ProbeJson } from './views/probe.js';
export { planJson, planRowJson, type PlanJson, type PlanRowJson } from './views/plan.js';

// The clients and the policy
export {
  CLIENT_PROFILES,
  KAI_9000,
  KAI_FALLBACK,
  MCP_2025_11_25,
  MCP_2026_07_28,
  DIAGNOSIS,
  DEFAULT_PROFILE_ID,
  profileById,
  type ClientProfile,
} from './attest/profile.js';
export {
  classify,
  classifyAs,
  detailOf,
  POLICY_TABLE,
  REASON_TEXT,
  RETRYABLE,
  type Classification,
  type EntryFacts,
} from './policy/policy.js';

// The catalog and the store
export {
  loadCatalog,
  parseCatalog,
  serializeCatalog,
  CatalogError,
  type Catalog,
  type CatalogServer,
  type RemovedEntry,
  type CatalogPolicy,
  type DecisionRecord,
} from './catalog/model.js';
export { lintCatalog, type LintProblem } from './catalog/lint.js';
export type { Store, RunChanges, RunSelection, UrlHistory } from './store/store.js';
export { RunRecordedError } from './store/store.js';
export { TextStore } from './store/text-store.js';
export { openStore, STORE_ENV, StoreChoiceError, type OpenStoreOptions } from './store/open.js';
export type { Coordination, HostLeases, VantageRecords } from './queue/coordination.js';
export { openPgStore, migrateStore, StoreError, type PgStore, type Migrated } from './store/pg-store.js';
export { importHistory, exportHistory, type Imported, type Exported } from './store/transfer.js';

// For a client app: matching a saved server to a one-tap row, and its default headers
export {
  matchesPopularUrl,
  mergeMissingHeaders,
  applyPopularDefaultHeaders,
  authorizationHeaderValue,
  HOST_ALIASED,
} from './runtime/helpers.js';

// Discovery, for directory operators
export { discover, type DiscoverOptions, type DiscoverResult, type Candidate } from './discover/discover.js';
export { validateCard, type Validation } from './discover/card.js';
