import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

/** A valid WBTC order body ethereum_localnet -> arbitrum_localnet, with `field` set to `value`. */
function body(field: string, value: unknown): Record<string, unknown> {
  const order: Record<string, unknown> = {
    source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
    destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
    nonce: randomHex32().slice(0, 20),
  };
  const [head, tail] = field.split('.') as [string, string | undefined];
  if (tail === undefined) order[head] = value;
  else order[head] = { ...(order[head] as object), [tail]: value };
  return order;
}

/** JSON values that a coercing validator would turn into what the field wants; each must get a 400 naming the field. */
const COERCIBLE: Array<[field: string, values: unknown[]]> = [
  ['slippage', [false, true, ' ', '', '50', '0', null, [], [50], {}, 1.5, -1]],
  ['affiliate_fees', [false, true, 0, 1, '', 'none', [null], [0], [''], [false], {}]],
  ['nonce', [true, false, 1.5, 1e308, 1e40, -1, 2 ** 53, null, [], ['a'], {}, '']],
  ['solver_id', [5, true, false, [], {}]],
  ['secret_hash', [1, true, false, [], {}]],
  ['source.amount', [100000, true, ['100000'], null]],
  ['destination.amount', [99700, false, ['99700']]],
  ['source.owner', [0, true, null, [USER]]],
  ['source.asset', [1, false, null, ['ethereum_localnet:wbtc']]],
  ['source.delegate', [0, true, [], {}]],
  ['destination.delegate', [1, false]],
];

describeEachStore('strict JSON bodies: never type-coerced', (kind) => {
  let t: TestApi;
  const orderCount = async () => Number((await t.store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  const post = (payload: unknown) =>
    t.api.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': t.key, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

  before(async () => {
    t = await openTestApi(kind);
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:wbtc', balance: 10n ** 20n });
  });
  after(() => t.close());

  for (const [field, values] of COERCIBLE) {
    test(`${field}: ${values.map((v) => JSON.stringify(v)).join(', ')} are each refused with a 400 naming it`, async () => {
      const before = await orderCount();
      for (const value of values) {
        const res = await post(body(field, value));
        assert.equal(res.statusCode, 400, `${field} = ${JSON.stringify(value)}: ${res.statusCode} ${res.body}`);
        const error = res.json<{ error: string; code: string }>();
        assert.equal(error.code, 'invalid_request');
        const leaf = field.split('.').pop()!;
        assert.ok(error.error.includes(leaf), `${field} = ${JSON.stringify(value)}: the error names the field: ${error.error}`);
      }
      assert.equal(await orderCount(), before, 'no order was written');
    });
  }

  test('the accepted forms still work: a nonce as a string or a safe integer, slippage and fees as integers, null where the spec allows it', async () => {
    const ok = [
      body('nonce', Number.MAX_SAFE_INTEGER),
      body('nonce', 0),
      body('nonce', `n-${randomHex32().slice(0, 8)}`),
      { ...body('slippage', 50), affiliate_fees: null, solver_id: null, secret_hash: null },
      body('source.delegate', null),
    ];
    for (const payload of ok) {
      const res = await post(payload);
      assert.equal(res.statusCode, 201, `${JSON.stringify(payload)}: ${res.body}`);
    }
  });

  test('a whole-number nonce and the same digits as a string are the same nonce; a nonce past 2^53 cannot become "1e+40"', async () => {
    const asNumber = body('nonce', 123456789);
    const first = await post(asNumber);
    assert.equal(first.statusCode, 201, first.body);
    const again = await post({ ...asNumber, nonce: '123456789' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json<{ result: { order_id: string } }>().result.order_id, first.json<{ result: { order_id: string } }>().result.order_id);
    const huge = await post(body('nonce', 1e40));
    assert.equal(huge.statusCode, 400, huge.body);
    const text = await post(body('nonce', '1e+40'));
    assert.equal(text.statusCode, 201, text.body);
  });

  test('query strings are text, so their numbers are still read as numbers', async () => {
    const res = await t.api.inject({ url: '/v2/orders?page=1&per_page=5', headers: { 'service-app-id': t.key } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ result: { per_page: number } }>().result.per_page, 5);
  });

  test('an echoed value is cut to about 100 characters', async () => {
    const long = 'x'.repeat(10_000);
    const quote = await t.api.inject({ url: `/v2/quote?from=${long}&to=arbitrum_localnet:wbtc&from_amount=100000`, headers: { 'service-app-id': t.key } });
    assert.equal(quote.statusCode, 400);
    assert.ok(quote.body.length < 400, `a ${quote.body.length}-byte answer: ${quote.body.slice(0, 200)}`);
    assert.match(quote.json<{ error: string }>().error, /'from': unknown or inactive asset x{100}\.\.\./);
    for (const field of ['source.asset', 'source.owner']) {
      const res = await post(body(field, 'y'.repeat(250)));
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(!res.body.includes('y'.repeat(101)), `${field}: ${res.body}`);
    }
    const list = await t.api.inject({ url: `/v2/orders?status=${'z'.repeat(190)}`, headers: { 'service-app-id': t.key } });
    assert.equal(list.statusCode, 400);
    assert.ok(!list.body.includes('z'.repeat(101)), list.body);
  });
});
