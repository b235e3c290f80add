import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Ended deliveries by when they ended: the delivery log keeps them `webhooks.keep_deliveries_days`,
 * after which the delivery worker deletes them (and their attempts) through this index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, `create index webhook_deliveries_ended on webhook_deliveries (updated_at) where status <> 'pending';`);
}
