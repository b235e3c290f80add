import { orderView } from './order-view.ts';
import { statusGroup } from './status-groups.ts';
import type { OrderStatus } from './status.ts';
import type { OrderRecord } from '../store/orders.ts';

/** The order statuses of Garden's v3 (`OrderStatus` of its openapi-v3.json). */
export const V3_ORDER_STATUSES = ['not_initiated', 'in_progress', 'completed', 'expired', 'refunded'] as const;

export type V3OrderStatus = (typeof V3_ORDER_STATUSES)[number];

/**
 * An order's v3 status: the group of its status (the groups of `GET /v2/orders`' filter) in v3's
 * spelling, so a v3 order is `completed` once the client is paid, as the v2 list's `completed` is.
 */
export function v3OrderStatus(status: OrderStatus): V3OrderStatus {
  return statusGroup(status).replace('-', '_') as V3OrderStatus;
}

/** `GET /v3/orders/{id}`: v3's Order (the v2 order read without `slippage`, with the v3 status). */
export function v3OrderView(order: OrderRecord, status: OrderStatus) {
  const { slippage: _slippage, ...view } = orderView(order, status);
  return { ...view, status: v3OrderStatus(status) };
}

/** Serialized v3 views per record, as order-json.ts keeps the v2 ones. */
const views = new WeakMap<OrderRecord, { status: OrderStatus; json: string }>();

export function v3OrderJson(order: OrderRecord, status: OrderStatus): string {
  let cached = views.get(order);
  if (cached?.status !== status) {
    cached = { status, json: JSON.stringify(v3OrderView(order, status)) };
    views.set(order, cached);
  }
  return cached.json;
}
