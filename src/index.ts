/** onetap as a library. The CLI is a thin layer over these. */
export { probe, PROBE_DEFAULTS, type ProbeOptions, type ProbeResult } from './attest/probe.js';
export { probeMany, type ProbeTarget, type ProbeManyOptions } from './attest/probe-many.js';
export { KAI_9000, CLIENT_PROFILES, BROWSER_USER_AGENT, type ClientProfile } from './attest/profile.js';
export type { Observation, Exchange, Quirk, StepName } from './attest/observation.js';
export { classify, POLICY_TABLE, REASON_TEXT, RETRYABLE, type Verdict, type VerdictName, type Reason, type EntryFacts } from './policy/policy.js';
