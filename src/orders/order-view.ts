import { toRfc3339Micro, toRfc3339Seconds } from '../store/database.ts';
import type { OrderRecord, SwapRecord } from '../store/orders.ts';
import type { OrderStatus } from './status.ts';

/** The order as `GET /v2/orders/{order}` shows it (spec "Order", plus `slippage` and `status`). */
export function orderView(order: OrderRecord, status: OrderStatus) {
  return {
    order_id: order.id,
    created_at: toRfc3339Micro(order.createdAt),
    source_swap: swapView(order.source),
    destination_swap: swapView(order.destination),
    nonce: order.nonce,
    deadline: Number(order.deadline),
    affiliate_fees: order.affiliateFees.map((f) => ({ address: f.address, asset: f.asset, fee: f.fee })),
    integrator: order.integrator,
    version: order.version,
    solver_id: order.solverId,
    slippage: order.slippage,
    status,
    failed_actions: (order.failedActions ?? []).map((f) => ({ action: f.action, reason: f.reason, failed_at: toRfc3339Micro(f.failedAt) })),
  };
}

export type OrderView = ReturnType<typeof orderView>;

const timestamp = (pgText: string | null): string | null => (pgText === null ? null : toRfc3339Seconds(pgText));

export function swapView(s: SwapRecord) {
  return {
    created_at: toRfc3339Micro(s.createdAt),
    swap_id: s.swapId,
    chain: s.chain,
    asset: s.asset,
    initiator: s.initiator,
    redeemer: s.redeemer,
    delegate: s.delegate,
    timelock: Number(s.timelock),
    filled_amount: s.filledAmount,
    asset_price: s.assetPrice,
    amount: s.amount,
    secret_hash: s.secretHash,
    secret: s.secret,
    instant_refund_tx: s.instantRefundTx,
    initiate_tx_hash: s.initiateTxHash,
    redeem_tx_hash: s.redeemTxHash,
    refund_tx_hash: s.refundTxHash,
    initiate_block_number: s.initiateBlockNumber,
    redeem_block_number: s.redeemBlockNumber,
    refund_block_number: s.refundBlockNumber,
    required_confirmations: s.requiredConfirmations,
    current_confirmations: s.currentConfirmations,
    initiate_timestamp: timestamp(s.initiateTimestamp),
    redeem_timestamp: timestamp(s.redeemTimestamp),
    refund_timestamp: timestamp(s.refundTimestamp),
  };
}
