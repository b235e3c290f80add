import type { Db } from '../store/database.ts';
import { enqueueJobs, type NewJob } from '../store/relayer-jobs.ts';

/**
 * Coalesces the jobs enqueued within one turn of the event loop into one insert: a pass that acts on
 * many orders at once (their chain reads answered together) writes its jobs in one statement.
 * Each caller learns whether its own job was created (false: its key already had a job).
 */
export class EnqueueBatch {
  private pending: Array<{ job: NewJob; resolve: (created: boolean) => void; reject: (error: unknown) => void }> = [];

  constructor(private readonly db: Db) {}

  add(job: NewJob): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      this.pending.push({ job, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    // One key twice in a batch would make the insert fail; the later caller finds the job exists.
    const keys = new Set<string>();
    const first = batch.filter(({ job }) => !keys.has(job.idempotencyKey) && keys.add(job.idempotencyKey));
    try {
      const created = await enqueueJobs(this.db, first.map((b) => b.job));
      for (const b of batch) b.resolve(first.includes(b) && created.has(b.job.idempotencyKey));
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
}
