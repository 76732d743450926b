/**
 * A vantage's signature on what its workers record: HMAC-SHA256 with the vantage's key (`ONETAP_VANTAGE_KEY` in each
 * worker's environment; the decider holds the same key as `ONETAP_VANTAGE_KEY_<NAME>`), over a tag and the exact
 * stored text. The stored observation line already carries the run, URL, vantage and time, and a reader checks they
 * match the row's columns, so signing the line signs all of them: nothing is serialised twice, nothing can differ.
 * A key never reaches the store: only the signature does.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CanaryCheck } from '../model/plan.js';

/** The worker's own key. */
export const VANTAGE_KEY_ENV = 'ONETAP_VANTAGE_KEY';

/** The variable the decider reads a vantage's key from: `eu-west` → `ONETAP_VANTAGE_KEY_EU_WEST`. */
export const vantageKeyEnvOf = (vantage: string) => `${VANTAGE_KEY_ENV}_${vantage.toUpperCase().replace(/-/g, '_')}`;

/** What a key must be: long enough not to be guessed (`openssl rand -hex 32` gives 64 characters), printable. */
export function vantageKeyProblem(key: string): string | null {
  return key.length >= 32 && key.length <= 1_024 && /^[\x21-\x7e]+$/.test(key)
    ? null
    : 'a vantage key is 32 to 1024 printable characters without spaces (openssl rand -hex 32)';
}

/** Per vantage, the key its records must verify with (what a decider with `policy.signedVantages` holds). */
export type VantageKeys = ReadonlyMap<string, string>;

const sign = (key: string, text: string) => createHmac('sha256', key).update(text).digest('hex');

/** What an observation's signature covers: its stored line, tagged. */
const observationText = (line: string) => `onetap observation 1\n${line}`;
/** What a canaries report's signature covers. */
const canariesText = (runId: string, vantage: string, c: CanaryCheck) =>
  `onetap canaries 1\n${JSON.stringify([runId, vantage, c.configured, c.reachable])}`;

export const signObservation = (key: string, line: string) => sign(key, observationText(line));
export const signCanaries = (key: string, runId: string, vantage: string, c: CanaryCheck) =>
  sign(key, canariesText(runId, vantage, c));

/** Whether `signature` (as read back: anything) is the one `expected` is, compared in constant time. */
export function sameSignature(signature: unknown, expected: string): boolean {
  return (
    typeof signature === 'string' &&
    /^[0-9a-f]{64}$/.test(signature) &&
    timingSafeEqual(Buffer.from(signature, 'hex'), Buffer.from(expected, 'hex'))
  );
}
