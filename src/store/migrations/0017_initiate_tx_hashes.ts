import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * `swaps.initiate_tx_hash` is the API's field, as Garden shows it: one hash, or on a Bitcoin-family
 * swap funded by several transactions their txids comma-separated. `initiate_tx_hashes` is the same as
 * a list, kept by the database, which the order list's transaction-hash search matches against: any
 * one of the funding transactions finds the order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table swaps add column initiate_tx_hashes text[] not null
      generated always as (string_to_array(initiate_tx_hash, ',')) stored;
    drop index swaps_initiate_tx;
    create index swaps_initiate_txs on swaps using gin (initiate_tx_hashes);
    `,
  );
}
