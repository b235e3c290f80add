// Order event streams over HTTP (Server-Sent Events): an order's history then its changes, each
// once; resuming with Last-Event-ID; an app's stream with the order list's filters; a change
// committed through another connection (another instance) reaching this instance's clients.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OrderRecorder } from '../../src/events/order-recorder.ts';
import { createApp } from '../../src/store/apps.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { sampleOrder, USER } from '../helpers/fixtures.ts';
import { SseClient } from '../helpers/sse.ts';
import { describeEachStore } from '../helpers/stores.ts';

describeEachStore('order event streams', (kind) => {
  let t: TestApi;
  let base: string;
  let recorder: OrderRecorder;

  before(async () => {
    t = await openTestApi(kind, undefined, { eventStreams: { heartbeatMs: 200 } });
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
    recorder = new OrderRecorder(t.store.db);
    await recorder.tick();
  });
  after(() => t.close());

  const keyed = () => ({ 'service-app-id': t.key });
  const setSwap = (orderId: string, side: 'source' | 'destination', values: Record<string, string | number>) =>
    t.store.db.updateTable('swaps').set(values).where('order_id', '=', orderId).where('side', '=', side).execute();
  /** Writes a change and records it, as the service's recorder would on its notification. */
  const change = async (orderId: string, side: 'source' | 'destination', values: Record<string, string | number>) => {
    await setSwap(orderId, side, values);
    recorder.touch(orderId);
    await recorder.tick();
  };
  const newOrder = async (appId = t.appId, overrides = {}) => {
    const order = sampleOrder(appId, overrides);
    await insertOrder(t.store.db, order);
    recorder.touch(order.id);
    await recorder.tick();
    return order;
  };
  const statuses = (client: SseClient) => client.data().map((e) => e.status);

  test("an order's stream: its history first, then each change as it is recorded, once, with the order read's body", async () => {
    const order = await newOrder();
    await change(order.id, 'source', { initiate_tx_hash: '0x01' });
    const client = await SseClient.open(`${base}/v2/orders/${order.id}/events`, keyed());
    try {
      assert.equal(client.response.statusCode, 200);
      assert.match(String(client.response.headers['content-type']), /^text\/event-stream/);
      await client.until(() => client.events.length >= 2, 5_000, 'the history');
      assert.deepEqual(statuses(client), ['created', 'initiate_detected']);
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, /^hashlock_event_streams_open [1-9]\d*$/m, 'the open streams are a metric');
      await change(order.id, 'source', { initiate_block_number: '7', current_confirmations: 1 });
      await client.until(() => client.events.length >= 3, 5_000, 'initiated');
      await change(order.id, 'destination', { initiate_tx_hash: '0x02' });
      await client.until(() => client.events.length >= 4, 5_000, 'awaiting_redeem');
      assert.deepEqual(statuses(client), ['created', 'initiate_detected', 'initiated', 'awaiting_redeem']);
      const last = client.data().at(-1)!;
      assert.equal(last.order_id, order.id);
      assert.equal(client.events.at(-1)!.id, last.id, 'the SSE id is the event id');
      const read = (await (await fetch(`${base}/v2/orders/${order.id}`, { headers: keyed() })).json()) as { result: unknown };
      assert.deepEqual(last.order, read.result, 'the event carries the order as the order read shows it');
      await client.until(() => client.comments >= 2, 5_000, 'heartbeats');
      assert.equal(client.events.length, 4, 'heartbeats are not events');
    } finally {
      client.close();
    }
  });

  test('a reconnect with Last-Event-ID gets exactly what it missed', async () => {
    const order = await newOrder();
    const first = await SseClient.open(`${base}/v2/orders/${order.id}/events`, keyed());
    await first.until(() => first.events.length >= 1, 5_000, 'created');
    first.close();
    const lastId = first.events.at(-1)!.id!;
    await change(order.id, 'source', { initiate_tx_hash: '0x03' });
    await change(order.id, 'source', { initiate_block_number: '9', current_confirmations: 1 });
    const resumed = await SseClient.open(`${base}/v2/orders/${order.id}/events`, { ...keyed(), 'last-event-id': lastId });
    const byQuery = await SseClient.open(`${base}/v2/orders/${order.id}/events?last_event_id=${lastId}`, keyed());
    try {
      for (const c of [resumed, byQuery]) {
        await c.until(() => c.events.length >= 2, 5_000, 'the missed events');
        assert.deepEqual(statuses(c), ['initiate_detected', 'initiated']);
      }
      await change(order.id, 'destination', { initiate_tx_hash: '0x04' });
      await resumed.until(() => resumed.events.length >= 3, 5_000, 'the next live event');
      assert.deepEqual(statuses(resumed), ['initiate_detected', 'initiated', 'awaiting_redeem']);
    } finally {
      resumed.close();
      byQuery.close();
    }
  });

  test("an app's stream carries its own orders' new events only, through the order list's filters", async () => {
    const other = await createApp(t.store.db, { name: 'other app' });
    const all = await SseClient.open(`${base}/v2/events`, keyed());
    const towardsArbitrum = await SseClient.open(`${base}/v2/events?to_chain=arbitrum_localnet&status=in-progress`, keyed());
    const byAddress = await SseClient.open(`${base}/v2/events?from_owner=0x000000000000000000000000000000000000dEaD`, keyed());
    const byUser = await SseClient.open(`${base}/v2/events?address=${USER.toLowerCase()}`, keyed());
    try {
      const mine = await newOrder();
      const theirs = await newOrder(other.app.id);
      await change(theirs.id, 'source', { initiate_tx_hash: '0x05' });
      await change(mine.id, 'source', { initiate_tx_hash: '0x06' });
      await all.until(() => all.events.length >= 2, 5_000, "the app's two events");
      await towardsArbitrum.until(() => towardsArbitrum.events.length >= 1, 5_000, 'the in-progress event');
      // A marker event for the address stream, after which nothing earlier can still be in flight.
      await change(mine.id, 'source', { initiate_block_number: '3', current_confirmations: 1 });
      await all.until(() => all.events.length >= 3, 5_000, 'the third event');
      assert.deepEqual(all.data().map((e) => [e.order_id, e.status]), [[mine.id, 'created'], [mine.id, 'initiate_detected'], [mine.id, 'initiated']]);
      await towardsArbitrum.until(() => towardsArbitrum.events.length >= 2, 5_000, 'the second in-progress event');
      assert.deepEqual(towardsArbitrum.data().map((e) => e.status), ['initiate_detected', 'initiated'], 'created is not in progress');
      await byUser.until(() => byUser.events.length >= 3, 5_000, "the user's orders' events");
      assert.deepEqual(byUser.data().map((e) => e.status), ['created', 'initiate_detected', 'initiated']);
      assert.equal(byAddress.events.length, 0, 'no order of that address');
    } finally {
      all.close();
      towardsArbitrum.close();
      byAddress.close();
      byUser.close();
    }
  });

  test("a stream of new events starts where the log ends when it opens, even before this instance has read the log's end", async () => {
    const earlier = await newOrder();
    // An event committed with no notification yet: the hub has not read it when the stream opens.
    await t.store.db
      .insertInto('order_events')
      .values({ order_id: earlier.id, app_id: t.appId, status: 'initiate_detected', order_json: '{}' })
      .execute();
    const client = await SseClient.open(`${base}/v2/events`, keyed());
    try {
      const later = await newOrder();
      await client.until(() => client.events.length >= 1, 5_000, 'the new order');
      assert.deepEqual(client.data().map((e) => [e.order_id, e.status]), [[later.id, 'created']]);
    } finally {
      client.close();
    }
  });

  test('bad requests are refused before a stream opens: unknown order, bad Last-Event-ID, unknown filter value, no key', async () => {
    const order = await newOrder();
    const cases: Array<[string, Record<string, string>, number, RegExp]> = [
      [`/v2/orders/${'ab'.repeat(32)}/events`, keyed(), 404, /not found/],
      [`/v2/orders/${order.id}/events`, { ...keyed(), 'last-event-id': 'x1' }, 400, /Last-Event-ID/],
      [`/v2/orders/${order.id}/events?last_event_id=-1`, keyed(), 400, /last_event_id/],
      // Beyond a bigint: refused here, not by the database once the stream is open.
      [`/v2/orders/${order.id}/events`, { ...keyed(), 'last-event-id': '9'.repeat(19) }, 400, /Last-Event-ID/],
      [`/v2/events?last_event_id=${'9'.repeat(19)}`, keyed(), 400, /last_event_id/],
      ['/v2/events?status=sideways', keyed(), 400, /status/],
      ['/v2/events?from_chain=moon', keyed(), 400, /from_chain/],
      ['/v2/events', {}, 401, /.+/],
    ];
    for (const [path, headers, code, message] of cases) {
      const res = await fetch(`${base}${path}`, { headers });
      assert.equal(res.status, code, path);
      const body = (await res.json()) as { status: string; error: string };
      assert.equal(body.status, 'Error');
      assert.match(body.error, message, path);
    }
  });

  if (kind === 'postgres') {
    test('a change committed by another instance reaches a client of this one', async () => {
      const order = await newOrder();
      const client = await SseClient.open(`${base}/v2/orders/${order.id}/events`, keyed());
      const second: Store = await openStore({ databaseUrl: (t.store as Store & { url?: string }).url ?? process.env.DATABASE_URL! });
      try {
        await client.until(() => client.events.length >= 1, 5_000, 'created');
        const otherRecorder = new OrderRecorder(second.db);
        await second.db.updateTable('swaps').set({ initiate_tx_hash: '0x07' }).where('order_id', '=', order.id).where('side', '=', 'source').execute();
        await otherRecorder.tick(); // its first tick finds what changed
        await client.until(() => client.events.length >= 2, 5_000, 'the other instance\'s event');
        assert.deepEqual(statuses(client), ['created', 'initiate_detected']);
      } finally {
        client.close();
        await second.close();
      }
    });
  }
});
