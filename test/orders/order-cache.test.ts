import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OrderCache } from '../../src/orders/order-cache.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { MovableClock } from '../helpers/clock.ts';
import { sampleOrder, seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { waitFor } from '../helpers/wait.ts';

/** Reads until two reads in a row return the same record: pending notifications have settled. */
async function settled(cache: OrderCache, id: string) {
  let record: unknown;
  await waitFor(async () => {
    record = await cache.get(id);
    return record !== undefined && (await cache.get(id)) === record;
  }, 5_000, 'reads are served from memory');
  return record as Awaited<ReturnType<OrderCache['get']>>;
}

describeEachStore('order read cache', (kind) => {
  let store: Store & { url?: string };
  /** Where "another process" writes: a second connection pool on PostgreSQL; PGlite has one session. */
  let writer: Store;
  let appId: string;

  before(async () => {
    store = await openTestStore(kind);
    writer = kind === 'postgres' ? await openStore({ databaseUrl: store.url }) : store;
    appId = (await seedBasics(store.db)).app.id;
  });
  after(async () => {
    if (writer !== store) await writer.close();
    await store.close();
  });

  test('serves repeated reads from memory and drops an order as soon as any writer changes it', async () => {
    const cache = new OrderCache(store.db, 60_000);
    const stop = await cache.start(store);
    try {
      const order = sampleOrder(appId);
      await insertOrder(writer.db, order);
      const first = await settled(cache, order.id);
      assert.equal(first?.source.initiateTxHash, '');
      assert.ok((await cache.get(order.id)) === first, 'a later read is the cached record');

      await writer.db
        .updateTable('swaps')
        .set({ initiate_tx_hash: '0xfeed', initiate_block_number: 42n })
        .where('order_id', '=', order.id)
        .where('side', '=', 'source')
        .execute();
      await waitFor(async () => (await cache.get(order.id))?.source.initiateTxHash === '0xfeed', 5_000, 'the change shows');
      assert.equal((await cache.get(order.id))?.source.initiateBlockNumber, '42');

      await writer.db.insertInto('affiliate_fees').values({ order_id: order.id, position: 0, address: '0xaa', fee_bips: 10, asset: 'ethereum_localnet:usdc', amount: 5n }).execute();
      await waitFor(async () => (await cache.get(order.id))?.affiliateFees.length === 1, 5_000, 'a new fee shows');
    } finally {
      await stop();
    }
  });

  test('caches nothing once its listener stops, or when turned off', async () => {
    const order = sampleOrder(appId);
    await insertOrder(store.db, order);
    const cache = new OrderCache(store.db, 60_000);
    const stop = await cache.start(store);
    await settled(cache, order.id);
    await stop();
    assert.ok((await cache.get(order.id)) !== (await cache.get(order.id)), 'without notifications every read queries');

    const off = new OrderCache(store.db, 0);
    await off.start(store);
    assert.ok((await off.get(order.id)) !== (await off.get(order.id)), 'a cache turned off queries every time');
  });

  test("an entry lives its maxAgeMs by the service's clock, then the order is read again", async () => {
    const clock = new MovableClock();
    const cache = new OrderCache(store.db, 60_000, undefined, clock);
    const stop = await cache.start(store);
    try {
      const order = sampleOrder(appId);
      await insertOrder(store.db, order);
      const cached = await settled(cache, order.id);
      clock.advance(59_000);
      assert.equal(await cache.get(order.id), cached, 'still within its life');
      clock.advance(1_000);
      assert.notEqual(await cache.get(order.id), cached, 'past its life: read again');
    } finally {
      await stop();
    }
  });

  test('expired entries are released, by the sweep and by the next order kept, not held until the cache is full', async () => {
    const clock = new MovableClock();
    const cache = new OrderCache(store.db, 60_000, undefined, clock);
    const stop = await cache.start(store);
    try {
      const orders = [sampleOrder(appId), sampleOrder(appId), sampleOrder(appId)];
      for (const order of orders) await insertOrder(store.db, order);
      await settled(cache, orders[0]!.id);
      await settled(cache, orders[1]!.id);
      assert.equal(cache.size, 2);
      clock.advance(30_000);
      cache.sweep();
      assert.equal(cache.size, 2, 'both within their life');
      clock.advance(30_000);
      await settled(cache, orders[2]!.id);
      assert.equal(cache.size, 1, 'keeping the third released the two expired');
      clock.advance(60_000);
      cache.sweep();
      assert.equal(cache.size, 0);
    } finally {
      await stop();
    }
  });

  test('concurrent misses share one query, and an unknown order is not cached', async () => {
    const cache = new OrderCache(store.db, 60_000);
    const stop = await cache.start(store);
    try {
      const order = sampleOrder(appId);
      await insertOrder(store.db, order);
      const reads = await Promise.all(Array.from({ length: 10 }, () => cache.get(order.id)));
      assert.ok(reads.every((r) => r === reads[0] && r !== undefined));
      const missing = sampleOrder(appId);
      assert.equal(await cache.get(missing.id), undefined);
      await insertOrder(store.db, missing);
      assert.equal((await cache.get(missing.id))?.id, missing.id);
    } finally {
      await stop();
    }
  });
});
