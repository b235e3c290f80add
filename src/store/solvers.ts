import { sql } from 'kysely';
import type { SolverConfig } from '../config/service-config.ts';
import type { Db } from './database.ts';

/** Writes the configured solvers and their per-chain addresses; solvers the config no longer names are deactivated, registered ones (`solver-registry.ts`) left as they are. */
export async function syncSolvers(db: Db, solvers: readonly SolverConfig[]): Promise<void> {
  await db.transaction().execute(async (tx) => {
    for (const s of solvers) {
      await tx
        .insertInto('solvers')
        .values({ id: s.id, name: s.name, is_active: true })
        .onConflict((oc) => oc.column('id').doUpdateSet({ name: s.name, is_active: true }))
        .execute();
      await tx.deleteFrom('solver_addresses').where('solver_id', '=', s.id).execute();
      const rows = Object.entries(s.addresses).map(([chain, address]) => ({ solver_id: s.id, chain, address }));
      if (rows.length > 0) await tx.insertInto('solver_addresses').values(rows).execute();
    }
    const ids = solvers.map((s) => s.id);
    let deactivate = tx.updateTable('solvers').set({ is_active: false }).where('key_hash', 'is', null);
    if (ids.length > 0) deactivate = deactivate.where('id', 'not in', ids);
    await deactivate.execute();
  });
}

/** Records a balance the solver's worker read on chain. */
export async function setSolverBalance(
  db: Db,
  input: { solverId: string; asset: string; balance: bigint; blockNumber?: bigint },
): Promise<void> {
  const row = {
    solver_id: input.solverId,
    asset: input.asset,
    balance: input.balance,
    block_number: input.blockNumber ?? 0n,
    updated_at: new Date(),
  };
  await db
    .insertInto('solver_balances')
    .values(row)
    .onConflict((oc) => oc.columns(['solver_id', 'asset']).doUpdateSet(row))
    .execute();
}

export interface LiquidityRow {
  solverId: string;
  asset: string;
  address: string;
  balance: bigint;
  /** Destination amounts that open orders have reserved and the solver has not funded yet. */
  committed: bigint;
}

/** Balances and reservations of active solvers on the assets of the chains they have addresses on. */
export async function listLiquidity(db: Db): Promise<LiquidityRow[]> {
  const rows = await db
    .selectFrom('solvers as s')
    .innerJoin('solver_addresses as sa', 'sa.solver_id', 's.id')
    .innerJoin('assets as a', (join) => join.onRef('a.chain', '=', 'sa.chain').on('a.is_active', '=', true))
    .leftJoin('solver_balances as b', (join) => join.onRef('b.solver_id', '=', 's.id').onRef('b.asset', '=', 'a.id'))
    .select([
      's.id as solver_id',
      'a.id as asset',
      'sa.address as address',
      sql<string>`coalesce(b.balance, 0)::text`.as('balance'),
      sql<string>`coalesce(b.committed, 0)::text`.as('committed'),
    ])
    .where('s.is_active', '=', true)
    .orderBy('s.id')
    .orderBy('a.id')
    .execute();
  return rows.map((r) => ({
    solverId: r.solver_id,
    asset: r.asset,
    address: r.address,
    balance: BigInt(r.balance),
    committed: BigInt(r.committed),
  }));
}

/** What each active solver can still pay out of `asset`: balance minus reservations. */
export async function availableLiquidity(db: Db, asset: string): Promise<Map<string, bigint>> {
  const rows = await db
    .selectFrom('solver_balances as b')
    .innerJoin('solvers as s', 's.id', 'b.solver_id')
    .select(['b.solver_id', sql<string>`(b.balance - b.committed)::text`.as('available')])
    .where('b.asset', '=', asset)
    .where('s.is_active', '=', true)
    .execute();
  return new Map(rows.map((r) => [r.solver_id, BigInt(r.available)]));
}

/**
 * `availableLiquidity` for quotes: reads of one asset made while one is in flight share it, so a burst
 * of quotes costs a query per asset at a time, not one each. (Orders reserve in their own statement.)
 */
export function sharedLiquidityReads(db: Db): (asset: string) => Promise<Map<string, bigint>> {
  const inFlight = new Map<string, Promise<Map<string, bigint>>>();
  return (asset) => {
    let read = inFlight.get(asset);
    if (!read) {
      read = availableLiquidity(db, asset).finally(() => inFlight.delete(asset));
      inFlight.set(asset, read);
    }
    return read;
  };
}

/**
 * Returns an order's reservation (its destination was funded, or it can no longer be). Idempotent:
 * the order's flag makes a second call do nothing. Returns whether this call released it.
 */
export async function releaseOrderLiquidity(db: Db, orderId: string): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const order = await tx
      .updateTable('orders')
      .set({ commitment_released: true })
      .where('id', '=', orderId)
      .where('commitment_released', '=', false)
      .returning('solver_id')
      .executeTakeFirst();
    if (!order) return false;
    const destination = await tx
      .selectFrom('swaps')
      .select(['asset', 'amount'])
      .where('order_id', '=', orderId)
      .where('side', '=', 'destination')
      .executeTakeFirstOrThrow();
    await tx
      .updateTable('solver_balances')
      .set({ committed: sql`greatest(committed - ${destination.amount}::numeric, 0)` })
      .where('solver_id', '=', order.solver_id)
      .where('asset', '=', destination.asset)
      .execute();
    return true;
  });
}

/**
 * `releaseOrderLiquidity` for many orders in one statement: one update of each solver balance, not
 * one per order (they would queue on that row's lock).
 */
export async function releaseOrdersLiquidity(db: Db, orderIds: readonly string[]): Promise<void> {
  if (orderIds.length === 0) return;
  await sql`
    with released as (
      update orders set commitment_released = true
      where id in (${sql.join(orderIds.map((id) => sql`${id}`))}) and commitment_released = false
      returning id, solver_id
    ), amounts as (
      select r.solver_id, d.asset, sum(d.amount::numeric) as amount
      from released r join swaps d on d.order_id = r.id and d.side = 'destination'
      group by r.solver_id, d.asset
    )
    update solver_balances b set committed = greatest(b.committed - a.amount, 0)
    from amounts a where b.solver_id = a.solver_id and b.asset = a.asset
  `.execute(db);
}

/** Releases the reservations of orders whose deadline passed without a source initiation. */
export async function releaseExpiredLiquidity(db: Db, nowUnix: number): Promise<number> {
  const expired = await db
    .selectFrom('orders as o')
    .innerJoin('swaps as s', (join) => join.onRef('s.order_id', '=', 'o.id').on('s.side', '=', 'source'))
    .select('o.id')
    .where('o.commitment_released', '=', false)
    .where('o.deadline', '<', String(nowUnix))
    .where('s.initiate_tx_hash', '=', '')
    .limit(1000)
    .execute();
  let released = 0;
  for (const { id } of expired) if (await releaseOrderLiquidity(db, id)) released++;
  return released;
}
