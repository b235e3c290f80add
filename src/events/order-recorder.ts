import { systemClock, unixSeconds, type Clock } from '../clock.ts';
import { statusClock } from '../orders/heights-cache.ts';
import { orderJson } from '../orders/order-json.ts';
import { orderStatus } from '../orders/status.ts';
import type { Db } from '../store/database.ts';
import { appendOrderEvents, lockEventHeads, ordersMovedByTime, ordersToRecheck, type NewOrderEvent } from '../store/order-events.ts';
import { findOrders, type OrderRecord } from '../store/orders.ts';
import type { OrderEvent } from './order-event.ts';

/** Work done in the recording transaction with the events it appends (the webhook outbox). */
export type AfterRecord = (trx: Db, events: readonly OrderEvent[]) => Promise<void>;

const BATCH = 200;
/** How often the recorder looks for orders that time or chain height alone has moved. */
const SWEEP_MS = 1_000;

/**
 * Turns order changes into the event log. Every change of an order notifies `order_changed` at
 * commit; the recorder (one instance at a time, under its lease) reads the changed orders, derives
 * their statuses as the order read does, and appends an event for each whose status differs from
 * the last one recorded. Time alone moves some statuses (a deadline or timelock running out), so
 * each tick also looks for those. After a start or a lost listener it rechecks every order whose last
 * recorded status is not its status now, since notifications may have been missed.
 */
export class OrderRecorder {
  private readonly changed = new Set<string>();
  private recheckAll = true;
  private sweptAt = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly afterRecord: readonly AfterRecord[] = [],
    private readonly clock: Clock = systemClock,
  ) {}

  /** An order changed (its `order_changed` notification). */
  touch(orderId: string): void {
    this.changed.add(orderId);
  }

  /** Notifications may have been missed: the next tick rechecks every order whose recorded status is out of date. */
  recheck(): void {
    this.recheckAll = true;
  }

  /** Records what changed since the last tick; returns the events appended. */
  async tick(signal?: AbortSignal): Promise<OrderEvent[]> {
    const recorded: OrderEvent[] = [];
    if (this.recheckAll) {
      this.recheckAll = false;
      let after: string | undefined = '';
      while (after !== undefined) {
        signal?.throwIfAborted();
        const { stale, last } = await ordersToRecheck(this.db, after, BATCH, unixSeconds(this.clock));
        if (stale.length > 0) recorded.push(...(await this.record(stale)));
        after = last;
      }
    }
    const due = new Set(this.changed);
    this.changed.clear();
    // Time moves statuses in seconds; a tick woken by a change does not look again sooner.
    const now = this.clock.now();
    if (now - this.sweptAt >= SWEEP_MS) {
      this.sweptAt = now;
      for (const id of await ordersMovedByTime(this.db, Math.floor(now / 1000), BATCH)) due.add(id);
    }
    const ids = [...due];
    try {
      for (let i = 0; i < ids.length; i += BATCH) {
        signal?.throwIfAborted();
        recorded.push(...(await this.record(ids.slice(i, i + BATCH))));
      }
    } catch (err) {
      for (const id of ids) this.changed.add(id);
      throw err;
    }
    return recorded;
  }

  private async record(ids: readonly string[]): Promise<OrderEvent[]> {
    const [orders, clock] = await Promise.all([findOrders(this.db, ids), statusClock(this.db, this.clock)]);
    const current = orders.map((order) => ({ order, status: orderStatus(order, clock) }));
    return this.db.transaction().execute(async (trx) => {
      const heads = await lockEventHeads(trx, ids);
      // A new status is an event; so is a relayed action that failed since the last one (the status
      // event carries it too, in the order's failed_actions, when both come at once).
      const events: NewOrderEvent[] = current.flatMap(({ order, status }): NewOrderEvent[] => {
        const head = heads.get(order.id);
        const failures = failureKey(order);
        const type = head?.status !== status ? 'order.status' : failures !== '' && failures !== head.failures ? 'order.action_failed' : undefined;
        if (!type) return [];
        return [{ orderId: order.id, appId: order.appId, solverId: order.solverId, type, status, orderJson: orderJson(order, status), failures }];
      });
      const appended = await appendOrderEvents(trx, events);
      for (const after of this.afterRecord) await after(trx, appended);
      return appended;
    });
  }
}

/** Which failed actions an order has, as the event head remembers them: each failure is told once. */
const failureKey = (order: OrderRecord): string => (order.failedActions ?? []).map((f) => `${f.action}@${f.failedAt}`).join(',');
