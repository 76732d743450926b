import { request } from 'undici';

/** Any HTTP answer within the time limit means this machine reached the URL (used for outage canaries). */
export async function isReachable(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await request(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump({ limit: 16 * 1024 });
    return true;
  } catch {
    return false;
  }
}
