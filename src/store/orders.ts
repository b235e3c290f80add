import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { SwapsTable } from './schema.ts';

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
  deadline: string;
  createdAt: string;
  source: SwapRecord;
  destination: SwapRecord;
  affiliateFees: AffiliateFeeRecord[];
  quote: QuoteTerms;
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

/** Writes an order with both swaps, its quote and its affiliate fees in one transaction. */
export async function insertOrder(db: Db, order: NewOrder): Promise<void> {
  await db.transaction().execute((tx) => writeOrder(tx, order));
}

/** The writes of `insertOrder`, inside a transaction the caller holds. */
export async function writeOrder(tx: Db, order: NewOrder): Promise<void> {
  await tx
    .insertInto('orders')
    .values({
      id: order.id,
      app_id: order.appId,
      nonce: order.nonce,
      solver_id: order.solverId,
      integrator: order.integrator,
      version: order.version,
      slippage: order.slippage,
      secret_hash: order.secretHash,
      secret_ciphertext: order.secretCiphertext ?? null,
      delegate_key_ciphertext: order.delegateKeyCiphertext ?? null,
      request_hash: order.requestHash ?? '',
      deadline: order.deadline,
    })
    .execute();
  const swapRow = (side: 'source' | 'destination', s: NewSwap) => ({
    order_id: order.id,
    side,
    swap_id: s.swapId,
    chain: s.chain,
    asset: s.asset,
    initiator: s.initiator,
    redeemer: s.redeemer,
    delegate: s.delegate ?? '',
    timelock: s.timelock,
    amount: s.amount,
    asset_price: s.assetPrice,
    secret_hash: order.secretHash,
    required_confirmations: s.requiredConfirmations,
  });
  await tx
    .insertInto('swaps')
    .values([swapRow('source', order.source), swapRow('destination', order.destination)])
    .execute();
  await tx
    .insertInto('quotes')
    .values({
      order_id: order.id,
      solver_id: order.solverId,
      source_asset: order.source.asset,
      destination_asset: order.destination.asset,
      source_amount: order.source.amount,
      destination_amount: order.destination.amount,
      source_price: order.source.assetPrice,
      destination_price: order.destination.assetPrice,
      fee_bips: order.quote.feeBips,
      fixed_fee: order.quote.fixedFee,
      slippage: order.slippage,
      estimated_time: order.quote.estimatedTime,
      deadline: order.deadline,
    })
    .execute();
  if (order.affiliateFees.length > 0) {
    await tx
      .insertInto('affiliate_fees')
      .values(
        order.affiliateFees.map((f, position) => ({
          order_id: order.id,
          position,
          address: f.address,
          fee_bips: f.fee,
          asset: f.asset,
          amount: f.amount,
        })),
      )
      .execute();
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
  const result = await sql<Record<string, unknown>>`
    select o.id, o.app_id, o.nonce, o.solver_id, o.integrator, o.version, o.slippage, o.secret_hash,
      o.deadline, o.created_at,
      q.source_amount, q.destination_amount, q.source_price, q.destination_price, q.fee_bips, q.fixed_fee,
      q.estimated_time,
      ${swapColumns('s')}, ${swapColumns('d')},
      (select coalesce(json_agg(json_build_object('address', f.address, 'fee', f.fee_bips, 'asset', f.asset,
          'amount', f.amount::text) order by f.position), '[]'::json)
        from affiliate_fees f where f.order_id = o.id) as affiliate_fees
    from orders o
    join quotes q on q.order_id = o.id
    join swaps s on s.order_id = o.id and s.side = 'source'
    join swaps d on d.order_id = o.id and d.side = 'destination'
    where o.id = ${id}
  `.execute(db);
  const row = result.rows[0];
  if (!row) return undefined;
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
    deadline: row.deadline as string,
    createdAt: row.created_at as string,
    source: swap('s'),
    destination: swap('d'),
    affiliateFees: (typeof fees === 'string' ? JSON.parse(fees) : fees) as AffiliateFeeRecord[],
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
