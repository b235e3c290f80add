import type { Db } from './store/database.ts';
import { acquireLease, releaseLease } from './store/leases.ts';

export interface LeasedLoopOptions {
  db: Db;
  /** The lease that makes this loop the only one of its name across instances. */
  lease: string;
  holder: string;
  intervalMs: number;
  /** One unit of work; runs only while this instance holds the lease. `signal` aborts when the loop stops. */
  tick: (signal: AbortSignal) => Promise<unknown>;
  /** A tick's failure; not called for what fails once the loop is stopping (the stop's own doing). */
  onError: (error: unknown) => void;
}

export interface LeasedLoop {
  /** Runs a tick now instead of at the next interval; during a tick, runs one more right after it. */
  wake(): void;
  /** Stops the loop: aborts the tick in progress, waits for it to return, and releases the lease. */
  stop(): Promise<void>;
}

/**
 * Runs `tick` every `intervalMs`, and at once on `wake()`, while this instance holds the lease,
 * renewing it before each tick (the lease lasts several intervals, so a dead instance's work moves
 * on quickly). Wakes during a tick coalesce into one more tick, so a burst of events costs two ticks,
 * not one per event; the interval is the fallback when no event comes.
 */
export function leasedLoop(options: LeasedLoopOptions): LeasedLoop {
  const ttlMs = Math.max(options.intervalMs * 5, 5_000);
  const stopping = new AbortController();
  let stopped = false;
  let ticking = false;
  let wakeAgain = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const schedule = (delayMs: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = step();
    }, delayMs);
  };
  const step = async () => {
    ticking = true;
    wakeAgain = false;
    try {
      if (await acquireLease(options.db, options.lease, options.holder, ttlMs)) await options.tick(stopping.signal);
    } catch (error) {
      if (!stopped) options.onError(error);
    }
    ticking = false;
    if (!stopped) schedule(wakeAgain ? 0 : options.intervalMs);
  };
  running = step();
  return {
    wake: () => {
      if (stopped) return;
      if (ticking) wakeAgain = true;
      else schedule(0);
    },
    stop: async () => {
      stopped = true;
      stopping.abort(new Error(`${options.lease}: stopping`));
      clearTimeout(timer);
      await running;
      await releaseLease(options.db, options.lease, options.holder).catch(() => undefined);
    },
  };
}
