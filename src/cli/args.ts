/**
 * Argument parsers shared by commands. A parser throws commander's InvalidArgumentError, which main.ts
 * prints naming the flag (`onetap: --timeout: expected a positive whole number, got "abc"`, exit 2); a
 * UsageError thrown by an action is printed as `onetap: …` and exits 2 too.
 */
import { InvalidArgumentError } from 'commander';
import { CLIENT_PROFILES } from '../attest/profile.js';
import { parseProbeHeader } from '../attest/keys.js';
import type { ProbeHeader } from '../catalog/model.js';
import { inert } from '../text/escape.js';
import { VANTAGE_NAME } from '../queue/queue.js';

export class UsageError extends Error {}

/** A flag's value refused, in the one wording every flag uses: `--flag: why, got "value"` (the value as given). */
export function flagError(flag: string, why: string, value?: string): UsageError {
  return new UsageError(`${flag}: ${why}${value === undefined ? '' : `, got "${inert(value)}"`}`);
}

/** The largest delay Node's timers accept (2^31-1 ms, about 24.8 days); a larger one fires at once with a warning. */
export const MAX_TIMER_MS = 2_147_483_647;

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
    throw new InvalidArgumentError(`expected a positive whole number, got "${value}"`);
  return n;
}

/** A time limit in ms: a positive whole number no larger than Node's largest timer. */
export function timeoutMs(value: string): number {
  const n = positiveInt(value);
  if (n > MAX_TIMER_MS)
    throw new InvalidArgumentError(`at most ${MAX_TIMER_MS} ms (the largest timer Node allows), got "${value}"`);
  return n;
}

/** A built-in client profile's id. */
export function profileId(value: string): string {
  if (!Object.hasOwn(CLIENT_PROFILES, value))
    throw new InvalidArgumentError(`unknown profile "${value}" (known: ${Object.keys(CLIENT_PROFILES).join(', ')})`);
  return value;
}

/** A profile id a catalog may define (checked against the catalog once it is read: `knownProfile`). */
export function profileName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value))
    throw new InvalidArgumentError(`expected a profile id (letters, digits, '.', '_', '-'), got "${value}"`);
  return value;
}

/** `--profile` against the built-in profiles and the catalog's own (exit 2 naming the flag). */
export function knownProfile(id: string, policy: { profiles?: Record<string, unknown> }): void {
  const known = [...Object.keys(CLIENT_PROFILES), ...Object.keys(policy.profiles ?? {})];
  if (!known.includes(id)) throw flagError('--profile', `unknown profile (known: ${known.join(', ')})`, id);
}

/**
 * `--probe-header 'Authorization: Bearer ${API_KEY}'` (repeatable): a probe-only key read from the environment.
 * A refused value is not echoed: the shell may have put a key in it.
 */
export function probeHeaderFlag(line: string, previous: Record<string, ProbeHeader> = {}): Record<string, ProbeHeader> {
  const parsed = parseProbeHeader(line);
  if (typeof parsed === 'string')
    throw new InvalidArgumentError(`${parsed} (the value given is not shown: it may hold a key)`);
  return { ...previous, [parsed.name]: parsed.source };
}

export function parseHeader(line: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = line.indexOf(':');
  const name = at > 0 ? line.slice(0, at).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new InvalidArgumentError(`a header is "Name: value", got "${line}"`);
  return { ...previous, [name]: line.slice(at + 1).trim() };
}

/** A TCP port to listen on: 0 (any free port) to 65535. */
export function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n > 65_535)
    throw new InvalidArgumentError(`expected a port number from 0 to 65535, got "${value}"`);
  return n;
}

/** A vantage's name (`--vantage`, and each of `--vantages`): what a queue name and a record may carry. */
export function vantageName(value: string): string {
  if (!VANTAGE_NAME.test(value))
    throw new InvalidArgumentError(`a vantage is a name of a-z, digits, _ and - (up to 63), got "${value}"`);
  return value;
}

/** `--run-id`: what a job id, a record and a log line carry safely (a start time, or a CI run's id). */
export function runIdFlag(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}$/.test(value))
    throw new InvalidArgumentError(
      `a run id is letters, digits and . _ : + - (up to 200), got "${value.slice(0, 220)}"`,
    );
  return value;
}

/** `--vantages a,b,c`: vantage names, each once. */
export function vantageList(value: string): string[] {
  const names = value.split(',').map((v) => vantageName(v.trim()));
  if (new Set(names).size !== names.length) throw new InvalidArgumentError(`a vantage is named once, got "${value}"`);
  return names;
}
