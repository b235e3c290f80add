import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The solver's rule-5 marker: `orders.destination_funding_at` is set, under the order's row lock and
 * only while `instant_refund_signed` is false, before the solver broadcasts the destination initiate.
 * From then on the instant-refund gate refuses to co-sign (safety rule 5, docs/safety.md): exactly one of
 * "fund the destination" and "co-sign an instant refund of the source" can ever happen.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table orders add column destination_funding_at timestamptz;
  `,
  );
}
