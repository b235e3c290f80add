import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Solvers the operator registers (`hashlock solvers register`), besides those of the config: each holds
 * a solver key (stored hashed) and proves each address it registers by a signature from it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table solvers
      add column key_hash text unique,
      add column revoked_at timestamptz;
    alter table solver_addresses
      add column proof text,
      add column proven_at timestamptz;
    `,
  );
}
