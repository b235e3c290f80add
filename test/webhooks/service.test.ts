import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEV_CONFIG_PATH, loadServiceConfig, type ServiceConfig } from '../../src/config/service-config.ts';
import { startService } from '../../src/service.ts';
import { createApp } from '../../src/store/apps.ts';
import type { StoreKind } from '../../src/store/database.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { LOCALNET_REGISTRY_PATH, sampleOrder } from '../helpers/fixtures.ts';
import { createDatabase, describeEachStore } from '../helpers/stores.ts';
import { startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';

/** The dev config without chains, on a fresh database of the kind (a data dir on disk for PGlite, so it outlives a restart). */
async function serviceConfig(kind: StoreKind): Promise<{ config: ServiceConfig; drop: () => Promise<void> }> {
  const dev = JSON.parse(readFileSync(DEV_CONFIG_PATH, 'utf8')) as Record<string, unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'hashlock-webhooks-service-'));
  const path = join(dir, 'hashlock.json');
  writeFileSync(path, JSON.stringify({ ...dev, registry: LOCALNET_REGISTRY_PATH, chains: {}, port: 0, data_dir: dir, log_level: 'silent' }));
  if (kind === 'pglite') return { config: loadServiceConfig(path, {}), drop: async () => undefined };
  const db = await createDatabase(process.env.DATABASE_URL!, 'hashlock_test');
  return { config: loadServiceConfig(path, { DATABASE_URL: db.url }), drop: db.drop };
}

describeEachStore('webhooks in the service', (kind) => {
  let config: ServiceConfig;
  let drop: () => Promise<void>;
  let receiver: Receiver;
  let answer = false;
  const savedKey = process.env.HASHLOCK_SECRET_KEY;
  before(async () => {
    // Every instance of a PostgreSQL deployment shares the key; on PGlite the data dir keeps one.
    if (kind === 'postgres') process.env.HASHLOCK_SECRET_KEY = randomBytes(32).toString('hex');
    ({ config, drop } = await serviceConfig(kind));
    receiver = await startReceiver((_req, res) => {
      if (answer) res.end('ok'); // until then, never answers
    });
  });
  after(async () => {
    await receiver.close();
    await drop();
    if (savedKey === undefined) delete process.env.HASHLOCK_SECRET_KEY;
    else process.env.HASHLOCK_SECRET_KEY = savedKey;
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
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(receiver.received.length, 2, 'delivered once');
    } finally {
      await second.stop();
    }
  });
});
