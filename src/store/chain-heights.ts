import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Records a chain's current height (watchers call this as they follow the chain). */
export async function setChainHeight(db: Db, chain: string, height: bigint): Promise<void> {
  await db
    .insertInto('chain_heights')
    .values({ chain, height })
    .onConflict((oc) => oc.column('chain').doUpdateSet({ height, updated_at: sql`now()` }))
    .execute();
}

/** Every known chain height by chain key. */
export async function listChainHeights(db: Db): Promise<Map<string, bigint>> {
  const rows = await db.selectFrom('chain_heights').select(['chain', 'height']).execute();
  return new Map(rows.map((r) => [r.chain, BigInt(r.height)]));
}
