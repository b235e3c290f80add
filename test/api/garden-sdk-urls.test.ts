// The URLs Garden's SDK 3.1.3 builds for its Bitcoin relayer requests (executor postRefundSACP and
// broadcastRedeemTx) reach our routes: built with its own Url class, as it builds them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as gardenUtils from '@gardenfi/utils';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { describeEachStore } from '../helpers/stores.ts';

// The package ships no type declarations at its `types` path (as in test/garden-sdk).
const { Url } = gardenUtils as unknown as { Url: new (url: string) => URL & { endpoint(path: string): URL } };
const API = 'http://127.0.0.1:4000';

describeEachStore("Garden SDK's relayer URLs", (kind) => {
  let t: TestApi;
  before(async () => {
    t = await openTestApi(kind);
  });
  after(() => t.close());

  const urls = {
    'instant-refund-hash': new Url(API).endpoint('relayer/bitcoin/instant-refund-hash'),
    'instant-refund': new Url(API).endpoint('relayer/bitcoin/instant-refund'),
    // The SDK's path has a trailing space; the URL parser strips it. Its `relayer` is `<api>/relayer`.
    redeem: new Url(`${API}/relayer`).endpoint('/bitcoin/redeem '),
  };

  for (const [name, url] of Object.entries(urls)) {
    test(`${name}: ${url.pathname} is a keyed route`, async () => {
      assert.equal(url.pathname, `/relayer/bitcoin/${name}`);
      const res = await t.api.inject({ method: 'POST', url: url.pathname, payload: { order_id: 'a'.repeat(64) } });
      assert.equal(res.statusCode, 401, res.body);
      const keyed = await t.api.inject({ method: 'POST', url: url.pathname, headers: { 'garden-app-id': t.key }, payload: {} });
      assert.equal(keyed.statusCode, 400, keyed.body);
      assert.match(keyed.json<{ error: string }>().error, /'order_id'/);
    });
  }
});
