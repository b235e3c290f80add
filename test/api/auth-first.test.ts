import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { describeEachStore } from '../helpers/stores.ts';

const ORDER = 'a'.repeat(64);

/** Requests that are bad in some other way as well; without a valid key each must get 401 and nothing else. */
const BAD_REQUESTS: Array<{ name: string; method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: string; contentType?: string }> = [
  { name: 'an unknown asset filter', method: 'GET', url: '/v3/chains?asset=nope' },
  { name: 'an unknown v2 asset filter', method: 'GET', url: '/v2/assets?asset=nope' },
  { name: 'an unknown v2 chains filter', method: 'GET', url: '/v2/chains?from=nope' },
  { name: 'a bad order id', method: 'GET', url: '/v2/orders/xyz' },
  { name: 'a bad page', method: 'GET', url: '/v2/orders?page=-1' },
  { name: 'an unknown quote pair', method: 'GET', url: '/v2/quote?from=a&to=b&from_amount=x' },
  { name: 'bad JSON', method: 'POST', url: '/v2/orders', payload: '{bad json', contentType: 'application/json' },
  { name: 'a 10 MB body', method: 'POST', url: '/v2/orders', payload: `{"x":"${'a'.repeat(10 * 1024 * 1024)}"}`, contentType: 'application/json' },
  { name: 'a body of another type', method: 'POST', url: '/v2/orders', payload: 'hello', contentType: 'text/plain' },
  { name: 'an empty order body', method: 'POST', url: '/v2/orders', payload: '{}', contentType: 'application/json' },
  { name: 'an unknown action', method: 'PATCH', url: `/v2/orders/${ORDER}?action=explode`, payload: '{}', contentType: 'application/json' },
  { name: 'an action with bad JSON', method: 'PATCH', url: `/v2/orders/${ORDER}?action=redeem`, payload: '{', contentType: 'application/json' },
  { name: 'a v3 action with a 10 MB body', method: 'PATCH', url: `/v3/orders/${ORDER}?action=refund`, payload: `"${'b'.repeat(10 * 1024 * 1024)}"`, contentType: 'application/json' },
  { name: 'instant-refund hashes of a bad id', method: 'GET', url: '/v2/orders/zz/instant-refund-hash' },
];

describeEachStore('authentication comes before anything else on keyed routes', (kind) => {
  let t: TestApi;
  before(async () => {
    t = await openTestApi(kind);
  });
  after(() => t.close());

  for (const c of BAD_REQUESTS) {
    for (const [who, headers] of [
      ['no key', {}],
      ['an unknown key', { 'service-app-id': 'e'.repeat(64) }],
    ] as const) {
      test(`${c.name} with ${who}: 401, the rest unread`, async () => {
        const res = await t.api.inject({
          method: c.method,
          url: c.url,
          headers: { ...headers, ...(c.contentType ? { 'content-type': c.contentType } : {}) },
          ...(c.payload !== undefined ? { payload: c.payload } : {}),
        });
        assert.equal(res.statusCode, 401, res.body.slice(0, 300));
        const body = res.json<{ status: string; code: string; error: string }>();
        assert.equal(body.status, 'Error');
        assert.equal(body.code, 'unauthorized');
        assert.ok(!body.error.includes('ethereum_localnet'), 'no asset ids are listed to a caller without a key');
      });
    }
  }

  test('with the key the same requests get their own answers (400, 413), so the 401 above came first', async () => {
    const expected: Record<string, number> = {
      'an unknown asset filter': 400,
      'bad JSON': 400,
      'a 10 MB body': 413,
      'a v3 action with a 10 MB body': 413,
      'a body of another type': 400,
      'an unknown action': 400,
    };
    for (const c of BAD_REQUESTS.filter((b) => expected[b.name] !== undefined)) {
      const res = await t.api.inject({
        method: c.method,
        url: c.url,
        headers: { 'service-app-id': t.key, ...(c.contentType ? { 'content-type': c.contentType } : {}) },
        ...(c.payload !== undefined ? { payload: c.payload } : {}),
      });
      assert.equal(res.statusCode, expected[c.name], `${c.name}: ${res.body.slice(0, 300)}`);
      assert.equal(res.json<{ status: string }>().status, 'Error');
    }
  });
});
