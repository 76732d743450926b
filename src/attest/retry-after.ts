/**
 * Retry-After, read once for every caller: the prober's one retry after a 429 (`probe.ts`), and how long a host is
 * left alone after one (the census's rest, a worker's hold). RFC 9110 §10.2.3: delay-seconds or an HTTP-date.
 */
import type { Observation } from '../model/observation.js';

/** The longest a Retry-After is taken at its word: a server that asks for longer is left alone this long. */
export const RETRY_AFTER_CAP_MS = 3_600_000;

/** A host that answered 429 without a Retry-After that can be read is left alone this long. */
export const RETRY_AFTER_UNREAD_MS = 60_000;

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** The three forms of an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms. */
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`, 'i');
const RFC_850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`,
  'i',
);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`, 'i');

/**
 * A Retry-After value as a wait in ms from `nowMs`: delay-seconds (digits only) or an HTTP-date (one already past
 * is 0), at most `RETRY_AFTER_CAP_MS`; null when there is none or it is neither (`1.5`, `-3`, `""`, an ISO date).
 */
export function readRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1_000, RETRY_AFTER_CAP_MS);
  // asctime carries no zone: an HTTP-date is always GMT.
  const at = IMF_FIXDATE.test(v) || RFC_850.test(v) ? Date.parse(v) : ASCTIME.test(v) ? Date.parse(`${v} GMT`) : NaN;
  return Number.isFinite(at) ? Math.min(Math.max(at - nowMs, 0), RETRY_AFTER_CAP_MS) : null;
}

/** How long a server that answered 429 asked to be left alone: its last 429's Retry-After, else a minute. */
export function retryAfterMs(o: Pick<Observation, 'evidence'>, nowMs = Date.now()): number {
  const answer = [...(o.evidence?.deciding.steps ?? [])].reverse().find((s) => s.status === 429);
  return readRetryAfter(answer?.headers['retry-after'], nowMs) ?? RETRY_AFTER_UNREAD_MS;
}
