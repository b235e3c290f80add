import type { Db } from './store/database.ts';
import { acquireLease, releaseLease } from './store/leases.ts';

/** How long a lease outlives its holder's last renewal: another instance takes over this soon after a crash. */
export const LEASE_TTL_MS = 3_000;

export interface LeasedLoopOptions {
  db: Db;
  /** The lease that makes this loop the only one of its name across instances. */
  lease: string;
  holder: string;
  intervalMs: number;
  /** Defaults to `LEASE_TTL_MS`. */
  ttlMs?: number;
  /**
   * One unit of work; runs only while this instance holds the lease. `signal` aborts when the loop
   * stops or the lease is lost (another instance may be running the same work).
   */
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
 * Runs `tick` every `intervalMs`, and at once on `wake()`, while this instance holds the lease.
 * Wakes during a tick coalesce into one more tick, so a burst of events costs two ticks, not one
 * per event; the interval is the fallback when no event comes.
 *
 * The lease is short (`ttlMs`) so that a dead instance's work moves on within seconds: the holder
 * renews it every third of its life (a heartbeat, during ticks and between them), and an instance
 * without it asks again as often. A holder that cannot renew in time (the lease was taken, or the
 * database did not answer) aborts the tick in progress, so two instances never knowingly run one
 * worker at once.
 *
 * Leases are exclusion between instances, so they run on real time: the database's clock decides when
 * a lease has expired (the one clock every instance shares), and the holder counts its renewals on the
 * machine's clock, not the service's injectable one (src/clock.ts), which a test may move ahead.
 */
export function leasedLoop(options: LeasedLoopOptions): LeasedLoop {
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  const renewMs = Math.floor(ttlMs / 3);
  const stopping = new AbortController();
  let stopped = false;
  let ticking = false;
  let wakeAgain = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  /** When the lease was last renewed, while this instance believes it holds it. */
  let renewedAt: number | undefined;
  let tickAbort: AbortController | undefined;

  const lose = (reason: string) => {
    renewedAt = undefined;
    tickAbort?.abort(new Error(`${options.lease}: ${reason}`));
  };
  const acquire = async (): Promise<boolean> => {
    const askedAt = Date.now();
    try {
      if (await acquireLease(options.db, options.lease, options.holder, ttlMs)) {
        renewedAt = askedAt;
        return true;
      }
      lose('the lease was taken by another instance');
    } catch (error) {
      // The lease still counts from the last renewal that did succeed, with a margin for clock drift.
      if (renewedAt !== undefined && Date.now() - renewedAt > ttlMs - renewMs) lose('the lease could not be renewed');
      throw error;
    }
    return false;
  };
  let renewing = false;
  const heartbeat = setInterval(() => {
    if (renewedAt === undefined || renewing || stopped) return;
    renewing = true;
    acquire()
      .catch(() => undefined)
      .finally(() => (renewing = false));
  }, renewMs);
  heartbeat.unref();

  const schedule = (delayMs: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = step();
    }, delayMs);
  };
  const step = async () => {
    ticking = true;
    wakeAgain = false;
    let held = false;
    try {
      // Renewed within the last third of its life (by the heartbeat or the last tick): still held.
      held = (renewedAt !== undefined && Date.now() - renewedAt < renewMs) || (await acquire());
      if (held) {
        tickAbort = new AbortController();
        await options.tick(AbortSignal.any([stopping.signal, tickAbort.signal]));
      }
    } catch (error) {
      if (!stopped) options.onError(error);
    } finally {
      tickAbort = undefined;
      ticking = false;
    }
    if (stopped) return;
    // The heartbeat keeps a holder's lease between ticks; an instance waiting for it asks as often.
    schedule(wakeAgain ? 0 : held ? options.intervalMs : Math.min(options.intervalMs, renewMs));
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
      clearInterval(heartbeat);
      stopping.abort(new Error(`${options.lease}: stopping`));
      clearTimeout(timer);
      await running;
      await releaseLease(options.db, options.lease, options.holder).catch(() => undefined);
    },
  };
}

/** A worker run under its lease: a chain's watcher, sender or broadcaster (`ChainRuntime.workers`), or the solver. */
export interface Worker {
  /** `<role>:<chain>`, unique in a deployment. */
  lease: string;
  intervalMs: number;
  /** One pass; `wake` asks for another at once (a watcher still behind the head, a full batch). */
  tick(signal: AbortSignal, wake: () => void): Promise<void>;
  /** The `job_queued` notification (`<chain>:<signer>`) that wakes it. */
  wakeOnJob?: string;
  /** The `chain_index` notification (`<chain>`) that wakes it: a client reported a transaction there (POST /v3/index). */
  wakeOnIndex?: string;
  /** A push source of wakes (a node's new-heads subscription); returns its stop. */
  subscribe?(wake: () => void): () => void;
}

/** Runs a worker under its lease, with its push source of wakes, until stopped. */
export function runWorker(db: Db, worker: Worker, options: { holder: string; onError: (error: unknown) => void }): LeasedLoop {
  const loop: LeasedLoop = leasedLoop({
    db,
    lease: worker.lease,
    holder: options.holder,
    intervalMs: worker.intervalMs,
    tick: (signal) => worker.tick(signal, () => loop.wake()),
    onError: options.onError,
  });
  const unsubscribe = worker.subscribe?.(() => loop.wake());
  return {
    wake: () => loop.wake(),
    stop: async () => {
      unsubscribe?.();
      await loop.stop();
    },
  };
}
