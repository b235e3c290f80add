import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * Registered solvers compete for quotes: each registers the pairs it answers quote requests for, and
 * follows the events of the orders matched to it (so the event log names each event's solver).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table solver_pairs (
      solver_id text not null references solvers (id),
      source_asset text not null,
      destination_asset text not null,
      primary key (solver_id, source_asset, destination_asset)
    );
    alter table order_events add column solver_id text;
    update order_events e set solver_id = o.solver_id from orders o where o.id = e.order_id;
    create index order_events_solver on order_events (solver_id, id);
    `,
  );
}
