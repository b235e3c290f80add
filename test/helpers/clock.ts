import type { Clock } from '../../src/clock.ts';

/**
 * A clock that runs with the real one and that a test moves on at once: `advance(ms)` makes every
 * deadline, expiry, backoff and cache life `ms` nearer without waiting for it. It never goes back, as
 * the real one does not.
 */
export class MovableClock implements Clock {
  private aheadMs = 0;

  now(): number {
    return Date.now() + this.aheadMs;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`a clock moves forward only (asked for ${ms} ms)`);
    this.aheadMs += ms;
  }
}
