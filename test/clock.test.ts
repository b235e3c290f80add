// The service's time decisions follow its injected clock (src/clock.ts): a test moves time on and sees
// deadlines pass and backoffs end, with no real wait (the caches: test/orders/order-cache.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { unixSeconds } from '../src/clock.ts';
import type { ServiceConfig } from '../src/config/service-config.ts';
import { startService } from '../src/service.ts';
import { createApp } from '../src/store/apps.ts';
import type { Store } from '../src/store/database.ts';
import { insertOrder } from '../src/store/orders.ts';
import { claimJobs, deferJob, enqueueJob, markAttemptFailed } from '../src/store/relayer-jobs.ts';
import { openTestApi, type TestApi } from './helpers/api.ts';
import { MovableClock } from './helpers/clock.ts';
import { randomHex32, sampleOrder } from './helpers/fixtures.ts';
import { chainlessServiceConfig } from './helpers/service-config.ts';
import { describeEachStore } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

describeEachStore('the injected clock', (kind) => {
  let t: TestApi;
  let store: Store;
  const clock = new MovableClock();

  before(async () => {
    t = await openTestApi(kind, undefined, { clock });
    store = t.store;
  });
  after(() => t.close());

  const read = async (id: string) => (await t.api.inject({ url: `/v2/orders/${id}`, headers: { 'service-app-id': t.key } })).json<{ result: { status: string } }>().result.status;
  const listed = async (status: string) =>
    (await t.api.inject({ url: `/v2/orders?status=${status}&per_page=100`, headers: { 'service-app-id': t.key } })).json<{ result: { data: Array<{ order_id: string }> } }>().result.data.map((o) => o.order_id);

  test('an order expires, in the read and in the list filter, once the clock passes its deadline', async () => {
    const order = sampleOrder(t.appId, { deadline: BigInt(unixSeconds(clock) + 3_600) });
    await insertOrder(store.db, order);
    assert.equal(await read(order.id), 'created');
    assert.ok(!(await listed('expired')).includes(order.id));
    clock.advance(3_601_000);
    assert.equal(await read(order.id), 'expired', 'an hour later by the clock');
    assert.ok((await listed('expired')).includes(order.id));
    assert.ok(!(await listed('not-initiated')).includes(order.id));
  });

  test("a job's backoff ends when the clock passes it: a refused attempt, and a node out of reach", async () => {
    const chain = 'ethereum_localnet';
    const claim = () => claimJobs(store.db, { chain, worker: 'w', leaseMs: 60_000, limit: 1, now: clock.now() });
    const key = `clock:${randomHex32()}`;
    await enqueueJob(store.db, { chain, action: 'refund', idempotencyKey: key, payload: {}, maxAttempts: 5 });

    const [job] = await claim();
    assert.equal(job?.idempotencyKey, key);
    assert.equal(await markAttemptFailed(store.db, job.id, { worker: 'w', error: 'refused', retryMs: 60_000, now: clock.now() }), 'queued');
    assert.deepEqual(await claim(), [], 'not due before its minute');
    clock.advance(60_000);
    const [retried] = await claim();
    assert.equal(retried?.id, job.id, 'due once the clock passed the minute');

    // Out of reach twice in a row: the second wait is twice the first.
    await deferJob(store.db, job.id, { worker: 'w', error: 'node unreachable', retryMs: 60_000, maxRetryMs: 600_000, now: clock.now() });
    clock.advance(60_000);
    const [again] = await claim();
    assert.equal(again?.id, job.id);
    await deferJob(store.db, job.id, { worker: 'w', error: 'node unreachable', retryMs: 60_000, maxRetryMs: 600_000, now: clock.now() });
    clock.advance(60_000);
    assert.deepEqual(await claim(), [], 'the wait doubled');
    clock.advance(60_000);
    assert.equal((await claim())[0]?.id, job.id);
  });
});

describeEachStore('the service on an injected clock', (kind) => {
  let config: ServiceConfig;
  let drop: () => Promise<void>;
  before(async () => {
    ({ config, drop } = await chainlessServiceConfig(kind));
  });
  after(() => drop());

  test("startService hands its clock to the API and the event recorder: an order expires an hour early by the service's clock", async () => {
    const clock = new MovableClock();
    const service = await startService(config, { clock });
    try {
      const { app, key } = await createApp(service.store.db, { name: 'clocked' });
      const order = sampleOrder(app.id, { deadline: BigInt(unixSeconds(clock) + 3_600) });
      await insertOrder(service.store.db, order);
      const statuses = async () => (await service.store.db.selectFrom('order_events').select('status').where('order_id', '=', order.id).orderBy('id').execute()).map((e) => e.status);
      const read = async () => ((await (await fetch(`${service.url}/v2/orders/${order.id}`, { headers: { 'service-app-id': key } })).json()) as { result: { status: string } }).result.status;
      await waitFor(async () => (await statuses()).length > 0, 10_000, 'the created event');
      assert.equal(await read(), 'created');
      clock.advance(3_601_000);
      await waitFor(async () => (await statuses()).includes('expired'), 10_000, 'the expired event');
      assert.deepEqual(await statuses(), ['created', 'expired']);
      assert.equal(await read(), 'expired');
    } finally {
      await service.stop();
    }
  });
});
