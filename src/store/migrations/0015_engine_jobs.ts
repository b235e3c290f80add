import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The transaction engine's job fields: `deferrals` counts the passes in a row that could not reach
 * the chain's node (its backoff grows with them, and an unreachable node never uses up an attempt);
 * `broadcast_by` is the latest moment a job may first reach the chain (safety rule 2 for a funding),
 * and `cancelled_at` when the engine, past it, sent a transaction that takes the job's place.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table relayer_jobs add column deferrals int not null default 0;
    alter table relayer_jobs add column broadcast_by timestamptz;
    alter table relayer_jobs add column cancelled_at timestamptz;
    `,
  );
}
