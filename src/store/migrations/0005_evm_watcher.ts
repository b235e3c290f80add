import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * What a block-following watcher needs to survive reorgs and restarts: its cursor (the last block it
 * processed) and the hashes of the blocks it processed inside the confirmation window, per chain.
 * The swap indexes keep the watcher's writes independent of the number of orders: a reorg undoes
 * the swaps whose block numbers lie above the common ancestor (range scans per chain), and the
 * confirmation update visits only initiated swaps that have not reached their required count.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table watcher_cursors (
      chain text primary key references chains (key),
      block_number bigint not null check (block_number >= 0),
      updated_at timestamptz not null default now()
    );

    create table watched_blocks (
      chain text not null references chains (key),
      number bigint not null check (number >= 0),
      hash text not null,
      primary key (chain, number)
    );

    create index swaps_initiate_block on swaps (chain, initiate_block_number) where initiate_block_number <> 0;
    create index swaps_redeem_block on swaps (chain, redeem_block_number) where redeem_block_number <> 0;
    create index swaps_refund_block on swaps (chain, refund_block_number) where refund_block_number <> 0;
    create index swaps_confirming on swaps (chain)
      where initiate_block_number <> 0 and current_confirmations < required_confirmations;
  `,
  );
}
