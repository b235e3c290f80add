import { partyMatchKeys, txHashMatchKeys } from '../chains/adapters.ts';
import type { OrderCache } from '../orders/order-cache.ts';
import type { Registry } from '../chains/registry.ts';
import type { Db } from '../store/database.ts';
import { listOrderIds } from '../store/order-list.ts';

/** What a search matched: the recent orders (no search), one order by id, a transaction hash, a party, or nothing. */
export type SearchMatch = 'recent' | 'order' | 'tx_hash' | 'address' | 'none';

export interface SearchResult {
  match: SearchMatch;
  /** This page's order ids, newest first. */
  ids: string[];
  total: number;
}

const ORDER_ID = /^(?:0x)?([0-9a-fA-F]{64})$/;

/**
 * Every app's orders matching `q`, newest first. An order id matches exactly; otherwise the value is
 * tried as a transaction hash, then as an address (a party of either swap), each compared as its
 * chain compares them (`txHashMatchKeys`, `partyMatchKeys`): the first that finds orders answers.
 * A 64-hex value can be an order id, a txid and a Bitcoin script key at once, hence the order.
 */
export async function searchOrders(
  deps: { db: Db; registry: Registry; orders: OrderCache },
  q: string | undefined,
  page: { page: number; perPage: number; nowUnix: number },
): Promise<SearchResult> {
  if (q === undefined) return { match: 'recent', ...(await listOrderIds(deps.db, page)) };
  const id = ORDER_ID.exec(q)?.[1]?.toLowerCase();
  if (id !== undefined && (await deps.orders.get(id))) return { match: 'order', ids: page.page === 1 ? [id] : [], total: 1 };
  const hashes = txHashMatchKeys(deps.registry.chains, q);
  if (hashes.length > 0) {
    const found = await listOrderIds(deps.db, { ...page, txHash: hashes });
    if (found.total > 0) return { match: 'tx_hash', ...found };
  }
  const parties = partyMatchKeys(deps.registry.chains, q);
  if (parties.length > 0) {
    const found = await listOrderIds(deps.db, { ...page, address: parties });
    if (found.total > 0) return { match: 'address', ...found };
  }
  return { match: 'none', ids: [], total: 0 };
}
