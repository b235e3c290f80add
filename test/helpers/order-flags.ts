import { sql } from 'kysely';
import type { Db } from '../../src/store/database.ts';

/*
 * Safety rule 5's two flags on an order, read for assertions. The service itself reads them only
 * inside the gate and the funding claim, under the order's row lock (src/store/instant-refund-gate.ts,
 * claimFunding in src/store/solver-queries.ts).
 */

/** Whether the solver co-signed an instant refund of the order: it must then never fund the destination. */
export async function instantRefundSigned(db: Db, orderId: string): Promise<boolean> {
  const { rows } = await sql<{ flag: boolean }>`select instant_refund_signed as flag from orders where id = ${orderId}`.execute(db);
  return rows[0]?.flag === true;
}

/** When the solver recorded its intent to fund the destination, if it did. */
export async function destinationFundingAt(db: Db, orderId: string): Promise<string | null> {
  const { rows } = await sql<{ at: string | null }>`select destination_funding_at::text as at from orders where id = ${orderId}`.execute(db);
  return rows[0]?.at ?? null;
}
