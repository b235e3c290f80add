import { systemClock, type Clock } from '../clock.ts';
import { listChainHeights } from '../store/chain-heights.ts';
import type { Db } from '../store/database.ts';
import type { StatusClock } from './status.ts';

/** How long a read of the chain heights serves order statuses. */
export const HEIGHTS_MAX_AGE_MS = 1000;

interface Snapshot {
  heights: ReadonlyMap<string, bigint>;
  readAt: number;
  refreshing?: Promise<ReadonlyMap<string, bigint>>;
}

const snapshots = new WeakMap<Db, Snapshot>();

/**
 * The chain heights for order statuses, read from the database at most once per `HEIGHTS_MAX_AGE_MS`
 * per database, never per request; concurrent callers share one read. A failed read keeps the last
 * heights (none at first: unknown heights only delay a timelock-based status) and is retried after
 * the same interval.
 */
export async function currentHeights(db: Db, now = systemClock.now()): Promise<ReadonlyMap<string, bigint>> {
  const s = snapshotOf(db);
  if (isFresh(s, now)) return s.heights;
  s.refreshing ??= listChainHeights(db)
    .then((heights) => (s.heights = heights))
    .catch(() => s.heights)
    .finally(() => {
      s.readAt = now;
      s.refreshing = undefined;
    });
  return s.refreshing;
}

function snapshotOf(db: Db): Snapshot {
  let snapshot = snapshots.get(db);
  if (!snapshot) {
    snapshot = { heights: new Map(), readAt: -Infinity };
    snapshots.set(db, snapshot);
  }
  return snapshot;
}

/** Whether the snapshot's last read still serves: a read stamped later than `now` came from a clock moved ahead (a test's) and is not trusted. */
const isFresh = (s: Snapshot, now: number): boolean => now >= s.readAt && now - s.readAt < HEIGHTS_MAX_AGE_MS;

/** `statusClock` when it needs no read (the heights are fresh): for a read path that answers in the same tick. */
export function freshStatusClock(db: Db, clock: Clock = systemClock): StatusClock | undefined {
  const now = clock.now();
  const s = snapshotOf(db);
  return isFresh(s, now) ? { unixSeconds: Math.floor(now / 1000), heights: s.heights } : undefined;
}

/** The clock order statuses are derived by now: this second and the chain heights as `currentHeights` gives them. */
export async function statusClock(db: Db, clock: Clock = systemClock): Promise<StatusClock> {
  const now = clock.now();
  return { unixSeconds: Math.floor(now / 1000), heights: await currentHeights(db, now) };
}
