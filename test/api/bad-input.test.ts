import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertOrder } from '../../src/store/orders.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32, sampleOrder } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

interface Case {
  name: string;
  url: string;
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** A JSON body. */
  payload?: object;
  /** `key` sends the test app's key in service-app-id. */
  auth?: boolean;
  status: number;
  /** The error message must match this. */
  error: RegExp;
  /** The quote read answers `{error}` without the envelope. */
  bare?: boolean;
}

const AUTHED = [
  '/v3/chains',
  '/v2/assets',
  '/v2/chains',
  '/v2/policy',
  '/v2/liquidity',
  '/v2/apps/earnings',
  `/v2/orders/${'a'.repeat(64)}`,
  `/v2/orders/${'a'.repeat(64)}/instant-refund-hash`,
  '/v2/orders',
  '/v2/orders?status=completed',
  '/v3/orders?page=1',
  `/v3/orders/${'a'.repeat(64)}`,
  '/v3/estimate?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=100000',
  '/v3/assets',
  '/v3/liquidity',
  '/v3/policy',
  '/v3/apps/earnings',
  '/v2/volume',
  '/v3/fees',
];
const UNKNOWN_KEY = 'f'.repeat(64);

const cases: Case[] = [
  ...AUTHED.flatMap((url): Case[] => [
    { name: `${url} without a key`, url, status: 401, error: /missing API key.*service-app-id/ },
    { name: `${url} with an unknown key`, url, headers: { 'service-app-id': UNKNOWN_KEY }, status: 401, error: /unknown API key/ },
    { name: `${url} with an unknown key in garden-app-id`, url, headers: { 'garden-app-id': UNKNOWN_KEY }, status: 401, error: /unknown API key/ },
    { name: `${url} with a malformed key`, url, headers: { 'service-app-id': 'not-a-key' }, status: 401, error: /unknown API key/ },
    { name: `${url} with an empty key`, url, headers: { 'service-app-id': '' }, status: 401, error: /missing API key/ },
  ]),
  { name: 'chains filtered by an unknown asset', url: '/v3/chains?asset=ethereum:doge', auth: true, status: 400, error: /invalid query parameter 'asset': must be one of: .*ethereum_localnet:wbtc/ },
  { name: 'chains filtered by an empty asset', url: '/v3/chains?asset=', auth: true, status: 400, error: /'asset': must be one of/ },
  { name: 'chains filtered by a chain key', url: '/v3/chains?asset=ethereum_localnet', auth: true, status: 400, error: /'asset': must be one of/ },
  { name: 'chains filtered by two assets', url: '/v3/chains?asset=ethereum_localnet:wbtc&asset=ethereum_localnet:usdc', auth: true, status: 400, error: /'asset'/ },
  { name: 'assets filtered by an unknown asset', url: '/v2/assets?asset=bitcoin:btc', auth: true, status: 400, error: /invalid query parameter 'asset': must be one of: .*litecoin_localnet:ltc/ },
  { name: 'v2 chains filtered by an unknown asset', url: '/v2/chains?from=bitcoin:btc', auth: true, status: 400, error: /invalid query parameter 'from': must be one of: .*litecoin_localnet:ltc/ },
  { name: 'v2 chains filtered by an empty asset', url: '/v2/chains?from=', auth: true, status: 400, error: /'from': must be one of/ },
  { name: 'v2 chains filtered by two assets', url: '/v2/chains?from=ethereum_localnet:wbtc&from=ethereum_localnet:usdc', auth: true, status: 400, error: /'from'/ },
  { name: 'assets filtered by upper case', url: '/v2/assets?asset=ETHEREUM_LOCALNET:WBTC', auth: true, status: 400, error: /'asset': must be one of/ },
  { name: 'order with a short id', url: '/v2/orders/abc', auth: true, status: 400, error: /invalid path parameter 'order': must be 64 hexadecimal characters/ },
  { name: 'instant-refund hashes of a short id', url: '/v2/orders/abc/instant-refund-hash', auth: true, status: 400, error: /invalid path parameter 'order': must be 64 hexadecimal characters/ },
  { name: 'instant-refund hashes of a non-hex id', url: `/v2/orders/${'z'.repeat(64)}/instant-refund-hash`, auth: true, status: 400, error: /'order': must be 64 hexadecimal/ },
  { name: 'instant-refund hashes without a relayer', url: `/v2/orders/${'a'.repeat(64)}/instant-refund-hash`, auth: true, status: 503, error: /no relayer is configured/ },
  ...['instant-refund-hash', 'instant-refund', 'redeem'].flatMap((route): Case[] => [
    { name: `POST /relayer/bitcoin/${route} without a key`, url: `/relayer/bitcoin/${route}`, method: 'POST', status: 401, error: /missing API key/ },
    { name: `POST /relayer/bitcoin/${route} without order_id`, url: `/relayer/bitcoin/${route}`, method: 'POST', auth: true, payload: {}, status: 400, error: /'order_id'/ },
    { name: `POST /relayer/bitcoin/${route} with a short order_id`, url: `/relayer/bitcoin/${route}`, method: 'POST', auth: true, payload: { order_id: 'abc', signatures: ['00'], redeem_tx_bytes: '00' }, status: 400, error: /'order_id': must be 64 hexadecimal/ },
  ]),
  { name: 'instant-refund consent with signatures not a list', url: '/relayer/bitcoin/instant-refund', method: 'POST', auth: true, payload: { order_id: 'a'.repeat(64), signatures: 'ab' }, status: 400, error: /'signatures'/ },
  { name: 'instant-refund consent with no signatures', url: '/relayer/bitcoin/instant-refund', method: 'POST', auth: true, payload: { order_id: 'a'.repeat(64), signatures: [] }, status: 400, error: /'signatures'/ },
  { name: 'client redeem without the transaction', url: '/relayer/bitcoin/redeem', method: 'POST', auth: true, payload: { order_id: 'a'.repeat(64) }, status: 400, error: /'redeem_tx_bytes'/ },
  { name: 'client redeem with a number for the transaction', url: '/relayer/bitcoin/redeem', method: 'POST', auth: true, payload: { order_id: 'a'.repeat(64), redeem_tx_bytes: 12 }, status: 400, error: /'redeem_tx_bytes'/ },
  { name: 'client redeem without a relayer', url: '/relayer/bitcoin/redeem', method: 'POST', auth: true, payload: { order_id: 'a'.repeat(64), redeem_tx_bytes: '00' }, status: 503, error: /no relayer is configured/ },
  { name: 'order with a non-hex id', url: `/v2/orders/${'g'.repeat(64)}`, auth: true, status: 400, error: /'order': must be 64 hexadecimal/ },
  { name: 'order with a 0x id', url: `/v2/orders/0x${'a'.repeat(64)}`, auth: true, status: 400, error: /'order': must be 64 hexadecimal/ },
  { name: 'order with a very long id', url: `/v2/orders/${'a'.repeat(5000)}`, auth: true, status: 400, error: /invalid request path/ },
  { name: 'order with an encoded NUL', url: '/v2/orders/%00', auth: true, status: 400, error: /'order'/ },
  { name: 'order with unicode', url: '/v2/orders/%E2%9C%93', auth: true, status: 400, error: /'order'/ },
  { name: 'order list, page 0', url: '/v2/orders?page=0', auth: true, status: 400, error: /invalid query parameter 'page': must be >= 1/ },
  { name: 'order list, negative page', url: '/v2/orders?page=-3', auth: true, status: 400, error: /'page'/ },
  { name: 'order list, page not a number', url: '/v2/orders?page=two', auth: true, status: 400, error: /'page': must be integer/ },
  { name: 'order list, fractional page', url: '/v2/orders?page=1.5', auth: true, status: 400, error: /'page'/ },
  { name: 'order list, huge page', url: '/v2/orders?page=1e30', auth: true, status: 400, error: /'page'/ },
  { name: 'order list, per_page 0', url: '/v2/orders?per_page=0', auth: true, status: 400, error: /invalid query parameter 'per_page': must be >= 1/ },
  { name: 'order list, per_page 501', url: '/v2/orders?per_page=501', auth: true, status: 400, error: /invalid query parameter 'per_page': must be <= 500/ },
  { name: 'order list, per_page garbage', url: '/v2/orders?per_page=%00', auth: true, status: 400, error: /'per_page'/ },
  { name: 'order list, two per_page', url: '/v2/orders?per_page=5&per_page=6', auth: true, status: 400, error: /'per_page'/ },
  { name: 'order list, unknown status', url: '/v2/orders?status=done', auth: true, status: 400, error: /invalid query parameter 'status': unknown status group 'done'; allowed: not-initiated, in-progress, completed, expired, refunded/ },
  { name: 'order list, a status, not a group', url: '/v2/orders?status=completed,awaiting_redeem', auth: true, status: 400, error: /'status': unknown status group 'awaiting_redeem'/ },
  { name: 'order list, only commas as status', url: '/v2/orders?status=,,', auth: true, status: 400, error: /'status': no status group given; allowed:/ },
  { name: 'order list, empty status', url: '/v2/orders?status=', auth: true, status: 400, error: /'status'/ },
  { name: 'order list, two status parameters', url: '/v2/orders?status=completed&status=expired', auth: true, status: 400, error: /'status'/ },
  { name: 'order list, unknown from_chain', url: '/v2/orders?from_chain=dogecoin', auth: true, status: 400, error: /invalid query parameter 'from_chain': unknown chain 'dogecoin'; known chains: ethereum_localnet/ },
  { name: 'order list, unknown to_chain', url: '/v2/orders?to_chain=ETHEREUM_LOCALNET', auth: true, status: 400, error: /invalid query parameter 'to_chain': unknown chain 'ETHEREUM_LOCALNET'/ },
  { name: 'order list, asset id as chain', url: '/v2/orders?from_chain=ethereum_localnet:wbtc', auth: true, status: 400, error: /'from_chain': unknown chain/ },
  { name: 'order list, empty address', url: '/v2/orders?address=', auth: true, status: 400, error: /invalid query parameter 'address'/ },
  { name: 'order list, NUL in tx_hash', url: '/v2/orders?tx_hash=0x%00', auth: true, status: 400, error: /invalid query parameter 'tx_hash': must be 1 to 200 characters, without control characters/ },
  { name: 'order list, oversized tx_hash', url: `/v2/orders?tx_hash=${'a'.repeat(500)}`, auth: true, status: 400, error: /invalid query parameter 'tx_hash'/ },
  { name: 'unknown order', url: `/v2/orders/${'b'.repeat(64)}`, auth: true, status: 404, error: /order b{64} not found/ },
  { name: 'quote with a short id', url: '/v3/quote/xyz', status: 400, error: /invalid path parameter 'id': must be 64 hexadecimal/, bare: true },
  { name: 'quote with a very long id', url: `/v3/quote/${'1'.repeat(3000)}`, status: 400, error: /invalid request path/, bare: true },
  { name: 'unknown quote', url: `/v3/quote/${'c'.repeat(64)}`, status: 404, error: /quote c{64} not found/, bare: true },
  { name: 'unknown quote, with a key', url: `/v3/quote/${'c'.repeat(64)}`, auth: true, status: 404, error: /not found/, bare: true },
  { name: 'unknown route', url: '/v2/nothing', auth: true, status: 404, error: /no route GET \/v2\/nothing/ },
  { name: 'unknown version', url: '/v9/chains', auth: true, status: 404, error: /no route/ },
  { name: 'wrong method on chains', url: '/v3/chains', method: 'DELETE', auth: true, status: 404, error: /no route DELETE/ },
];

describeEachStore('bad requests to every endpoint', (kind) => {
  let t: TestApi;
  before(async () => {
    t = await openTestApi(kind);
    await insertOrder(t.store.db, sampleOrder(t.appId));
  });
  after(() => t.close());

  for (const c of cases) {
    test(`${c.name} -> ${c.status}`, async () => {
      const orders = await t.store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      const res = await t.api.inject({
        method: c.method ?? 'GET',
        url: c.url,
        headers: { ...(c.auth ? { 'service-app-id': t.key } : {}), ...c.headers },
        ...(c.payload ? { payload: c.payload } : {}),
      });
      assert.equal(res.statusCode, c.status, res.body.slice(0, 300));
      assert.match(res.headers['content-type'] as string, /^application\/json/);
      const body = res.json<Record<string, unknown>>();
      if (c.bare) {
        assert.deepEqual(Object.keys(body), ['error']);
      } else {
        assert.equal(body.status, 'Error');
        assert.equal(typeof body.code, 'string');
      }
      assert.match(String(body.error), c.error);
      const after = await t.store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      assert.equal(after.n, orders.n, 'no order was written or removed');
    });
  }

  test('the same reads succeed with valid input, through either header', async () => {
    for (const header of ['service-app-id', 'garden-app-id']) {
      for (const url of ['/v3/chains', '/v2/chains', '/v2/chains?from=ethereum_localnet:wbtc', '/v2/policy', '/v2/assets', '/v2/liquidity', '/v2/apps/earnings', '/v3/chains?asset=ethereum_localnet:wbtc', '/v2/orders?status=completed,expired&per_page=100&page=2']) {
        const res = await t.api.inject({ url, headers: { [header]: t.key } });
        assert.equal(res.statusCode, 200, `${header} ${url}: ${res.body}`);
        assert.equal(res.json<{ status: string }>().status, 'Ok');
      }
    }
  });

  test('random garbage paths and queries never produce a 5xx', async () => {
    const junk = ['%', '%ff', '..', '../../etc/passwd', ' ', '\u0000'.repeat(3), 'a'.repeat(100), randomHex32().toUpperCase()];
    for (const j of junk) {
      for (const base of ['/v2/orders/', '/v3/quote/', '/v3/chains?asset=', '/v2/chains?from=', '/v2/assets?asset=', '/v2/orders?address=', '/v2/orders?tx_hash=', '/v2/orders?status=', '/v2/orders?from_chain=', '/v2/orders?page=']) {
        const res = await t.api.inject({ url: base + encodeURIComponent(j), headers: { 'service-app-id': t.key } });
        assert.ok(res.statusCode < 500, `${base}${j}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
    }
  });
});
