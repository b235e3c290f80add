import type { OrderStatus } from '../orders/status.ts';

/** Channel notified, with the newest event id, when order events are recorded. */
export const ORDER_EVENT_CHANNEL = 'order_event';

/** One recorded change of an order's status (a row of `order_events`). */
export interface OrderEvent {
  /** Decimal, increasing in recording order: what `Last-Event-ID` resumes from. */
  id: string;
  orderId: string;
  /** The app that created the order. */
  appId: string;
  /** The solver matched to the order. */
  solverId: string;
  status: OrderStatus;
  /** RFC 3339 UTC with microseconds. */
  createdAt: string;
  /** The order as the order read showed it when the event was recorded (JSON). */
  orderJson: string;
}

/**
 * The event as streams and webhooks send it: `{"id", "type": "order.status", "order_id", "status",
 * "created_at", "order"}`.
 */
export function eventJson(event: OrderEvent): string {
  return (
    `{"id":"${event.id}","type":"order.status","order_id":"${event.orderId}","status":"${event.status}",` +
    `"created_at":"${event.createdAt}","order":${event.orderJson}}`
  );
}
