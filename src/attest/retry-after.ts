/** How long a server that answered 429 asked to be left alone: its last 429's Retry-After (seconds, at most an hour), else a minute. */
import type { Observation } from '../model/observation.js';

export function retryAfterMs(o: Pick<Observation, 'evidence'>): number {
  const answer = [...(o.evidence?.deciding.steps ?? [])].reverse().find((s) => s.status === 429);
  const seconds = Number(answer?.headers['retry-after']);
  return (Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 3_600) : 60) * 1_000;
}
