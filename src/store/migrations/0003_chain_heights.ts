import type { Kysely } from 'kysely';
import { runStatements } from '../sql-script.ts';

/**
 * The current height of each chain, as its watcher last read it: order statuses need it to tell
 * when a timelock has run out. Also indexes the order list's delegate filter.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `
    create table chain_heights (
      chain text primary key references chains (key),
      height bigint not null check (height >= 0),
      updated_at timestamptz not null default now()
    );

    create index swaps_delegate on swaps (lower(delegate)) where delegate <> '';
  `,
  );
}
