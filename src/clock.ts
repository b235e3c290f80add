/**
 * The service's time. Every time decision (an order's deadline, a timelock counted in seconds, rule 2's
 * broadcast deadline, a job's backoff, a webhook's retry, a cache entry's life) asks a `Clock` instead of
 * `Date.now()`, so that a test can move time on instead of waiting for it. Timers (poll intervals, lease
 * heartbeats) stay on the real clock: they pace the work, they decide nothing (docs/architecture.md, "Time").
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The machine's clock: what the service runs on. */
export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time in whole Unix seconds, as order deadlines and timelocks count it. */
export const unixSeconds = (clock: Clock): number => Math.floor(clock.now() / 1000);
