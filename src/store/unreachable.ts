/**
 * Whether a store's failure is the store being out of reach: words of Node and the PostgreSQL driver, no driver
 * loaded (what a worker asks of any failure before it decides to wait for its store).
 */

/** Node's codes for a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
/** What the pool and the driver say of a connection lost, or none to be had, rather than of a query. */
const CONNECTION_WORDS = new RegExp(
  `connection terminated|timeout exceeded when trying to connect|connection timeout|query read timeout|` +
    `client has encountered a connection error|not queryable|cannot use a pool after calling end`,
  'i',
);

/**
 * Whether a store's failure is the store being out of reach (a connection refused, cut, timed out, the server
 * shutting down or out of connections) rather than something a query did: the first passes when the store is back.
 */
export function storeUnreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    // SQLSTATE class 08 (connection exception), 57P01-03 (shutdown, cannot connect now), 53300 (too many connections).
    if (
      typeof code === 'string' &&
      (CONNECTION_CODES.has(code) || /^08/.test(code) || /^57P0[123]$/.test(code) || code === '53300')
    )
      return true;
    if (CONNECTION_WORDS.test(e.message)) return true;
  }
  return false;
}
