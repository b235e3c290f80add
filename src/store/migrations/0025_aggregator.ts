import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The Aggregator API (`/v3/quote` with `sell_asset`, `/v3/orders/ord_...`): each `Idempotency-Key` an
 * app sent, with the fingerprint of its body and the order it made, so that any instance answers a
 * replay with the same order; and the funding transactions clients reported with `submit`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table aggregator_quotes (
      app_id text not null,
      idempotency_key text not null,
      request_hash text not null,
      order_id text not null references orders (id),
      created_at timestamptz not null default now(),
      primary key (app_id, idempotency_key)
    );
    create unique index aggregator_quotes_order on aggregator_quotes (order_id);
    create index aggregator_quotes_app_page on aggregator_quotes (app_id, created_at desc, order_id desc);
    create table aggregator_deposits (
      order_id text not null references orders (id),
      tx_hash text not null,
      at timestamptz not null default now(),
      primary key (order_id, tx_hash)
    );
    create index aggregator_deposits_tx on aggregator_deposits (lower(tx_hash));
    `,
  );
}
