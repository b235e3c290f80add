import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * What the relayer needs so that one job makes at most one transaction on chain, and the rule-5 flag.
 *
 * - `raw_tx`: the signed transaction, written before it is broadcast. A worker that dies between
 *   signing and sending resends exactly these bytes; it never signs a second, different transaction.
 * - `tx_hashes`: every hash signed for the job. A fee bump re-signs with the same nonce, so any one
 *   of them may be the one that is mined, and at most one can be.
 * - `signed_at`: when the current `raw_tx` was signed; a transaction left unmined too long is re-signed
 *   with higher fees and the same nonce.
 * - `orders.instant_refund_signed`: the solver co-signed an instant refund of the source, so it must
 *   never fund the destination (safety rule 5, docs/safety.md). Set and read under the order's row lock.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table relayer_jobs add column raw_tx text not null default '';
    alter table relayer_jobs add column tx_hashes text[] not null default '{}';
    alter table relayer_jobs add column signed_at timestamptz;
    -- nonces the relayer has signed and not yet seen settled, per chain (the next nonce is above them)
    create index relayer_jobs_signed on relayer_jobs (chain, nonce)
      where raw_tx <> '' and status in ('queued', 'running', 'submitted');

    alter table orders add column instant_refund_signed boolean not null default false;
  `,
  );
}
