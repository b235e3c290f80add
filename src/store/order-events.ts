import { sql } from 'kysely';
import { ORDER_EVENT_CHANNEL, type OrderEvent } from '../events/order-event.ts';
import type { OrderStatus } from '../orders/status.ts';
import { toRfc3339Micro, type Db } from './database.ts';

/** Statuses after which an order never changes again. */
const FINAL_STATUSES: readonly OrderStatus[] = ['completed', 'refunded'];

interface EventRow {
  id: string;
  order_id: string;
  app_id: string;
  status: string;
  created_at: string;
  order_json: string;
}

const eventOfRow = (r: EventRow): OrderEvent => ({
  id: r.id,
  orderId: r.order_id,
  appId: r.app_id,
  status: r.status as OrderStatus,
  createdAt: toRfc3339Micro(r.created_at),
  orderJson: r.order_json,
});

export interface EventsQuery {
  /** Events with a larger id only ("0": from the start). */
  afterId: string;
  orderId?: string | undefined;
  appId?: string | undefined;
  limit: number;
}

/** Recorded events in id order, optionally of one order or one app's orders. */
export async function eventsAfter(db: Db, q: EventsQuery): Promise<OrderEvent[]> {
  let query = db
    .selectFrom('order_events')
    .selectAll()
    .where('id', '>', q.afterId)
    .orderBy('id')
    .limit(q.limit);
  if (q.orderId !== undefined) query = query.where('order_id', '=', q.orderId);
  if (q.appId !== undefined) query = query.where('app_id', '=', q.appId);
  return (await query.execute()).map(eventOfRow);
}

/** One step of an order's status timeline: an event without the order it carried. */
export interface TimelineEntry {
  id: string;
  status: string;
  /** RFC 3339 UTC with microseconds. */
  created_at: string;
}

/** An order's recorded status changes, oldest first (the explorer's timeline). */
export async function orderEventsOf(db: Db, orderId: string): Promise<TimelineEntry[]> {
  const rows = await db
    .selectFrom('order_events')
    .select(['id', 'status', 'created_at'])
    .where('order_id', '=', orderId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, status: r.status, created_at: toRfc3339Micro(r.created_at) }));
}

/** The newest event's id, "0" when there is none. */
export async function latestEventId(db: Db): Promise<string> {
  const row = await db.selectFrom('order_events').select(sql<string>`coalesce(max(id), 0)::text`.as('id')).executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Takes the event log's lock for the caller's transaction and reads the last recorded status of each
 * of these orders. Appends are serialized by this lock, taken before heads are read and ids drawn,
 * so events commit in id order (a reader resuming after an id never misses one committed later with
 * a smaller id) and two recorders never append the same change.
 */
export async function lockEventHeads(trx: Db, orderIds: readonly string[]): Promise<Map<string, OrderStatus>> {
  await sql`select pg_advisory_xact_lock(hashtext('order_events'))`.execute(trx);
  if (orderIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('order_event_heads')
    .select(['order_id', 'status'])
    .where('order_id', 'in', orderIds)
    .execute();
  return new Map(rows.map((r) => [r.order_id, r.status as OrderStatus]));
}

export interface NewOrderEvent {
  orderId: string;
  appId: string;
  status: OrderStatus;
  orderJson: string;
}

/** Appends events and moves their orders' heads, in a transaction holding `lockEventHeads`'s lock. */
export async function appendOrderEvents(trx: Db, events: readonly NewOrderEvent[]): Promise<OrderEvent[]> {
  if (events.length === 0) return [];
  const rows = await trx
    .insertInto('order_events')
    .values(events.map((e) => ({ order_id: e.orderId, app_id: e.appId, status: e.status, order_json: e.orderJson })))
    .returningAll()
    .execute();
  const recorded = rows.map(eventOfRow);
  await trx
    .insertInto('order_event_heads')
    .values(recorded.map((e) => ({ order_id: e.orderId, status: e.status, event_id: e.id })))
    .onConflict((oc) =>
      oc.column('order_id').doUpdateSet({ status: (eb) => eb.ref('excluded.status'), event_id: (eb) => eb.ref('excluded.event_id') }),
    )
    .execute();
  await sql`select pg_notify(${ORDER_EVENT_CHANNEL}, ${recorded.at(-1)!.id})`.execute(trx);
  return recorded;
}

/**
 * Orders whose status may have changed unrecorded: no event yet, or a last status that is not final
 * (an expired order only when its source was initiated after all). What a recorder that missed
 * notifications looks at again; pages by id.
 */
export async function ordersToRecheck(db: Db, afterOrderId: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    select o.id from orders o
    left join order_event_heads h on h.order_id = o.id
    join swaps s on s.order_id = o.id and s.side = 'source'
    where o.id > ${afterOrderId}
      and (h.order_id is null
        or (h.status not in (${sql.join(FINAL_STATUSES.map((st) => sql`${st}`))}, 'expired'))
        or (h.status = 'expired' and s.initiate_tx_hash <> ''))
    order by o.id
    limit ${limit}
  `.execute(db);
  return rows.rows.map((r) => r.id);
}

/**
 * Orders that time or chain height alone has moved since their last event: created ones past their
 * deadline, and initiated sources whose timelock has run out at the chain's known height (the
 * `awaiting_refund` rule of src/orders/status.ts).
 */
export async function ordersMovedByTime(db: Db, nowUnix: number, limit: number): Promise<string[]> {
  const rows = await sql<{ order_id: string }>`
    (select h.order_id from order_event_heads h join orders o on o.id = h.order_id
      where h.status = 'created' and o.deadline < ${nowUnix}
      limit ${limit})
    union all
    (select h.order_id from order_event_heads h
      join swaps s on s.order_id = h.order_id and s.side = 'source'
      join chain_heights c on c.chain = s.chain
      where h.status in ('initiate_detected', 'initiated', 'awaiting_redeem')
        and s.initiate_tx_hash <> '' and s.initiate_block_number <> 0
        and c.height > s.initiate_block_number + s.timelock
      limit ${limit})
  `.execute(db);
  return rows.rows.map((r) => r.order_id);
}
