import type { Db } from './store/database.ts';
import { acquireLease, releaseLease, renewLeases } from './store/leases.ts';

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
   * stops or the lease is lost (another instance may be running the same work). It may resolve to the
   * milliseconds until the next tick, when it knows better than `intervalMs` (its next work is due
   * sooner, or none can come unannounced).
   */
  tick: (signal: AbortSignal) => Promise<number | void>;
  /** A tick's failure; not called for what fails once the loop is stopping (the stop's own doing). */
  onError: (error: unknown) => void;
  /** The instance's heartbeat, shared by its loops of the same holder and ttl; the loop's own when absent. */
  heartbeat?: LeaseHeartbeat;
}

/** What a loop hears from the heartbeat: its lease renewed (when asked), taken by another, or not renewable now. */
type Renewal = { renewedAt: number } | { taken: true } | { failed: unknown };

/**
 * Renews every lease one instance holds (one `holder`, one ttl) every third of the lease's life, in one
 * statement for all of them: an instance runs a few dozen workers, and a renewal each per second was a
 * fifth of the statements an idle service sent.
 */
export class LeaseHeartbeat {
  private readonly held = new Map<string, (renewal: Renewal) => void>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly db: Db,
    readonly holder: string,
    readonly ttlMs: number = LEASE_TTL_MS,
  ) {}

  get renewMs(): number {
    return Math.floor(this.ttlMs / 3);
  }

  /** Keeps renewing `name` (held by this holder) until `drop(name)`. */
  keep(name: string, onRenewal: (renewal: Renewal) => void): void {
    this.held.set(name, onRenewal);
    if (!this.timer) {
      this.timer = setInterval(() => void this.renew(), this.renewMs);
      this.timer.unref();
    }
  }

  drop(name: string): void {
    this.held.delete(name);
    if (this.held.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    const askedAt = Date.now();
    const names = [...this.held.keys()];
    try {
      const renewed = await renewLeases(this.db, names, this.holder, this.ttlMs);
      for (const name of names) this.held.get(name)?.(renewed.has(name) ? { renewedAt: askedAt } : { taken: true });
    } catch (error) {
      for (const name of names) this.held.get(name)?.({ failed: error });
    } finally {
      this.renewing = false;
    }
  }
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
 * renews it every third of its life (the heartbeat, during ticks and between them, one statement for
 * all of an instance's loops), and an instance without it asks again as often. A holder that cannot
 * renew in time (the lease was taken, or the database did not answer) aborts the tick in progress, so
 * two instances never knowingly run one worker at once.
 *
 * Leases are exclusion between instances, so they run on real time: the database's clock decides when
 * a lease has expired (the one clock every instance shares), and the holder counts its renewals on the
 * machine's clock, not the service's injectable one (src/clock.ts), which a test may move ahead.
 */
export function leasedLoop(options: LeasedLoopOptions): LeasedLoop {
  const heartbeat = options.heartbeat ?? new LeaseHeartbeat(options.db, options.holder, options.ttlMs ?? LEASE_TTL_MS);
  if (heartbeat.holder !== options.holder || (options.ttlMs !== undefined && options.ttlMs !== heartbeat.ttlMs)) {
    throw new Error(`${options.lease}: the heartbeat renews another holder's or another ttl's leases`);
  }
  const { ttlMs, renewMs } = heartbeat;
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
    heartbeat.drop(options.lease);
    tickAbort?.abort(new Error(`${options.lease}: ${reason}`));
    // A long sleep a tick asked for while held must not delay asking for the lease again.
    if (!ticking && !stopped) schedule(Math.min(options.intervalMs, renewMs));
  };
  // The lease still counts from the last renewal that did succeed, with a margin for clock drift.
  const renewalFailed = () => {
    if (renewedAt !== undefined && Date.now() - renewedAt > ttlMs - renewMs) lose('the lease could not be renewed');
  };
  const onRenewal = (renewal: Renewal) => {
    if (renewedAt === undefined || stopped) return;
    if ('renewedAt' in renewal) renewedAt = renewal.renewedAt;
    else if ('taken' in renewal) lose('the lease was taken by another instance');
    else renewalFailed();
  };
  const acquire = async (): Promise<boolean> => {
    const askedAt = Date.now();
    try {
      if (await acquireLease(options.db, options.lease, options.holder, ttlMs)) {
        renewedAt = askedAt;
        heartbeat.keep(options.lease, onRenewal);
        return true;
      }
      lose('the lease was taken by another instance');
    } catch (error) {
      renewalFailed();
      throw error;
    }
    return false;
  };

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
    let nextMs: number | void = undefined;
    try {
      // Renewed within two thirds of its life (by the heartbeat or the last acquire): still held, with
      // the last third as the margin `renewalFailed` keeps too.
      held = (renewedAt !== undefined && Date.now() - renewedAt < ttlMs - renewMs) || (await acquire());
      if (held) {
        tickAbort = new AbortController();
        nextMs = await options.tick(AbortSignal.any([stopping.signal, tickAbort.signal]));
      }
    } catch (error) {
      if (!stopped) options.onError(error);
    } finally {
      tickAbort = undefined;
      ticking = false;
    }
    if (stopped) return;
    // The heartbeat keeps a holder's lease between ticks; an instance waiting for it (or that lost it
    // during the tick) asks as often.
    const stillHeld = held && renewedAt !== undefined;
    schedule(wakeAgain ? 0 : stillHeld ? (nextMs ?? options.intervalMs) : Math.min(options.intervalMs, renewMs));
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
      heartbeat.drop(options.lease);
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
  /**
   * One pass; `wake` asks for another at once (a watcher still behind the head, a full batch). It may
   * resolve to the milliseconds until the next pass instead of `intervalMs` (`LeasedLoopOptions.tick`).
   */
  tick(signal: AbortSignal, wake: () => void): Promise<number | void>;
  /** The `job_queued` notification (`<chain>:<signer>`) that wakes it (every worker that names it). */
  wakeOnJob?: string;
  /** The `chain_index` notification (`<chain>`) that wakes it: a client reported a transaction there (POST /v3/index). */
  wakeOnIndex?: string;
  /** A push source of wakes (a node's new-heads subscription); returns its stop. */
  subscribe?(wake: () => void): () => void;
}

/** Runs a worker under its lease, with its push source of wakes, until stopped. */
export function runWorker(db: Db, worker: Worker, options: { holder: string; heartbeat?: LeaseHeartbeat; onError: (error: unknown) => void }): LeasedLoop {
  const loop: LeasedLoop = leasedLoop({
    db,
    lease: worker.lease,
    holder: options.holder,
    ...(options.heartbeat ? { heartbeat: options.heartbeat } : {}),
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

/** Runs `task` (which handles its own errors) every `ms`, never two at once, until stopped. */
export function every(ms: number, task: () => Promise<void>): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(task);
  }, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

