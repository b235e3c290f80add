import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { currentHeights } from '../../src/orders/heights-cache.ts';
import { STATUS_GROUP_NAMES, statusGroup, type StatusGroup } from '../../src/orders/status-groups.ts';
import { orderStatus } from '../../src/orders/status.ts';
import { createApp } from '../../src/store/apps.ts';
import { listChainHeights } from '../../src/store/chain-heights.ts';
import { recordWatcherPoll } from '../../src/store/swap-events.ts';
import type { SwapsTable } from '../../src/store/schema.ts';
import { findOrder, insertOrder, type NewOrder } from '../../src/store/orders.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32, sampleOrder, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;
type SwapUpdate = Partial<{ [K in keyof SwapsTable]: string | number | null }>;

const nowUnix = () => Math.floor(Date.now() / 1000);

describeEachStore('GET /v2/orders', (kind) => {
  let t: TestApi;
  let other: { id: string; key: string };
  /** The main app's orders, oldest first. */
  const ours: NewOrder[] = [];
  let minute = 0;

  const list = async (query = '', key = t.key) => {
    const res = await t.api.inject({ url: `/v2/orders${query}`, headers: { 'service-app-id': key } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>().result as { data: Json[]; page: number; total_pages: number; total_items: number; per_page: number };
  };
  const ids = async (query: string, key = t.key) => (await list(`${query}${query.includes('?') ? '&' : '?'}per_page=100`, key)).data.map((o) => o.order_id as string);

  async function updateSwap(orderId: string, side: 'source' | 'destination', set: SwapUpdate) {
    await t.store.db.updateTable('swaps').set(set as never).where('order_id', '=', orderId).where('side', '=', side).execute();
  }

  /** Inserts an order created a minute after the previous one, then applies swap progress. */
  async function addOrder(appId: string, overrides: Partial<NewOrder> = {}, source: SwapUpdate = {}, destination: SwapUpdate = {}) {
    const order = sampleOrder(appId, overrides);
    await insertOrder(t.store.db, order);
    minute += 1;
    await t.store.db.updateTable('orders').set({ created_at: new Date(Date.UTC(2027, 0, 1, 0, minute)) }).where('id', '=', order.id).execute();
    if (Object.keys(source).length > 0) await updateSwap(order.id, 'source', source);
    if (Object.keys(destination).length > 0) await updateSwap(order.id, 'destination', destination);
    if (appId === t.appId) ours.push(order);
    return order;
  }

  before(async () => {
    t = await openTestApi(kind);
    const created = await createApp(t.store.db, { name: 'other app' });
    other = { id: created.app.id, key: created.key };
    await addOrder(other.id);
    for (let i = 0; i < 12; i++) await addOrder(t.appId);
    await addOrder(other.id);
  });
  after(() => t.close());

  test("lists only the calling app's orders, newest first, each as the order read shows it", async () => {
    const page = await list();
    assert.deepEqual({ ...page, data: page.data.length }, { data: 10, page: 1, total_pages: 2, total_items: 12, per_page: 10 });
    assert.deepEqual(page.data.map((o) => o.order_id), ours.slice(-10).reverse().map((o) => o.id));
    for (const o of page.data.slice(0, 3)) {
      const single = await t.api.inject({ url: `/v2/orders/${o.order_id}`, headers: { 'service-app-id': t.key } });
      assert.deepEqual(o, single.json<Json>().result);
      assert.equal(o.status, 'created');
    }
    const theirs = await list('', other.key);
    assert.equal(theirs.total_items, 2);
    assert.ok(theirs.data.every((o) => !ours.some((x) => x.id === o.order_id)));
  });

  test('pagination: total_pages rounds up, the last page is partial, later pages are empty', async () => {
    const all = ours.map((o) => o.id).reverse();
    const seen: string[] = [];
    for (let p = 1; p <= 3; p++) {
      const page = await list(`?page=${p}&per_page=5`);
      assert.deepEqual([page.page, page.per_page, page.total_pages, page.total_items], [p, 5, 3, all.length]);
      seen.push(...page.data.map((o) => o.order_id));
    }
    assert.deepEqual(seen, all.slice(0, seen.length));
    assert.equal(seen.length, all.length);
    const beyond = await list('?page=9&per_page=5');
    assert.deepEqual([beyond.data.length, beyond.total_pages, beyond.total_items], [0, 3, all.length]);
    const one = await list('?per_page=1');
    assert.deepEqual([one.data.length, one.total_pages], [1, all.length]);
    const nothing = await list('?tx_hash=0xnothing');
    assert.deepEqual({ ...nothing, data: nothing.data.length }, { data: 0, page: 1, total_pages: 0, total_items: 0, per_page: 10 });
  });

  test('address matches initiator, redeemer or delegate of either swap, in any case', async () => {
    const alice = '0xA11CE00000000000000000000000000000000001';
    const bob = '0xB0B0000000000000000000000000000000000002';
    const delegate = 'ab'.repeat(32);
    const asInitiator = await addOrder(t.appId, {}, { initiator: alice });
    const asRedeemer = await addOrder(t.appId, {}, {}, { redeemer: alice });
    const asDelegate = await addOrder(t.appId, {}, { delegate: delegate.toUpperCase() }, { initiator: bob });
    assert.deepEqual(await ids(`?address=${alice.toLowerCase()}`), [asRedeemer.id, asInitiator.id]);
    assert.deepEqual(await ids(`?address=${alice.toUpperCase().replace('0X', '0x')}`), [asRedeemer.id, asInitiator.id]);
    assert.deepEqual(await ids(`?address=${delegate}`), [asDelegate.id]);
    assert.deepEqual(await ids(`?address=${bob}`), [asDelegate.id]);
    assert.deepEqual(await ids(`?address=${alice}`, other.key), []);
    // The fixtures' user and solver appear in every order.
    assert.equal((await list(`?address=${USER}`)).total_items, ours.length);
    assert.equal((await list(`?address=${SOLVER.addresses.ethereum_localnet}`)).total_items, ours.length);
  });

  test('from_owner and to_owner match the source initiator and the destination redeemer', async () => {
    const carol = '0xCa401000000000000000000000000000000000c3';
    const from = await addOrder(t.appId, {}, { initiator: carol });
    const to = await addOrder(t.appId, {}, {}, { redeemer: carol });
    assert.deepEqual(await ids(`?from_owner=${carol.toLowerCase()}`), [from.id]);
    assert.deepEqual(await ids(`?to_owner=${carol}`), [to.id]);
    assert.deepEqual(await ids(`?from_owner=${carol}&to_owner=${carol}`), []);
  });

  test('tx_hash matches any of the six transaction hashes', async () => {
    const found: Array<[string, string]> = [];
    for (const side of ['source', 'destination'] as const) {
      for (const tx of ['initiate', 'redeem', 'refund'] as const) {
        const hash = `0x${randomHex32()}`;
        const order = await addOrder(t.appId, {}, side === 'source' ? { [`${tx}_tx_hash`]: hash } : {}, side === 'destination' ? { [`${tx}_tx_hash`]: hash } : {});
        found.push([hash, order.id]);
      }
    }
    for (const [hash, id] of found) assert.deepEqual(await ids(`?tx_hash=${hash}`), [id], hash);
    assert.deepEqual(await ids(`?tx_hash=${found[0]![0]}`, other.key), []);
  });

  test('from_chain and to_chain filter by chain key', async () => {
    const reverse = sampleOrder(t.appId);
    const back = await addOrder(t.appId, {
      source: { ...reverse.destination, chain: 'arbitrum_localnet', asset: 'arbitrum_localnet:wbtc' },
      destination: { ...reverse.source, chain: 'ethereum_localnet', asset: 'ethereum_localnet:wbtc' },
    });
    assert.deepEqual(await ids('?from_chain=arbitrum_localnet'), [back.id]);
    assert.deepEqual(await ids('?to_chain=ethereum_localnet'), [back.id]);
    assert.deepEqual(await ids('?from_chain=arbitrum_localnet&to_chain=arbitrum_localnet'), []);
    assert.equal((await list('?from_chain=ethereum_localnet&to_chain=arbitrum_localnet')).total_items, ours.length - 1);
    assert.deepEqual(await ids('?from_chain=litecoin_localnet'), []);
  });

  test('status filters by group; a comma list is any of them', async () => {
    const app = await createApp(t.store.db, { name: 'status app' });
    const done = { initiate_tx_hash: '0x1', initiate_block_number: 10, current_confirmations: 5 };
    const expired = await addOrder(app.app.id, { deadline: BigInt(nowUnix() - 10) });
    const fresh = await addOrder(app.app.id);
    const started = await addOrder(app.app.id, { deadline: BigInt(nowUnix() - 10) }, { initiate_tx_hash: '0x1' });
    const paid = await addOrder(app.app.id, {}, done, { ...done, redeem_tx_hash: '0x2', redeem_block_number: 12 });
    const paying = await addOrder(app.app.id, {}, done, { ...done, redeem_tx_hash: '0x2' });
    const refunded = await addOrder(app.app.id, {}, { ...done, refund_tx_hash: '0x3', refund_block_number: 900 });
    const q = (status: string) => ids(`?status=${status}`, app.key);
    assert.deepEqual(await q('not-initiated'), [fresh.id]);
    assert.deepEqual(await q('expired'), [expired.id]);
    assert.deepEqual(await q('in-progress'), [paying.id, started.id]);
    assert.deepEqual(await q('completed'), [paid.id]);
    assert.deepEqual(await q('refunded'), [refunded.id]);
    assert.deepEqual(await q('completed,refunded'), [refunded.id, paid.id]);
    assert.deepEqual(await q('expired, not-initiated'), [fresh.id, expired.id]);
    assert.equal((await list(`?status=${STATUS_GROUP_NAMES.join(',')}`, app.key)).total_items, 6);
    const shown = await list('?per_page=100', app.key);
    assert.deepEqual(
      shown.data.map((o) => o.status),
      ['refunded', 'redeem_detected', 'redeemed', 'initiate_detected', 'created', 'expired'],
    );
  });

  test('each status group selects exactly the orders whose status is in it, over random swap states', async () => {
    const app = await createApp(t.store.db, { name: 'random states' });
    let seed = 7; // mulberry32
    const random = () => {
      seed = (seed + 0x6d2b79f5) >>> 0;
      let x = Math.imul(seed ^ (seed >>> 15), seed | 1);
      x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
    const txState = (tx: string): SwapUpdate => {
      const r = random();
      if (r < 0.7) return {};
      return r < 0.85 ? { [`${tx}_tx_hash`]: `0x${tx}` } : { [`${tx}_tx_hash`]: `0x${tx}`, [`${tx}_block_number`]: 5 };
    };
    const swapState = (): SwapUpdate => ({ ...txState('initiate'), ...txState('redeem'), ...txState('refund'), current_confirmations: Math.floor(random() * 3) });
    const created: string[] = [];
    for (let i = 0; i < 60; i++) {
      const deadline = BigInt(nowUnix() + (random() < 0.5 ? -100 : 3600));
      created.push((await addOrder(app.app.id, { deadline }, swapState(), swapState())).id);
    }
    const clock = { unixSeconds: nowUnix(), heights: await listChainHeights(t.store.db) };
    const expected = new Map<StatusGroup, string[]>(STATUS_GROUP_NAMES.map((g) => [g, []]));
    for (const id of created) {
      const order = (await findOrder(t.store.db, id))!;
      expected.get(statusGroup(orderStatus(order, clock)))!.push(id);
    }
    for (const group of STATUS_GROUP_NAMES) {
      assert.deepEqual(new Set(await ids(`?status=${group}`, app.key)), new Set(expected.get(group)), group);
    }
    assert.ok([...expected.values()].every((g) => g.length > 0), 'every group is exercised');
    // Garden's clients' values are unions of the groups.
    const union = (...groups: StatusGroup[]) => new Set(groups.flatMap((g) => expected.get(g)!));
    assert.deepEqual(new Set(await ids('?status=pending', app.key)), union('not-initiated', 'in-progress'));
    assert.deepEqual(new Set(await ids('?status=fulfilled', app.key)), union('completed'));
    assert.deepEqual(new Set(await ids('?status=all', app.key)), new Set(created));
    assert.deepEqual(new Set(await ids('?status=pending,refunded', app.key)), union('not-initiated', 'in-progress', 'refunded'));
    assert.ok(union('not-initiated', 'in-progress').size < created.length, 'pending leaves finished orders out');
  });

  test("Garden's SDK executor query: from_owner, status=pending, per_page=500", async () => {
    const app = await createApp(t.store.db, { name: 'garden sdk' });
    const owner = '0x' + 'ab'.repeat(20);
    const open = await addOrder(app.app.id, { deadline: BigInt(nowUnix() + 3600) }, { initiator: owner, initiate_tx_hash: '0x1' });
    await addOrder(app.app.id, {}, { initiator: owner, initiate_tx_hash: '0x1', initiate_block_number: 5 }, { redeem_tx_hash: '0x2', redeem_block_number: 6 });
    await addOrder(app.app.id, { deadline: BigInt(nowUnix() + 3600) }, { initiator: '0x' + 'cd'.repeat(20) });
    const page = await list(`?from_owner=${owner.toUpperCase().replace('0X', '0x')}&status=pending&per_page=500`, app.key);
    assert.equal(page.per_page, 500);
    assert.deepEqual(page.data.map((o) => o.order_id), [open.id]);
  });

  test('solver_id and integrator match the order exactly', async () => {
    const app = await createApp(t.store.db, { name: 'filters' });
    const order = await addOrder(app.app.id);
    assert.deepEqual(await ids(`?solver_id=${SOLVER.id}`, app.key), [order.id]);
    assert.deepEqual(await ids('?solver_id=another-solver', app.key), []);
    assert.deepEqual(await ids(`?integrator=${encodeURIComponent(order.integrator)}`, app.key), [order.id]);
    assert.deepEqual(await ids('?integrator=someone%20else', app.key), []);
  });

  test('the status shows the chain heights, read at most once a second', async () => {
    const txHash = `0x${randomHex32()}`;
    const order = await addOrder(t.appId, {}, { initiate_tx_hash: txHash, initiate_block_number: 100, current_confirmations: 1 });
    const status = async () =>
      (await t.api.inject({ url: `/v2/orders/${order.id}`, headers: { 'service-app-id': t.key } })).json<Json>().result.status as string;
    assert.equal(await status(), 'initiated');
    await recordWatcherPoll(t.store.db, 'ethereum_localnet', { events: [], head: 701n });
    assert.deepEqual(await listChainHeights(t.store.db), new Map([['ethereum_localnet', 701n]]));
    const started = Date.now();
    while ((await status()) !== 'awaiting_refund') {
      assert.ok(Date.now() - started < 3000, 'the new height shows within a second');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await list(`?tx_hash=${txHash}&per_page=100`)).data.find((o) => o.order_id === order.id)?.status, 'awaiting_refund');
    await recordWatcherPoll(t.store.db, 'ethereum_localnet', { events: [], head: 5n });
    const heights = await currentHeights(t.store.db);
    assert.equal(heights.get('ethereum_localnet'), 701n, 'a second has not passed: the last read still serves');
  });
});
