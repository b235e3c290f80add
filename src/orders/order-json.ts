import { orderView } from './order-view.ts';
import { orderStatus, type OrderStatus, type StatusClock } from './status.ts';
import type { OrderRecord } from '../store/orders.ts';

/**
 * Serialized order views per record. Cached records are immutable (a change brings a new record),
 * so a record's JSON is built once per status, which alone moves with time and chain heights.
 */
const views = new WeakMap<OrderRecord, { status: OrderStatus; json: string; response?: string }>();

function view(order: OrderRecord, status: OrderStatus): { status: OrderStatus; json: string; response?: string } {
  let cached = views.get(order);
  if (cached?.status !== status) {
    cached = { status, json: JSON.stringify(orderView(order, status)) };
    views.set(order, cached);
  }
  return cached;
}

export function orderJson(order: OrderRecord, status: OrderStatus): string {
  return view(order, status).json;
}

/** The order read's whole body, `{"status":"Ok","result":<order>}`, built once per record and status. */
export function orderResponseJson(order: OrderRecord, status: OrderStatus): string {
  const cached = view(order, status);
  cached.response ??= `{"status":"Ok","result":${cached.json}}`;
  return cached.response;
}

/**
 * Statuses per record and status clock: a clock is the same while its second and its heights (one
 * map per read of `chain_heights`, never changed after) are, so a polled order's status is derived
 * once per second or height change, not per read.
 */
const statuses = new WeakMap<OrderRecord, { unixSeconds: number; heights: StatusClock['heights']; status: OrderStatus }>();

export function memoOrderStatus(order: OrderRecord, clock: StatusClock): OrderStatus {
  const hit = statuses.get(order);
  if (hit && hit.unixSeconds === clock.unixSeconds && hit.heights === clock.heights) return hit.status;
  const status = orderStatus(order, clock);
  statuses.set(order, { unixSeconds: clock.unixSeconds, heights: clock.heights, status });
  return status;
}
