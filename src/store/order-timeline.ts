import { toRfc3339Micro, type Db } from './database.ts';

/** One step of an order's status timeline: a row of `order_events`, without the order it carried. */
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
