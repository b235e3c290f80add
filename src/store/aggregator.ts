import { sql } from 'kysely';
import type { Db } from './database.ts';

/** An `Idempotency-Key` of the Aggregator API's `POST /v3/quote`, with what its first request asked and made. */
export interface AggregatorQuoteRow {
  requestHash: string;
  orderId: string;
}

export async function findAggregatorQuote(db: Db, appId: string, key: string): Promise<AggregatorQuoteRow | undefined> {
  const row = await db
    .selectFrom('aggregator_quotes')
    .select(['request_hash', 'order_id'])
    .where('app_id', '=', appId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row && { requestHash: row.request_hash, orderId: row.order_id };
}

/** Records the key's order; when another request recorded the key first, that one stays and is returned. */
export async function recordAggregatorQuote(db: Db, appId: string, key: string, row: AggregatorQuoteRow): Promise<AggregatorQuoteRow> {
  await db
    .insertInto('aggregator_quotes')
    .values({ app_id: appId, idempotency_key: key, request_hash: row.requestHash, order_id: row.orderId })
    .onConflict((c) => c.doNothing())
    .execute();
  return (await findAggregatorQuote(db, appId, key)) ?? row;
}

/** A page position: the last order of the previous page. */
export interface PagePosition {
  createdAt: string;
  orderId: string;
}

/**
 * An app's Aggregator orders, newest first, after `after`; with `txHash`, only those whose source that
 * transaction funded (the watcher's record, or a submitted one), compared in any case.
 */
export async function aggregatorOrderPage(
  db: Db,
  q: { appId: string; limit: number; after?: PagePosition; txHash?: string },
): Promise<Array<{ orderId: string; createdAt: string }>> {
  const after = q.after ? sql`and (q.created_at, q.order_id) < (${q.after.createdAt}::timestamptz, ${q.after.orderId})` : sql``;
  const funded = q.txHash
    ? sql`and (exists (select 1 from aggregator_deposits d where d.order_id = q.order_id and lower(d.tx_hash) = ${q.txHash.toLowerCase()})
        or exists (select 1 from swaps s where s.order_id = q.order_id and s.side = 'source'
          and ${q.txHash.toLowerCase()} = any(select lower(h) from unnest(s.initiate_tx_hashes) h)))`
    : sql``;
  const { rows } = await sql<{ order_id: string; created_at: string }>`
    select q.order_id, q.created_at::text as created_at from aggregator_quotes q
    where q.app_id = ${q.appId} ${after} ${funded}
    order by q.created_at desc, q.order_id desc limit ${q.limit}`.execute(db);
  return rows.map((r) => ({ orderId: r.order_id, createdAt: r.created_at }));
}

/** Records a funding transaction a client reported; false when it was reported before. */
export async function recordDeposit(db: Db, orderId: string, txHash: string): Promise<boolean> {
  const result = await db.insertInto('aggregator_deposits').values({ order_id: orderId, tx_hash: txHash }).onConflict((c) => c.doNothing()).executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** What an Aggregator order shows besides the order: its reported deposits and when its last event was recorded. */
export interface AggregatorExtras {
  deposits: Array<{ txHash: string; at: string }>;
  /** PostgreSQL text, or null before the order's first event. */
  lastEventAt: string | null;
  /** The client's initiate is with the relayer (a submitted signature), not failed. */
  initiateQueued: boolean;
}

export async function aggregatorExtras(db: Db, orderId: string): Promise<AggregatorExtras> {
  const { rows } = await sql<{ last_event_at: string | null; deposits: Array<{ tx_hash: string; at: string }>; initiate_queued: boolean }>`
    select (select max(e.created_at)::text from order_events e where e.order_id = ${orderId}) as last_event_at,
      exists (select 1 from relayer_jobs j where j.order_id = ${orderId} and j.action = 'initiate' and j.status <> 'failed') as initiate_queued,
      coalesce((select json_agg(json_build_object('tx_hash', d.tx_hash, 'at', d.at::text) order by d.at)
        from aggregator_deposits d where d.order_id = ${orderId}), '[]'::json) as deposits`.execute(db);
  const row = rows[0]!;
  return { lastEventAt: row.last_event_at, initiateQueued: row.initiate_queued, deposits: row.deposits.map((d) => ({ txHash: d.tx_hash, at: d.at })) };
}
