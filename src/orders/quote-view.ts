import type { Address } from 'viem';
import { approvalTransaction, initiateTransaction } from '../chains/evm/htlc-calls.ts';
import { evmChainId } from '../chains/evm/index.ts';
import type { Asset, Registry } from '../chains/registry.ts';
import { toDisplay, toUsd } from '../pricing/amounts.ts';
import type { OrderRecord, SwapRecord } from '../store/orders.ts';

export type QuoteStatus = 'open' | 'accepted' | 'fulfilled' | 'expired' | 'refunded';

/**
 * The firm quote's status: `refunded` once the source is refunded, `fulfilled` once the client is
 * paid on the destination, `accepted` once the source is initiated, `expired` when the deadline
 * passed without initiation, else `open`.
 */
export function quoteStatus(
  order: Pick<OrderRecord, 'deadline'> & { source: Pick<SwapRecord, 'initiateTxHash' | 'refundTxHash'> } & {
    destination: Pick<SwapRecord, 'redeemTxHash'>;
  },
  nowUnix: number,
): QuoteStatus {
  if (order.source.refundTxHash !== '') return 'refunded';
  if (order.destination.redeemTxHash !== '') return 'fulfilled';
  if (order.source.initiateTxHash !== '') return 'accepted';
  if (nowUnix > Number(order.deadline)) return 'expired';
  return 'open';
}

export function amountView(asset: Asset | undefined, assetId: string, amount: string, usdPrice: number) {
  const decimals = asset?.decimals ?? 0;
  return {
    asset: assetId,
    amount,
    display: toDisplay(BigInt(amount), decimals),
    value: toUsd(BigInt(amount), decimals, usdPrice),
  };
}

/** What the client broadcasts itself to initiate the source, per source family (null where none). */
export function initiateView(asset: Asset | undefined, order: OrderRecord) {
  if (!asset) return null;
  const chain = asset.chain;
  const source = order.source;
  if (chain.family === 'evm') {
    const chainId = Number(evmChainId(chain));
    const native = asset.token.schema === 'evm:native';
    const htlc = asset.htlc.address as Address;
    return {
      type: 'evm' as const,
      chain_id: chainId,
      approval_transaction: native
        ? null
        : approvalTransaction({ chainId, token: asset.token.address as Address, htlc, amount: BigInt(source.amount) }),
      initiate_transaction: initiateTransaction({
        chainId,
        htlc,
        native,
        redeemer: source.redeemer as Address,
        timelock: BigInt(source.timelock),
        amount: BigInt(source.amount),
        secretHash: `0x${order.secretHash}`,
      }),
      core_to_evm_transfer: null,
    };
  }
  if (chain.family === 'bitcoin') return { type: 'bitcoin' as const, to: source.swapId, amount: source.amount };
  return null;
}

/** `GET /v3/quote/{id}`: the order's firm quote. */
export function quoteView(order: OrderRecord, registry: Registry, nowUnix: number) {
  const sourceAsset = registry.asset(order.source.asset);
  const destinationAsset = registry.asset(order.destination.asset);
  return {
    id: order.id,
    solver_id: order.solverId,
    secret_hash: order.secretHash,
    source_swap_id: order.source.swapId,
    destination_swap_id: order.destination.swapId,
    source: amountView(sourceAsset, order.source.asset, order.quote.sourceAmount, order.quote.sourcePrice),
    destination: amountView(
      destinationAsset,
      order.destination.asset,
      order.quote.destinationAmount,
      order.quote.destinationPrice,
    ),
    fee: order.quote.feeBips,
    fixed_fee: order.quote.fixedFee,
    slippage: order.slippage,
    estimated_time: order.quote.estimatedTime,
    deadline: Number(order.deadline),
    initiate: initiateView(sourceAsset, order),
    status: quoteStatus(order, nowUnix),
  };
}
