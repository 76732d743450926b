import { mapConcurrent } from '../util/pool.js';
import { probe, probeDispatcher, type ProbeOptions, type ProbeResult } from './probe.js';

export interface ProbeTarget { url: string; requiresAuth?: boolean; headers?: Record<string, string> }

export interface ProbeManyOptions extends Omit<ProbeOptions, 'requiresAuth' | 'dispatcher'> {
  concurrency?: number;
  /** Called as each probe ends (for progress lines). */
  onResult?: (result: ProbeResult, index: number) => void;
  /** A DNS lookup for the pool's connections (discovery passes one that refuses private addresses). */
  lookup?: unknown;
}

/**
 * Probes many servers concurrently through one connection pool that is closed afterwards.
 * Each target's own headers go to its own URL only.
 */
export async function probeMany(targets: readonly ProbeTarget[], options: ProbeManyOptions = {}): Promise<ProbeResult[]> {
  const { concurrency = 16, onResult, lookup, ...probeOptions } = options;
  const dispatcher = probeDispatcher(probeOptions.timeoutMs, lookup);
  try {
    return await mapConcurrent(targets, concurrency, async (t, i) => {
      const result = await probe(t.url, {
        ...probeOptions,
        requiresAuth: t.requiresAuth,
        headers: { ...probeOptions.headers, ...t.headers },
        dispatcher,
      });
      onResult?.(result, i);
      return result;
    });
  } finally {
    // Every probe has ended: the idle sockets are torn down in the background, not on the caller's clock
    // (closing a thousand of them takes about 100 ms).
    dispatcher.destroy().catch(() => {});
  }
}
