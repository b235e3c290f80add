// The affiliate history of an app (`GET /v2|v3/affiliates/history`): a credit per affiliate fee its
// orders accrued, and a debit per claim the claim contract paid to an affiliate it has earnings for.
// A claim pays an affiliate everything it earned in the token through every app (the contract keeps
// one `claimed` per affiliate and token), so the same debit shows in the history of each app whose
// orders paid that affiliate in that asset.
import type { Registry } from '../chains/registry.ts';
import { toDisplay, toUsd } from '../pricing/amounts.ts';
import type { PriceSource } from '../pricing/price-source.ts';
import { affiliateHistoryPage, listEarnings, type HistoryDebit } from '../store/affiliates.ts';
import type { Db } from '../store/database.ts';
import type { ClaimSigner } from './claims.ts';

/** More than a block's logs: orders a chain's claims by block, then log. */
const LOGS_PER_BLOCK = 1_000_000n;

export interface AffiliateHistoryDeps {
  db: Db;
  registry: Registry;
  prices: PriceSource;
  /** Where claims are read from; without it there are no debits. */
  claims?: ClaimSigner;
}

export interface AffiliateHistoryItem {
  asset: string;
  affiliate: string;
  /** Base units of `asset`. */
  amount: string;
  amount_usd: string;
  type: 'credit' | 'debit';
  /** The order for a credit, the claim transaction for a debit. */
  id: string;
  /** RFC 3339 in seconds: the fee's accrual, or the claim's block. */
  timestamp: string;
}

export interface AffiliateHistory {
  data: AffiliateHistoryItem[];
  /** USD, at current prices, of every credit (all pages). */
  total_earned: string;
  /** USD, at current prices, of every debit (all pages). */
  total_claimed: string;
  page: number;
  total_pages: number;
  total_items: number;
  per_page: number;
}

/** One page (from 1) of the app's history, newest first. */
export async function affiliateHistory(deps: AffiliateHistoryDeps, appId: string, page: number, perPage: number): Promise<AffiliateHistory> {
  const { db, registry, prices, claims } = deps;
  const earnings = await listEarnings(db, appId);
  const debits: HistoryDebit[] = (
    await Promise.all(
      earnings.map(async ({ affiliate, asset }) =>
        (await (claims?.claimsPaid(affiliate, asset) ?? Promise.resolve([]))).map(
          (c): HistoryDebit => ({ affiliate, asset, id: c.txHash, seq: c.blockNumber * LOGS_PER_BLOCK + BigInt(c.logIndex), amount: c.amount, timestamp: c.timestamp }),
        ),
      ),
    )
  ).flat();
  const history = await affiliateHistoryPage(db, appId, debits, page, perPage);

  const usd = (assetId: string, amount: bigint): string => {
    const asset = registry.asset(assetId);
    return asset ? toUsd(amount, asset.decimals, prices.usdPrice(asset.priceId) ?? 0) : '0.00';
  };
  /** Each asset's sum valued once, then the cents added: a total is not the sum of rounded entries. */
  const totalUsd = (byAsset: Map<string, bigint>): string =>
    toDisplay([...byAsset].reduce((cents, [asset, amount]) => cents + BigInt(usd(asset, amount).replace('.', '')), 0n), 2);
  const claimedByAsset = new Map<string, bigint>();
  for (const d of debits) claimedByAsset.set(d.asset, (claimedByAsset.get(d.asset) ?? 0n) + d.amount);

  return {
    data: history.entries.map((e) => ({
      asset: e.asset,
      affiliate: e.affiliate,
      amount: e.amount.toString(),
      amount_usd: usd(e.asset, e.amount),
      type: e.type,
      id: e.id,
      timestamp: e.timestamp,
    })),
    total_earned: totalUsd(history.creditsByAsset),
    total_claimed: totalUsd(claimedByAsset),
    page,
    total_pages: Math.ceil(history.totalItems / perPage),
    total_items: history.totalItems,
    per_page: perPage,
  };
}
