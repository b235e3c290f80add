import { findJobs, type RelayerJob } from '../store/relayer-jobs.ts';
import type { Db } from '../store/database.ts';

interface Waiter {
  until: number;
  latest: RelayerJob;
  resolve: (job: RelayerJob) => void;
}

const settled = (job: RelayerJob) => job.status === 'submitted' || job.status === 'confirmed' || job.status === 'failed';

/**
 * Waits for jobs to go out (submitted, or settled), for the order actions' answers. Every job awaited
 * in this process is read back in one statement per `pollMs`, however many requests wait: a thousand
 * PATCHes at once cost ten reads a second, not ten thousand. Reading the database (not an in-process
 * signal) sees a job whichever instance's sender sent it.
 */
export class SubmissionWait {
  private readonly waiting = new Map<string, Waiter[]>();
  private polling = false;

  constructor(
    private readonly db: Db,
    private readonly pollMs: number,
  ) {}

  /** The job once it is out, or its latest state after `waitMs`. */
  wait(job: RelayerJob, waitMs: number): Promise<RelayerJob> {
    if (settled(job) || waitMs <= 0) return Promise.resolve(job);
    return new Promise((resolve) => {
      const waiters = this.waiting.get(job.idempotencyKey) ?? [];
      waiters.push({ until: Date.now() + waitMs, latest: job, resolve });
      this.waiting.set(job.idempotencyKey, waiters);
      if (!this.polling) void this.poll();
    });
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      while (this.waiting.size > 0) {
        await new Promise((r) => setTimeout(r, this.pollMs));
        let read: RelayerJob[] = [];
        try {
          read = await findJobs(this.db, [...this.waiting.keys()]);
        } catch {
          // The database is out of reach: the waiters keep the state they had until their time is up.
        }
        const byKey = new Map(read.map((job) => [job.idempotencyKey, job]));
        const now = Date.now();
        for (const [key, waiters] of this.waiting) {
          const job = byKey.get(key);
          const left = waiters.filter((w) => {
            if (job) w.latest = job;
            if ((job && settled(job)) || now >= w.until) {
              w.resolve(w.latest);
              return false;
            }
            return true;
          });
          if (left.length === 0) this.waiting.delete(key);
          else this.waiting.set(key, left);
        }
      }
    } finally {
      this.polling = false;
    }
  }
}
