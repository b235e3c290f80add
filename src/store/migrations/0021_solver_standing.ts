import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * A solver's standing: suspended from quoting (automatically when it leaves a confirmed source unfunded
 * past its due time, or by the operator) until the operator restores it. Orders that fell due before the
 * restore do not suspend it again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    alter table solvers
      add column suspended_at timestamptz,
      add column suspended_reason text,
      add column restored_at timestamptz;
    -- The solvers' records read each solver's recent orders.
    create index orders_solver_created on orders (solver_id, created_at desc);
    `,
  );
}
