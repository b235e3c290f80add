// The requests Garden's clients send (SDK 3.1.3 and the public API docs), sent to our app as they
// send them: each is accepted, or refused on purpose with an error naming the field.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { SOLVER, USER } from '../helpers/fixtures.ts';

type Json = Record<string, any>;
let t: TestApi;

const inject = async (method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await t.api.inject({ method, url, headers: { 'garden-app-id': t.key, 'content-type': 'application/json' }, ...(payload ? { payload } : {}) });
  return { status: res.statusCode, body: res.json<Json>() };
};

before(async () => {
  t = await openTestApi('pglite');
  for (const asset of ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc']) {
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset, balance: 10n ** 12n });
  }
});
after(() => t.close());

test("POST /v2/orders as the SDK's Garden.createOrder sends it: numeric nonce, null delegates, slippage 0, secret_hash without 0x", async () => {
  const secretHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  const res = await inject('POST', '/v2/orders', {
    source: { asset: 'ethereum_localnet:wbtc', owner: USER, delegate: null, amount: '100000' },
    destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, delegate: null, amount: '99700' },
    nonce: Date.now(),
    secret_hash: secretHash,
    slippage: 0,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const order = (await inject('GET', `/v2/orders/${res.body.result.order_id}`)).body.result;
  assert.equal(order.source_swap.secret_hash, secretHash);
});

test('POST /v2/orders as the docs show it: secret_hash with 0x, solver_id', async () => {
  const secretHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  const res = await inject('POST', '/v2/orders', {
    source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
    destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
    slippage: 50,
    secret_hash: `0x${secretHash}`,
    nonce: randomBytes(8).toString('hex'),
    solver_id: SOLVER.id,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
});

// Unknown query parameters are dropped by the schema (Fastify's removeAdditional), so `indicative`
// is accepted and has no effect: every quote here is priced the same way.
test("GET /v2/quote as the SDK's Quote.getQuote sends it: from_amount or to_amount, affiliate_fee, indicative", async () => {
  const base = '/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc';
  for (const query of ['&from_amount=100000', '&to_amount=99700', '&from_amount=100000&affiliate_fee=30', '&from_amount=100000&indicative=true', '&to_amount=99700&indicative=false']) {
    const res = await inject('GET', base + query);
    assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    assert.ok(res.body.result.length > 0);
  }
});
