/**
 * Retry-After as RFC 9110 §10.2.3 writes it: delay-seconds or an HTTP-date (any of its three forms), one cap of an
 * hour, and nothing else read as a wait. One reader for the prober's retry and for the rest a host gets after a 429.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  readRetryAfter,
  retryAfterMs,
  RETRY_AFTER_CAP_MS,
  RETRY_AFTER_UNREAD_MS,
} from '../../src/attest/retry-after.js';
import type { Observation } from '../../src/model/observation.js';

const NOW = Date.parse('2026-12-03T10:00:00.000Z');
const HOUR = 3_600_000;

describe('readRetryAfter: a header value → a wait in ms, or null', () => {
  const rows: Array<[value: string | undefined, ms: number | null]> = [
    [undefined, null],
    ['0', 0],
    ['1', 1_000],
    ['6', 6_000],
    [' 6 ', 6_000],
    ['3600', HOUR],
    ['3601', HOUR], // one cap: an hour
    ['99999999999999999999', HOUR],
    // HTTP-dates, every form, always GMT
    ['Thu, 03 Dec 2026 10:00:30 GMT', 30_000],
    ['thu, 03 dec 2026 10:00:30 gmt', 30_000],
    ['Thursday, 03-Dec-26 10:00:30 GMT', 30_000],
    ['Thu Dec  3 10:00:30 2026', 30_000],
    ['Thu, 03 Dec 2026 09:00:00 GMT', 0], // already past
    ['Fri, 04 Dec 2026 10:00:00 GMT', HOUR], // a day: capped
    // neither delay-seconds nor an HTTP-date
    ['', null],
    ['1.5', null],
    ['-3', null],
    ['+2', null],
    ['1e3', null],
    ['0x10', null],
    ['2026-12-03T10:00:30Z', null],
    ['Thu, 03 Dec 2026 10:00:30 +0000', null],
    ['Thu, 03 Dec 2026 25:00:30 GMT', null],
    ['soon', null],
  ];
  for (const [value, ms] of rows) {
    it(`${JSON.stringify(value)}: ${ms}`, () => assert.equal(readRetryAfter(value, NOW), ms));
  }
  it('the cap is an hour', () => assert.equal(RETRY_AFTER_CAP_MS, HOUR));
});

describe('retryAfterMs: how long a host that answered 429 is left alone', () => {
  const step = (status: number | null, retryAfter?: string) => ({
    status,
    headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  });
  const observed = (...steps: ReturnType<typeof step>[]) =>
    ({ evidence: { deciding: { steps } } }) as unknown as Pick<Observation, 'evidence'>;
  const rows: Array<[what: string, o: Pick<Observation, 'evidence'>, ms: number]> = [
    ['its Retry-After in seconds', observed(step(429, '6')), 6_000],
    ['its Retry-After as an HTTP-date', observed(step(429, 'Thu, 03 Dec 2026 10:02:00 GMT')), 120_000],
    ['the last 429 of the deciding steps', observed(step(429, '2'), step(200), step(429, '9')), 9_000],
    ['at most an hour', observed(step(429, '86400')), HOUR],
    ['a minute without a Retry-After', observed(step(429)), RETRY_AFTER_UNREAD_MS],
    ['a minute when it cannot be read', observed(step(429, '1.5')), RETRY_AFTER_UNREAD_MS],
    ['a minute with no 429 at all', observed(step(200, '5')), RETRY_AFTER_UNREAD_MS],
    ['a minute with no evidence', { evidence: null }, RETRY_AFTER_UNREAD_MS],
  ];
  for (const [what, o, ms] of rows) it(`${what}: ${ms} ms`, () => assert.equal(retryAfterMs(o, NOW), ms));
});
