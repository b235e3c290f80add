import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * The client's stored consent to an instant refund of its source (migration 0011): its signatures of
 * the instant-refund hashes, kept until the order can no longer complete. Storing it is not rule 5's
 * co-signature; `mayCoSignInstantRefund` still decides, when the consent is used.
 */

/** Stores (or replaces) the consent; a repeat of the same signatures writes nothing, so it notifies nothing. */
export async function saveInstantRefundConsent(db: Db, orderId: string, signatures: readonly string[]): Promise<void> {
  const consent = JSON.stringify({ signatures });
  await sql`
    update orders set instant_refund_consent = ${consent}::jsonb
    where id = ${orderId} and instant_refund_consent is distinct from ${consent}::jsonb
  `.execute(db);
}

/** The stored signatures of the order's consent, if the client gave one. */
export async function instantRefundConsent(db: Db, orderId: string): Promise<string[] | undefined> {
  const { rows } = await sql<{ consent: { signatures?: unknown } | null }>`select instant_refund_consent as consent from orders where id = ${orderId}`.execute(db);
  const signatures = rows[0]?.consent?.signatures;
  return Array.isArray(signatures) && signatures.every((s) => typeof s === 'string') ? signatures : undefined;
}

/** Drops a consent that can no longer be used (its signatures no longer sign the HTLC's hashes), unless it was replaced meanwhile. */
export async function dropInstantRefundConsent(db: Db, orderId: string, signatures: readonly string[]): Promise<void> {
  await sql`
    update orders set instant_refund_consent = null
    where id = ${orderId} and instant_refund_consent = ${JSON.stringify({ signatures })}::jsonb
  `.execute(db);
}
