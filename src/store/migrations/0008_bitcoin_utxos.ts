import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The outputs the Bitcoin-family watcher follows: every output paying a watched script (an HTLC
 * address, which is its swap's `swap_id`, or a watched wallet address), while it is in the mempool
 * and once mined, and the transaction that spends it. Redeems, refunds and the solver's wallet take
 * their inputs from here, and a swap's funding (filled amount, initiate transactions and block) is
 * derived from its rows. A reorg deletes the rows of removed blocks and clears spends made in them
 * (the block indexes make both range scans per chain); the mempool indexes serve the watcher's
 * restart and the removal of transactions that left the mempool unmined.
 * `swaps_chain_created` lets the watcher add the swaps created since its last look to its index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table bitcoin_utxos (
      chain text not null references chains (key),
      txid text not null,
      vout integer not null check (vout >= 0),
      -- the output's scriptPubKey (hex) and the watched address it encodes
      script text not null,
      address text not null,
      value numeric(78, 0) not null check (value >= 0),
      -- null while the funding transaction is only in the mempool
      block_number bigint check (block_number >= 0),
      block_time timestamptz,
      -- the spending transaction; spent_block_number is null while it is only in the mempool
      spent_txid text,
      spent_block_number bigint check (spent_block_number >= 0),
      primary key (chain, txid, vout),
      check (spent_block_number is null or spent_txid is not null)
    );

    create index bitcoin_utxos_address on bitcoin_utxos (chain, address);
    create index bitcoin_utxos_block on bitcoin_utxos (chain, block_number) where block_number is not null;
    create index bitcoin_utxos_spent_block on bitcoin_utxos (chain, spent_block_number) where spent_block_number is not null;
    create index bitcoin_utxos_unconfirmed on bitcoin_utxos (chain, txid) where block_number is null;
    create index bitcoin_utxos_spender on bitcoin_utxos (chain, spent_txid) where spent_txid is not null;

    create index swaps_chain_created on swaps (chain, created_at);
  `,
  );
}
