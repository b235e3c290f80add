import type { Db } from '../store/database.ts';
import { enqueueJobs, findJobs, type NewJob, type RelayerJob } from '../store/relayer-jobs.ts';

/**
 * Coalesces the calls made within one turn of the event loop into one call over all their inputs: a
 * pass that acts on many orders at once (their chain reads answered together) reads and writes their
 * jobs in one statement each. `run` answers the inputs in their order.
 */
export class TurnBatch<I, O> {
  private pending: Array<{ input: I; resolve: (output: O) => void; reject: (error: unknown) => void }> = [];

  constructor(private readonly run: (inputs: readonly I[]) => Promise<readonly O[]>) {}

  add(input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      this.pending.push({ input, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      const outputs = await this.run(batch.map((b) => b.input));
      batch.forEach((b, i) => b.resolve(outputs[i]!));
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
}

/** Jobs enqueued in one insert; each caller learns whether its own job was created (false: its key already had a job). */
export class EnqueueBatch extends TurnBatch<NewJob, boolean> {
  constructor(db: Db) {
    super(async (jobs) => {
      // One key twice in a batch would make the insert fail; the later caller finds the job exists.
      const firstOf = new Map<string, NewJob>();
      for (const job of jobs) if (!firstOf.has(job.idempotencyKey)) firstOf.set(job.idempotencyKey, job);
      const created = await enqueueJobs(db, [...firstOf.values()]);
      return jobs.map((job) => firstOf.get(job.idempotencyKey) === job && created.has(job.idempotencyKey));
    });
  }
}

/** Jobs looked up by idempotency key in one select. */
export class JobLookup extends TurnBatch<string, RelayerJob | undefined> {
  constructor(db: Db) {
    super(async (keys) => {
      const found = new Map((await findJobs(db, [...new Set(keys)])).map((job) => [job.idempotencyKey, job]));
      return keys.map((key) => found.get(key));
    });
  }
}
