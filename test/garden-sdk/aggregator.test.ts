// Garden's Aggregator API (openapi-v3.yaml, the /v3 version) through a client written from that document
// alone (aggregator-client.ts), against the API over each store: discovery, estimate, the quote's
// idempotency rules, cursor paging, the long-poll, submit and the error shapes; and the v3 draft beside it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { p2wpkh } from '@scure/btc-signer';
import { bitcoinNetwork } from '../../src/chains/bitcoin/network.ts';
import { appendOrderEvents } from '../../src/store/order-events.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { AggregatorClient, ApiError, type QuoteRequest } from './aggregator-client.ts';

const wbtc = (overrides: Partial<QuoteRequest> = {}): QuoteRequest => ({
  sell_asset: 'ethereum_localnet:wbtc',
  buy_asset: 'arbitrum_localnet:wbtc',
  amount: '100000',
  trade_type: 'exact_in',
  sell_address: USER,
  buy_address: USER,
  ...overrides,
});

async function refused(call: Promise<unknown>, status: number, code: string, message?: RegExp): Promise<ApiError> {
  const err = await call.then(
    () => assert.fail(`expected ${status} ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.status, status, err.message);
  assert.equal(err.code, code, err.message);
  if (message) assert.match(err.message, message);
  return err;
}

describeEachStore('the Aggregator API', (kind) => {
  let t: TestApi;
  let client: AggregatorClient;
  let anonymous: AggregatorClient;
  let base: string;

  before(async () => {
    t = await openTestApi(kind);
    for (const asset of ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', 'litecoin_localnet:ltc']) {
      await setSolverBalance(t.store.db, { solverId: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', asset, balance: 10n ** 12n });
    }
    base = await t.api.listen({ port: 0, host: '127.0.0.1' });
    client = new AggregatorClient(base, t.key);
    anonymous = new AggregatorClient(base);
  });
  after(() => t.close());

  test('registry and routes: anonymous is public, a key makes them private, a bad key is invalid_key', async () => {
    const open = await anonymous.registry();
    assert.equal(open.headers.get('cache-control'), 'public, max-age=3600');
    assert.equal(open.headers.get('vary'), 'garden-app-id');
    const keyed = await client.registry();
    assert.equal(keyed.headers.get('cache-control'), 'private, max-age=3600');
    const eth = open.body.chains.find((c) => c.id === 'ethereum_localnet')!;
    assert.equal(eth.vm_type, 'evm');
    assert.equal(eth.chain_id, '31337');
    const wbtcAsset = eth.assets.find((a) => a.id === 'ethereum_localnet:wbtc')!;
    assert.equal(wbtcAsset.token.type, 'contract');
    assert.equal(wbtcAsset.decimals, 8);
    const ltc = open.body.chains.find((c) => c.id === 'litecoin_localnet')!;
    assert.equal(ltc.vm_type, 'bvm');
    assert.equal(ltc.chain_id, undefined, 'absent, not null, where a chain has no id');
    assert.equal(ltc.assets[0]!.token.type, 'native');
    await refused(new AggregatorClient(base, 'f'.repeat(64)).registry(), 401, 'invalid_key');

    const routes = await anonymous.routes({ sell_asset: 'litecoin_localnet:ltc' });
    assert.equal(routes.headers.get('cache-control'), 'public, max-age=300');
    assert.deepEqual(routes.body.routes.map((r) => r.buy_asset).sort(), ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc']);
    assert.match(routes.body.routes[0]!.min_sell_amount!, /^[0-9]+$/);
    await refused(anonymous.routes({}), 400, 'invalid_request', /sell_asset or buy_asset/);
  });

  test('estimate: one provider, min_buy_amount after slippage; refusals are provider_errors', async () => {
    const { body, headers } = await anonymous.estimate({ sell_asset: 'ethereum_localnet:wbtc', buy_asset: 'arbitrum_localnet:wbtc', amount: '100000', trade_type: 'exact_in', slippage_bps: 100 });
    assert.equal(headers.get('cache-control'), 'public, max-age=5');
    assert.ok(headers.get('x-request-id'));
    assert.deepEqual(body.provider_errors, []);
    const [e] = body.estimates;
    assert.equal(e!.provider, 'hashlock');
    assert.equal(e!.sell_amount, '100000');
    assert.equal(BigInt(e!.min_buy_amount), (BigInt(e!.buy_amount) * 9_900n) / 10_000n);
    assert.equal(e!.fees[0]!.type, 'provider');

    const out = await client.estimate({ sell_asset: 'ethereum_localnet:wbtc', buy_asset: 'arbitrum_localnet:wbtc', amount: '50000', trade_type: 'exact_out' });
    assert.equal(out.body.estimates[0]!.buy_amount, '50000');
    assert.ok(out.body.estimates[0]!.max_sell_amount);

    const tooBig = await client.estimate({ sell_asset: 'ethereum_localnet:wbtc', buy_asset: 'arbitrum_localnet:wbtc', amount: '9'.repeat(30), trade_type: 'exact_in' });
    assert.deepEqual(tooBig.body.estimates, []);
    assert.equal(tooBig.body.provider_errors[0]!.code, 'amount_above_maximum');
    await refused(client.estimate({ sell_asset: 'ethereum_localnet:wbtc', buy_asset: 'arbitrum_localnet:wbtc', amount: '1', trade_type: 'sideways' }), 400, 'invalid_request', /trade_type/);
    await refused(client.estimate({ sell_asset: 'nowhere:coin', buy_asset: 'arbitrum_localnet:wbtc', amount: '1', trade_type: 'exact_in' }), 400, 'invalid_request', /sell_asset/);

    // The v3 draft's estimate still answers on the same path, in its envelope.
    const draft = await fetch(`${base}/v3/estimate?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000`, { headers: { 'garden-app-id': t.key } });
    assert.equal(((await draft.json()) as { status: string }).status, 'Ok');
  });

  test('quote: the order with its steps; the same key and body replay it, another body is 409', async () => {
    const key = randomUUID();
    const { body } = await client.quote(wbtc(), key);
    assert.deepEqual(body.provider_errors, []);
    const [q] = body.quotes;
    assert.match(q!.id, /^ord_[0-9a-f]{64}$/);
    assert.equal(q!.provider, 'hashlock');
    assert.equal(q!.sell_amount, '100000');
    assert.equal(q!.min_buy_amount, q!.buy_amount, 'the HTLC pays exactly buy_amount');
    // The test app is gasless: approve by transaction, then the initiate as a signature the service relays.
    assert.deepEqual(q!.steps.map((s) => [s.id, s.kind]), [['approve', 'transaction'], ['initiate', 'signature']]);
    assert.equal(q!.steps[0]!.data!.chain, 'ethereum_localnet');
    assert.ok((q!.steps[1]!.data as { typed_data?: unknown }).typed_data);

    const again = await client.quote(wbtc(), key);
    assert.equal(again.body.quotes[0]!.id, q!.id, 'the same key and body: the same order');
    await refused(client.quote(wbtc({ amount: '100001' }), key), 409, 'idempotency_key_reuse');
    const orders = await t.store.db.selectFrom('orders').select('id').where('id', '=', q!.id.slice(4)).execute();
    assert.equal(orders.length, 1);

    const order = await client.order(q!.id);
    assert.equal(order.state, 'awaiting_user');
    assert.deepEqual(order.steps, q!.steps);
    assert.equal(order.received, null);
    assert.deepEqual(order.deposits, []);
    assert.ok(order.last_verified_at);
    // The draft reads the same order by its plain id.
    const draft = await fetch(`${base}/v3/orders/${q!.id.slice(4)}`, { headers: { 'garden-app-id': t.key } });
    assert.equal(((await draft.json()) as { result: { status: string } }).result.status, 'not_initiated');
  });

  test('a Litecoin source is a deposit step to the HTLC address', async () => {
    const ltcOwner = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), bitcoinNetwork('litecoin_regtest')).address;
    const { body } = await client.quote(wbtc({ sell_asset: 'litecoin_localnet:ltc', amount: '100000000', sell_address: ltcOwner }), randomUUID());
    const [step] = body.quotes[0]!.steps;
    assert.equal(step!.kind, 'deposit');
    assert.equal(step!.deposit!.chain, 'litecoin_localnet');
    assert.equal(step!.deposit!.amount, '100000000');
    assert.match(step!.deposit!.address, /^rltc1p/);
  });

  test('quote refusals: provider_errors, not errors; bad input names the field; no key is invalid_key', async () => {
    const small = await client.quote(wbtc({ amount: '1' }), randomUUID());
    assert.deepEqual(small.body.quotes, []);
    assert.equal(small.body.provider_errors[0]!.code, 'amount_below_minimum');
    const excluded = await client.quote(wbtc({ exclude_providers: ['hashlock'] }), randomUUID());
    assert.deepEqual(excluded.body, { quotes: [], provider_errors: [] });
    await refused(client.quote(wbtc({ buy_address: 'not-an-address' }), randomUUID()), 400, 'invalid_request', /buy_address/);
    await refused(client.quote({ ...wbtc(), amount: undefined } as never, randomUUID()), 400, 'invalid_request', /amount/);
    const noKey = await fetch(`${base}/v3/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(wbtc()) });
    assert.equal(noKey.status, 401);
    const missingIdempotency = await fetch(`${base}/v3/quote`, { method: 'POST', headers: { 'content-type': 'application/json', 'garden-app-id': t.key }, body: JSON.stringify(wbtc()) });
    assert.equal(missingIdempotency.status, 400);
    assert.deepEqual(Object.keys(((await missingIdempotency.json()) as { error: object }).error).sort(), ['code', 'message', 'retryable']);
    await refused(anonymous.quote(wbtc(), randomUUID()), 401, 'invalid_key');
    await refused(client.order(`ord_${'a'.repeat(64)}`), 404, 'not_found');
    await refused(client.order('ord_nope'), 404, 'not_found');
    await refused(client.orders({ cursor: 'garbage' }), 400, 'invalid_request', /cursor/);
  });

  test('cursor paging over the app\'s orders, newest first, and tx_hash', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.quote(wbtc({ amount: String(100_000 + i) }), randomUUID())).body.quotes[0]!.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { body, headers } = await client.orders({ limit: 2, ...(cursor ? { cursor } : {}) });
      assert.equal(headers.get('cache-control'), 'no-store');
      assert.ok(body.orders.length <= 2);
      seen.push(...body.orders.map((o) => o.id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(new Set(seen).size, seen.length, 'no order twice');
    for (const id of ids) assert.ok(seen.includes(id));
    assert.deepEqual(seen.slice(0, 5), [...ids].reverse(), 'newest first');
    assert.ok(pages >= 3);

    const txHash = `0x${'ab'.repeat(32)}`;
    const submitted = await client.submit(ids[0]!, txHash);
    assert.equal(submitted.deposits[0]!.tx_hash, txHash);
    const found = await client.orders({ tx_hash: txHash.toUpperCase().replace('0X', '0x') });
    assert.deepEqual(found.body.orders.map((o) => o.id), [ids[0]]);
    await refused(client.submit(ids[1]!, 'nope'), 422, 'provider_rejected');
    await refused(client.submit(`ord_${'b'.repeat(64)}`, txHash), 404, 'not_found');
  });

  test('long-poll: held while unchanged, answered when the order\'s event is recorded', async () => {
    const id = (await client.quote(wbtc({ amount: '120000' }), randomUUID())).body.quotes[0]!.id;
    const orderId = id.slice(4);
    const before = await client.order(id);

    const started = Date.now();
    const unchanged = await client.order(id, 1);
    assert.ok(Date.now() - started >= 900, 'held for the wait');
    assert.equal(unchanged.updated_at, before.updated_at);

    const waiting = client.order(id, 20);
    await new Promise((r) => setTimeout(r, 300));
    const txHash = `0x${'cd'.repeat(32)}`;
    await t.store.db.updateTable('swaps').set({ initiate_tx_hash: txHash }).where('order_id', '=', orderId).where('side', '=', 'source').execute();
    const app = await t.store.db.selectFrom('orders').select(['app_id', 'solver_id']).where('id', '=', orderId).executeTakeFirstOrThrow();
    await appendOrderEvents(t.store.db, [{ orderId, appId: app.app_id, solverId: app.solver_id, type: 'order.status', status: 'initiate_detected', orderJson: '{}', failures: '' }]);
    const woken = await waiting;
    assert.ok(Date.now() - started < 15_000, 'answered at the event, not at the end of the wait');
    assert.equal(woken.state, 'awaiting_provider');
    assert.notEqual(woken.updated_at, before.updated_at);
    assert.deepEqual(woken.deposits.map((d) => d.tx_hash), [txHash]);
    await refused(client.order(id, 26), 400, 'invalid_request', /wait/);
  });

  test('v2 additions: GET /v2/quote?indicative=true prices without liquidity; GET /v2/assets?from= filters', async () => {
    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: { 'garden-app-id': t.key } });
      return { status: res.status, body: (await res.json()) as { status: string; result: Array<Record<string, unknown>>; error?: string } };
    };
    // More than the solver holds: refused as a firm quote, priced as an indicative one.
    await setSolverBalance(t.store.db, { solverId: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', asset: 'arbitrum_localnet:wbtc', balance: 1_000n });
    const huge = '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&to_amount=500000';
    const firm = await get(huge);
    assert.equal(firm.status, 400);
    assert.match(firm.body.error!, /insufficient liquidity/);
    const indicative = await get(`${huge}&indicative=true`);
    assert.equal(indicative.status, 200, JSON.stringify(indicative.body));
    assert.equal((indicative.body.result[0]!.destination as { amount: string }).amount, '500000');
    assert.equal((await get(`${huge}&indicative=false`)).status, 400);

    const one = await get('/v2/assets?from=ethereum_localnet:wbtc');
    assert.deepEqual(one.body.result.map((a) => a.id), ['ethereum_localnet:wbtc']);
    assert.equal((await get('/v2/assets?from=nowhere:coin')).status, 400);
    assert.equal((await get('/v2/assets?from=ethereum_localnet:wbtc&asset=arbitrum_localnet:wbtc')).status, 400);
  });
});
