/**
 * Capped exponential backoff with "equal jitter": the wait before try `attempt` (0 first) is half its step fixed
 * and half random, `random` in [0, 1]. Never shorter than half the step, so a fleet that lost the same store never
 * hammers it, and never in step (pure: the caller passes the random number).
 */
export function backoffMs(
  attempt: number,
  random: number,
  backoff: { readonly baseMs: number; readonly capMs: number },
): number {
  const step = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.min(Math.max(0, attempt), 30));
  return Math.round(step / 2 + (step / 2) * Math.min(Math.max(random, 0), 1));
}
