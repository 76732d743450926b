/**
 * What a record keeps at most of anything a server controls. Records are printed, recorded in the history, sent
 * between processes and shown on pages: a 3 MB error message must not become a 3 MB history line. Text is made one
 * line and clipped where the record is made (`src/attest/record.ts`), so every later form is bounded by these.
 */
export const RECORD_LIMITS = {
  /** Characters of an error text (ours, the app's, a JSON-RPC error message). */
  errorChars: 1_000,
  /** Characters of a redirect target. */
  locationChars: 2_048,
  /** Characters of a name (tool, server, version, protocol version). */
  nameChars: 128,
  /** Characters of a screening finding's field and excerpt. */
  fieldChars: 512,
  /** Screening findings kept per observation (`findingsSeen` counts them all). */
  findings: 50,
  /** Characters of a body's first bytes kept as evidence (what the policy reads of a failed answer). */
  snippetChars: 2_048,
  /** Characters of a kept response header's value. */
  headerChars: 512,
} as const;

/**
 * The record's version. 1: the history lines written before the record existed (outcome only, no evidence);
 * 2: the observation record of `src/model/observation.ts`, its evidence included.
 */
export const RECORD_VERSION = 2;

/** The vantage of a run that names none: this machine. */
export const LOCAL_VANTAGE = 'local';
