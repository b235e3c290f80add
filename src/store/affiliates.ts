import type { Db } from './database.ts';

export interface EarningsRow {
  affiliate: string;
  asset: string;
  totalEarned: bigint;
  totalClaimed: bigint;
}

export async function listEarnings(db: Db, appId: string): Promise<EarningsRow[]> {
  const rows = await db
    .selectFrom('affiliate_earnings')
    .select(['affiliate', 'asset', 'total_earned', 'total_claimed'])
    .where('app_id', '=', appId)
    .orderBy('affiliate')
    .orderBy('asset')
    .execute();
  return rows.map((r) => ({
    affiliate: r.affiliate,
    asset: r.asset,
    totalEarned: BigInt(r.total_earned),
    totalClaimed: BigInt(r.total_claimed),
  }));
}

/**
 * Moves an order's pending affiliate fees to accrued and adds them to the earnings totals, once:
 * a second call finds no pending fee and adds nothing.
 */
export async function accrueOrderFees(db: Db, orderId: string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const fees = await tx
      .updateTable('affiliate_fees')
      .set({ status: 'accrued', accrued_at: new Date() })
      .where('order_id', '=', orderId)
      .where('status', '=', 'pending')
      .returning(['address', 'asset', 'amount'])
      .execute();
    if (fees.length === 0) return 0;
    const order = await tx.selectFrom('orders').select('app_id').where('id', '=', orderId).executeTakeFirstOrThrow();
    for (const fee of fees) {
      await tx
        .insertInto('affiliate_earnings')
        .values({ app_id: order.app_id, affiliate: fee.address, asset: fee.asset, total_earned: fee.amount })
        .onConflict((oc) =>
          oc.columns(['app_id', 'affiliate', 'asset']).doUpdateSet((eb) => ({
            total_earned: eb('affiliate_earnings.total_earned', '+', eb.ref('excluded.total_earned')),
            updated_at: new Date(),
          })),
        )
        .execute();
    }
    return fees.length;
  });
}
