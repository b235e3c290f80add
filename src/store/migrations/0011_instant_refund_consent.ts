import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * `orders.instant_refund_consent`: the client's standing, pre-signed consent to an instant refund of a
 * Bitcoin-family source (Garden's SDK posts it to /relayer/bitcoin/instant-refund while the swap is in
 * progress), as `{"signatures": [hex, ...]}`, one per instant-refund hash. Storing it co-signs nothing:
 * the solver uses it only once the order can no longer complete (src/solver/solver.ts), through the
 * rule-5 gate like any instant refund.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, `alter table orders add column instant_refund_consent jsonb;`);
}
