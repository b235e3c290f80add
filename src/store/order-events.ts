import { sql } from 'kysely';
import { ORDER_EVENT_CHANNEL, type OrderEvent } from '../events/order-event.ts';
import { CLOCK_MOVES, statusRule, type OrderStatus } from '../orders/status.ts';
import { toRfc3339Micro, type Db } from './database.ts';
import type { OrderEventType } from './schema.ts';
import { conditionSql, statusList, statusSql, tablesRead } from './status-sql.ts';

interface EventRow {
  id: string;
  order_id: string;
  app_id: string;
  status: string;
  created_at: string;
  order_json: string;
  solver_id: string | null;
  type: OrderEventType;
}

const eventOfRow = (r: EventRow): OrderEvent => ({
  id: r.id,
  type: r.type,
  orderId: r.order_id,
  appId: r.app_id,
  solverId: r.solver_id ?? '',
  status: r.status as OrderStatus,
  createdAt: toRfc3339Micro(r.created_at),
  orderJson: r.order_json,
});

export interface EventsQuery {
  /** Events with a larger id only ("0": from the start). */
  afterId: string;
  orderId?: string | undefined;
  appId?: string | undefined;
  solverId?: string | undefined;
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
  if (q.solverId !== undefined) query = query.where('solver_id', '=', q.solverId);
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
export async function lockEventHeads(trx: Db, orderIds: readonly string[]): Promise<Map<string, EventHead>> {
  await sql`select pg_advisory_xact_lock(hashtext('order_events'))`.execute(trx);
  if (orderIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('order_event_heads')
    .select(['order_id', 'status', 'failures'])
    .where('order_id', 'in', orderIds)
    .execute();
  return new Map(rows.map((r) => [r.order_id, { status: r.status as OrderStatus, failures: r.failures }]));
}

/** What the log last told of an order: its status, and which failed actions (`failureKey`). */
export interface EventHead {
  status: OrderStatus;
  failures: string;
}

export interface NewOrderEvent {
  orderId: string;
  appId: string;
  solverId: string;
  type: OrderEventType;
  status: OrderStatus;
  orderJson: string;
  /** The order's failed actions as told with this event (`failureKey`). */
  failures: string;
}

/**
 * Appends events (one per order, ids in the given order), moves their orders' heads and notifies the
 * newest id at commit, in one statement, in a transaction holding `lockEventHeads`'s lock.
 */
export async function appendOrderEvents(trx: Db, events: readonly NewOrderEvent[]): Promise<OrderEvent[]> {
  if (events.length === 0) return [];
  const column = (pick: (e: NewOrderEvent) => string) => events.map(pick);
  // Identical notifications of one transaction are delivered once: one per append.
  const { rows } = await sql<EventRow>`
    with ev as (
      insert into order_events (order_id, app_id, solver_id, type, status, order_json)
      select e.order_id, e.app_id, e.solver_id, e.type, e.status, e.order_json
      from unnest(${column((e) => e.orderId)}::text[], ${column((e) => e.appId)}::text[], ${column((e) => e.solverId)}::text[],
        ${column((e) => e.type)}::text[], ${column((e) => e.status)}::text[], ${column((e) => e.orderJson)}::text[])
        with ordinality as e(order_id, app_id, solver_id, type, status, order_json, n)
      order by e.n
      returning *
    ), heads as (
      insert into order_event_heads (order_id, status, event_id, failures)
      select ev.order_id, ev.status, ev.id, f.failures from ev
        join unnest(${column((e) => e.orderId)}::text[], ${column((e) => e.failures)}::text[]) as f(order_id, failures) on f.order_id = ev.order_id
      on conflict (order_id) do update set status = excluded.status, event_id = excluded.event_id, failures = excluded.failures
    )
    select ev.id, ev.order_id, ev.app_id, ev.solver_id, ev.type, ev.status, ev.created_at, ev.order_json,
      pg_notify(${ORDER_EVENT_CHANNEL}, (max(ev.id) over ())::text)::text as notified
    from ev order by ev.id
  `.execute(trx);
  return rows.map(eventOfRow);
}

/**
 * The recorded status of the next `limit` orders after `afterOrderId` (by id) checked against the status
 * each has now (at `nowUnix` and the heights in `chain_heights`, as `orderStatus` derives it): `stale`
 * are those with no event yet or a last status other than that, `last` the last order looked at
 * (undefined: none left). What a recorder that missed notifications looks at again. It pages over the
 * orders, not over the answers, so each page costs `limit` orders however few are stale.
 */
export async function ordersToRecheck(
  db: Db,
  afterOrderId: string,
  limit: number,
  nowUnix: number,
): Promise<{ stale: string[]; last: string | undefined }> {
  const { rows } = await sql<{ id: string; stale: boolean }>`
    select o.id, (h.order_id is null or h.status <> ${statusSql(nowUnix)}) as stale
    from (select * from orders where id > ${afterOrderId} order by id limit ${limit}) o
    left join order_event_heads h on h.order_id = o.id
    join swaps s on s.order_id = o.id and s.side = 'source'
    join swaps d on d.order_id = o.id and d.side = 'destination'
    order by o.id
  `.execute(db);
  return { stale: rows.filter((r) => r.stale).map((r) => r.id), last: rows.at(-1)?.id };
}

/**
 * Orders that time or chain height alone has moved since their last event. Only the rules that read the
 * clock (`expired`: the deadline; `awaiting_refund`: the source timelock at the chain's known height) can
 * start to hold while nothing is written, over the statuses `CLOCK_MOVES` names (the heads' partial
 * index, migration 0012): one search per such rule, generated from it, joining only the swaps it reads.
 */
export async function ordersMovedByTime(db: Db, nowUnix: number, limit: number): Promise<string[]> {
  const searches = [...CLOCK_MOVES].map(([status, from]) => {
    const rule = statusRule(status);
    const tables = tablesRead(rule);
    return sql`(select h.order_id from order_event_heads h
      ${tables.has('o') ? sql`join orders o on o.id = h.order_id` : sql``}
      ${tables.has('s') ? sql`join swaps s on s.order_id = h.order_id and s.side = 'source'` : sql``}
      ${tables.has('d') ? sql`join swaps d on d.order_id = h.order_id and d.side = 'destination'` : sql``}
      where h.status in (${statusList(from)}) and ${conditionSql(rule, nowUnix)}
      limit ${limit})`;
  });
  const rows = await sql<{ order_id: string }>`${sql.join(searches, sql` union all `)}`.execute(db);
  return rows.rows.map((r) => r.order_id);
}
