import { orderView } from './order-view.ts';
import type { OrderStatus } from './status.ts';
import type { OrderRecord } from '../store/orders.ts';

/**
 * Serialized order views per record. Cached records are immutable (a change brings a new record),
 * so a record's JSON is built once per status, which alone moves with time and chain heights.
 */
const views = new WeakMap<OrderRecord, { status: OrderStatus; json: string }>();

export function orderJson(order: OrderRecord, status: OrderStatus): string {
  let cached = views.get(order);
  if (cached?.status !== status) {
    cached = { status, json: JSON.stringify(orderView(order, status)) };
    views.set(order, cached);
  }
  return cached.json;
}
