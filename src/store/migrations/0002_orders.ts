import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Order creation: liquidity reservations as a counter (an atomic conditional update reserves, so
 * concurrent creates can never overcommit a solver), the service-held Bitcoin key, and the indexes
 * of the order list's filters.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table solver_balances add column committed numeric(78, 0) not null default 0
      check (committed >= 0);

    -- true once the order's reservation has been returned (destination funded, or order dead)
    alter table orders add column commitment_released boolean not null default false;
    -- a per-order key the service holds for a Bitcoin-family side without a client delegate
    alter table orders add column delegate_key_ciphertext bytea;
    -- sha256 of the normalized create request: a replay with the same nonce must ask the same
    alter table orders add column request_hash text not null default '';
    -- a secret hash serves one order: one reveal must not unlock another order's HTLCs
    create unique index orders_secret_hash on orders (secret_hash);

    create index orders_app_created on orders (app_id, created_at desc);
    create index orders_open_by_deadline on orders (deadline) where not commitment_released;
    create index swaps_initiator on swaps (lower(initiator));
    create index swaps_redeemer on swaps (lower(redeemer));
    create index swaps_initiate_tx on swaps (initiate_tx_hash) where initiate_tx_hash <> '';
    create index swaps_redeem_tx on swaps (redeem_tx_hash) where redeem_tx_hash <> '';
    create index swaps_refund_tx on swaps (refund_tx_hash) where refund_tx_hash <> '';
  `,
  );
}
