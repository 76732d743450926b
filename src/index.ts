/** onetap as a library. The CLI is a thin layer over these. */
export { probe, PROBE_DEFAULTS, type ProbeOptions, type ProbeResult } from './attest/probe.js';
export { probeMany, type ProbeTarget, type ProbeManyOptions } from './attest/probe-many.js';
export { KAI_9000, CLIENT_PROFILES, BROWSER_USER_AGENT, type ClientProfile } from './attest/profile.js';
export type { Observation, Exchange, Quirk, StepName } from './attest/observation.js';
export { classify, POLICY_TABLE, REASON_TEXT, RETRYABLE, type Verdict, type VerdictName, type Reason, type EntryFacts } from './policy/policy.js';
export { loadCatalog, parseCatalog, serializeCatalog, CatalogError, type Catalog, type CatalogServer, type RemovedEntry, type CatalogPolicy, type DecisionRecord } from './catalog/model.js';
export { lintCatalog, entryProblems, formatProblems, type LintProblem } from './catalog/lint.js';
export { addServer, AddRefused, type AddOptions } from './catalog/add.js';
export { buildPlan, decideRow, detectOutage, type Plan, type PlanRow, type Decision } from './decide/decide.js';
export { refresh, planJson, type RefreshOptions, type RefreshResult } from './refresh/refresh.js';
export type { HistoryStore, ObservationRecord, ProbeOutcome, RunRecord } from './history/store.js';
export { SqliteHistoryStore } from './history/sqlite.js';
export { runtimeServers, runtimeJson, runtimeTypeScript, runtimeKotlin, type PopularMcpServer } from './outputs/runtime-list.js';
export { matchesPopularUrl, mergeMissingHeaders, applyPopularDefaultHeaders, authorizationHeaderValue, HOST_ALIASED } from './runtime/helpers.js';
