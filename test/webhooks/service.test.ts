import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ServiceConfig } from '../../src/config/service-config.ts';
import { startService } from '../../src/service.ts';
import { createApp } from '../../src/store/apps.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { sampleOrder } from '../helpers/fixtures.ts';
import { chainlessServiceConfig } from '../helpers/service-config.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';

describeEachStore('webhooks in the service', (kind) => {
  let config: ServiceConfig;
  let drop: () => Promise<void>;
  let receiver: Receiver;
  let answer = false;
  before(async () => {
    ({ config, drop } = await chainlessServiceConfig(kind));
    receiver = await startReceiver((_req, res) => {
      if (answer) res.end('ok'); // until then, never answers
    });
  });
  after(async () => {
    await receiver.close();
    await drop();
  });

  test("startService turns an order's status change into a signed delivery; one cut short by a stop is delivered by the next start, once", async () => {
    const first = await startService(config);
    let secret: string;
    let orderId: string;
    try {
      const { app, key } = await createApp(first.store.db, { name: 'hooked' });
      const res = await fetch(`${first.url}/v2/webhooks`, {
        method: 'POST',
        headers: { 'service-app-id': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url }),
      });
      assert.equal(res.status, 201);
      secret = ((await res.json()) as { result: { secret: string } }).result.secret;
      // A new order: the recorder records its `created` event and the outbox delivery with it.
      const order = sampleOrder(app.id);
      orderId = order.id;
      await insertOrder(first.store.db, order);
      await waitFor(() => receiver.received.length === 1, 5_000, 'the first request');
    } finally {
      await first.stop();
    }
    answer = true;
    const second = await startService(config);
    let stopped = false;
    try {
      await waitFor(() => receiver.received.length === 2, 10_000, 'the delivery after the restart');
      const [, delivered] = receiver.received;
      const [event] = await second.store.db.selectFrom('order_events').select(['id', 'status']).where('order_id', '=', orderId).execute();
      assert.equal(event?.status, 'created');
      assert.equal(delivered!.headers['hashlock-event-id'], event.id);
      const body = JSON.parse(delivered!.body) as { id: string; type: string; order_id: string; status: string; order: { order_id: string } };
      assert.deepEqual([body.id, body.type, body.order_id, body.status, body.order.order_id], [event.id, 'order.status', orderId, 'created', orderId]);
      assert.equal(delivered!.headers['hashlock-delivery-attempt'], '1', 'the cut-short attempt did not count');
      assert.ok(verifyWebhookSignature(secret, delivered!.headers['hashlock-signature'] as string, delivered!.body));
      await waitFor(async () => (await second.store.db.selectFrom('webhook_deliveries').select('status').executeTakeFirstOrThrow()).status === 'delivered', 5_000, 'delivered');
      // The stop waits for every request in flight: any second send has reached the receiver by then.
      await second.stop();
      stopped = true;
      assert.equal(receiver.received.length, 2, 'delivered once');
    } finally {
      if (!stopped) await second.stop();
    }
  });
});
