/**
 * The outage canaries: does this machine reach the internet? A canary URL comes from a catalog or a job, so it obeys
 * the address rule of every other request (`../net/address.ts`): https only, and no private, loopback or reserved
 * address (IP literals refused before connecting, names in the connection's own lookup), unless `allowPrivate`
 * (loopback fixtures under `--allow-http`). A refused canary is not reached, and nothing is contacted.
 */
import { request } from 'undici';
import { checkUrl, guardedDispatcher } from '../net/fetcher.js';

/** Any HTTP answer within the time limit means this machine reached the URL. */
export async function isReachable(
  url: string,
  timeoutMs: number,
  policy: { allowPrivate?: boolean } = {},
): Promise<boolean> {
  try {
    checkUrl(url, { allowPrivate: policy.allowPrivate });
  } catch {
    return false;
  }
  const dispatcher = guardedDispatcher({ allowPrivate: policy.allowPrivate, connectTimeoutMs: timeoutMs });
  try {
    const res = await request(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs), dispatcher });
    await res.body.dump({ limit: 16 * 1024 });
    return true;
  } catch {
    return false;
  } finally {
    dispatcher.destroy().catch(() => {});
  }
}
