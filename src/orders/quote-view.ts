import type { ChainSigningOptions } from '../chains/chain-access.ts';
import { chainAdapter } from '../chains/adapters.ts';
import type { Asset, Registry } from '../chains/registry.ts';
import { toDisplay, toUsd } from '../pricing/amounts.ts';
import type { OrderRecord, SwapRecord } from '../store/orders.ts';
import { sourceTerms } from './source-terms.ts';

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

/**
 * What the client broadcasts itself to initiate the source, in its family's shape (DESIGN.md
 * section 2), built by the family's own signing code. Null where none can be built now (Solana
 * without an RPC for a blockhash, families without HTLC code).
 */
export async function quoteInitiate(order: OrderRecord, registry: Registry, signing?: ChainSigningOptions) {
  const terms = sourceTerms(order, registry);
  const adapter = terms && chainAdapter(terms.asset.chain);
  if (!terms || !adapter) return null;
  let data: Record<string, unknown>;
  try {
    data = await adapter.htlc.sourceSigningData(terms, { ...(await signing?.(terms.asset)), gasless: false });
  } catch {
    return null;
  }
  return adapter.quoteInitiate(terms.asset.chain, data);
}

/** `GET /v3/quote/{id}`: the order's firm quote. */
export function quoteView(order: OrderRecord, registry: Registry, nowUnix: number, initiate: unknown) {
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
    initiate,
    status: quoteStatus(order, nowUnix),
  };
}
