import { sql } from 'kysely';
import type { Db } from './database.ts';

/** An affiliate's earnings in one fee asset, for an app whose orders paid it some. */
export interface EarningsRow {
  affiliate: string;
  asset: string;
  /** Earned through the app's orders, base units. */
  appEarned: bigint;
  /**
   * Earned through every app's orders, base units: the cumulative amount a claim signs, since the claim
   * contract pays per affiliate and token whichever app's orders earned it.
   */
  totalEarned: bigint;
  /** Claimed as stored, over every app. */
  totalClaimed: bigint;
}

/** The affiliates and fee assets the app's orders paid fees to, each with its totals over all apps. */
export async function listEarnings(db: Db, appId: string): Promise<EarningsRow[]> {
  const rows = await db
    .selectFrom('affiliate_earnings as mine')
    .innerJoin('affiliate_earnings as every', (join) =>
      join.onRef('every.affiliate', '=', 'mine.affiliate').onRef('every.asset', '=', 'mine.asset'),
    )
    .select((eb) => [
      'mine.affiliate',
      'mine.asset',
      'mine.total_earned as app_earned',
      sql<string>`${eb.fn.sum('every.total_earned')}::text`.as('total_earned'),
      sql<string>`${eb.fn.sum('every.total_claimed')}::text`.as('total_claimed'),
    ])
    .where('mine.app_id', '=', appId)
    .groupBy(['mine.affiliate', 'mine.asset', 'mine.total_earned'])
    .orderBy('mine.affiliate')
    .orderBy('mine.asset')
    .execute();
  return rows.map((r) => ({
    affiliate: r.affiliate,
    asset: r.asset,
    appEarned: BigInt(r.app_earned),
    totalEarned: BigInt(r.total_earned),
    totalClaimed: BigInt(r.total_claimed),
  }));
}

/** A claim paid to an affiliate, as the history lists it next to the app's fees. */
export interface HistoryDebit {
  affiliate: string;
  asset: string;
  /** The claim transaction. */
  id: string;
  /** Orders claims of one time: the later on the chain, the greater (block number and log index). */
  seq: bigint;
  amount: bigint;
  /** Unix seconds. */
  timestamp: number;
}

export interface HistoryEntry {
  type: 'credit' | 'debit';
  /** The order for a credit, the claim transaction for a debit. */
  id: string;
  affiliate: string;
  asset: string;
  amount: bigint;
  /** RFC 3339, seconds, UTC. */
  timestamp: string;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  /** The app's fees and the debits given, all pages. */
  totalItems: number;
  /** The app's accrued fees summed per fee asset, all pages. */
  creditsByAsset: Map<string, bigint>;
}

/**
 * One page of an app's affiliate history: its accrued fees (a credit per fee, at its accrual) merged with
 * `debits`, newest first; at one time debits come first, then by id. `page` counts from 1.
 */
export async function affiliateHistoryPage(db: Db, appId: string, debits: readonly HistoryDebit[], page: number, perPage: number): Promise<HistoryPage> {
  const credits = sql`
    select 'credit' as type, f.order_id as id, f.position::numeric as seq, f.address as affiliate, f.asset, f.amount, f.accrued_at as at
    from affiliate_fees f join orders o on o.id = f.order_id
    where o.app_id = ${appId} and f.status = 'accrued' and f.accrued_at is not null`;
  const rows = debits.map(
    (d) => sql`(${d.id}::text, ${d.seq.toString()}::numeric, ${d.affiliate}::text, ${d.asset}::text, ${d.amount.toString()}::numeric, ${d.timestamp}::double precision)`,
  );
  const all =
    rows.length === 0
      ? credits
      : sql`${credits}
    union all
    select 'debit', d.id, d.seq, d.affiliate, d.asset, d.amount, to_timestamp(d.at)
    from (values ${sql.join(rows)}) as d (id, seq, affiliate, asset, amount, at)`;
  const { rows: pageRows } = await sql<{ type: 'credit' | 'debit'; id: string; affiliate: string; asset: string; amount: string; timestamp: string }>`
    select type, id, affiliate, asset, amount::text as amount,
      to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as timestamp
    from (${all}) as h
    order by at desc, type desc, seq desc, id desc
    limit ${perPage} offset ${(page - 1) * perPage}`.execute(db);
  const sums = await db
    .selectFrom('affiliate_fees as f')
    .innerJoin('orders as o', 'o.id', 'f.order_id')
    .select((eb) => ['f.asset', sql<string>`${eb.fn.sum('f.amount')}::text`.as('amount'), sql<string>`count(*)::text`.as('count')])
    .where('o.app_id', '=', appId)
    .where('f.status', '=', 'accrued')
    .where('f.accrued_at', 'is not', null)
    .groupBy('f.asset')
    .execute();
  return {
    entries: pageRows.map((r) => ({ ...r, amount: BigInt(r.amount) })),
    totalItems: sums.reduce((n, r) => n + Number(r.count), 0) + debits.length,
    creditsByAsset: new Map(sums.map((r) => [r.asset, BigInt(r.amount)])),
  };
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
