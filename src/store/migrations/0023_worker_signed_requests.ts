import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * What an instance that holds no key asks the workers to sign (docs/operations.md, "API and worker
 * instances"):
 * - `fee_claim_signatures`: the fee signer's claim for an affiliate and fee asset, signed by a worker
 *   over the cumulative earnings it saw; the API serves the latest.
 * - `bitcoin_spend_requests`: a client's Bitcoin-family action (redeem, refund, instant-refund) that signs
 *   with the key the service holds for it; a worker builds and signs the transaction and writes its job,
 *   or records why it refused. The body (it may hold the secret) is sealed to the workers' key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table fee_claim_signatures (
      affiliate text not null,
      asset text not null,
      contract text not null,
      cumulative_amount numeric not null,
      signature text not null,
      signed_at timestamptz not null default now(),
      primary key (affiliate, asset)
    );
    create table bitcoin_spend_requests (
      idempotency_key text primary key,
      order_id text not null references orders (id),
      action text not null,
      sealed_body bytea not null,
      status text not null default 'pending',
      error_code text not null default '',
      error_message text not null default '',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index bitcoin_spend_requests_pending on bitcoin_spend_requests (created_at) where status = 'pending';
    `,
  );
}
