import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eventJson } from '../../src/events/order-event.ts';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { createApp } from '../../src/store/apps.ts';
import type { Store } from '../../src/store/database.ts';
import { listDeliveries, WEBHOOK_QUEUED_CHANNEL } from '../../src/store/webhooks.ts';
import { registerEndpoint } from '../../src/webhooks/endpoints.ts';
import { enqueueWebhookDeliveries } from '../../src/webhooks/outbox.ts';
import { seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore, StatementCounter } from '../helpers/stores.ts';
import { recordEvent } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';

describeEachStore('webhook outbox', (kind) => {
  let store: Store;
  let appId: string;
  let otherAppId: string;
  const secrets = new SecretBox(randomBytes(32));
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
    otherAppId = (await createApp(store.db, { name: 'other app' })).app.id;
  });
  after(() => store.close());

  test('one delivery per event and active endpoint of its app subscribed to its status, in one statement, notified at commit', async () => {
    const all = (await registerEndpoint(store.db, secrets, { appId, url: 'https://example.com/all', statuses: [], allowPrivateAddresses: false })).endpoint;
    const redeemed = (await registerEndpoint(store.db, secrets, { appId, url: 'https://example.com/r', statuses: ['redeemed', 'refunded'], allowPrivateAddresses: false })).endpoint;
    const disabled = (await registerEndpoint(store.db, secrets, { appId, url: 'https://example.com/off', statuses: [], allowPrivateAddresses: false })).endpoint;
    await store.db.updateTable('webhook_endpoints').set({ disabled_at: new Date(), disabled_reason: 'test' }).where('id', '=', disabled.id).execute();
    const others = (await registerEndpoint(store.db, secrets, { appId: otherAppId, url: 'https://example.com/other', statuses: [], allowPrivateAddresses: false })).endpoint;

    const heard: string[] = [];
    const unlisten = await store.listen(WEBHOOK_QUEUED_CHANNEL, { message: (p) => heard.push(p), connected: () => undefined });
    try {
      const events = [await recordEvent(store.db, appId, 'created'), await recordEvent(store.db, appId, 'redeemed'), await recordEvent(store.db, otherAppId, 'refunded')];
      const counter = new StatementCounter();
      await store.db.transaction().execute(async (trx) => {
        await enqueueWebhookDeliveries(trx.withPlugin(counter), events);
        await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(heard, [], 'nothing is announced before the commit');
      });
      assert.equal(counter.count, 1);
      await waitFor(() => heard.length > 0, 5_000, 'the notification');
      assert.deepEqual(heard, ['4']);

      const log = async (id: string) => (await listDeliveries(store.db, id, { page: 1, perPage: 50 })).deliveries.map((d) => d.eventId);
      assert.deepEqual(await log(all.id), [events[1]!.id, events[0]!.id]);
      assert.deepEqual(await log(redeemed.id), [events[1]!.id]);
      assert.deepEqual(await log(disabled.id), []);
      assert.deepEqual(await log(others.id), [events[2]!.id]);
      const body = await store.db.selectFrom('webhook_deliveries').select('body').where('endpoint_id', '=', all.id).where('event_id', '=', events[0]!.id).executeTakeFirstOrThrow();
      assert.equal(body.body, eventJson(events[0]!));
      assert.equal(JSON.parse(body.body).order.order_id, events[0]!.orderId);

      // The same events again (a retried recorder transaction) queue nothing twice.
      await enqueueWebhookDeliveries(store.db, events);
      assert.equal((await store.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n, '4');
      // No events, no statement.
      const none = new StatementCounter();
      await enqueueWebhookDeliveries(store.db.withPlugin(none), []);
      assert.equal(none.count, 0);
    } finally {
      await unlisten();
    }
  });

  test('a rolled-back transaction leaves no deliveries', async () => {
    const event = await recordEvent(store.db, otherAppId, 'initiated');
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await enqueueWebhookDeliveries(trx, [event]);
        throw new Error('recorder failed');
      }),
      /recorder failed/,
    );
    const rows = await store.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', event.id).execute();
    assert.equal(rows.length, 0);
  });
});
