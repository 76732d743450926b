/**
 * Which of a run's jobs failed for good, read through the engine's own API (BullMQ's `failed` state: its attempts
 * used up, or refused for good), and why. A waiting run polls it beside the store's observations: a job that failed
 * for good will bring no observation, so it is accounted for; one retried since (`job.retry()`, as enqueueing a run
 * again does) is waiting again and no longer counts as failed.
 *
 * Bounded for thousands of jobs: one count per queue when nothing failed; otherwise the failed jobs' ids a page at a
 * time (a queue keeps a day's), and each of the run's failed jobs read once for its reason.
 */
import type { Queue } from 'bullmq';
import { oneLine } from '../text/clip.js';
import { queueConnection, queueNameOf } from './queue.js';

/** Ids of failed jobs read per statement. */
const PAGE = 1_000;
/** What a job's failure reason keeps (it is the engine's text, or whatever a writer of the queue put there). */
export const FAILED_REASON_CHARS = 300;

export interface FailedJobs {
  /** Of `ids` (jobs of one vantage's queue), those failed for good now, each with why (one line, bounded). */
  failedOf(vantage: string, ids: ReadonlySet<string>): Promise<Map<string, string>>;
  close(): Promise<void>;
}

export async function openFailedJobs(queueUrl: string): Promise<FailedJobs> {
  const { Queue: QueueClass, createPostgresBackend } = await import('bullmq');
  const queues = new Map<string, Queue>();
  /** Why each job that is failed now failed (read once while it stays failed). */
  const reasons = new Map<string, string>();
  const queueOf = (vantage: string): Queue => {
    let q = queues.get(vantage);
    if (!q) {
      q = new QueueClass(
        queueNameOf(vantage),
        { connection: queueConnection(queueUrl, false) },
        createPostgresBackend,
      ) as unknown as Queue;
      q.on('error', () => {}); // a query under way fails and says so
      queues.set(vantage, q);
    }
    return q;
  };
  return {
    async failedOf(vantage, ids) {
      const failed = new Map<string, string>();
      const q = queueOf(vantage);
      if (ids.size && (await q.getFailedCount()) > 0) {
        for (let start = 0; ; start += PAGE) {
          const page = await q.getRanges(['failed'], start, start + PAGE - 1, true);
          for (const id of page) if (ids.has(id)) failed.set(id, '');
          if (page.length < PAGE) break;
        }
      }
      if (reasons.size) for (const id of ids) if (!failed.has(id)) reasons.delete(id);
      for (const id of failed.keys()) {
        let why = reasons.get(id);
        if (why === undefined) {
          const job = await q.getJob(id);
          why = oneLine(
            typeof job?.failedReason === 'string' && job.failedReason ? job.failedReason : 'no reason given',
            FAILED_REASON_CHARS,
          );
          reasons.set(id, why);
        }
        failed.set(id, why);
      }
      return failed;
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close().catch(() => {})));
    },
  };
}
