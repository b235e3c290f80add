import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * `relayer_jobs.nonce` is an account's transaction sequence number (EVM) and nothing else. A signed
 * transaction that expires at a block height (Solana: its blockhash's last valid height) keeps that
 * height in `valid_until_height`; the Solana chains' rows, which held it in `nonce`, move over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table relayer_jobs add column valid_until_height bigint;
    update relayer_jobs set valid_until_height = nonce, nonce = null
      where nonce is not null and chain in (select key from chains where family = 'solana');
    `,
  );
}
