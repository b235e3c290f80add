import { sql } from 'kysely';
import type { Db } from '../../../store/database.ts';

/**
 * Bitcoin-family spends an instance holding no key asks the worker instances to sign (table
 * `bitcoin_spend_requests`, migration 0023), one per order and action, keyed like the action's job.
 * The body is sealed to the workers' key: it may hold the secret.
 */

export type SpendRequestStatus = 'pending' | 'done' | 'refused';

export interface SpendRequest {
  idempotencyKey: string;
  orderId: string;
  action: string;
  sealedBody: Uint8Array;
}

export interface SpendRequestState {
  status: SpendRequestStatus;
  errorCode: string;
  errorMessage: string;
}

/** What wakes the workers of `chain` that sign requests (the `job_queued` channel: no job's signer has this name). */
export const spendRequestsWake = (chain: string): string => `${chain}:spend-requests`;

/**
 * Writes the request, or asks again one a worker settled (a refusal may no longer hold); a pending
 * one is left as it is, and a worker may be at it. Then wakes the workers of `chain`.
 */
export async function requestSpend(db: Db, chain: string, request: SpendRequest, at: Date): Promise<void> {
  await sql`
    insert into bitcoin_spend_requests (idempotency_key, order_id, action, sealed_body, created_at, updated_at)
    values (${request.idempotencyKey}, ${request.orderId}, ${request.action}, ${request.sealedBody}, ${at}, ${at})
    on conflict (idempotency_key) do update
      set sealed_body = excluded.sealed_body, status = 'pending', error_code = '', error_message = '', updated_at = excluded.updated_at
      where bitcoin_spend_requests.status <> 'pending'
  `.execute(db);
  await sql`select pg_notify('job_queued', ${spendRequestsWake(chain)})`.execute(db);
}

export async function spendRequestState(db: Db, idempotencyKey: string): Promise<SpendRequestState | undefined> {
  const row = await db
    .selectFrom('bitcoin_spend_requests')
    .select(['status', 'error_code', 'error_message'])
    .where('idempotency_key', '=', idempotencyKey)
    .executeTakeFirst();
  return row && { status: row.status, errorCode: row.error_code, errorMessage: row.error_message };
}

/** The oldest pending requests acting on `chain` (a redeem on the destination's, the others on the source's). */
export async function pendingSpendRequests(db: Db, chain: string, limit: number): Promise<SpendRequest[]> {
  const { rows } = await sql<{ idempotency_key: string; order_id: string; action: string; sealed_body: Uint8Array }>`
    select r.idempotency_key, r.order_id, r.action, r.sealed_body
    from bitcoin_spend_requests r
    join swaps s on s.order_id = r.order_id and s.side = case when r.action = 'redeem' then 'destination' else 'source' end
    where r.status = 'pending' and s.chain = ${chain}
    order by r.created_at
    limit ${limit}
  `.execute(db);
  return rows.map((r) => ({ idempotencyKey: r.idempotency_key, orderId: r.order_id, action: r.action, sealedBody: r.sealed_body }));
}

/** Settles a pending request: its job is written (`done`), or why not (`refused`). */
export async function settleSpendRequest(
  db: Db,
  idempotencyKey: string,
  outcome: { status: 'done' } | { status: 'refused'; code: string; message: string },
  at: Date,
): Promise<void> {
  await db
    .updateTable('bitcoin_spend_requests')
    .set({
      status: outcome.status,
      error_code: outcome.status === 'refused' ? outcome.code : '',
      error_message: outcome.status === 'refused' ? outcome.message : '',
      updated_at: at,
    })
    .where('idempotency_key', '=', idempotencyKey)
    .where('status', '=', 'pending')
    .execute();
}
