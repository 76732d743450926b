/**
 * A fence: what stops a probe when the lease it runs under (a host's slot, shared by every worker) is lost. Its
 * `signal` aborts what is in flight; `check()` throws before each request is sent once the lease is lost or its time
 * has run out. The check cannot wait for a timer: a process resumed after a pause runs its I/O callbacks before its
 * timers, so a probe would send its next request before a timer could say the lease is gone.
 */
import type { Dispatcher } from 'undici';

export interface Fence {
  readonly signal: AbortSignal;
  /** Throws (the signal's reason) when the lease is lost or its time is up. */
  check(): void;
}

/** The lease a probe ran under was lost: whatever it observed is not recorded, and its job is handed back. */
export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}

/**
 * `dispatcher` fenced: every request checks the fence as it is dispatched (one call, no listener per request), and
 * the fence's abort destroys the dispatcher, ending every request in flight on it.
 */
export function fencedDispatcher(dispatcher: Dispatcher, fence: Fence): Dispatcher {
  const end = () => {
    dispatcher.destroy(fence.signal.reason as Error).catch(() => {});
  };
  if (fence.signal.aborted) end();
  else fence.signal.addEventListener('abort', end, { once: true });
  return dispatcher.compose((dispatch) => (opts, handler) => {
    fence.check();
    return dispatch(opts, handler);
  });
}
