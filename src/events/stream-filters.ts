import DataLoader from 'dataloader';
import type { Db } from '../store/database.ts';
import { orderMatchesFilters, type OrderFilter } from '../store/order-list.ts';

interface FilterCheck {
  orderId: string;
  /** Equal filters have equal keys (the JSON of the filter), so each is asked once per batch. */
  key: string;
  filter: OrderFilter;
}

/**
 * Answers "does this order match this stream's filter?" for the filtered `/v2/events` streams. The
 * hub hands an event to every stream in one turn of the event loop, so their questions arrive
 * together: DataLoader collects them, and one statement per order answers them all, instead of one
 * per stream. Nothing is cached: the next event asks again, against the order as it is then.
 */
export class StreamFilters {
  private readonly loader: DataLoader<FilterCheck, boolean, FilterCheck>;

  constructor(db: Db) {
    this.loader = new DataLoader(async (checks) => answer(db, checks), { cache: false });
  }

  /** A stream's question, its filter's key made once when the stream opens, not at every event. */
  matcher(filter: OrderFilter): (orderId: string) => Promise<boolean> {
    const key = JSON.stringify(filter);
    return (orderId) => this.loader.load({ orderId, key, filter });
  }
}

async function answer(db: Db, checks: readonly FilterCheck[]): Promise<boolean[]> {
  const byOrder = new Map<string, Map<string, OrderFilter>>();
  for (const c of checks) {
    let filters = byOrder.get(c.orderId);
    if (!filters) byOrder.set(c.orderId, (filters = new Map<string, OrderFilter>()));
    filters.set(c.key, c.filter);
  }
  const answers = new Map<string, boolean>();
  await Promise.all(
    [...byOrder].map(async ([orderId, filters]) => {
      const keys = [...filters.keys()];
      const matched = await orderMatchesFilters(db, orderId, [...filters.values()]);
      keys.forEach((key, i) => answers.set(`${orderId}\n${key}`, matched[i]!));
    }),
  );
  return checks.map((c) => answers.get(`${c.orderId}\n${c.key}`)!);
}
