// The order event log: one event per status change, recorded once, whichever way the change came
// (a notified write, time passing, a chain height), and atomically with what rides on it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { unixSeconds } from '../../src/clock.ts';
import { OrderRecorder } from '../../src/events/order-recorder.ts';
import { recordWatcherPoll } from '../../src/store/swap-events.ts';
import type { Store } from '../../src/store/database.ts';
import { eventsAfter } from '../../src/store/order-events.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { MovableClock } from '../helpers/clock.ts';
import { sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';

describeEachStore('order event recorder', (kind) => {
  let store: Store;
  let appId: string;

  before(async () => {
    store = await openTestStore(kind);
    ({ app: { id: appId } } = await seedBasics(store.db));
  });
  after(() => store.close());

  const statusesOf = async (orderId: string) => (await eventsAfter(store.db, { afterId: '0', orderId, limit: 100 })).map((e) => e.status);
  const setSource = (orderId: string, values: Record<string, string | number>) =>
    store.db.updateTable('swaps').set(values).where('order_id', '=', orderId).where('side', '=', 'source').execute();
  const setDestination = (orderId: string, values: Record<string, string | number>) =>
    store.db.updateTable('swaps').set(values).where('order_id', '=', orderId).where('side', '=', 'destination').execute();

  test('each status change of an order is recorded once, in order, with the order as the read shows it', async () => {
    const recorder = new OrderRecorder(store.db);
    await recorder.tick(); // the first tick rechecks every order
    const order = sampleOrder(appId);
    await insertOrder(store.db, order);
    recorder.touch(order.id);
    const [created] = await recorder.tick();
    assert.equal(created?.status, 'created');
    assert.equal(created.appId, appId);
    assert.equal(JSON.parse(created.orderJson).source_swap.swap_id, order.source.swapId);

    recorder.touch(order.id);
    assert.deepEqual(await recorder.tick(), [], 'no event when the status did not change');

    await setSource(order.id, { initiate_tx_hash: '0xa1' });
    recorder.touch(order.id);
    await recorder.tick();
    await setSource(order.id, { initiate_block_number: '10', current_confirmations: 1 });
    recorder.touch(order.id);
    recorder.touch(order.id);
    await recorder.tick();
    await setDestination(order.id, { initiate_tx_hash: '0xb1', initiate_block_number: '5', current_confirmations: 1 });
    await setDestination(order.id, { redeem_tx_hash: '0xb2' });
    recorder.touch(order.id);
    await recorder.tick(); // two changes between ticks: only the status reached is recorded
    await setDestination(order.id, { redeem_block_number: '6' });
    await setSource(order.id, { redeem_tx_hash: '0xa2', redeem_block_number: '12' });
    recorder.touch(order.id);
    await recorder.tick();
    assert.deepEqual(await statusesOf(order.id), ['created', 'initiate_detected', 'initiated', 'redeem_detected', 'completed']);
    const events = await eventsAfter(store.db, { afterId: '0', orderId: order.id, limit: 100 });
    assert.ok(events.every((e, i) => i === 0 || BigInt(e.id) > BigInt(events[i - 1]!.id)), 'ids increase');
    assert.equal(JSON.parse(events.at(-1)!.orderJson).status, 'completed');
  });

  test('time and chain height alone move statuses without any write to the order', async () => {
    const clock = new MovableClock();
    const recorder = new OrderRecorder(store.db, [], clock);
    await recorder.tick();
    const late = sampleOrder(appId, { deadline: BigInt(unixSeconds(clock) + 1) });
    const locked = sampleOrder(appId);
    await insertOrder(store.db, late);
    await insertOrder(store.db, locked);
    await setSource(locked.id, { initiate_tx_hash: '0xc1', initiate_block_number: '100', current_confirmations: 1 });
    recorder.touch(late.id);
    recorder.touch(locked.id);
    await recorder.tick();
    assert.deepEqual(await statusesOf(late.id), ['created']);
    assert.deepEqual(await statusesOf(locked.id), ['initiated']);

    await recordWatcherPoll(store.db, 'ethereum_localnet', { events: [], head: 100n + 600n + 1n });
    clock.advance(2_000); // past the deadline, and a second since the last look
    const moved = await recorder.tick(); // nothing touched
    assert.deepEqual(moved.map((e) => [e.orderId, e.status]).sort(), [[late.id, 'expired'], [locked.id, 'awaiting_refund']].sort());
    assert.deepEqual(await recorder.tick(), [], 'recorded once');
    await recordWatcherPoll(store.db, 'ethereum_localnet', { events: [], head: 0n });
  });

  test('a recorder that starts after changes it never heard of records them; nothing twice', async () => {
    const order = sampleOrder(appId);
    await insertOrder(store.db, order);
    await setSource(order.id, { initiate_tx_hash: '0xd1' });
    const [a, b] = [new OrderRecorder(store.db), new OrderRecorder(store.db)];
    const [fromA, fromB] = await Promise.all([a.tick(), b.tick()]);
    const mine = [...fromA, ...fromB].filter((e) => e.orderId === order.id);
    assert.deepEqual(mine.map((e) => e.status), ['initiate_detected'], 'two recorders at once record the change once');
    assert.deepEqual(await statusesOf(order.id), ['initiate_detected']);
  });

  test('what rides on an event (the webhook outbox) commits with it or not at all', async () => {
    let fail = false;
    const seen: string[] = [];
    const outbox = new OrderRecorder(store.db, [
      async (_trx, events) => {
        seen.push(...events.map((e) => e.status));
        if (fail) throw new Error('outbox write failed');
      },
    ]);
    await outbox.tick(); // the first tick rechecks every order
    seen.length = 0;
    fail = true;
    const order = sampleOrder(appId);
    await insertOrder(store.db, order);
    outbox.touch(order.id);
    await assert.rejects(outbox.tick(), /outbox write failed/);
    assert.deepEqual(await statusesOf(order.id), [], 'the event rolled back with the failed outbox write');
    fail = false;
    const retried = await outbox.tick(); // the failed order is kept for the next tick
    assert.deepEqual(retried.map((e) => e.status), ['created']);
    assert.deepEqual(await statusesOf(order.id), ['created']);
    assert.deepEqual(seen, ['created', 'created']);
  });
});
