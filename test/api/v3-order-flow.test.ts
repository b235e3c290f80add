import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { p2wpkh } from '@scure/btc-signer';
import { decodeFunctionData, erc20Abi } from 'viem';
import { bitcoinNetwork } from '../../src/chains/bitcoin/network.ts';
import { htlcInitiateAbi } from '../../src/chains/solidity-htlc/htlc-abi.ts';
import { CHAIN_INDEX_CHANNEL } from '../../src/store/index-requests.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';

type Json = Record<string, any>;

// The fields of Garden's openapi-v3.json V3QuoteView, V3EstimateItem and Order.
const QUOTE_KEYS = [
  'deadline', 'destination', 'destination_swap_id', 'estimated_time', 'fee', 'fixed_fee', 'id', 'initiate', 'secret_hash',
  'slippage', 'solver_id', 'source', 'source_swap_id',
];
const ESTIMATE_KEYS = ['destination', 'estimated_time', 'fee', 'fixed_fee', 'slippage', 'solver_id', 'source'];
const ORDER_KEYS = [
  'affiliate_fees', 'created_at', 'deadline', 'destination_swap', 'failed_actions', 'integrator', 'nonce', 'order_id', 'solver_id', 'source_swap',
  'status', 'version',
];

const wbtcQuote = (overrides: Json = {}) => ({
  source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
  destination: { asset: 'arbitrum_localnet:wbtc', owner: USER },
  slippage: 50,
  nonce: randomHex32().slice(0, 24),
  ...overrides,
});

describeEachStore('the v3 order flow', (kind) => {
  let t: TestApi;
  const call = async (method: 'GET' | 'POST', url: string, payload?: object, key: string | null = t.key) => {
    const res = await t.api.inject({ method, url, headers: key ? { 'garden-app-id': key } : {}, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  const committed = async (asset: string) =>
    BigInt((await t.store.db.selectFrom('solver_balances').select('committed').where('asset', '=', asset).executeTakeFirstOrThrow()).committed);

  before(async () => {
    t = await openTestApi(kind);
    for (const asset of ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', 'litecoin_localnet:ltc']) {
      await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset, balance: 10n ** 12n });
    }
  });
  after(() => t.close());

  test('POST /v3/quote prices at the estimate, creates the order, reserves liquidity and returns its initiate', async () => {
    const estimate = await call('GET', '/v3/estimate?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000');
    assert.equal(estimate.status, 200);
    const [best] = estimate.body.result as Json[];
    assert.deepEqual(Object.keys(best!).sort(), ESTIMATE_KEYS);
    const reservedBefore = await committed('arbitrum_localnet:wbtc');

    const { status, body } = await call('POST', '/v3/quote', wbtcQuote());
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.status, 'Ok');
    assert.match(body.result.request_id, /^[0-9a-f-]{36}$/);
    assert.equal(body.result.quotes.length, 1);
    const q = body.result.quotes[0];
    assert.deepEqual(Object.keys(q).sort(), QUOTE_KEYS);
    assert.equal(q.solver_id, SOLVER.id);
    assert.deepEqual(q.source, best!.source);
    assert.deepEqual(q.destination, best!.destination);
    assert.equal(q.slippage, 50);
    assert.equal(await committed('arbitrum_localnet:wbtc'), reservedBefore + BigInt(q.destination.amount));

    assert.equal(q.initiate.type, 'evm');
    assert.equal(q.initiate.chain_id, 31337);
    const call0 = decodeFunctionData({ abi: htlcInitiateAbi, data: q.initiate.initiate_transaction.data });
    assert.deepEqual(call0.args, [SOLVER.addresses.ethereum_localnet, 600n, 100000n, `0x${q.secret_hash}`]);
    const approve = decodeFunctionData({ abi: erc20Abi, data: q.initiate.approval_transaction.data });
    assert.deepEqual(approve.args, [q.initiate.initiate_transaction.to, 100000n]);

    const order = await call('GET', `/v3/orders/${q.id}`);
    assert.equal(order.status, 200);
    assert.deepEqual(Object.keys(order.body.result).sort(), ORDER_KEYS);
    assert.equal(order.body.result.status, 'not_initiated');
    assert.equal(order.body.result.version, 'v3');
    assert.equal(order.body.result.source_swap.swap_id, q.source_swap_id);
    assert.equal(order.body.result.destination_swap.redeemer, USER, 'the destination owner comes from the source leg');
    assert.equal(order.body.result.destination_swap.amount, q.destination.amount);

    const stored = await call('GET', `/v3/quote/${q.id}`, undefined, null);
    assert.equal(stored.body.result.status, 'open');
    assert.deepEqual(stored.body.result.initiate, q.initiate);
  });

  test('amount on the destination: the least source amount that pays it, as the estimate says', async () => {
    const estimate = await call('GET', '/v3/estimate?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&to_amount=50000');
    const { status, body } = await call('POST', '/v3/quote', wbtcQuote({
      source: { asset: 'ethereum_localnet:wbtc', owner: USER },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '50000' },
    }));
    assert.equal(status, 200, JSON.stringify(body));
    const q = body.result.quotes[0];
    assert.equal(q.destination.amount, '50000');
    assert.equal(q.source.amount, estimate.body.result[0].source.amount);
  });

  test('the same nonce gives the same order; different terms under it are refused', async () => {
    const request = wbtcQuote();
    const first = await call('POST', '/v3/quote', request);
    const again = await call('POST', '/v3/quote', request);
    assert.equal(again.status, 200);
    assert.equal(again.body.result.quotes[0].id, first.body.result.quotes[0].id);
    const other = await call('POST', '/v3/quote', { ...request, source: { ...request.source, amount: '100001' } });
    assert.equal(other.status, 409);
    assert.deepEqual(Object.keys(other.body), ['error']);
    assert.match(other.body.error, /nonce/);
  });

  test('bad requests fail as {error} naming the field, and create nothing', async () => {
    const count = async () => (await t.store.db.selectFrom('orders').select('id').execute()).length;
    const before = await count();
    const cases: Array<[Json, number, RegExp]> = [
      [wbtcQuote({ destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '1' } }), 400, /exactly one/],
      [wbtcQuote({ source: { asset: 'ethereum_localnet:wbtc', owner: USER } }), 400, /exactly one/],
      [wbtcQuote({ source: { asset: 'nowhere:wbtc', owner: USER, amount: '100000' } }), 400, /source\.asset/],
      [wbtcQuote({ source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: 100000 } }), 400, /source\/amount|source\.amount/],
      [wbtcQuote({ slippage: 100000 }), 400, /slippage/],
      [wbtcQuote({ destination: { asset: 'litecoin_localnet:ltc' } }), 400, /destination\.owner/],
      [wbtcQuote({ source: { asset: 'ethereum_localnet:wbtc', amount: '100000' }, destination: { asset: 'arbitrum_localnet:wbtc' } }), 400, /owner/],
      [wbtcQuote({ source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '1' } }), 400, /range/],
      [wbtcQuote({ source: { asset: 'ethereum_localnet:wbtc', owner: 'nope', amount: '100000' } }), 400, /source\.owner/],
    ];
    for (const [payload, status, message] of cases) {
      const res = await call('POST', '/v3/quote', payload);
      assert.equal(res.status, status, JSON.stringify({ payload, res }));
      assert.deepEqual(Object.keys(res.body), ['error']);
      assert.match(res.body.error, message);
    }
    const unauthorized = await call('POST', '/v3/quote', wbtcQuote(), null);
    assert.equal(unauthorized.status, 401);
    assert.deepEqual(Object.keys(unauthorized.body), ['error']);
    assert.equal(await count(), before);
  });

  test('GET /v3/orders lists the app\'s orders in the v3 shape, filtered by v3 status', async () => {
    const created = (await call('POST', '/v3/quote', wbtcQuote())).body.result.quotes[0];
    const list = await call('GET', '/v3/orders?status=not_initiated&per_page=100');
    assert.equal(list.status, 200);
    const page = list.body.result;
    assert.deepEqual(Object.keys(page).sort(), ['data', 'page', 'per_page', 'total_items', 'total_pages']);
    assert.ok(page.data.some((o: Json) => o.order_id === created.id));
    for (const o of page.data) assert.deepEqual(Object.keys(o).sort(), ORDER_KEYS);
    const done = await call('GET', '/v3/orders?status=completed,refunded');
    assert.equal(done.body.result.total_items, 0);
    const bad = await call('GET', '/v3/orders?status=in-progress');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_request');
    assert.match(bad.body.error, /'status'/);
    assert.equal((await call('GET', '/v3/orders', undefined, null)).status, 401);
    assert.equal((await call('GET', `/v3/orders/${'ab'.repeat(32)}`)).status, 404);
  });

  test('the v3 status follows the order: in_progress once initiated, the quote accepted', async () => {
    const q = (await call('POST', '/v3/quote', wbtcQuote())).body.result.quotes[0];
    await t.store.db
      .updateTable('swaps')
      .set({ initiate_tx_hash: `0x${'1'.repeat(64)}`, initiate_block_number: 5n, current_confirmations: 1 })
      .where('order_id', '=', q.id)
      .where('side', '=', 'source')
      .execute();
    await until('the order read to change', async () => {
      const o = (await call('GET', `/v3/orders/${q.id}`)).body.result;
      return o.status === 'in_progress' ? o : undefined;
    });
    assert.equal((await call('GET', `/v3/quote/${q.id}`, undefined, null)).body.result.status, 'accepted');
  });

  test('safety rule 7: the secret and the key the service holds are in none of the v3 answers', async () => {
    const ltcOwner = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), bitcoinNetwork('litecoin_regtest')).address;
    const created = await call('POST', '/v3/quote', {
      source: { asset: 'litecoin_localnet:ltc', owner: ltcOwner, amount: '100000000' },
      destination: { asset: 'arbitrum_localnet:wbtc', owner: USER },
      slippage: 50,
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const q = created.body.result.quotes[0];
    assert.equal(q.initiate.type, 'bitcoin');
    const row = await t.store.db.selectFrom('orders').select(['secret_ciphertext', 'delegate_key_ciphertext']).where('id', '=', q.id).executeTakeFirstOrThrow();
    const held = [row.secret_ciphertext, row.delegate_key_ciphertext].map((sealed) => {
      assert.ok(sealed, 'the service holds both');
      return Buffer.from(t.secrets.open(sealed)).toString('hex');
    });
    const answers = [JSON.stringify(created.body)];
    for (const url of [`/v3/orders/${q.id}`, '/v3/orders?per_page=100', `/v3/quote/${q.id}`]) {
      const res = await call('GET', url);
      assert.equal(res.status, 200, url);
      answers.push(JSON.stringify(res.body));
    }
    for (const answer of answers) {
      assert.ok(answer.includes(q.id), 'an answer about the order');
      for (const secret of held) assert.equal(answer.toLowerCase().includes(secret), false);
    }
  });

  test('POST /v3/index checks the hash on the source chain and wakes its watcher', async () => {
    const q = (await call('POST', '/v3/quote', wbtcQuote())).body.result.quotes[0];
    const heard: string[] = [];
    const stop = await t.store.listen(CHAIN_INDEX_CHANNEL, { message: (chain) => heard.push(chain), connected: () => undefined });
    try {
      const bad = await call('POST', '/v3/index', { id: q.id, tx_hash: 'not-a-hash' });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error, /tx_hash/);
      const unknown = await call('POST', '/v3/index', { id: 'cd'.repeat(32), tx_hash: `0x${'2'.repeat(64)}` });
      assert.equal(unknown.status, 404);
      assert.equal((await call('POST', '/v3/index', { id: q.id, tx_hash: `0x${'2'.repeat(64)}` }, null)).status, 401);
      const ok = await call('POST', '/v3/index', { id: q.id, tx_hash: `0x${'2'.repeat(64)}` });
      assert.equal(ok.status, 202);
      assert.deepEqual(ok.body, { status: 'Ok', result: q.id });
      await until('the watcher wake', () => (heard.length > 0 ? heard : undefined));
      assert.deepEqual(heard, ['ethereum_localnet']);
    } finally {
      await stop();
    }
  });

  test('POST /v3/instant-refund-hash validates its body and answers in the envelope', async () => {
    const bad = await call('POST', '/v3/instant-refund-hash', { order_id: 'x' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /order_id/);
    const noRelayer = await call('POST', '/v3/instant-refund-hash', { order_id: 'ab'.repeat(32) });
    assert.equal(noRelayer.status, 503);
    assert.equal(noRelayer.body.code, 'unavailable');
  });

  test('the OpenAPI document has the v3 flow, keyed', async () => {
    const doc = (await t.api.inject({ url: '/docs/json' })).json<Json>();
    for (const [path, method] of [
      ['/v3/quote', 'post'], ['/v3/estimate', 'get'], ['/v3/orders', 'get'], ['/v3/orders/{order}', 'get'], ['/v3/index', 'post'],
      ['/v3/instant-refund-hash', 'post'],
    ] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
      assert.ok(doc.paths[path][method].security, `${path} is keyed`);
    }
  });
});
