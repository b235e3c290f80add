import { sql } from 'kysely';
import type { Db } from './database.ts';

/** The notification that wakes a chain's watcher, from any instance: a client reported a transaction there. */
export const CHAIN_INDEX_CHANNEL = 'chain_index';

/** Asks the instance running `chain`'s watcher to look at the chain now (POST /v3/index). */
export async function requestChainIndex(db: Db, chain: string): Promise<void> {
  await sql`select pg_notify(${CHAIN_INDEX_CHANNEL}, ${chain})`.execute(db);
}
