import type { Db } from './database.ts';

/** Every known chain height by chain key. */
export async function listChainHeights(db: Db): Promise<Map<string, bigint>> {
  const rows = await db.selectFrom('chain_heights').select(['chain', 'height']).execute();
  return new Map(rows.map((r) => [r.chain, BigInt(r.height)]));
}
