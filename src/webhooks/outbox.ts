import { eventJson, type OrderEvent } from '../events/order-event.ts';
import type { Db } from '../store/database.ts';
import { insertDeliveries } from '../store/webhooks.ts';

/**
 * Queues the webhook deliveries of newly recorded events: one per event and active endpoint of the
 * event's app subscribed to its status. Call it with the transaction that records the events, so the
 * outbox is exactly as durable as they are; it is one statement however many events, and notifies
 * the delivery workers at commit.
 */
export async function enqueueWebhookDeliveries(trx: Db, events: readonly OrderEvent[]): Promise<void> {
  await insertDeliveries(
    trx,
    events.map((event) => ({ eventId: event.id, appId: event.appId, status: event.status, body: eventJson(event) })),
  );
}
