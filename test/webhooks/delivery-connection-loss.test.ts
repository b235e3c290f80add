// The database out of reach at the moment a webhook's outcome is written: the worker writes it again
// once the database answers, so the receiver gets the delivery once, not again when its lease runs out.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { createApp } from '../../src/store/apps.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { listDeliveries } from '../../src/store/webhooks.ts';
import { WebhookDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { registerEndpoint } from '../../src/webhooks/endpoints.ts';
import { enqueueWebhookDeliveries } from '../../src/webhooks/outbox.ts';
import { seedBasics } from '../helpers/fixtures.ts';
import { openTestStore } from '../helpers/stores.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { recordEvent, startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';

const skip = process.env.DATABASE_URL ? false : process.env.CI ? false : 'DATABASE_URL is not set';
if (skip) console.warn(`\n*** SKIPPING the webhook connection-loss test: ${skip} ***\n`);

let direct: Store & { url?: string };
let proxy: TcpProxy;
let proxied: Store;
let receiver: Receiver | undefined;

before(async () => {
  if (skip) return;
  direct = await openTestStore('postgres');
  await seedBasics(direct.db);
  const url = new URL(direct.url!);
  proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  proxied = await openStore({ databaseUrl: proxy.through(direct.url!) });
});

after(async () => {
  if (skip) return;
  await receiver?.close();
  await proxied.close();
  await proxy.close();
  await direct.close();
});

test('a delivery whose outcome meets the database cut off is recorded once it is back, and sent once', { skip }, async () => {
  const secrets = new SecretBox(randomBytes(32));
  // The receiver answers 200, but first the database goes away for 0.8 s, so the worker's write of
  // the outcome fails; the delivery's lease (2.5 s) outlasts the outage.
  receiver = await startReceiver((_request, response) => {
    proxy.cut();
    setTimeout(() => proxy.restore(), 800);
    response.end('ok');
  });
  const { app } = await createApp(direct.db, { name: 'hooked app' });
  const { endpoint } = await registerEndpoint(direct.db, secrets, { appId: app.id, url: receiver.url, statuses: [], allowPrivateAddresses: true });
  const worker = new WebhookDeliveryWorker({ db: proxied.db, secrets, worker: 'w-loss', pollMs: 25, timeoutMs: 1_000, leaseMarginMs: 1_500, allowPrivateAddresses: true });
  try {
    const event = await recordEvent(direct.db, app.id, 'initiated');
    await direct.db.transaction().execute((trx) => enqueueWebhookDeliveries(trx, [event]));
    const log = async () => (await listDeliveries(direct.db, endpoint.id, { page: 1, perPage: 10 })).deliveries;
    await waitFor(async () => (await log())[0]?.status === 'delivered', 10_000, 'the delivery recorded as delivered');
    // A delivered one is never claimed again, and the stop waits for any request still in flight: a
    // delivery whose outcome was lost and claimed again before it was recorded has been sent twice by now.
    await worker.stop();
    assert.equal(receiver.received.length, 1, 'sent once');
    const [entry] = await log();
    assert.equal(entry!.attempts, 1);
    assert.deepEqual(entry!.attemptLog.map((a) => [a.attempt, a.statusCode]), [[1, 200]]);
  } finally {
    await worker.stop();
  }
});
