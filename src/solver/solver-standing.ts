import { systemClock, unixSeconds, type Clock } from '../clock.ts';
import type { Db } from '../store/database.ts';
import { solverRecords, suspendedSolvers, type SolverRecord } from '../store/solver-records.ts';

/** How long the solvers' records (a scan of their recent orders) are served before they are read again. */
const RECORDS_TTL_MS = 10_000;

/** A read served for `ttlMs` after it answers, one read at a time for all the callers that ask meanwhile. */
class CachedRead<T> {
  private cached: { value: T; until: number } | undefined;
  private reading: Promise<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly clock: Clock,
  ) {}

  get(): Promise<T> {
    if (this.cached && this.cached.until > this.clock.now()) return Promise.resolve(this.cached.value);
    this.reading ??= this.read()
      .then((value) => {
        this.cached = { value, until: this.clock.now() + this.ttlMs };
        return value;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}

/**
 * The solvers suspended from quoting, as quotes and order creation ask it: read at most once per
 * `ttlMs` (default 2 s), so a suspension or a restore by any instance or the operator applies here
 * within that time. Also every solver's record (`solverRecords`), for the liquidity read and the
 * metrics, read at most every 10 s.
 */
export class SolverStanding {
  private readonly suspendedIds: CachedRead<ReadonlyMap<string, string>>;
  private readonly recordsRead: CachedRead<SolverRecord[]>;

  constructor(db: Db, options: { ttlMs?: number; fundWithinSeconds?: number; clock?: Clock } = {}) {
    const clock = options.clock ?? systemClock;
    const ttlMs = options.ttlMs ?? 2_000;
    this.suspendedIds = new CachedRead(() => suspendedSolvers(db), ttlMs, clock);
    this.recordsRead = new CachedRead(
      () => solverRecords(db, { nowUnix: unixSeconds(clock), fundWithinSeconds: options.fundWithinSeconds ?? 300 }),
      Math.min(ttlMs * 5, RECORDS_TTL_MS),
      clock,
    );
  }

  /** The suspended solvers' ids, each with the reason it was suspended for. */
  readonly suspended = (): Promise<ReadonlyMap<string, string>> => this.suspendedIds.get();

  readonly records = (): Promise<SolverRecord[]> => this.recordsRead.get();
}
