import { chainAdapter } from '../chains/adapters.ts';
import type { AggregatorStep } from '../chains/adapter.ts';
import type { ChainSigningOptions } from '../chains/chain-access.ts';
import type { Asset, Registry } from '../chains/registry.ts';
import { toUsd } from '../pricing/amounts.ts';
import type { AggregatorExtras } from '../store/aggregator.ts';
import { toRfc3339Micro } from '../store/database.ts';
import type { OrderRecord } from '../store/orders.ts';
import { holds, timelockRunOut, type OrderStatus, type StatusClock } from './status.ts';
import { sourceTerms } from './source-terms.ts';

/** The one provider of this service's Aggregator API: a registered solver's order is still Hashlock's. */
export const PROVIDER = 'hashlock';

/** The Aggregator API's id of an order: `ord_` and the order id, so one read finds both. */
export const aggregatorId = (orderId: string): string => `ord_${orderId}`;

/** The order id of an Aggregator id, or undefined when `id` is not one. */
export function orderIdOf(id: string): string | undefined {
  const match = /^ord_([0-9a-fA-F]{64})$/.exec(id);
  return match?.[1]?.toLowerCase();
}

export type AggregatorState = 'awaiting_user' | 'awaiting_provider' | 'completed' | 'refunded' | 'failed';

/** Unix seconds -> RFC 3339 UTC, in seconds. */
export const rfc3339 = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * What the user does next and the state it puts the order in. The client is paid once the destination
 * redeem is seen (the service redeems it with the secret it holds); funded once the source initiate is
 * seen. An unfunded order past its deadline failed without any funds moving. A funded source whose
 * timelock ran out is the user's to refund where the family lets it send the refund itself; otherwise
 * (a Bitcoin-family source whose key the service holds) the service refunds it.
 */
export function aggregatorState(order: OrderRecord, status: OrderStatus, now: StatusClock): { state: AggregatorState; next: 'fund' | 'refund' | 'none' } {
  if (order.source.refundTxHash !== '') return { state: 'refunded', next: 'none' };
  if (order.destination.redeemTxHash !== '') return { state: 'completed', next: 'none' };
  if (status === 'created') return { state: 'awaiting_user', next: 'fund' };
  if (status === 'expired') return { state: 'failed', next: 'none' };
  if (order.source.initiateTxHash !== '' && order.source.redeemTxHash === '' && holds(timelockRunOut('source'), order, now)) {
    return { state: 'awaiting_user', next: 'refund' };
  }
  return { state: 'awaiting_provider', next: 'none' };
}

/** The state once the steps are known: waiting on the user only while it has a step to take. */
export const stateWithSteps = (state: AggregatorState, steps: readonly AggregatorStep[]): AggregatorState =>
  state === 'awaiting_user' && steps.length === 0 ? 'awaiting_provider' : state;

/** The steps of `next` on the order's source, built by its family; none where the family has none. */
export async function aggregatorSteps(
  order: OrderRecord,
  registry: Registry,
  next: 'fund' | 'refund' | 'none',
  options: { gasless: boolean; signing?: ChainSigningOptions },
): Promise<AggregatorStep[]> {
  if (next === 'none') return [];
  const asset = registry.asset(order.source.asset);
  const family = asset && chainAdapter(asset.chain)?.aggregator;
  if (!asset || !family) return [];
  const amount = BigInt(order.source.amount);
  if (next === 'refund') return family.refundSteps?.(asset, order.source.swapId, amount) ?? [];
  const terms = sourceTerms(order, registry)!;
  const data = await chainAdapter(asset.chain)!.htlc.sourceSigningData(terms, { ...(await options.signing?.(asset)), gasless: options.gasless });
  return family.fundingSteps(asset, amount, data, options.gasless);
}

/** A fee of `amount` base units of `asset`, with its USD value when the asset is priced. */
function fee(type: string, asset: Asset | undefined, assetId: string, amount: bigint, usdPrice: number) {
  const usd = asset && usdPrice > 0 ? { amount_usd: toUsd(amount, asset.decimals, usdPrice) } : {};
  return { type, asset: assetId, amount: amount.toString(), ...usd };
}

/** The fees of an order: the solver's (bips of the source, and its fixed USD fee in the source asset) and the integrator's. */
export function aggregatorFees(order: OrderRecord, registry: Registry) {
  const source = registry.asset(order.source.asset);
  const price = order.quote.sourcePrice;
  const bips = (BigInt(order.source.amount) * BigInt(order.quote.feeBips)) / 10_000n;
  const fixedUsd = Number(order.quote.fixedFee);
  const fixed = source && price > 0 && fixedUsd > 0 ? BigInt(Math.floor((fixedUsd / price) * 10 ** source.decimals)) : 0n;
  return [
    fee('provider', source, order.source.asset, bips + fixed, price),
    ...order.affiliateFees.map((f) => fee('integrator', registry.asset(f.asset), f.asset, BigInt(f.amount), 0)),
  ];
}

function price(order: OrderRecord, registry: Registry) {
  const usd = (assetId: string, amount: string, unit: number) => {
    const asset = registry.asset(assetId);
    return asset ? toUsd(BigInt(amount), asset.decimals, unit) : '0.00';
  };
  return { sell_usd: usd(order.source.asset, order.source.amount, order.quote.sourcePrice), buy_usd: usd(order.destination.asset, order.destination.amount, order.quote.destinationPrice) };
}

/** What both an order and a quote show of the swap: assets and amounts (an HTLC pays exactly `buy_amount`). */
function terms(order: OrderRecord) {
  return {
    sell_asset: order.source.asset,
    sell_amount: order.source.amount,
    buy_asset: order.destination.asset,
    buy_amount: order.destination.amount,
    min_buy_amount: order.destination.amount,
  };
}

/** `POST /v3/quote`'s Quote of an order. */
export function aggregatorQuote(order: OrderRecord, registry: Registry, steps: AggregatorStep[], exactOut: boolean) {
  return {
    id: aggregatorId(order.id),
    provider: PROVIDER,
    created_at: toRfc3339Micro(order.createdAt),
    deposit_by: rfc3339(Number(order.deadline)),
    ...terms(order),
    ...(exactOut ? { max_sell_amount: order.source.amount } : {}),
    estimated_seconds: order.quote.estimatedTime,
    steps,
    fees: aggregatorFees(order, registry),
    price: price(order, registry),
  };
}

/**
 * `GET /v3/orders/{id}`'s Order. `updated_at` is the order's last recorded event or reported deposit
 * (its creation before either): what a long-poll waits to see move.
 */
export function aggregatorOrder(
  order: OrderRecord,
  registry: Registry,
  view: { state: AggregatorState; steps: AggregatorStep[]; extras: AggregatorExtras; nowUnix: number },
) {
  const { state, steps, extras } = view;
  const times = [order.createdAt, extras.lastEventAt, ...extras.deposits.map((d) => d.at)].filter((t): t is string => t !== null).map(toRfc3339Micro);
  const updatedAt = times.reduce((a, b) => (b > a ? b : a));
  const deposits = new Map<string, { tx_hash: string; amount?: string; at: string }>();
  for (const d of extras.deposits) deposits.set(d.txHash.toLowerCase(), { tx_hash: d.txHash, at: toRfc3339Micro(d.at) });
  const seen = order.source.initiateTxHash === '' ? [] : order.source.initiateTxHash.split(',');
  for (const hash of seen) {
    const reported = deposits.get(hash.toLowerCase());
    const amount = seen.length === 1 && order.source.filledAmount !== '0' ? { amount: order.source.filledAmount } : {};
    deposits.set(hash.toLowerCase(), { tx_hash: hash, ...amount, at: reported?.at ?? updatedAt });
  }
  const received =
    state === 'completed'
      ? { amount: order.destination.amount, tx: order.destination.redeemTxHash }
      : state === 'refunded'
        ? { amount: order.source.amount, tx: order.source.refundTxHash }
        : null;
  return {
    id: aggregatorId(order.id),
    provider: PROVIDER,
    state,
    created_at: toRfc3339Micro(order.createdAt),
    updated_at: updatedAt,
    ...terms(order),
    deposits: [...deposits.values()],
    received,
    estimated_seconds: order.quote.estimatedTime,
    steps,
    fees: aggregatorFees(order, registry),
    warnings: [],
    price: price(order, registry),
    ...(state === 'failed'
      ? { failure: { code: 'deposit_window_closed', message: 'Nothing was deposited before the deadline; no funds moved.', refund_failed: false } }
      : {}),
    last_verified_at: rfc3339(view.nowUnix),
  };
}
