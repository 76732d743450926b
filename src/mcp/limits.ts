/**
 * Per-call limits of `onetap mcp`, and the progress arithmetic that keeps a long call alive.
 * SDK clients give up on a call after 60 s unless progress arrives; one app-exact probe may take longer.
 */

export interface McpLimits {
  /** URLs one `probe` call may name (and documents one `discover` call with probing may read). */
  maxUrls: number;
  /** Servers a catalog may hold for `plan_refresh`. */
  maxCatalogServers: number;
  /** Wall-clock time one call may take, ms; what finished by then is returned, the rest is named. */
  callTimeMs: number;
  /** A progress notification at least this often while a call runs, ms. */
  heartbeatMs: number;
}

export const MCP_LIMITS: McpLimits = {
  maxUrls: 20,
  maxCatalogServers: 100,
  // One app-exact probe may take 3 requests x 60 s x 2 attempts = 6 min; a call may outlast one such probe.
  callTimeMs: 420_000,
  heartbeatMs: 10_000,
};

/**
 * Progress values for one call: they must strictly increase (MCP), yet a heartbeat must not claim work done.
 * `done` whole units are finished items; each heartbeat moves halfway to the next whole number.
 */
export class ProgressCounter {
  private done = 0;
  private beats = 0;
  constructor(readonly total?: number) {}

  /** One item finished. */
  complete(): number {
    this.done++;
    this.beats = 0;
    return this.done;
  }

  /** Still working: a value above the last one and below the next whole number. */
  beat(): number {
    this.beats++;
    return this.done + 1 - 1 / (this.beats + 1);
  }

  get finished(): number {
    return this.done;
  }
}

/** Waits for `work` at most `ms`; the work itself is not stopped (its own time limits end it). */
export async function withinTime<T>(work: Promise<T>, ms: number): Promise<{ done: true; value: T } | { done: false }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ done: false }>((resolve) => {
    timer = setTimeout(() => resolve({ done: false }), ms);
  });
  try {
    return await Promise.race([work.then((value) => ({ done: true as const, value })), late]);
  } finally {
    clearTimeout(timer);
  }
}
