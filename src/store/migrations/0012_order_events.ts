import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The order event log: one row per change of an order's status, in the order the changes were
 * recorded (`id`, which a stream's `Last-Event-ID` resumes from). `order_json` is the order as the
 * order read showed it then. `order_event_heads` holds each order's last recorded status, so the
 * recorder appends only real changes and finds the orders that time alone moves (a deadline or a
 * timelock running out). A recorded event notifies `order_event` with its id at commit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table order_events (
      id bigserial primary key,
      order_id text not null references orders (id),
      app_id text not null,
      status text not null,
      created_at timestamptz not null default now(),
      order_json text not null
    );
    create index order_events_order on order_events (order_id, id);
    create index order_events_app on order_events (app_id, id);

    create table order_event_heads (
      order_id text primary key references orders (id),
      status text not null,
      event_id bigint not null
    );
    -- The statuses that time or chain height alone can move on.
    create index order_event_heads_timed on order_event_heads (status)
      where status in ('created', 'initiate_detected', 'initiated', 'awaiting_redeem');
  `,
  );
}
