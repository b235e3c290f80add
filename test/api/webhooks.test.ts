import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createApp } from '../../src/store/apps.ts';
import { WebhookDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { registerEndpoint } from '../../src/webhooks/endpoints.ts';
import { enqueueWebhookDeliveries } from '../../src/webhooks/outbox.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { recordEvent, startReceiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';

type Json = Record<string, any>;

describeEachStore('webhook endpoints API', (kind) => {
  let t: TestApi;
  let otherKey: string;
  before(async () => {
    t = await openTestApi(kind);
    otherKey = (await createApp(t.store.db, { name: 'other app' })).key;
  });
  after(() => t.close());

  const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, key = t.key) => {
    const res = await t.api.inject({ method, url, headers: { 'service-app-id': key }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };

  test('create (the secret shown once), list, and remove an endpoint', async () => {
    const created = await call('POST', '/v2/webhooks', { url: 'https://hooks.example.com/hashlock?x=1', statuses: ['redeemed', 'refunded'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const endpoint = created.body.result;
    assert.match(endpoint.id, /^wh_[0-9a-f]{24}$/);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(endpoint.url, 'https://hooks.example.com/hashlock?x=1');
    assert.deepEqual(endpoint.statuses, ['redeemed', 'refunded']);
    assert.equal(endpoint.disabled_at, null);
    assert.match(endpoint.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const all = await call('POST', '/v2/webhooks', { url: 'http://8.8.8.8:9/x' });
    assert.deepEqual(all.body.result.statuses, []);
    const stored = await t.store.db.selectFrom('webhook_endpoints').select('secret_ciphertext').where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    assert.ok(!Buffer.from(stored.secret_ciphertext).toString('latin1').includes(endpoint.secret), 'the secret is stored encrypted');

    const listed = await call('GET', '/v2/webhooks');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.result.map((e: Json) => e.id), [endpoint.id, all.body.result.id]);
    assert.ok(listed.body.result.every((e: Json) => !('secret' in e)), 'the secret is never listed');
    assert.deepEqual((await call('GET', '/v2/webhooks', undefined, otherKey)).body.result, [], 'another app sees none of them');

    const removed = await call('DELETE', `/v2/webhooks/${endpoint.id}`);
    assert.deepEqual(removed, { status: 200, body: { status: 'Ok', result: { id: endpoint.id, deleted: true } } });
    assert.equal((await call('DELETE', `/v2/webhooks/${endpoint.id}`)).status, 404);
    await call('DELETE', `/v2/webhooks/${all.body.result.id}`);
    assert.deepEqual((await call('GET', '/v2/webhooks')).body.result, []);
  });

  const bad: Array<{ name: string; payload: object; error: RegExp }> = [
    { name: 'an ftp URL', payload: { url: 'ftp://example.com/x' }, error: /^invalid body field 'url': must be an http:\/\/ or https:\/\/ URL, not ftp:$/ },
    { name: 'a javascript: URL', payload: { url: 'javascript:alert(1)' }, error: /'url': must be an http/ },
    { name: 'a relative URL', payload: { url: '/hooks' }, error: /^invalid body field 'url': must be an absolute http:\/\/ or https:\/\/ URL/ },
    { name: 'a URL with credentials', payload: { url: 'https://user:pw@example.com/' }, error: /'url': must not carry credentials/ },
    { name: 'a URL too long', payload: { url: `https://example.com/${'a'.repeat(2100)}` }, error: /^invalid body field 'url': must NOT have more than 2048 characters/ },
    { name: 'a URL with a NUL', payload: { url: 'https://example.com/\u0000' }, error: /'url': must not contain spaces or control characters/ },
    { name: 'a URL with a space', payload: { url: 'https://example.com/a b' }, error: /'url': must not contain spaces/ },
    { name: 'a loopback URL', payload: { url: 'http://127.0.0.1:9/x' }, error: /^invalid body field 'url': 127\.0\.0\.1 is not a public address$/ },
    { name: 'a cloud metadata URL', payload: { url: 'http://169.254.169.254/latest/meta-data' }, error: /'url': 169\.254\.169\.254 is not a public address/ },
    { name: 'a localhost URL', payload: { url: 'http://localhost:4426/hook' }, error: /'url': localhost is this machine/ },
    { name: 'an IPv6 private URL', payload: { url: 'http://[fd00::1]/hook' }, error: /'url': fd00::1 is not a public address/ },
    { name: 'no URL', payload: { statuses: [] }, error: /^invalid body field 'url': is required$/ },
    { name: 'a URL that is a number', payload: { url: 42 }, error: /'url': must be string/ },
    { name: 'an unknown status', payload: { url: 'https://example.com', statuses: ['redeemed', 'paid'] }, error: /^invalid body field 'statuses\[1\]': must be one of: created, expired/ },
    { name: 'a status twice', payload: { url: 'https://example.com', statuses: ['redeemed', 'redeemed'] }, error: /'statuses'/ },
    { name: 'statuses as a string', payload: { url: 'https://example.com', statuses: 'redeemed' }, error: /'statuses': must be array/ },
  ];
  for (const c of bad) {
    test(`creating with ${c.name}: 400 naming the field`, async () => {
      const res = await call('POST', '/v2/webhooks', c.payload);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'invalid_request');
      assert.match(res.body.error, c.error);
    });
  }

  test("another app's endpoint is 404 everywhere; a malformed id 400; no key 401", async () => {
    const theirs = (await call('POST', '/v2/webhooks', { url: 'https://example.com/theirs' }, otherKey)).body.result;
    for (const [method, url] of [
      ['DELETE', `/v2/webhooks/${theirs.id}`],
      ['GET', `/v2/webhooks/${theirs.id}/deliveries`],
      ['POST', `/v2/webhooks/${theirs.id}/enable`],
      ['POST', `/v2/webhooks/${theirs.id}/deliveries/1/redeliver`],
    ] as const) {
      const res = await call(method, url);
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.equal(res.body.code, 'not_found');
      assert.equal(res.body.error, `no webhook endpoint ${theirs.id}`);
      const malformed = await call(method, url.replace(theirs.id, 'wh_nope'));
      assert.equal(malformed.status, 400);
      assert.match(malformed.body.error, /^invalid path parameter 'id': must be a webhook endpoint id/);
      const anonymous = await t.api.inject({ method, url });
      assert.equal(anonymous.statusCode, 401);
    }
    assert.equal((await call('GET', `/v2/webhooks/${theirs.id}/deliveries`, undefined, otherKey)).status, 200, 'its own app sees it');
    const page = await call('GET', `/v2/webhooks/${theirs.id}/deliveries?per_page=1000`, undefined, otherKey);
    assert.equal(page.status, 400);
    assert.match(page.body.error, /'per_page'/);
  });

  test('an app has at most 10 endpoints', async () => {
    const { key } = await createApp(t.store.db, { name: 'busy app' });
    for (let i = 0; i < 10; i++) assert.equal((await call('POST', '/v2/webhooks', { url: `https://example.com/${i}` }, key)).status, 201);
    const eleventh = await call('POST', '/v2/webhooks', { url: 'https://example.com/11' }, key);
    assert.equal(eleventh.status, 409);
    assert.match(eleventh.body.error, /at most 10 webhook endpoints/);
  });

  test('the delivery log over the API, and enabling a disabled endpoint', async () => {
    const receiver = await startReceiver((_req, res, i) => {
      res.statusCode = i === 0 ? 500 : 200;
      res.end();
    });
    const worker = new WebhookDeliveryWorker({ db: t.store.db, secrets: t.secrets, worker: 'api-test', pollMs: 25, firstRetryMs: 50, allowPrivateAddresses: true });
    try {
      // A loopback receiver, which only an operator who allows private addresses can register.
      const registered = await registerEndpoint(t.store.db, t.secrets, { appId: t.appId, url: receiver.url, statuses: [], allowPrivateAddresses: true });
      const { id } = registered.endpoint;
      const { secret } = registered;
      const events = [await recordEvent(t.store.db, t.appId, 'created'), await recordEvent(t.store.db, t.appId, 'initiated')];
      await t.store.db.transaction().execute((trx) => enqueueWebhookDeliveries(trx, events));
      const log = async () => (await call('GET', `/v2/webhooks/${id}/deliveries`)).body.result;
      await waitFor(async () => (await log()).data.every((d: Json) => d.status === 'delivered'), 5_000, 'the deliveries');
      assert.ok(receiver.received.every((r) => verifyWebhookSignature(secret, r.headers['hashlock-signature'] as string, r.body)));
      const result = await log();
      assert.equal(result.total_items, 2);
      assert.equal(result.total_pages, 1);
      assert.deepEqual(result.data.map((d: Json) => d.event_id), [events[1]!.id, events[0]!.id]);
      const retried = result.data.find((d: Json) => d.attempts === 2);
      assert.ok(retried, JSON.stringify(result.data));
      assert.deepEqual(retried.attempt_log.map((a: Json) => a.status_code), [500, 200]);
      assert.equal(retried.last_status_code, 200);
      assert.equal(retried.next_attempt_at, null);
      assert.match(retried.delivered_at, /Z$/);
      const second = (await call('GET', `/v2/webhooks/${id}/deliveries?page=2&per_page=1`)).body.result;
      assert.deepEqual(second.data.map((d: Json) => d.event_id), [events[0]!.id]);
      assert.equal(second.total_pages, 2);

      await t.store.db.updateTable('webhook_endpoints').set({ disabled_at: new Date(), disabled_reason: 'failing', consecutive_failures: 7 }).where('id', '=', id).execute();
      assert.equal((await call('GET', '/v2/webhooks')).body.result.find((e: Json) => e.id === id).disabled_reason, 'failing');
      const enabled = await call('POST', `/v2/webhooks/${id}/enable`);
      assert.equal(enabled.status, 200);
      assert.equal(enabled.body.result.disabled_at, null);
      assert.equal(enabled.body.result.consecutive_failures, 0);
      assert.equal(enabled.body.result.disabled_reason, '');
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  test('redelivering: a given-up and a delivered delivery are sent again with the same event and body; refusals name why', async () => {
    let failing = true;
    const receiver = await startReceiver((_req, res) => {
      res.statusCode = failing ? 500 : 200;
      res.end();
    });
    const worker = new WebhookDeliveryWorker({ db: t.store.db, secrets: t.secrets, worker: 'redeliver-test', pollMs: 25, firstRetryMs: 50, giveUpMs: 200, allowPrivateAddresses: true });
    try {
      const { id } = (await registerEndpoint(t.store.db, t.secrets, { appId: t.appId, url: receiver.url, statuses: [], allowPrivateAddresses: true })).endpoint;
      const event = await recordEvent(t.store.db, t.appId, 'refunded');
      await t.store.db.transaction().execute((trx) => enqueueWebhookDeliveries(trx, [event]));
      const only = async () => (await call('GET', `/v2/webhooks/${id}/deliveries`)).body.result.data[0] as Json;
      await waitFor(async () => (await only()).status === 'failed', 5_000, 'the delivery given up');
      const givenUp = await only();
      assert.equal(givenUp.attempts, receiver.received.length);
      const redeliver = (delivery: string, key = t.key, endpoint = id) => call('POST', `/v2/webhooks/${endpoint}/deliveries/${delivery}/redeliver`, undefined, key);

      failing = false;
      const again = await redeliver(givenUp.id);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.result.id, givenUp.id);
      assert.equal(again.body.result.status, 'pending');
      assert.ok(again.body.result.next_attempt_at);
      await waitFor(async () => (await only()).status === 'delivered', 5_000, 'the redelivery');
      const delivered = await only();
      assert.equal(delivered.attempts, givenUp.attempts + 1);
      assert.deepEqual(delivered.attempt_log.map((a: Json) => a.status_code), [...givenUp.attempt_log.map((a: Json) => a.status_code), 200]);

      const before = receiver.received.length;
      assert.equal((await redeliver(delivered.id)).status, 200, 'a delivered one can be sent again');
      await waitFor(() => receiver.received.length === before + 1, 5_000, 'the second redelivery');
      const sent = receiver.received.map((r) => [r.headers['hashlock-event-id'], r.body]);
      assert.ok(sent.every(([eventId, body]) => eventId === event.id && body === sent[0]![1]), 'every request carried the same event and body');
      await waitFor(async () => (await only()).status === 'delivered', 5_000, 'recorded delivered');

      await worker.stop();
      const pendingEvent = await recordEvent(t.store.db, t.appId, 'redeemed');
      await t.store.db.transaction().execute((trx) => enqueueWebhookDeliveries(trx, [pendingEvent]));
      const pending = await only();
      assert.equal(pending.status, 'pending');
      const busy = await redeliver(pending.id);
      assert.equal(busy.status, 409);
      assert.match(busy.body.error, new RegExp(`^delivery ${pending.id} is still pending`));

      await t.store.db.updateTable('webhook_endpoints').set({ disabled_at: new Date(), disabled_reason: 'failing' }).where('id', '=', id).execute();
      const disabled = await redeliver(delivered.id);
      assert.equal(disabled.status, 409);
      assert.match(disabled.body.error, /is disabled: enable it first/);
      assert.equal((await only()).status, 'pending', 'nothing changed');
      assert.equal((await call('GET', `/v2/webhooks/${id}/deliveries?page=2&per_page=1`)).body.result.data[0].status, 'delivered');

      const unknown = await redeliver('999999999');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, `no delivery 999999999 of webhook endpoint ${id}`);
      for (const malformed of ['abc', '-1', '9'.repeat(19)]) {
        const res = await redeliver(malformed);
        assert.equal(res.status, 400, malformed);
        assert.match(res.body.error, /^invalid path parameter 'delivery': must be a delivery id/);
      }
      assert.equal((await redeliver(delivered.id, otherKey)).status, 404, "another app cannot redeliver this app's deliveries");
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  test('the OpenAPI document lists the webhook routes under the API key', async () => {
    const doc = (await t.api.inject({ url: '/docs/json' })).json<Json>();
    for (const path of ['/v2/webhooks', '/v2/webhooks/{id}', '/v2/webhooks/{id}/deliveries', '/v2/webhooks/{id}/enable', '/v2/webhooks/{id}/deliveries/{delivery}/redeliver']) {
      assert.ok(doc.paths[path], path);
      for (const op of Object.values<Json>(doc.paths[path])) assert.ok(op.security?.length > 0, `${path} is keyed`);
    }
  });
});

