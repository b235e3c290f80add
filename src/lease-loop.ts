import type { Db } from './store/database.ts';
import { acquireLease, releaseLease } from './store/leases.ts';

export interface LeasedLoopOptions {
  db: Db;
  /** The lease that makes this loop the only one of its name across instances. */
  lease: string;
  holder: string;
  intervalMs: number;
  /** One unit of work; runs only while this instance holds the lease. */
  tick: () => Promise<unknown>;
  onError: (error: unknown) => void;
}

/**
 * Runs `tick` every `intervalMs` while this instance holds the lease, renewing it before each
 * tick (the lease lasts several intervals, so a dead instance's work moves on quickly). Returns the
 * function that stops the loop and releases the lease.
 */
export function leasedLoop(options: LeasedLoopOptions): () => Promise<void> {
  const ttlMs = Math.max(options.intervalMs * 5, 5_000);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const step = async () => {
    try {
      if (await acquireLease(options.db, options.lease, options.holder, ttlMs)) await options.tick();
    } catch (error) {
      options.onError(error);
    }
    if (!stopped) {
      timer = setTimeout(() => {
        running = step();
      }, options.intervalMs);
    }
  };
  running = step();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
    await releaseLease(options.db, options.lease, options.holder).catch(() => undefined);
  };
}
