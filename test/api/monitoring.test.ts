import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertOrder, type NewOrder } from '../../src/store/orders.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { sampleOrder, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;

describeEachStore('monitoring and listings under /v2 and /v3', (kind) => {
  let t: TestApi;
  const get = async (url: string, key: string | null = t.key) => {
    const res = await t.api.inject({ url, headers: key ? { 'service-app-id': key } : {} });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  /** Both swaps initiated and redeemed: the order is completed. */
  const complete = async (order: NewOrder) => {
    for (const side of ['source', 'destination'] as const) {
      await t.store.db
        .updateTable('swaps')
        .set({
          initiate_tx_hash: `0x${'1'.repeat(64)}`,
          initiate_block_number: 10n,
          current_confirmations: 1,
          filled_amount: side === 'source' ? order.source.amount : order.destination.amount,
          redeem_tx_hash: `0x${'2'.repeat(64)}`,
          redeem_block_number: 11n,
          secret: 'ab'.repeat(32),
        })
        .where('order_id', '=', order.id)
        .where('side', '=', side)
        .execute();
    }
  };

  before(async () => {
    t = await openTestApi(kind);
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 10n ** 9n });
    const fromEthereum = sampleOrder(t.appId);
    const fromArbitrum = sampleOrder(t.appId, { quote: { feeBips: 30, fixedFee: '1.5', estimatedTime: 30 } });
    fromArbitrum.source = { ...fromArbitrum.source, chain: 'arbitrum_localnet', asset: 'arbitrum_localnet:wbtc' };
    fromArbitrum.destination = { ...fromArbitrum.destination, chain: 'ethereum_localnet', asset: 'ethereum_localnet:wbtc' };
    const open = sampleOrder(t.appId);
    for (const order of [fromEthereum, fromArbitrum, open]) await insertOrder(t.store.db, order);
    await complete(fromEthereum);
    await complete(fromArbitrum);
    const completed = await get('/v3/orders?status=completed');
    assert.equal(completed.body.result.total_items, 2, 'the fixture orders are completed');
  });
  after(() => t.close());

  test('volume: the USD value of completed swaps at their prices, filtered', async () => {
    for (const version of ['v2', 'v3']) {
      // 0.001 WBTC at 95,000 USD, twice; the open order does not count.
      assert.deepEqual((await get(`/${version}/volume`)).body, { status: 'Ok', result: '190.00' });
      assert.equal((await get(`/${version}/volume?source_chain=arbitrum_localnet`)).body.result, '95.00');
      assert.equal((await get(`/${version}/volume?destination_chain=arbitrum_localnet`)).body.result, '95.00');
      assert.equal((await get(`/${version}/volume?address=${USER.toLowerCase()}`)).body.result, '190.00');
      assert.equal((await get(`/${version}/volume?address=0x1111111111111111111111111111111111111111`)).body.result, '0.00');
      const now = Math.floor(Date.now() / 1000);
      assert.equal((await get(`/${version}/volume?from=${now - 600}&to=${now + 600}`)).body.result, '190.00');
      assert.equal((await get(`/${version}/volume?from=${now + 600}`)).body.result, '0.00');
    }
  });

  test('fees: each order\'s fee bips of its source value plus its fixed fee', async () => {
    // 30 bips of 95.00 is 0.285, counted 0.28 per source asset; the arbitrum order adds a fixed 1.50.
    assert.deepEqual((await get('/v3/fees')).body, { status: 'Ok', result: '2.06' });
    assert.equal((await get('/v2/fees?source_chain=arbitrum_localnet')).body.result, '1.78');
    assert.equal((await get('/v2/fees?source_chain=ethereum_localnet')).body.result, '0.28');
  });

  test('bad filters are 400 naming the parameter; no key is 401', async () => {
    for (const [url, field] of [
      ['/v3/volume?source_chain=nowhere', 'source_chain'],
      ['/v2/fees?destination_chain=nowhere', 'destination_chain'],
      ['/v3/fees?from=soon', 'from'],
      ['/v3/volume?from=20&to=10', 'to'],
    ] as const) {
      const res = await get(url);
      assert.equal(res.status, 400, url);
      assert.equal(res.body.status, 'Error');
      assert.equal(res.body.code, 'invalid_request');
      assert.match(res.body.error, new RegExp(`'${field}'`));
    }
    for (const url of ['/v2/volume', '/v3/fees', '/v3/liquidity', '/v3/policy', '/v3/apps/earnings', '/v3/assets']) {
      const res = await get(url, null);
      assert.equal(res.status, 401, url);
      assert.equal(res.body.code, 'unauthorized');
    }
  });

  test("health in Garden's shape, without a key", async () => {
    for (const version of ['v2', 'v3']) assert.deepEqual((await get(`/${version}/health`, null)).body, { status: 'Ok', result: 'Online' });
  });

  test('v3 serves liquidity, policy and earnings as v2 does, and lists its assets with is_active', async () => {
    for (const path of ['liquidity', 'policy', 'apps/earnings']) {
      const [v2, v3] = [await get(`/v2/${path}`), await get(`/v3/${path}`)];
      assert.equal(v3.status, 200, path);
      assert.deepEqual(v3.body, v2.body, path);
    }
    const liquidity = (await get('/v3/liquidity')).body.result as Json[];
    const wbtc = liquidity.flatMap((s) => s.liquidity).find((l: Json) => l.asset === 'arbitrum_localnet:wbtc');
    assert.equal(wbtc.balance, String(10n ** 9n));
    const assets = (await get('/v3/assets')).body.result as Json[];
    assert.ok(assets.length > 3);
    for (const a of assets) assert.equal(a.is_active, true);
    assert.deepEqual(Object.keys(assets[0]!).sort(), [
      'chain', 'decimals', 'htlc', 'icon', 'id', 'is_active', 'max_amount', 'min_amount', 'name', 'price', 'token',
    ]);
    const one = (await get('/v3/assets?from=arbitrum_localnet:wbtc')).body.result as Json[];
    assert.deepEqual(one.map((a) => a.id), ['arbitrum_localnet:wbtc']);
    const bad = await get('/v3/assets?from=nowhere:x');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /'from'/);
  });
});
