import { CLIENT_PROFILES } from '../attest/profile.js';
/** Argument parsers shared by commands; a UsageError exits 2. */
export class UsageError extends Error {}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`expected a positive whole number, got "${value}"`);
  return n;
}

export function parseHeader(line: string, previous: Record<string, string>): Record<string, string> {
  const at = line.indexOf(':');
  const name = at > 0 ? line.slice(0, at).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`a header is "Name: value", got "${line}"`);
  return { ...previous, [name]: line.slice(at + 1).trim() };
}

/** The largest timer Node allows (2^31 - 1 ms); a larger one fires at once with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function timeoutMs(value: string): number {
  const n = positiveInt(value);
  if (n > MAX_TIMER_MS) throw new UsageError(`--timeout: at most ${MAX_TIMER_MS} ms, got "${value}"`);
  return n;
}

export function profileId(value: string): string {
  if (!Object.hasOwn(CLIENT_PROFILES, value)) throw new UsageError(`--profile: unknown profile "${value}" (known: ${Object.keys(CLIENT_PROFILES).join(', ')})`);
  return value;
}
