/** onetap as a library. The CLI is a thin layer over these. */
export { probe, resolveProfile, PROBE_DEFAULTS, type ProbeOptions, type ProbeResult } from './attest/probe.js';
export { probeResultJson, probeOutcome, type ProbeResultJson, type MatrixCell } from './attest/result.js';
export { probeMany, type ProbeTarget, type ProbeManyOptions } from './attest/probe-many.js';
export { KAI_9000, KAI_FALLBACK, MCP_2025_11_25, MCP_2026_07_28, DIAGNOSIS, CLIENT_PROFILES, DEFAULT_PROFILE_ID, BROWSER_USER_AGENT, KTOR_USER_AGENT, profileById, matrixLine, type ClientProfile } from './attest/profile.js';
export type { Observation, ClientRun, Exchange, Quirk, StepName, ToolDefinition, AuthKind } from './attest/observation.js';
export { decodeAppResponse, decodeAppTools, AppSseReader } from './attest/app-reader.js';
export { classify, isTransient, POLICY_TABLE, REASON_TEXT, RETRYABLE, type Verdict, type VerdictName, type Reason, type EntryFacts } from './policy/policy.js';
export { loadCatalog, parseCatalog, serializeCatalog, CatalogError, type Catalog, type CatalogServer, type RemovedEntry, type CatalogPolicy, type DecisionRecord } from './catalog/model.js';
export { lintCatalog, entryProblems, formatProblems, type LintProblem } from './catalog/lint.js';
export { addServer, AddRefused, type AddOptions } from './catalog/add.js';
export { buildPlan, decideRow, detectOutage, type Plan, type PlanRow, type Decision } from './decide/decide.js';
export { refresh, planJson, type RefreshOptions, type RefreshResult } from './refresh/refresh.js';
export type { HistoryStore, ObservationRecord, ProbeOutcome, RunRecord } from './history/store.js';
export { SqliteHistoryStore } from './history/sqlite.js';
export { runtimeServers, runtimeJson, runtimeTypeScript, runtimeKotlin, type PopularMcpServer } from './outputs/runtime-list.js';
export { matchesPopularUrl, mergeMissingHeaders, applyPopularDefaultHeaders, authorizationHeaderValue, HOST_ALIASED } from './runtime/helpers.js';
export { discover, parseSource, serverCardUrl, type DiscoverOptions, type DiscoverResult, type Candidate, type CatalogReport, type UnreadDocument, DISCOVERY_LIMITS } from './discover/discover.js';
export { validateCard, validateRegistryServer, validateDocument, type Validation, type ValidateOptions } from './discover/card.js';
export { judgeCard, addCommand, shellQuote, type Eligibility } from './discover/eligibility.js';
export { guardedGet, FetchRefused, type FetchPolicy } from './discover/fetcher.js';
export { publication, publishedDocuments, writePublication, serverCard, type Publication, type PublishOptions } from './publish/publish.js';
export { startServer, type ServeOptions, type RunningServer } from './serve/server.js';
export { assertPublicTarget, guardedDispatcher, checkUrl, type Resolver, type AddressPolicy } from './discover/fetcher.js';
export { publishProblems, assertPublishable, UnpublishableCatalog } from './publish/publish.js';
export { ServiceUnavailable, SERVE_LIMITS } from './serve/server.js';
export { statusRoutes, buildStatus } from './status/routes.js';
export { statusModel, type StatusModel, type ServerStatus, type DayBar } from './status/model.js';
export { overviewPage, serverPage } from './status/page.js';
export { markdownReport } from './status/report.js';
export { siteFiles, writeSite, HISTORY_WINDOWS, type SiteFile, type SiteOptions } from './site/site.js';
export { openHistory, HistoryIndex, historyProblemsOf } from './history/open.js';
export {
  readHistory, readHistoryChecked, readHistoryProblems, describeHistoryProblems, parseHistory, runLines, appendRuns, historyDir,
  HISTORY_LINE_VERSION, HISTORY_LIMITS, type HistoryRun, type PlanJson, type HistoryProblem, type HistoryProblems,
} from './history/text.js';
export { cardMismatches, type Mismatch, type LiveFacts } from './discover/consistency.js';
export {
  toolListSnapshot, storedSnapshot, snapshotHash, canonicalJson, toolsDigestOf, nestsDeeperThan, MAX_NESTING, SNAPSHOT_LIMITS, SNAPSHOT_FORMAT,
  type ToolListSnapshot, type StoredSnapshot, type ToolDigest,
} from './attest/snapshot.js';
export { RECORD_LIMITS } from './attest/result.js';
export { toolChanges, toolsDiffer, identityChanged, reviewAgainst, reviewTools, type ToolChanges, type ToolReview, type Acceptance } from './decide/drift.js';
export { acceptTools, NothingToAccept, type AcceptOptions } from './catalog/accept.js';
export { readLock, serializeLock, type ToolsLock, type LockEntry } from './catalog/lock.js';
export { screenTools, SCREEN_RULES, type Finding } from './screen/screen.js';
export { createMcpServer, serveStdio, serveHttp, requestRefusal, MCP_PATH, type McpServeOptions, type RunningMcp } from './mcp/server.js';
export { TOOLS as MCP_TOOLS, ToolRefused, type ToolSpec, type ToolContext } from './mcp/tools.js';
export { MCP_LIMITS, type McpLimits } from './mcp/limits.js';
export { confinedPath, PathRefused } from './mcp/confine.js';
