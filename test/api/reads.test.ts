import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { decodeFunctionData, erc20Abi } from 'viem';
import { schnorr } from '@noble/curves/secp256k1.js';
import { htlcAddress } from '../../src/chains/bitcoin/htlc.ts';
import { htlcInitiateAbi } from '../../src/chains/solidity-htlc/htlc-abi.ts';
import { normalizeStarknetAddress, SELECTORS, starknetOrderId } from '../../src/chains/starknet/index.ts';
import { ERROR_CODES } from '../../src/errors.ts';
import { accrueOrderFees } from '../../src/store/affiliates.ts';
import { insertOrder, type NewOrder } from '../../src/store/orders.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { MAINNET_REGISTRY_PATH, sampleOrder, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;

const STARKNET_HTLC = '0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';

const SWAP_KEYS = [
  'created_at', 'swap_id', 'chain', 'asset', 'initiator', 'redeemer', 'delegate', 'timelock', 'filled_amount',
  'asset_price', 'amount', 'secret_hash', 'secret', 'instant_refund_tx', 'initiate_tx_hash', 'redeem_tx_hash',
  'refund_tx_hash', 'initiate_block_number', 'redeem_block_number', 'refund_block_number', 'required_confirmations',
  'current_confirmations', 'initiate_timestamp', 'redeem_timestamp', 'refund_timestamp',
].sort();

describeEachStore('API reads', (kind) => {
  let t: TestApi;
  let order: NewOrder;
  const get = async (url: string, key: string | undefined = t.key) => {
    const res = await t.api.inject({ url, headers: key ? { 'service-app-id': key } : {} });
    return { status: res.statusCode, body: res.json<Json>() };
  };

  before(async () => {
    t = await openTestApi(kind);
    order = sampleOrder(t.appId, {
      affiliateFees: [{ address: '0x1111111111111111111111111111111111111111', fee: 30, asset: 'ethereum_localnet:usdc', amount: 28500n }],
    });
    await insertOrder(t.store.db, order);
  });
  after(() => t.close());

  test('GET /v2/orders/{order} has the spec fields with their types', async () => {
    const { status, body } = await get(`/v2/orders/${order.id.toUpperCase()}`);
    assert.equal(status, 200);
    assert.equal(body.status, 'Ok');
    const o = body.result;
    assert.deepEqual(Object.keys(o).sort(), [
      'affiliate_fees', 'created_at', 'deadline', 'destination_swap', 'failed_actions', 'integrator', 'nonce', 'order_id', 'slippage',
      'solver_id', 'source_swap', 'status', 'version',
    ]);
    assert.deepEqual(o.failed_actions, [], 'no relayed action of it failed');
    assert.equal(o.order_id, order.id);
    assert.match(o.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(o.deadline, Number(order.deadline));
    assert.equal(o.nonce, order.nonce);
    assert.equal(o.solver_id, SOLVER.id);
    assert.deepEqual(o.affiliate_fees, [{ address: '0x1111111111111111111111111111111111111111', asset: 'ethereum_localnet:usdc', fee: 30 }]);
    for (const side of ['source_swap', 'destination_swap']) assert.deepEqual(Object.keys(o[side]).sort(), SWAP_KEYS);
    const s = o.source_swap;
    assert.equal(s.swap_id, order.source.swapId);
    assert.equal(s.amount, '100000');
    assert.equal(s.filled_amount, '0');
    assert.equal(s.timelock, 600);
    assert.equal(s.initiator, USER);
    assert.equal(s.secret, '');
    assert.equal(s.initiate_tx_hash, '');
    assert.equal(s.initiate_block_number, '0');
    assert.equal(s.initiate_timestamp, null);
    assert.equal(s.secret_hash, order.secretHash);
    assert.equal(o.destination_swap.amount, '99700');
    assert.equal(o.status, 'created');
  });

  test("GET /v2/orders/{order}/swaps: the order's two swaps as the order read shows them, behind the key", async () => {
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: '0xdef', initiate_block_number: 42n }).where('order_id', '=', order.id).where('side', '=', 'source').execute();
    try {
      const { status, body } = await get(`/v2/orders/${order.id.toUpperCase()}/swaps`);
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(body), ['status', 'result']);
      assert.equal(body.status, 'Ok');
      assert.deepEqual(Object.keys(body.result), ['source_swap', 'destination_swap']);
      for (const side of ['source_swap', 'destination_swap']) assert.deepEqual(Object.keys(body.result[side]).sort(), SWAP_KEYS);
      const read = (await get(`/v2/orders/${order.id}`)).body.result;
      assert.deepEqual(body.result, { source_swap: read.source_swap, destination_swap: read.destination_swap });
      assert.equal(body.result.source_swap.initiate_tx_hash, '0xdef');
      assert.equal(body.result.destination_swap.swap_id, order.destination.swapId);
    } finally {
      await t.store.db.updateTable('swaps').set({ initiate_tx_hash: '', initiate_block_number: 0n }).where('order_id', '=', order.id).execute();
    }

    const unknown = await get(`/v2/orders/${'ab'.repeat(32)}/swaps`);
    assert.equal(unknown.status, 404);
    assert.deepEqual([unknown.body.status, unknown.body.code], ['Error', 'not_found']);
    assert.match(unknown.body.error, /order abab.* not found/);
    const noKey = await get(`/v2/orders/${order.id}/swaps`, '');
    assert.deepEqual([noKey.status, noKey.body.code], [401, 'unauthorized']);
    const wrongKey = await get(`/v2/orders/${order.id}/swaps`, 'f'.repeat(64));
    assert.equal(wrongKey.status, 401);
    const badId = await get('/v2/orders/not-an-id/swaps');
    assert.deepEqual([badId.status, badId.body.code], [400, 'invalid_request']);

    const doc = (await t.api.inject({ url: '/docs/json' })).json<Json>();
    const op = doc.paths['/v2/orders/{order}/swaps']?.get as Json | undefined;
    assert.ok(op, 'the OpenAPI document has the route');
    assert.deepEqual(op.security, [{ appId: [] }, { gardenAppId: [] }]);
    const result = op.responses['200'].content['application/json'].schema.properties.result;
    assert.deepEqual(Object.keys(result.properties), ['source_swap', 'destination_swap']);
    assert.equal(result.properties.source_swap.$ref, '#/components/schemas/Swap');
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '401', '404']);
  });

  test('swap progress shows as the spec formats it', async () => {
    await t.store.db
      .updateTable('swaps')
      .set({ initiate_tx_hash: '0xabc', initiate_block_number: 123456789012n, initiate_timestamp: '2026-03-04 05:06:07.891+00', current_confirmations: 1 })
      .where('order_id', '=', order.id)
      .where('side', '=', 'source')
      .execute();
    const s = (await get(`/v2/orders/${order.id}`)).body.result.source_swap;
    assert.equal(s.initiate_tx_hash, '0xabc');
    assert.equal(s.initiate_block_number, '123456789012');
    assert.equal(s.initiate_timestamp, '2026-03-04T05:06:07Z');
    assert.equal(s.current_confirmations, 1);
    assert.equal((await get(`/v2/orders/${order.id}`)).body.result.status, 'initiated');
    const quote = (await get(`/v3/quote/${order.id}`, undefined)).body.result;
    assert.equal(quote.status, 'accepted');
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: '', initiate_block_number: 0n, initiate_timestamp: null }).where('order_id', '=', order.id).execute();
  });

  test('GET /v3/quote/{id} needs no key and carries the terms and a decodable initiate', async () => {
    const { status, body } = await get(`/v3/quote/${order.id}`, undefined);
    assert.equal(status, 200);
    const q = body.result;
    assert.equal(q.id, order.id);
    assert.equal(q.status, 'open');
    assert.equal(q.source_swap_id, order.source.swapId);
    assert.equal(q.destination_swap_id, order.destination.swapId);
    assert.deepEqual(q.source, { asset: 'ethereum_localnet:wbtc', amount: '100000', display: '0.00100000', value: '95.00' });
    assert.deepEqual(q.destination, { asset: 'arbitrum_localnet:wbtc', amount: '99700', display: '0.00099700', value: '94.72' });
    assert.equal(q.fee, 30);
    assert.equal(q.slippage, 50);
    assert.equal(q.deadline, Number(order.deadline));
    const init = q.initiate;
    assert.equal(init.type, 'evm');
    assert.equal(init.chain_id, 31337);
    assert.equal(init.core_to_evm_transfer, null);
    assert.equal(init.initiate_transaction.to, '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0');
    assert.equal(init.initiate_transaction.value, '0x0');
    assert.ok(init.initiate_transaction.data.startsWith('0x97ffc7ae'));
    const call = decodeFunctionData({ abi: htlcInitiateAbi, data: init.initiate_transaction.data });
    assert.deepEqual(call.args, [order.source.redeemer, 600n, 100000n, `0x${order.secretHash}`]);
    const approve = decodeFunctionData({ abi: erc20Abi, data: init.approval_transaction.data });
    assert.equal(init.approval_transaction.to, '0x5FbDB2315678afecb367f032d93F642f64180aa3');
    assert.deepEqual(approve.args, ['0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0', 100000n]);
  });

  test('the quote of a native-ether order sends value and needs no approval; a lapsed one is expired', async () => {
    const native = sampleOrder(t.appId, { deadline: BigInt(Math.floor(Date.now() / 1000) - 1) });
    native.source = { ...native.source, asset: 'ethereum_localnet:eth', amount: 10n ** 17n };
    await insertOrder(t.store.db, native);
    const q = (await get(`/v3/quote/${native.id}`, undefined)).body.result;
    assert.equal(q.status, 'expired');
    assert.equal(q.initiate.approval_transaction, null);
    assert.equal(q.initiate.initiate_transaction.to, '0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9');
    assert.equal(q.initiate.initiate_transaction.value, '0x16345785d8a0000');
  });

  test('the quote of a Litecoin-source order says where to send how much', async () => {
    const ltc = sampleOrder(t.appId);
    const clientKey = Buffer.from(schnorr.getPublicKey(schnorr.utils.randomSecretKey())).toString('hex');
    const to = htlcAddress({ initiator: clientKey, redeemer: SOLVER.addresses.litecoin_localnet!, secretHash: ltc.secretHash, timelock: 60n }, 'litecoin_regtest');
    ltc.source = {
      ...ltc.source,
      chain: 'litecoin_localnet',
      asset: 'litecoin_localnet:ltc',
      swapId: to,
      initiator: 'rltc1qexampleowner',
      redeemer: SOLVER.addresses.litecoin_localnet!,
      delegate: clientKey,
      timelock: 60n,
      amount: 5_000_000n,
    };
    await insertOrder(t.store.db, ltc);
    const q = (await get(`/v3/quote/${ltc.id}`, undefined)).body.result;
    assert.deepEqual(q.initiate, { type: 'bitcoin', to, amount: '5000000' });
  });

  test('GET /v3/chains lists chains with v3 assets (is_active included) and filters by asset', async () => {
    const all = (await get('/v3/chains')).body.result as Json[];
    assert.deepEqual(all.map((c) => c.chain), ['ethereum_localnet', 'arbitrum_localnet', 'litecoin_localnet', 'solana_localnet', 'tron_localnet']);
    const eth = all[0]!;
    assert.equal(eth.id, 'evm:31337');
    assert.equal(eth.native_asset_id, 'ethereum_localnet:eth');
    assert.equal(eth.source_timelock, '600');
    assert.deepEqual(eth.supported_htlc_schemas, ['evm:htlc_erc20', 'evm:htlc']);
    assert.equal(eth.assets[0].is_active, true);
    assert.equal(eth.assets[0].price, 95000);
    const filtered = (await get('/v3/chains?asset=arbitrum_localnet:usdc')).body.result as Json[];
    assert.equal(filtered.length, 1);
    assert.deepEqual(filtered[0]!.assets.map((a: Json) => a.id), ['arbitrum_localnet:usdc']);
  });

  test('GET /v2/assets lists assets without is_active and filters by asset', async () => {
    const all = (await get('/v2/assets')).body.result as Json[];
    assert.equal(all.length, 11);
    assert.ok(all.every((a) => !('is_active' in a)));
    const ltc = (await get('/v2/assets?asset=litecoin_localnet:ltc')).body.result as Json[];
    assert.deepEqual(ltc.map((a) => [a.id, a.chain, a.decimals, a.min_amount]), [['litecoin_localnet:ltc', 'bitcoin:1', 8, '10000']]);
  });

  test('GET /v2/chains lists chains in the v2 shape: the v3 chain fields with display, active v2 assets without is_active', async () => {
    const { status, body } = await get('/v2/chains');
    assert.equal(status, 200);
    const all = body.result as Json[];
    assert.deepEqual(all.map((c) => c.chain), ['ethereum_localnet', 'arbitrum_localnet', 'litecoin_localnet', 'solana_localnet', 'tron_localnet']);
    const eth = all[0]!;
    assert.deepEqual(Object.keys(eth).sort(), [
      'assets', 'chain', 'confirmation_target', 'destination_timelock', 'display', 'explorer_url', 'icon', 'id', 'is_active', 'name',
      'native_asset_id', 'source_timelock', 'supported_htlc_schemas', 'supported_token_schemas',
    ]);
    assert.equal(eth.display, eth.name);
    assert.equal(eth.id, 'evm:31337');
    assert.equal(eth.native_asset_id, 'ethereum_localnet:eth');
    assert.equal(eth.source_timelock, '600');
    assert.equal(typeof eth.confirmation_target, 'number');
    // The same assets as /v2/assets, each under its chain, in the same shape.
    const v2Assets = (await get('/v2/assets')).body.result as Json[];
    assert.deepEqual(all.flatMap((c) => c.assets), v2Assets);
    for (const c of all) {
      for (const a of c.assets) {
        assert.ok(!('is_active' in a));
        // Garden's SDK (AssetManager) matches `chain` against its chain list and parses asset ids as <chain>:<symbol>.
        assert.equal(a.id.split(':')[0], c.chain);
        assert.equal(a.chain, c.id);
        assert.equal(typeof a.name, 'string');
      }
    }
  });

  test('GET /v2/chains?from= filters to that asset and its chain', async () => {
    const filtered = (await get('/v2/chains?from=arbitrum_localnet:usdc')).body.result as Json[];
    assert.deepEqual(filtered.map((c) => [c.chain, c.assets.map((a: Json) => a.id)]), [['arbitrum_localnet', ['arbitrum_localnet:usdc']]]);
    const ltc = (await get('/v2/chains?from=litecoin_localnet:ltc')).body.result as Json[];
    assert.deepEqual(ltc.map((c) => [c.chain, c.id, c.assets.length]), [['litecoin_localnet', 'bitcoin:1', 1]]);
  });

  test('GET /v2/policy without a configured policy: every route open', async () => {
    assert.deepEqual(await get('/v2/policy'), {
      status: 200,
      body: { status: 'Ok', result: { default: 'open', isolation_groups: [], blacklist_pairs: [], whitelist_overrides: [] } },
    });
  });

  test('GET /v2/liquidity shows balance and the virtual balance left after reservations', async () => {
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 50_000_000n });
    // An order reserves its destination amount.
    const created = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key },
      payload: { source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' } },
    });
    assert.equal(created.statusCode, 201, created.body);
    const result = (await get('/v2/liquidity')).body.result as Json[];
    assert.equal(result.length, 1);
    assert.equal(result[0]!.solver_id, SOLVER.id);
    const wbtc = result[0]!.liquidity.find((l: Json) => l.asset === 'arbitrum_localnet:wbtc');
    assert.equal(wbtc.balance, '50000000');
    assert.equal(wbtc.virtual_balance, '49900300');
    assert.equal(wbtc.readable_balance, '0.50000000');
    assert.equal(wbtc.fiat_value, '47500.00');
    assert.equal(wbtc.address, SOLVER.addresses.arbitrum_localnet);
  });

  test('GET /v2/apps/earnings aggregates accrued fees of the calling app only', async () => {
    assert.deepEqual((await get('/v2/apps/earnings')).body.result, []);
    await accrueOrderFees(t.store.db, order.id);
    const result = (await get('/v2/apps/earnings')).body.result as Json[];
    assert.deepEqual(result, [
      {
        total_earnings: '28500',
        total_earnings_usd: '0.03',
        affiliate: '0x1111111111111111111111111111111111111111',
        asset: 'ethereum_localnet:usdc',
        token_address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
      },
    ]);
  });

  test('/health, /metrics and /docs answer without a key', async () => {
    const health = await get('/health', undefined);
    assert.deepEqual(health, { status: 200, body: { status: 'Ok', result: { database: 'ok', version: 'test' } } });
    const metrics = await t.api.inject({ url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /hashlock_http_request_duration_seconds_count\{method="GET",route="\/v2\/orders\/:order",status_code="200"\} \d+/);
    const html = await t.api.inject({ url: '/docs' });
    assert.equal(html.statusCode, 200);
    assert.match(html.body, /swagger-ui/i);
    const css = await t.api.inject({ url: '/docs/static/swagger-ui.css' });
    assert.equal(css.statusCode, 200);
    assert.match(css.headers['content-type'] as string, /text\/css/);
  });

  test('the OpenAPI document describes every endpoint with request and response schemas', async () => {
    const doc = (await get('/docs/json', undefined)).body;
    assert.equal(doc.openapi, '3.0.3');
    const expected: Array<[string, string, number[]]> = [
      ['/v3/chains', 'get', [200, 400, 401]],
      ['/v2/assets', 'get', [200, 400, 401]],
      ['/v2/chains', 'get', [200, 400, 401]],
      ['/v2/policy', 'get', [200, 401]],
      ['/v2/liquidity', 'get', [200, 401]],
      ['/v2/apps/earnings', 'get', [200, 401]],
      ['/v2/affiliates/history', 'get', [200, 400, 401, 503]],
      ['/v3/affiliates/history', 'get', [200, 400, 401, 503]],
      ['/v2/orders/{order}', 'get', [200, 400, 401, 404]],
      ['/v2/orders', 'get', [200, 400, 401]],
      ['/v3/quote/{id}', 'get', [200, 400, 404]],
      ['/health', 'get', [200, 503]],
    ];
    for (const [path, method, codes] of expected) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} documented`);
      assert.deepEqual(Object.keys(op.responses).map(Number).sort(), codes, path);
      assert.ok(op.responses['200'].content['application/json'].schema, `${path} response schema`);
    }
    assert.ok(doc.paths['/v2/orders/{order}'].get.parameters.some((p: Json) => p.name === 'order' && p.schema.pattern));
    assert.ok(doc.paths['/v3/chains'].get.parameters.some((p: Json) => p.name === 'asset' && p.schema.enum.length === 11));
    assert.deepEqual(doc.paths['/v3/chains'].get.security, [{ appId: [] }, { gardenAppId: [] }]);
    assert.ok(doc.paths['/v2/chains'].get.parameters.some((p: Json) => p.name === 'from' && p.schema.enum.length === 11));
    assert.deepEqual(doc.paths['/v2/chains'].get.security, [{ appId: [] }, { gardenAppId: [] }]);
    assert.equal(doc.paths['/v3/quote/{id}'].get.security, undefined);
    const history = doc.paths['/v2/affiliates/history'].get;
    assert.deepEqual(history.parameters.map((p: Json) => p.name).sort(), ['page', 'per_page']);
    assert.deepEqual(history.security, [{ appId: [] }, { gardenAppId: [] }]);
    assert.match(JSON.stringify(history.responses['200'].content['application/json'].schema), /PaginatedAffiliateHistory/);
    for (const name of ['Order', 'PaginatedOrders', 'Swap', 'Quote', 'Chain', 'ChainV2', 'RoutePolicy', 'AssetV2', 'AssetV3', 'Liquidity', 'EarningsEntry', 'AffiliateHistoryItem', 'PaginatedAffiliateHistory', 'ErrorEnvelope']) {
      assert.ok(doc.components.schemas[name]?.properties, `component ${name}`);
    }
    assert.equal(doc.components.securitySchemes.appId.name, 'service-app-id');
  });

  test("the OpenAPI document shows each order action's body per family, and every error code", async () => {
    const doc = (await get('/docs/json', undefined)).body;
    for (const version of ['v2', 'v3']) {
      const shapes: Json[] = doc.paths['/' + version + '/orders/{order}'].patch.requestBody.content['application/json'].schema.anyOf;
      const titles = shapes.map((shape) => shape.title as string);
      for (const title of [
        'initiate (EVM)',
        "initiate (Solana, as Garden's SDK sends it)",
        "initiate (Solana, as Garden's docs show it)",
        'redeem (every family)',
        'refund (EVM)',
        'refund (Bitcoin family)',
        'instant-refund (EVM)',
        'instant-refund (Bitcoin family)',
        'instant-refund (Solana)',
      ]) {
        assert.ok(titles.includes(title), `${version}: ${title} in ${titles.join(' | ')}`);
      }
      const solanaInitiate = shapes.find((shape) => shape.title === "initiate (Solana, as Garden's docs show it)")!;
      assert.deepEqual(solanaInitiate.required, ['serialized_tx']);
      assert.ok(shapes.find((shape) => shape.title === 'redeem (every family)')!.properties.secret.pattern);
    }
    const codes = doc.components.schemas.ErrorEnvelope.properties.code.anyOf.map((c: Json) => c.enum?.[0] ?? c.const);
    assert.deepEqual(codes, [...ERROR_CODES]);
  });
});

describeEachStore('API reads on the mainnet registry', (kind) => {
  let t: TestApi;
  before(async () => {
    t = await openTestApi(kind, MAINNET_REGISTRY_PATH);
  });
  after(() => t.close());

  const V3 = ['arbitrum:wbtc', 'ethereum:wbtc', 'arc:usdc', 'base:cbbtc', 'base:cbltc', 'base:usdc', 'bitcoin:btc', 'bnbchain:btcb', 'ethereum:cbbtc', 'ethereum:usdc', 'ethereum:usdt', 'hypercore:usdc', 'hypercore:usdc_perps', 'hyperevm:ubtc', 'ink:kbtc', 'lightning:btc', 'litecoin:ltc', 'robinhood:cbbtc', 'robinhood:usdg', 'solana:cash', 'solana:cbbtc', 'solana:sol', 'solana:usdc', 'spark:btc', 'starknet:strkbtc', 'starknet:wbtc', 'tempo:pathusd', 'tempo:usdce'];
  const V2 = ['arbitrum:wbtc', 'ethereum:wbtc', 'arbitrum:ibtc', 'base:cbbtc', 'bitcoin:btc', 'bnbchain:btcb', 'botanix:btc', 'citrea:cbtc', 'ethereum:cbbtc', 'ethereum:usdt', 'hyperevm:ubtc', 'litecoin:ltc', 'monad:mon', 'monad:usdc', 'solana:cbbtc', 'solana:sol', 'solana:usdc', 'starknet:wbtc', 'tron:usdt'];

  test("each endpoint's filter accepts exactly the spec's mainnet values", async () => {
    const doc = (await t.api.inject({ url: '/docs/json' })).json<Json>();
    const allowed = (path: string, name = 'asset') => doc.paths[path].get.parameters.find((p: Json) => p.name === name).schema.enum as string[];
    assert.deepEqual([...allowed('/v3/chains')].sort(), [...V3].sort());
    assert.deepEqual([...allowed('/v2/assets')].sort(), [...V2].sort());
    assert.deepEqual([...allowed('/v2/chains', 'from')].sort(), [...V2].sort());
    for (const id of V3) {
      const res = await t.api.inject({ url: `/v3/chains?asset=${id}`, headers: { 'service-app-id': t.key } });
      assert.equal(res.statusCode, 200, id);
      const chains = res.json<Json>().result as Json[];
      assert.deepEqual(chains.flatMap((c) => c.assets.map((a: Json) => a.id)), [id]);
    }
    const v2only = await t.api.inject({ url: '/v3/chains?asset=tron:usdt', headers: { 'service-app-id': t.key } });
    assert.equal(v2only.statusCode, 400);
    const v3only = await t.api.inject({ url: '/v2/assets?asset=spark:btc', headers: { 'service-app-id': t.key } });
    assert.equal(v3only.statusCode, 400);
    const v3onlyChains = await t.api.inject({ url: '/v2/chains?from=spark:btc', headers: { 'service-app-id': t.key } });
    assert.equal(v3onlyChains.statusCode, 400);
  });

  test('every mainnet chain id has the <family>:<number> form and v3 lists each chain once', async () => {
    const res = await t.api.inject({ url: '/v3/chains', headers: { 'garden-app-id': t.key } });
    const chains = res.json<Json>().result as Json[];
    assert.equal(new Set(chains.map((c) => c.chain)).size, chains.length);
    for (const c of chains) {
      assert.match(c.id, /^(evm|bitcoin|solana|starknet|tron|lightning|spark|hypercore):\d+$/);
      for (const a of c.assets) assert.equal(a.chain, c.id);
    }
    assert.equal(chains.find((c) => c.chain === 'bitcoin')?.assets[0].is_active, true);
  });

  test('GET /v2/chains lists exactly the active v2 assets, each chain once', async () => {
    const res = await t.api.inject({ url: '/v2/chains', headers: { 'garden-app-id': t.key } });
    const chains = res.json<Json>().result as Json[];
    assert.equal(new Set(chains.map((c) => c.chain)).size, chains.length);
    const ids = chains.flatMap((c) => c.assets.map((a: Json) => a.id));
    const assets = (await t.api.inject({ url: '/v2/assets', headers: { 'garden-app-id': t.key } })).json<Json>().result as Json[];
    assert.deepEqual(ids, assets.map((a) => a.id));
    const btc = (await t.api.inject({ url: '/v2/chains?from=bitcoin:btc', headers: { 'garden-app-id': t.key } })).json<Json>().result as Json[];
    assert.deepEqual(btc.map((c) => [c.chain, c.display, c.assets.map((a: Json) => a.id)]), [['bitcoin', 'Bitcoin', ['bitcoin:btc']]]);
  });
});

// The mainnet registry knows no Starknet HTLC address yet: a copy with one, to read a Starknet quote.
// The quote read does not depend on the store kind.
test("the quote of a Starknet-source order has Garden's V3InitiateStarknet shape, chain_id included", async (s) => {
  const registry = JSON.parse(readFileSync(MAINNET_REGISTRY_PATH, 'utf8')) as Json;
  const chain = (registry.chains as Json[]).find((c) => c.chain === 'starknet')!;
  chain.is_active = true;
  const wbtc = (chain.assets as Json[]).find((a) => a.symbol === 'wbtc')!;
  wbtc.is_active = true;
  wbtc.htlc.address = STARKNET_HTLC;
  const path = join(mkdtempSync(join(tmpdir(), 'hashlock-registry-')), 'registry.json');
  writeFileSync(path, JSON.stringify(registry));
  const t = await openTestApi('pglite', path);
  s.after(() => t.close());

  const o = sampleOrder(t.appId);
  const initiator = normalizeStarknetAddress('0x64b48806902a367c8598f4f95c305e8c1a1acba5f082d294a43793113115691')!;
  const redeemer = normalizeStarknetAddress('0x305b946a388e416709b20b49b4919de92bebbf363b23887e1d14da4593d6204')!;
  o.source = {
    ...o.source,
    chain: 'starknet',
    asset: 'starknet:wbtc',
    initiator,
    redeemer,
    swapId: starknetOrderId({ network: 'SN_MAIN', secretHash: o.secretHash, initiator }),
    timelock: 14400n,
  };
  o.destination = { ...o.destination, chain: 'ethereum', asset: 'ethereum:wbtc', initiator: USER, redeemer: USER };
  await insertOrder(t.store.db, o);
  const q = (await t.api.inject({ url: `/v3/quote/${o.id}` })).json<Json>().result;
  const init = q.initiate as Json | null;
  assert.ok(init, `an initiate: ${JSON.stringify(q)}`);
  assert.deepEqual(Object.keys(init).sort(), ['approval_transaction', 'chain_id', 'initiate_transaction', 'type']);
  assert.equal(init.type, 'starknet');
  assert.equal(init.chain_id, '0x534e5f4d41494e', "SN_MAIN's chain id felt");
  assert.equal(BigInt(init.chain_id).toString(), '23448594291968334', "Garden's ChainWithId has it in decimal: starknet:23448594291968334");
  assert.equal(init.initiate_transaction.to, STARKNET_HTLC, 'the initiate calls the HTLC');
  assert.equal(init.initiate_transaction.selector, SELECTORS.initiate);
  assert.equal(init.approval_transaction.selector, SELECTORS.approve);
  for (const call of [init.approval_transaction, init.initiate_transaction]) assert.deepEqual(Object.keys(call).sort(), ['calldata', 'selector', 'to']);

  const doc = (await t.api.inject({ url: '/docs/json' })).json<Json>();
  const starknet = (doc.components.schemas.Initiate.anyOf as Json[]).find((shape) => shape.properties?.type?.enum?.[0] === 'starknet');
  assert.ok(starknet, 'the OpenAPI document has the Starknet initiate');
  assert.deepEqual([...starknet.required].sort(), ['approval_transaction', 'chain_id', 'initiate_transaction', 'type']);
  assert.equal(starknet.properties.chain_id.type, 'string');
});
