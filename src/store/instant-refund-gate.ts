import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Safety rule 5's gate: may the solver co-sign an instant refund of this order's source? Only while
 * the destination is not initiated, as far as the store knows. When it may, the order is flagged
 * `instant_refund_signed` in the same transaction, under the order's row lock, before any signature
 * exists: from then on the solver must never fund the destination. The solver's funding path takes
 * the same row lock and reads the flag before it broadcasts, so exactly one of the two wins.
 * Returns false when the destination is initiated (or the order is unknown).
 */
export async function mayCoSignInstantRefund(db: Db, orderId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ destination_initiate_tx: string; funding: boolean }>`
      select d.initiate_tx_hash as destination_initiate_tx, o.destination_funding_at is not null as funding
      from orders o join swaps d on d.order_id = o.id and d.side = 'destination'
      where o.id = ${orderId}
      for update of o
    `.execute(trx);
    const row = rows[0];
    // The solver recorded its intent to fund the destination (claimFunding in solver-queries.ts): never both.
    if (!row || row.destination_initiate_tx !== '' || row.funding) return false;
    await sql`update orders set instant_refund_signed = true where id = ${orderId} and not instant_refund_signed`.execute(trx);
    return true;
  });
}

/**
 * Rule 5's condition read without the lock and without setting the flag: whether the solver could
 * still co-sign an instant refund (the destination is not initiated and the solver has not recorded
 * its intent to fund it). What GET /v2/orders/{id}/instant-refund-hash checks; the co-signature
 * itself still goes through mayCoSignInstantRefund.
 */
export async function instantRefundOpen(db: Db, orderId: string): Promise<boolean> {
  const { rows } = await sql<{ destination_initiate_tx: string; funding: boolean }>`
    select d.initiate_tx_hash as destination_initiate_tx, o.destination_funding_at is not null as funding
    from orders o join swaps d on d.order_id = o.id and d.side = 'destination'
    where o.id = ${orderId}
  `.execute(db);
  const row = rows[0];
  return !!row && row.destination_initiate_tx === '' && !row.funding;
}
