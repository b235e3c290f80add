import type { OrderStatus } from '../orders/status.ts';
import type { OrderEventType } from '../store/schema.ts';

/** Channel notified, with the newest event id, when order events are recorded. */
export const ORDER_EVENT_CHANNEL = 'order_event';

/** One recorded change of an order: its status, or a relayed action of the client that failed (a row of `order_events`). */
export interface OrderEvent {
  /** Decimal, increasing in recording order: what `Last-Event-ID` resumes from. */
  id: string;
  /** `order.status`, or `order.action_failed` (the order's `failed_actions` names it; `status` is unchanged). */
  type: OrderEventType;
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
 * The event as streams and webhooks send it: `{"id", "type", "order_id", "status", "created_at",
 * "order"}`, `type` being `order.status` or `order.action_failed`.
 */
export function eventJson(event: OrderEvent): string {
  return (
    `{"id":"${event.id}","type":"${event.type}","order_id":"${event.orderId}","status":"${event.status}",` +
    `"created_at":"${event.createdAt}","order":${event.orderJson}}`
  );
}
