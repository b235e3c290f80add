import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, afterEach, before, test } from 'node:test';
import { eventJson, type OrderEvent } from '../../src/events/order-event.ts';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { createApp } from '../../src/store/apps.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { findEndpoint, listDeliveries, type WebhookDelivery } from '../../src/store/webhooks.ts';
import { startWebhookDelivery, WebhookDeliveryWorker, type WebhookWorkerOptions } from '../../src/webhooks/delivery-worker.ts';
import { registerEndpoint } from '../../src/webhooks/endpoints.ts';
import { enqueueWebhookDeliveries } from '../../src/webhooks/outbox.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { MovableClock } from '../helpers/clock.ts';
import { seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { recordEvent, startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';

// The receivers are on loopback, which the service refuses unless allowed.
const FAST: Omit<WebhookWorkerOptions, 'db' | 'secrets' | 'worker'> = { pollMs: 25, firstRetryMs: 50, maxRetryMs: 200, timeoutMs: 2_000, allowPrivateAddresses: true };

describeEachStore('webhook delivery', (kind) => {
  let store: Store & { url?: string };
  const secrets = new SecretBox(randomBytes(32));
  const receivers: Receiver[] = [];
  const stops: Array<() => Promise<void>> = [];
  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db);
  });
  // Each test's workers stop with it, so that no other test's worker (with other options) takes its deliveries.
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await store.close();
  });

  /** A fresh app (so no other test's endpoints see its events) with one endpoint at a new receiver. */
  const setup = async (handle?: Receiver['handle'], statuses: string[] = []) => {
    const receiver = await startReceiver(handle);
    receivers.push(receiver);
    const { app } = await createApp(store.db, { name: 'hooked app' });
    const { endpoint, secret } = await registerEndpoint(store.db, secrets, { appId: app.id, url: receiver.url, statuses, allowPrivateAddresses: true });
    return { receiver, appId: app.id, endpoint, secret };
  };
  const queue = async (events: OrderEvent[]) => store.db.transaction().execute((trx) => enqueueWebhookDeliveries(trx, events));
  const worker = (options: Partial<WebhookWorkerOptions> = {}) => {
    const w = new WebhookDeliveryWorker({ db: store.db, secrets, worker: `w-${randomBytes(4).toString('hex')}`, ...FAST, ...options });
    stops.push(() => w.stop());
    return w;
  };
  const log = async (endpointId: string): Promise<WebhookDelivery[]> => (await listDeliveries(store.db, endpointId, { page: 1, perPage: 500 })).deliveries;

  test('every delivery arrives signed: the signature verifies, and recomputes with node:crypto', async () => {
    const { receiver, appId, endpoint, secret } = await setup();
    const unlisten = await startWebhookDelivery(store, { secrets, worker: 'notified', timeoutMs: 2_000, pollMs: 60_000, allowPrivateAddresses: true });
    stops.push(unlisten);
    const events: OrderEvent[] = [];
    for (const status of ['created', 'initiated', 'redeemed'] as const) events.push(await recordEvent(store.db, appId, status));
    const queuedAt = Date.now();
    await queue(events);
    // The poll is a minute: the notification is what wakes the worker.
    await waitFor(() => receiver.received.length === 3, 5_000, 'three deliveries');
    assert.ok(Date.now() - queuedAt < 3_000);
    const byEvent = new Map(receiver.received.map((r) => [r.headers['hashlock-event-id'], r]));
    for (const event of events) {
      const got = byEvent.get(event.id);
      assert.ok(got, `event ${event.id} delivered`);
      assert.equal(got.body, eventJson(event));
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(got.headers['hashlock-delivery-attempt'], '1');
      const header = got.headers['hashlock-signature'] as string;
      assert.equal(verifyWebhookSignature(secret, header, got.body), true);
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
      assert.ok(match, header);
      assert.ok(Math.abs(Number(match[1]) - Date.now() / 1000) < 60);
      assert.equal(match[2], createHmac('sha256', secret).update(`${match[1]}.${got.body}`).digest('hex'));
      assert.equal(verifyWebhookSignature(secret, header, `${got.body} `), false, 'a changed body fails');
      assert.equal(verifyWebhookSignature(`${secret}x`, header, got.body), false, 'another secret fails');
      const parsed = JSON.parse(got.body);
      assert.deepEqual(Object.keys(parsed), ['id', 'type', 'order_id', 'status', 'created_at', 'order']);
      assert.equal(parsed.type, 'order.status');
    }
    await waitFor(async () => (await log(endpoint.id)).every((d) => d.status === 'delivered'), 5_000, 'delivered in the log');
    const entries = await log(endpoint.id);
    assert.deepEqual(entries.map((d) => d.eventId), events.map((e) => e.id).reverse(), 'newest first');
    for (const d of entries) {
      assert.equal(d.attempts, 1);
      assert.equal(d.lastStatusCode, 200);
      assert.ok(d.deliveredAt);
    }
  });

  test('an endpoint that answers 500 twice, then a redirect, gets the delivery on a retry; the log shows every attempt', async () => {
    const answers = [500, 500, 302, 204];
    const { receiver, appId, endpoint, secret } = await setup((_req, res, i) => {
      res.statusCode = answers[i] ?? 200;
      if (res.statusCode === 302) res.setHeader('location', 'http://127.0.0.1:1/elsewhere');
      res.end();
    });
    worker();
    const event = await recordEvent(store.db, appId, 'redeemed');
    await queue([event]);
    await waitFor(async () => (await log(endpoint.id))[0]?.status === 'delivered', 10_000, 'the delivery');
    assert.equal(receiver.received.length, 4);
    assert.deepEqual(receiver.received.map((r) => r.headers['hashlock-delivery-attempt']), ['1', '2', '3', '4']);
    assert.ok(receiver.received.every((r) => r.headers['hashlock-event-id'] === event.id && verifyWebhookSignature(secret, r.headers['hashlock-signature'] as string, r.body)));
    const [entry] = await log(endpoint.id);
    assert.equal(entry!.attempts, 4);
    assert.equal(entry!.lastStatusCode, 204);
    assert.deepEqual(entry!.attemptLog.map((a) => [a.attempt, a.statusCode]), [[1, 500], [2, 500], [3, 302], [4, 204]]);
    assert.equal(entry!.attemptLog[0]!.error, 'HTTP 500');
    assert.match(entry!.attemptLog[2]!.error, /redirects are not followed/);
    // Backoff: the gaps grow.
    const at = receiver.received.map((r) => r.at);
    assert.ok(at[1]! - at[0]! >= 35, `first retry after about 50 ms, was ${at[1]! - at[0]!}`);
    assert.ok(at[3]! - at[2]! >= 140, `third retry after about 200 ms, was ${at[3]! - at[2]!}`);
    assert.equal((await findEndpoint(store.db, endpoint.id))!.consecutiveFailures, 0, 'a success clears the failures');
  });

  test('deliveries pending at a restart are delivered by the next worker, each once', async () => {
    let failFirst = true;
    const { receiver, appId, endpoint } = await setup((_req, res) => {
      res.statusCode = failFirst ? 503 : 200;
      failFirst = false;
      res.end();
    });
    const first = worker({ firstRetryMs: 60_000, maxRetryMs: 60_000 });
    const events = [await recordEvent(store.db, appId, 'created')];
    await queue(events);
    await waitFor(() => receiver.received.length === 1, 5_000, 'the first attempt');
    await waitFor(async () => (await log(endpoint.id))[0]?.attempts === 1 && (await log(endpoint.id))[0]?.lastStatusCode === 503, 5_000, 'the failure recorded');
    await first.stop();
    // Queued while no worker runs.
    for (const status of ['initiated', 'redeemed'] as const) events.push(await recordEvent(store.db, appId, status));
    await queue(events.slice(1));
    // The failed one is due again now, as if its minute had passed.
    await store.db.updateTable('webhook_deliveries').set({ next_attempt_at: new Date() }).where('endpoint_id', '=', endpoint.id).execute();
    worker();
    await waitFor(async () => (await log(endpoint.id)).every((d) => d.status === 'delivered'), 5_000, 'every delivery');
    await Promise.all(stops.splice(0).map((stop) => stop())); // every request sent has ended
    const ok = receiver.received.slice(1).map((r) => r.headers['hashlock-event-id']);
    assert.deepEqual([...ok].sort(), events.map((e) => e.id).sort(), 'each event answered 2xx exactly once');
  });

  test('a worker stopped mid-request gives the delivery back, and the next one delivers it', async () => {
    let hang = true;
    const { receiver, appId, endpoint } = await setup((_req, res) => {
      if (hang) return; // never answers
      res.end('ok');
    });
    const first = worker({ timeoutMs: 30_000 });
    await queue([await recordEvent(store.db, appId, 'created')]);
    await waitFor(() => receiver.received.length === 1, 5_000, 'the first request');
    const started = Date.now();
    await first.stop();
    assert.ok(Date.now() - started < 2_000, 'the stop does not wait for the endpoint');
    const [pending] = await log(endpoint.id);
    assert.equal(pending!.status, 'pending');
    assert.equal(pending!.attempts, 0, 'the cut-short attempt is not counted');
    hang = false;
    worker();
    await waitFor(async () => (await log(endpoint.id))[0]?.status === 'delivered', 5_000, 'the delivery');
    assert.equal(receiver.received.length, 2);
  });

  test('two workers (two instances) deliver each delivery exactly once', async () => {
    const a = await setup((_req, res) => setTimeout(() => res.end('ok'), 5));
    const b = await setup((_req, res) => setTimeout(() => res.end('ok'), 5));
    // A second instance: its own connection pool on PostgreSQL.
    const other = kind === 'postgres' ? await openStore({ databaseUrl: store.url!, poolSize: 10 }) : undefined;
    try {
      const w1 = worker();
      const w2 = new WebhookDeliveryWorker({ db: (other ?? store).db, secrets, worker: 'second', ...FAST });
      stops.unshift(() => w2.stop());
      const events: OrderEvent[] = [];
      for (let i = 0; i < 30; i++) events.push(await recordEvent(store.db, i % 2 === 0 ? a.appId : b.appId, 'created'));
      await queue(events);
      // Both are woken at once, as a notification reaches every instance.
      w1.wake();
      w2.wake();
      await waitFor(async () => (await log(a.endpoint.id)).concat(await log(b.endpoint.id)).filter((d) => d.status === 'delivered').length === 30, 10_000, 'every delivery');
      await Promise.all(stops.splice(0).map((stop) => stop())); // every request sent has ended
      const ids = [...a.receiver.received, ...b.receiver.received].map((r) => r.headers['hashlock-event-id'] as string);
      assert.equal(ids.length, 30);
      assert.deepEqual([...ids].sort(), events.map((e) => e.id).sort());
      const workers = await store.db.selectFrom('webhook_attempts').select('id').execute();
      assert.ok(workers.length >= 30);
    } finally {
      await other?.close();
    }
  });

  test('an endpoint that never answers does not delay another, and holds at most 4 requests', async () => {
    let open = 0;
    let mostOpen = 0;
    const slow = await setup((_req, res) => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      res.on('close', () => open--);
    });
    const fast = await setup();
    worker({ timeoutMs: 4_000, firstRetryMs: 60_000, maxRetryMs: 60_000 });
    const slowEvents: OrderEvent[] = [];
    for (let i = 0; i < 10; i++) slowEvents.push(await recordEvent(store.db, slow.appId, 'created'));
    await queue(slowEvents);
    await waitFor(() => slow.receiver.received.length === 4, 5_000, 'the slow endpoint to hold its slots');
    const fastEvents: OrderEvent[] = [];
    for (let i = 0; i < 10; i++) fastEvents.push(await recordEvent(store.db, fast.appId, 'created'));
    const queuedAt = Date.now();
    await queue(fastEvents);
    await waitFor(() => fast.receiver.received.length === 10, 5_000, 'the fast deliveries');
    assert.ok(Date.now() - queuedAt < 2_000, `the fast endpoint waited ${Date.now() - queuedAt} ms`);
    assert.equal(mostOpen, 4);
    await waitFor(async () => (await log(slow.endpoint.id)).filter((d) => d.attempts === 1 && d.status === 'pending' && d.lastError !== '').length >= 4, 10_000, 'the timeouts recorded');
    const timedOut = (await log(slow.endpoint.id)).find((d) => d.lastError !== '')!;
    assert.equal(timedOut.lastStatusCode, null);
    assert.match(timedOut.lastError, /no answer within 4000 ms/);
  });

  test('an endpoint that keeps failing is disabled, its pending deliveries stopped, with the reason visible', async () => {
    const { receiver, appId, endpoint } = await setup((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    worker({ disableAfterMs: 400 });
    const events: OrderEvent[] = [];
    for (let i = 0; i < 3; i++) events.push(await recordEvent(store.db, appId, 'created'));
    await queue(events);
    await waitFor(async () => (await findEndpoint(store.db, endpoint.id))?.disabledAt !== null, 10_000, 'the endpoint disabled');
    const disabled = (await findEndpoint(store.db, endpoint.id))!;
    assert.match(disabled.disabledReason, /^no successful delivery since .* failed attempts in a row; the last: HTTP 500\)$/);
    assert.ok(disabled.consecutiveFailures >= 3);
    await waitFor(async () => (await log(endpoint.id)).every((d) => d.status === 'failed'), 5_000, 'the deliveries stopped');
    assert.ok((await log(endpoint.id)).some((d) => /^endpoint disabled: no successful delivery/.test(d.lastError)));
    const before = receiver.received.length;
    // A disabled endpoint gets no new deliveries: none is queued for it, so none can be sent.
    await queue([await recordEvent(store.db, appId, 'redeemed')]);
    assert.equal((await log(endpoint.id)).length, 3);
    await Promise.all(stops.splice(0).map((stop) => stop())); // every request sent has ended
    assert.equal(receiver.received.length, before);
  });

  test('a delivery that keeps failing is given up after giveUpMs, with its last error', async () => {
    const { receiver, appId, endpoint } = await setup((_req, res) => {
      res.statusCode = 429;
      res.end();
    });
    const clock = new MovableClock();
    worker({ giveUpMs: 3_600_000, clock });
    const first = await recordEvent(store.db, appId, 'created');
    await queue([first]);
    await waitFor(() => receiver.received.length >= 2, 5_000, 'a retry');
    assert.equal((await log(endpoint.id))[0]?.status, 'pending', 'retried within its hour');
    clock.advance(3_600_000);
    await waitFor(async () => (await log(endpoint.id))[0]?.status === 'failed', 10_000, 'the delivery given up');
    const [entry] = await log(endpoint.id);
    assert.equal(entry!.lastError, 'HTTP 429');
    assert.equal(entry!.nextAttemptAt, null);
    const attempts = receiver.received.length;
    assert.ok(attempts >= 2 && attempts === entry!.attempts, `${attempts} attempts`);
    // An hour later a new delivery to the endpoint goes out; the given-up one is not tried again.
    clock.advance(3_600_000);
    const later = await recordEvent(store.db, appId, 'initiated');
    await queue([later]);
    await waitFor(() => receiver.received.some((r) => r.headers['hashlock-event-id'] === later.id), 5_000, 'the later delivery');
    assert.equal(receiver.received.filter((r) => r.headers['hashlock-event-id'] === first.id).length, attempts, 'no attempt after giving up');
    assert.equal((await findEndpoint(store.db, endpoint.id))!.disabledAt, null, 'a day of failures has not passed');
  });

  test('a retry due in ten minutes is sent as soon as the clock reaches it', async () => {
    let fail = true;
    const { receiver, appId, endpoint } = await setup((_req, res) => {
      res.statusCode = fail ? 503 : 200;
      fail = false;
      res.end();
    });
    const clock = new MovableClock();
    worker({ firstRetryMs: 600_000, maxRetryMs: 600_000, clock });
    await queue([await recordEvent(store.db, appId, 'created')]);
    await waitFor(async () => (await log(endpoint.id))[0]?.lastStatusCode === 503, 5_000, 'the failure recorded');
    const dueInMs = Date.parse((await log(endpoint.id))[0]!.nextAttemptAt!) - clock.now();
    assert.ok(dueInMs > 0.8 * 600_000 - 5_000 && dueInMs <= 1.2 * 600_000, `the retry is due in ${dueInMs} ms: ten minutes, with jitter`);
    assert.equal(receiver.received.length, 1);
    clock.advance(dueInMs);
    await waitFor(async () => (await log(endpoint.id))[0]?.status === 'delivered', 5_000, 'the retry');
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[1]!.headers['hashlock-delivery-attempt'], '2');
  });

  test('an endpoint subscribed to some statuses gets only those', async () => {
    const { receiver, appId, endpoint } = await setup(undefined, ['redeemed', 'refunded']);
    worker();
    const events = [
      await recordEvent(store.db, appId, 'created'),
      await recordEvent(store.db, appId, 'redeemed'),
      await recordEvent(store.db, appId, 'initiated'),
      await recordEvent(store.db, appId, 'refunded'),
    ];
    await queue(events);
    await waitFor(() => receiver.received.length === 2, 5_000, 'two deliveries');
    assert.equal((await log(endpoint.id)).length, 2, 'only the subscribed statuses are queued');
    await Promise.all(stops.splice(0).map((stop) => stop())); // every request sent has ended
    assert.deepEqual(receiver.received.map((r) => JSON.parse(r.body).status).sort(), ['redeemed', 'refunded']);
  });
  test('the delivery log keeps an ended delivery keepDeliveriesMs, then a worker deletes it with its attempts; pending ones stay', async () => {
    const { receiver, appId, endpoint } = await setup();
    const first = worker();
    await queue([
      await recordEvent(store.db, appId, 'created'),
      await recordEvent(store.db, appId, 'initiated'),
      await recordEvent(store.db, appId, 'redeemed'),
    ]);
    await waitFor(() => receiver.received.length === 3, 5_000, 'three deliveries');
    await waitFor(async () => (await log(endpoint.id)).every((d) => d.status === 'delivered'), 5_000, 'all recorded delivered');
    await first.stop();
    const [newest, middle, oldest] = await log(endpoint.id);
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    await store.db.updateTable('webhook_deliveries').set({ updated_at: longAgo }).where('id', 'in', [middle!.id, oldest!.id]).execute();
    // An old delivery still pending (its endpoint failing for long) is not the log's to delete.
    await store.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: new Date(Date.now() + 86_400_000) })
      .where('id', '=', middle!.id)
      .execute();
    const attemptsOf = async (id: string) =>
      (await store.db.selectFrom('webhook_attempts').select('id').where('delivery_id', '=', id).execute()).length;
    assert.equal(await attemptsOf(oldest!.id), 1);
    worker({ keepDeliveriesMs: 30 * 86_400_000 });
    await waitFor(async () => (await log(endpoint.id)).length === 2, 5_000, 'the old ended delivery deleted at start');
    assert.deepEqual((await log(endpoint.id)).map((d) => [d.id, d.status]), [[newest!.id, 'delivered'], [middle!.id, 'pending']]);
    assert.equal(await attemptsOf(oldest!.id), 0, 'its attempts went with it');
    assert.equal(await attemptsOf(newest!.id), 1);
  });

  test('with private addresses refused (the default), nothing is sent to loopback, by address or by name, and the log says why', async () => {
    const { receiver, appId, endpoint } = await setup();
    const byName = await registerEndpoint(store.db, secrets, { appId, url: receiver.url.replace('127.0.0.1', 'localhost'), statuses: [], allowPrivateAddresses: true });
    worker({ allowPrivateAddresses: false, maxRetryMs: 60_000, firstRetryMs: 60_000 });
    await queue([await recordEvent(store.db, appId, 'created')]);
    for (const id of [endpoint.id, byName.endpoint.id]) {
      // `attempts` counts an attempt from its claim; the attempt log gets it when its outcome is written.
      await waitFor(async () => (await log(id))[0]?.attemptLog.length === 1, 5_000, 'the refused attempt recorded');
      const [delivery] = await log(id);
      assert.equal(delivery!.status, 'pending', 'refused like any failure: retried later, in case the operator allows it');
      assert.match(delivery!.lastError, /^refused: (127\.0\.0\.1 is not a public address|localhost is this machine)/);
    }
    assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
  });
});
