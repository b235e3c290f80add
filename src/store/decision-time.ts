import { sql, type RawBuilder } from 'kysely';

/**
 * The time a statement decides by (a job or a delivery falling due, a backoff, a give-up): the
 * service's clock (`now`, ms since the epoch), or the database's where that is later; the database's
 * alone without `now`. In production the two agree (NTP). A test that moves the service's clock ahead
 * sees every due time, retry and expiry follow it, while the database's clock keeps anything from
 * falling due later than it would without the service's (a job inserted with the default `now()` is due
 * at once, as the `job_queued` trigger announces it). Exclusion between instances (worker leases, the
 * locks on claimed rows) stays on the database's clock alone: the one clock they all share.
 */
export function decisionTime(now: number | undefined): RawBuilder<string> {
  return now === undefined ? sql<string>`now()` : sql<string>`greatest(now(), ${new Date(now).toISOString()}::timestamptz)`;
}
