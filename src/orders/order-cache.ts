import { systemClock, type Clock } from '../clock.ts';
import type { Db, Store } from '../store/database.ts';
import { findOrder, type OrderRecord } from '../store/orders.ts';

/** Channel the database notifies, with the order id, whenever an order or its swaps or fees change. */
export const ORDER_CHANGED_CHANNEL = 'order_changed';

/**
 * Order reads served from memory. A database trigger notifies every change of an order at commit,
 * whichever process wrote it, and the cache drops that order, so reads are never staler than the
 * notification's delivery. While notifications are not flowing (listener down) nothing is cached.
 * `maxAgeMs` bounds an entry's life as a safety net; 0 turns the cache off.
 */
export class OrderCache {
  private readonly entries = new Map<string, { order: OrderRecord; until: number }>();
  private readonly loading = new Map<string, { promise: Promise<OrderRecord | undefined>; stale: boolean }>();
  private live = false;

  constructor(
    private readonly db: Db,
    private readonly maxAgeMs: number,
    private readonly maxEntries = 50_000,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Starts listening for changes; returns the function that stops it. */
  async start(store: Store): Promise<() => Promise<void>> {
    if (this.maxAgeMs <= 0) return async () => undefined;
    const unlisten = await store.listen(ORDER_CHANGED_CHANNEL, {
      message: (orderId) => this.invalidate(orderId),
      connected: (isConnected) => {
        this.live = isConnected;
        this.clear();
      },
    });
    // Expired entries go even when no read comes to push them out (a burst's orders, after it).
    const sweeper = setInterval(() => this.sweep(), this.maxAgeMs);
    sweeper.unref();
    return async () => {
      clearInterval(sweeper);
      await unlisten();
    };
  }

  /** Entries held, fresh or expired. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Drops the expired entries. Every entry lives `maxAgeMs` from its read, and a kept entry is moved
   * to the end, so the map is in the order of expiry (give or take a query's time): the expired are
   * at its front, and one a few milliseconds out of order waits for the next sweep.
   */
  sweep(): void {
    const now = this.clock.now();
    for (const [id, entry] of this.entries) {
      if (entry.until > now) break;
      this.entries.delete(id);
    }
  }

  /** The order when the cache holds it fresh, without a read: for a read path that answers in the same tick. */
  peek(id: string): OrderRecord | undefined {
    if (!this.live) return undefined;
    const hit = this.entries.get(id);
    return hit && hit.until > this.clock.now() ? hit.order : undefined;
  }

  async get(id: string): Promise<OrderRecord | undefined> {
    if (!this.live) return findOrder(this.db, id);
    const now = this.clock.now();
    const hit = this.peek(id);
    if (hit) return hit;
    let load = this.loading.get(id);
    if (!load) {
      // Concurrent misses of one order share one query. A change notified while the query runs
      // marks it stale: its result answers the callers but is not kept.
      const entry = { promise: findOrder(this.db, id), stale: false };
      this.loading.set(id, entry);
      load = entry;
      entry.promise
        .then((order) => {
          if (this.loading.get(id) === entry) this.loading.delete(id);
          if (order && !entry.stale && this.live) this.remember(id, order, now);
        })
        .catch(() => this.loading.delete(id));
    }
    return load.promise;
  }

  invalidate(id: string): void {
    this.entries.delete(id);
    const load = this.loading.get(id);
    if (load) {
      load.stale = true;
      this.loading.delete(id);
    }
  }

  private clear(): void {
    this.entries.clear();
    for (const load of this.loading.values()) load.stale = true;
    this.loading.clear();
  }

  private remember(id: string, order: OrderRecord, now: number): void {
    this.sweep();
    this.entries.delete(id);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(id, { order, until: now + this.maxAgeMs });
  }
}
