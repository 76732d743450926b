import { BodyBudget } from './budget.js';
import { Throttle } from '../util/throttle.js';
import { fencedDispatcher } from '../net/fence.js';
import { hostKey } from '../net/host-key.js';
import { eachInTurn, type ItemHost } from '../net/schedule.js';
import { probe, probeDispatcher, type ProbeKey, type ProbeOptions, type ProbeResult } from './probe.js';

/** One URL to probe, with its entry's facts: auth-optional, its own headers, its probe-only keys. */
export interface ProbeTarget {
  url: string;
  requiresAuth?: boolean;
  headers?: Record<string, string>;
  keys?: Record<string, ProbeKey>;
  missingKeys?: string[];
  refusedKeys?: string[];
}

export const PROBE_MANY_DEFAULTS = {
  concurrency: 16,
  /** Probes in flight per host (`host:port`): shared gateways serve many catalog rows. */
  perHost: 4,
} as const;

export interface ProbeManyOptions
  extends Omit<ProbeOptions, 'requiresAuth' | 'dispatcher' | 'budget' | 'keys' | 'missingKeys' | 'refusedKeys'> {
  concurrency?: number;
  perHost?: number;
  /** Called as each probe ends (for progress lines and streamed output). */
  onResult?: (result: ProbeResult, index: number) => void;
  /** Called as each probe starts. */
  onStart?: (index: number) => void;
  /** Keep every result for the returned array (default true); false returns [] and delivers through `onResult` only. */
  retain?: boolean;
  /** A DNS lookup for the pool's connections (discovery passes one that refuses private addresses). */
  lookup?: unknown;
}

/** Politeness counts a host by its normalised name and port, whatever the spelling; a URL that does not parse alone. */
const hostOf = (url: string): ItemHost => {
  try {
    return hostKey(new URL(url));
  } catch {
    return { key: url, port: 0, name: url };
  }
};

/**
 * Probes many servers concurrently through one connection pool (closed afterwards) and one memory budget for
 * body reads. Each target's own headers go to its own URL only.
 */
export async function probeMany(
  targets: readonly ProbeTarget[],
  options: ProbeManyOptions = {},
): Promise<ProbeResult[]> {
  const {
    concurrency = PROBE_MANY_DEFAULTS.concurrency,
    perHost = PROBE_MANY_DEFAULTS.perHost,
    onResult,
    onStart,
    retain = true,
    lookup,
    ...probeOptions
  } = options;
  const pool = probeDispatcher(probeOptions.timeoutMs, lookup);
  const dispatcher = probeOptions.fence ? fencedDispatcher(pool, probeOptions.fence) : pool;
  const budget = new BodyBudget();
  // While reads wait for memory, the budget is the bottleneck: each probe started meanwhile would only add a
  // paused stream holding its socket's buffers. So fewer run, until probes end without waiting again.
  const throttle = new Throttle(concurrency, 2 * budget.slots);
  budget.onWait = () => throttle.squeeze();
  try {
    const results: ProbeResult[] = retain ? new Array(targets.length) : [];
    await eachInTurn(targets, { concurrency, perHost, hostOf: (t) => hostOf(t.url) }, async (t, i) => {
      await throttle.enter();
      onStart?.(i);
      const result = await probe(t.url, {
        ...probeOptions,
        requiresAuth: t.requiresAuth,
        headers: t.headers ? { ...probeOptions.headers, ...t.headers } : probeOptions.headers,
        keys: t.keys,
        missingKeys: t.missingKeys,
        refusedKeys: t.refusedKeys,
        dispatcher,
        budget,
      }).finally(() => throttle.leave());
      onResult?.(result, i);
      if (retain) results[i] = result;
      return 0;
    });
    return results;
  } finally {
    // Every probe has ended: the idle sockets are torn down in the background, not on the caller's clock
    // (closing a thousand of them takes about 100 ms).
    dispatcher.destroy().catch(() => {});
  }
}
