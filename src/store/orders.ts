import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import type { SwapsTable } from './schema.ts';
import { prepared } from './prepared.ts';

/** Swap fields as stored; numbers that can exceed 2^53 stay decimal strings. */
export interface SwapRecord {
  swapId: string;
  chain: string;
  asset: string;
  initiator: string;
  redeemer: string;
  delegate: string;
  timelock: string;
  amount: string;
  filledAmount: string;
  assetPrice: number;
  secretHash: string;
  secret: string;
  instantRefundTx: string;
  initiateTxHash: string;
  redeemTxHash: string;
  refundTxHash: string;
  initiateBlockNumber: string;
  redeemBlockNumber: string;
  refundBlockNumber: string;
  requiredConfirmations: number;
  currentConfirmations: number;
  initiateTimestamp: string | null;
  redeemTimestamp: string | null;
  refundTimestamp: string | null;
  createdAt: string;
}

export interface AffiliateFeeRecord {
  address: string;
  fee: number;
  asset: string;
  amount: string;
}

export interface QuoteTerms {
  sourceAmount: string;
  destinationAmount: string;
  sourcePrice: number;
  destinationPrice: number;
  feeBips: number;
  fixedFee: string;
  estimatedTime: number;
}

export interface OrderRecord {
  id: string;
  appId: string;
  nonce: string;
  solverId: string;
  integrator: string;
  version: string;
  slippage: number;
  secretHash: string;
  /** Fingerprint of the create request (empty for orders written otherwise). */
  requestHash: string;
  deadline: string;
  createdAt: string;
  source: SwapRecord;
  destination: SwapRecord;
  affiliateFees: AffiliateFeeRecord[];
  quote: QuoteTerms;
  /** The client's relayed actions whose jobs failed for good (none once asked for again), oldest first. */
  failedActions?: FailedAction[];
}

/** A relayed action of the client (PATCH ?action=) whose job failed, with the chain's reason. */
export interface FailedAction {
  action: string;
  /** The job's last error: the revert decoded, or why it was not sent (safety rule 7: nothing secret). */
  reason: string;
  /** When it failed, PostgreSQL text in UTC. */
  failedAt: string;
}

export interface NewSwap {
  swapId: string;
  chain: string;
  asset: string;
  initiator: string;
  redeemer: string;
  delegate?: string;
  timelock: bigint;
  amount: bigint;
  assetPrice: number;
  requiredConfirmations: number;
}

export interface NewOrder {
  id: string;
  appId: string;
  nonce: string;
  solverId: string;
  integrator: string;
  version: string;
  slippage: number;
  secretHash: string;
  secretCiphertext?: Uint8Array | null;
  delegateKeyCiphertext?: Uint8Array | null;
  requestHash?: string;
  deadline: bigint;
  source: NewSwap;
  destination: NewSwap;
  affiliateFees: Array<{ address: string; fee: number; asset: string; amount: bigint }>;
  quote: { feeBips: number; fixedFee: string; estimatedTime: number };
}

export interface Reservation {
  solverId: string;
  asset: string;
  amount: bigint;
}

/** Writes an order with both swaps, its quote and its affiliate fees, atomically. */
export async function insertOrder(db: Db, order: NewOrder): Promise<void> {
  await writeOrder(db, order);
}

/**
 * Writes an order, its swaps, quote and fees in one call of the `create_order` function (migration
 * 0004): atomic, one round trip. With a reservation, the solver's liquidity is reserved too, and
 * nothing is written when there is not enough: the result says whether the order was written.
 */
export async function writeOrder(db: Db, order: NewOrder, reservation?: Reservation): Promise<boolean> {
  const hex = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('hex') : null);
  const swap = (side: 'source' | 'destination', s: NewSwap) => ({
    side,
    swap_id: s.swapId,
    chain: s.chain,
    asset: s.asset,
    initiator: s.initiator,
    redeemer: s.redeemer,
    delegate: s.delegate ?? '',
    timelock: s.timelock.toString(),
    amount: s.amount.toString(),
    asset_price: s.assetPrice,
    required_confirmations: s.requiredConfirmations,
  });
  const payload = {
    id: order.id,
    app_id: order.appId,
    nonce: order.nonce,
    solver_id: order.solverId,
    integrator: order.integrator,
    version: order.version,
    slippage: order.slippage,
    secret_hash: order.secretHash,
    secret_ciphertext: hex(order.secretCiphertext),
    delegate_key_ciphertext: hex(order.delegateKeyCiphertext),
    request_hash: order.requestHash ?? '',
    deadline: order.deadline.toString(),
    swaps: [swap('source', order.source), swap('destination', order.destination)],
    quote: {
      source_asset: order.source.asset,
      destination_asset: order.destination.asset,
      source_amount: order.source.amount.toString(),
      destination_amount: order.destination.amount.toString(),
      source_price: order.source.assetPrice,
      destination_price: order.destination.assetPrice,
      fee_bips: order.quote.feeBips,
      fixed_fee: order.quote.fixedFee,
      estimated_time: order.quote.estimatedTime,
    },
    fees: order.affiliateFees.map((f) => ({ address: f.address, fee: f.fee, asset: f.asset, amount: f.amount.toString() })),
  };
  const reserve = reservation
    ? JSON.stringify({ solver_id: reservation.solverId, asset: reservation.asset, amount: reservation.amount.toString() })
    : null;
  try {
    await sql`select create_order(${JSON.stringify(payload)}::jsonb, ${reserve}::jsonb)`.execute(db);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'HL001') return false;
    throw err;
  }
}

const SWAP_COLUMNS = [
  'swap_id',
  'chain',
  'asset',
  'initiator',
  'redeemer',
  'delegate',
  'timelock',
  'amount',
  'filled_amount',
  'asset_price',
  'secret',
  'instant_refund_tx',
  'initiate_tx_hash',
  'redeem_tx_hash',
  'refund_tx_hash',
  'initiate_block_number',
  'redeem_block_number',
  'refund_block_number',
  'required_confirmations',
  'current_confirmations',
  'initiate_timestamp',
  'redeem_timestamp',
  'refund_timestamp',
  'created_at',
] as const satisfies ReadonlyArray<keyof SwapsTable>;

const swapColumns = (alias: 's' | 'd') => sql.raw(SWAP_COLUMNS.map((c) => `${alias}.${c} as ${alias}_${c}`).join(', '));

type SwapRow = { [K in (typeof SWAP_COLUMNS)[number]]: SwapsTable[K] extends { __select__: infer S } ? S : never };

/**
 * Reads an order with both swaps, its quote terms and affiliate fees in one round trip (the order
 * read is the hottest query of the API).
 */
export async function findOrder(db: Db, id: string): Promise<OrderRecord | undefined> {
  // Its own statement, by equality: a plan made once for any id (see prepared.ts) still reads by key.
  return (await selectOrders(db, sql`orders o`, sql`where o.id = ${id}`))[0]?.order;
}

/** Reads orders as `findOrder` does, many in one round trip; unknown ids are left out. */
export async function findOrders(db: Db, ids: readonly string[]): Promise<OrderRecord[]> {
  if (ids.length === 0) return [];
  const rows = await selectOrders(db, sql`orders o`, sql`where o.id = any(${[...ids]}::text[])`);
  return rows.map(({ order }) => order);
}

/**
 * The orders of the rows of `select` (a statement with an `id` column per order), read as `findOrders`
 * does in the same statement, in the rows' `order by`; each with its row's other columns (`row`).
 */
export async function findOrdersOf<R extends { id: string }>(db: Db, select: RawBuilder<R>, orderBy: RawBuilder<unknown>): Promise<Array<{ order: OrderRecord; row: R }>> {
  return (await selectOrders(db, sql`(${select}) w join orders o on o.id = w.id`, orderBy, sql`, row_to_json(w) as w`)).map(({ order, extra }) => ({ order, row: extra as R }));
}

async function selectOrders(db: Db, from: RawBuilder<unknown>, rest: RawBuilder<unknown>, extra = sql``): Promise<Array<{ order: OrderRecord; extra: unknown }>> {
  const result = await sql<Record<string, unknown>>`${prepared}
    select o.id, o.app_id, o.nonce, o.solver_id, o.integrator, o.version, o.slippage, o.secret_hash,
      o.request_hash, o.deadline, o.created_at,
      q.source_amount, q.destination_amount, q.source_price, q.destination_price, q.fee_bips, q.fixed_fee,
      q.estimated_time,
      ${swapColumns('s')}, ${swapColumns('d')},
      (select coalesce(json_agg(json_build_object('address', f.address, 'fee', f.fee_bips, 'asset', f.asset,
          'amount', f.amount::text) order by f.position), '[]'::json)
        from affiliate_fees f where f.order_id = o.id) as affiliate_fees,
      (select coalesce(json_agg(json_build_object('action', j.action, 'reason', j.last_error, 'failedAt', j.updated_at::text) order by j.id), '[]'::json)
        from relayer_jobs j where j.order_id = o.id and j.status = 'failed'
          and j.action in ('initiate', 'redeem', 'refund', 'instant-refund')) as failed_actions ${extra}
    from ${from}
    join quotes q on q.order_id = o.id
    join swaps s on s.order_id = o.id and s.side = 'source'
    join swaps d on d.order_id = o.id and d.side = 'destination'
    ${rest}
  `.execute(db);
  return result.rows.map((row) => ({ order: orderOfRow(row), extra: row.w }));
}

function orderOfRow(row: Record<string, unknown>): OrderRecord {
  const swap = (alias: 's' | 'd'): SwapRecord => {
    const r = Object.fromEntries(SWAP_COLUMNS.map((c) => [c, row[`${alias}_${c}`]])) as SwapRow;
    return {
      swapId: r.swap_id,
      chain: r.chain,
      asset: r.asset,
      initiator: r.initiator,
      redeemer: r.redeemer,
      delegate: r.delegate,
      timelock: r.timelock,
      amount: r.amount,
      filledAmount: r.filled_amount,
      assetPrice: r.asset_price,
      secretHash: row.secret_hash as string,
      secret: r.secret,
      instantRefundTx: r.instant_refund_tx,
      initiateTxHash: r.initiate_tx_hash,
      redeemTxHash: r.redeem_tx_hash,
      refundTxHash: r.refund_tx_hash,
      initiateBlockNumber: r.initiate_block_number,
      redeemBlockNumber: r.redeem_block_number,
      refundBlockNumber: r.refund_block_number,
      requiredConfirmations: r.required_confirmations,
      currentConfirmations: r.current_confirmations,
      initiateTimestamp: r.initiate_timestamp,
      redeemTimestamp: r.redeem_timestamp,
      refundTimestamp: r.refund_timestamp,
      createdAt: r.created_at,
    };
  };
  const fees = row.affiliate_fees;
  return {
    id: row.id as string,
    appId: row.app_id as string,
    nonce: row.nonce as string,
    solverId: row.solver_id as string,
    integrator: row.integrator as string,
    version: row.version as string,
    slippage: row.slippage as number,
    secretHash: row.secret_hash as string,
    requestHash: row.request_hash as string,
    deadline: row.deadline as string,
    createdAt: row.created_at as string,
    source: swap('s'),
    destination: swap('d'),
    affiliateFees: (typeof fees === 'string' ? JSON.parse(fees) : fees) as AffiliateFeeRecord[],
    failedActions: (typeof row.failed_actions === 'string' ? JSON.parse(row.failed_actions) : row.failed_actions) as FailedAction[],
    quote: {
      sourceAmount: row.source_amount as string,
      destinationAmount: row.destination_amount as string,
      sourcePrice: row.source_price as number,
      destinationPrice: row.destination_price as number,
      feeBips: row.fee_bips as number,
      fixedFee: row.fixed_fee as string,
      estimatedTime: row.estimated_time as number,
    },
  };
}

/** The order an app made with a nonce, if any. */
export async function findOrderByNonce(db: Db, appId: string, nonce: string): Promise<OrderRecord | undefined> {
  const row = await db.selectFrom('orders').select('id').where('app_id', '=', appId).where('nonce', '=', nonce).executeTakeFirst();
  return row && findOrder(db, row.id);
}

/** The sealed per-order Bitcoin-family key the service holds for a client that gave no delegate key. */
export async function delegateKeyCiphertext(db: Db, orderId: string): Promise<Uint8Array | null> {
  const row = await db.selectFrom('orders').select('delegate_key_ciphertext').where('id', '=', orderId).executeTakeFirst();
  return row?.delegate_key_ciphertext ?? null;
}

/** The source's fully signed zero-fee instant refund (what Garden shows as `source_swap.instant_refund_tx`). */
export async function setInstantRefundTx(db: Db, orderId: string, rawTx: string): Promise<void> {
  await sql`update swaps set instant_refund_tx = ${rawTx} where order_id = ${orderId} and side = 'source'`.execute(db);
}
