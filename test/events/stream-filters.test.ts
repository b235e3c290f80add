import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StreamFilters } from '../../src/events/stream-filters.ts';
import type { Store } from '../../src/store/database.ts';
import { listOrderIds, type OrderFilter } from '../../src/store/order-list.ts';
import { insertOrder } from '../../src/store/orders.ts';
import { sampleOrder, seedBasics, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore, StatementCounter } from '../helpers/stores.ts';

describeEachStore('event stream filters asked together', (kind) => {
  let store: Store;
  let appId: string;
  let orderId: string;
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
    const order = sampleOrder(appId);
    await insertOrder(store.db, order);
    orderId = order.id;
    await store.db.updateTable('swaps').set({ redeem_tx_hash: '0xfeed' }).where('order_id', '=', orderId).where('side', '=', 'destination').execute();
  });
  after(() => store.close());

  /** The order list's own answer for one filter and order: what every stream filter must agree with. */
  const listed = async (id: string, filter: OrderFilter) =>
    (await listOrderIds(store.db, { ...filter, orderIds: [id], nowUnix: Math.floor(Date.now() / 1000), page: 1, perPage: 1 })).total > 0;

  const someone = (i: number) => ({ key: `0x${i.toString(16).padStart(40, '0')}`, exact: false });
  const filtersOfApp = (): OrderFilter[] => [
    { appId },
    { appId: 'another app' },
    { appId, address: [{ key: USER.toLowerCase(), exact: false }] },
    { appId, address: [someone(1)] },
    { appId, fromChain: 'ethereum_localnet', toChain: 'arbitrum_localnet' },
    { appId, fromChain: 'arbitrum_localnet' },
    { appId, integrator: 'test app' },
    { appId, integrator: 'another integrator' },
    { appId, txHash: [] },
    { appId, txHash: ['0xfeed', '0xbeef'] },
    { appId, txHash: ['0xbeef'] },
    { appId, address: [{ key: SOLVER.addresses.arbitrum_localnet!.toLowerCase(), exact: false }] },
    { appId, address: [{ key: USER.toLowerCase(), exact: true }] },
    { appId, address: [{ key: USER.toLowerCase(), exact: true }, { key: USER, exact: true }] },
    { appId, toOwner: [{ key: USER.toLowerCase(), exact: false }] },
    { appId, fromOwner: [someone(1)] },
    ...Array.from({ length: 30 }, (_, i) => ({ appId, address: [someone(i + 2)] })),
  ];

  test("one statement answers every stream's filter for an order, as the order list would", async () => {
    const counter = new StatementCounter();
    const filtersOf = new StreamFilters(store.db.withPlugin(counter));
    const filters = filtersOfApp();
    // Asked in one turn, as the hub hands an event to its streams; the same filter twice is asked once.
    const answers = await Promise.all([...filters, ...filters].map((f) => filtersOf.matcher(f)(orderId)));
    assert.equal(counter.count, 1, `${counter.count} statements`);
    const expected = await Promise.all(filters.map((f) => listed(orderId, f)));
    assert.deepEqual(answers, [...expected, ...expected]);
    assert.deepEqual(expected.slice(0, 16), [true, false, true, false, true, false, true, false, false, true, false, true, false, true, true, false], 'the filters tell matches apart');
  });

  test('two orders in one turn: one statement each; an unknown order matches nothing', async () => {
    const counter = new StatementCounter();
    const filtersOf = new StreamFilters(store.db.withPlugin(counter));
    const unknown = 'ab'.repeat(32);
    const filters = filtersOfApp();
    const [mine, none] = await Promise.all([
      Promise.all(filters.slice(0, 3).map((f) => filtersOf.matcher(f)(orderId))),
      Promise.all(filters.slice(0, 3).map((f) => filtersOf.matcher(f)(unknown))),
    ]);
    assert.equal(counter.count, 2);
    assert.deepEqual(mine, [true, false, true]);
    assert.deepEqual(none, [false, false, false]);
  });

  test('more filters than one statement holds are answered in several, each right', async () => {
    const counter = new StatementCounter();
    const filtersOf = new StreamFilters(store.db.withPlugin(counter));
    const many: OrderFilter[] = Array.from({ length: 2_100 }, (_, i) => ({ appId, integrator: i === 1_500 ? 'test app' : `integrator ${i}` }));
    const answers = await Promise.all(many.map((f) => filtersOf.matcher(f)(orderId)));
    assert.equal(counter.count, 3);
    assert.deepEqual(answers.flatMap((a, i) => (a ? [i] : [])), [1_500]);
  });

  test('nothing is cached: the next question sees the order as it is then', async () => {
    const filtersOf = new StreamFilters(store.db);
    const filter: OrderFilter = { appId, integrator: 'renamed' };
    assert.equal(await filtersOf.matcher(filter)(orderId), false);
    await store.db.updateTable('orders').set({ integrator: 'renamed' }).where('id', '=', orderId).execute();
    try {
      assert.equal(await filtersOf.matcher(filter)(orderId), true);
    } finally {
      await store.db.updateTable('orders').set({ integrator: 'test app' }).where('id', '=', orderId).execute();
    }
  });
});
