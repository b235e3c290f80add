import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RoutePolicy, type RoutePolicyRules } from '../../src/pricing/route-policy.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { localnetRegistry, randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

type Json = Record<string, any>;

const RULES: RoutePolicyRules = {
  default: 'open',
  isolation_groups: ['litecoin_localnet:LTC -> ethereum_localnet:WBTC'],
  blacklist_pairs: ['arbitrum_localnet:* -> ethereum_localnet:usdc', 'ethereum_localnet:WBTC <-> arbitrum_localnet:WBTC'],
  whitelist_overrides: ['arbitrum_localnet:WBTC -> ethereum_localnet:WBTC'],
};

describeEachStore('the route policy over the API', (kind) => {
  let t: TestApi;
  const get = async (url: string) => {
    const res = await t.api.inject({ url, headers: { 'service-app-id': t.key } });
    return { status: res.statusCode, body: res.json<Json>() };
  };
  const quote = (from: string, to: string, amount: string) => get(`/v2/quote?from=${from}&to=${to}&from_amount=${amount}`);
  const orderCount = async () => Number((await t.store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  const post = async (from: string, to: string, fromAmount: string, toAmount: string) => {
    const res = await t.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': t.key },
      payload: {
        source: { asset: from, owner: USER, amount: fromAmount },
        destination: { asset: to, owner: USER, amount: toAmount },
        nonce: randomHex32().slice(0, 20),
      },
    });
    return { status: res.statusCode, body: res.json<Json>() };
  };

  before(async () => {
    t = await openTestApi(kind, undefined, { routePolicy: new RoutePolicy(RULES, { registry: localnetRegistry() }) });
    for (const asset of ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', 'ethereum_localnet:usdc', 'arbitrum_localnet:usdc']) {
      await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset, balance: 10n ** 20n });
    }
  });
  after(() => t.close());

  test('GET /v2/policy returns the configured policy', async () => {
    const { status, body } = await get('/v2/policy');
    assert.equal(status, 200);
    assert.deepEqual(body, { status: 'Ok', result: RULES });
    const noKey = await t.api.inject({ url: '/v2/policy' });
    assert.equal(noKey.statusCode, 401);
  });

  const refused: Array<[string, string, string, string]> = [
    ['arbitrum_localnet:wbtc', 'ethereum_localnet:usdc', '100000', 'blacklist_pairs rule "arbitrum_localnet:* -> ethereum_localnet:usdc"'],
    ['arbitrum_localnet:usdc', 'ethereum_localnet:usdc', '100000000', 'blacklist_pairs rule "arbitrum_localnet:* -> ethereum_localnet:usdc"'],
    ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', '100000', 'blacklist_pairs rule "ethereum_localnet:WBTC <-> arbitrum_localnet:WBTC"'],
    ['litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', '10000000', 'isolation_groups rule "litecoin_localnet:LTC -> ethereum_localnet:WBTC"'],
  ];
  for (const [from, to, amount, rule] of refused) {
    test(`a quote for ${from} -> ${to} is refused naming ${rule}`, async () => {
      const { status, body } = await quote(from, to, amount);
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(body.code, 'route_refused');
      assert.equal(body.error, `route ${from} -> ${to} is refused by ${rule}`);
    });
  }

  test('allowed routes still quote: by default, by a whitelist override, and within an isolation group', async () => {
    for (const [from, to, amount] of [
      ['ethereum_localnet:wbtc', 'ethereum_localnet:usdc', '100000'],
      ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', '100000'],
      ['litecoin_localnet:ltc', 'ethereum_localnet:wbtc', '10000000'],
    ] as const) {
      const { status, body } = await quote(from, to, amount);
      assert.equal(status, 200, `${from} -> ${to}: ${JSON.stringify(body)}`);
      assert.equal(body.result[0].destination.asset, to);
    }
  });

  test('a pair no solver quotes is still "no order pair found", whatever the policy', async () => {
    const { status, body } = await quote('ethereum_localnet:eth', 'litecoin_localnet:ltc', '1000000000000000000');
    assert.equal(status, 400);
    assert.match(body.error, /no order pair found/);
  });

  test('POST /v2/orders refuses a forbidden route naming the rule, and writes nothing', async () => {
    const before = await orderCount();
    const { status, body } = await post('ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', '100000', '99700');
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.code, 'route_refused');
    assert.equal(
      body.error,
      'route ethereum_localnet:wbtc -> arbitrum_localnet:wbtc is refused by blacklist_pairs rule "ethereum_localnet:WBTC <-> arbitrum_localnet:WBTC"',
    );
    assert.equal(await orderCount(), before);
  });

  test('POST /v2/orders creates an order on an allowed route', async () => {
    const priced = (await quote('arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', '100000')).body.result[0];
    const { status, body } = await post('arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', '100000', priced.destination.amount);
    assert.equal(status, 201, JSON.stringify(body));
    assert.match(body.result.order_id, /^[0-9a-f]{64}$/);
  });
});
