import { sql } from 'kysely';
import type { SolverConfig } from '../config/service-config.ts';
import type { Db } from './database.ts';

/** Writes the configured solvers and their per-chain addresses. */
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
    let deactivate = tx.updateTable('solvers').set({ is_active: false });
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
  /** Destination amounts of live orders the solver has not funded yet. */
  committed: bigint;
}

/**
 * Balances of active solvers on the assets of their chains, each with what open orders have
 * committed: destinations not yet initiated (once initiated, the amount has left the balance) of
 * orders that are still live (source initiated, or deadline not passed) and not refunded.
 */
export async function listLiquidity(db: Db, nowUnix: number): Promise<LiquidityRow[]> {
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
      sql<string>`coalesce((
        select sum(d.amount) from orders o
        join swaps d on d.order_id = o.id and d.side = 'destination'
        join swaps src on src.order_id = o.id and src.side = 'source'
        where o.solver_id = s.id and d.asset = a.id
          and d.initiate_tx_hash = '' and src.refund_tx_hash = ''
          and (src.initiate_tx_hash <> '' or o.deadline > ${nowUnix})
      ), 0)::text`.as('committed'),
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
