import { scriptKeysOf } from '../chains/adapters.ts';
import type { HtlcTerms } from '../chains/family.ts';
import type { Registry } from '../chains/registry.ts';
import type { OrderRecord } from '../store/orders.ts';

/**
 * The source HTLC's terms of a stored order, as its family builds transactions from them: on a
 * Bitcoin-family source the client's side is its script key (the delegate), elsewhere its address.
 */
export function sourceTerms(order: OrderRecord, registry: Registry): HtlcTerms | undefined {
  const asset = registry.asset(order.source.asset);
  if (!asset) return undefined;
  return {
    asset,
    initiator: scriptKeysOf(asset.chain) ? order.source.delegate : order.source.initiator,
    redeemer: order.source.redeemer,
    timelock: BigInt(order.source.timelock),
    amount: BigInt(order.source.amount),
    secretHash: order.secretHash,
  };
}
