import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { p2wpkh } from '@scure/btc-signer';
import { bitcoinNetwork } from '../../src/chains/bitcoin/network.ts';
import { htlcAddress } from '../../src/chains/bitcoin/htlc.ts';
import { evmOrderId } from '../../src/chains/evm/order-id.ts';
import type { ErrorCode } from '../../src/errors.ts';
import { createApp } from '../../src/store/apps.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { openTestApi, type TestApi } from '../helpers/api.ts';
import { randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';

const LTC_USER_KEY = secp256k1.utils.randomSecretKey();
const LTC_OWNER = p2wpkh(secp256k1.getPublicKey(LTC_USER_KEY, true), bitcoinNetwork('litecoin_regtest')).address;
const AFFILIATE = '0x1111111111111111111111111111111111111111';

/** A valid WBTC order ethereum_localnet -> arbitrum_localnet; overrides replace whole fields. */
function body(overrides: Record<string, unknown> = {}) {
  return {
    source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' },
    destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99700' },
    nonce: randomHex32().slice(0, 20),
    ...overrides,
  };
}

describeEachStore('POST /v2/orders', (kind) => {
  let t: TestApi;
  let nonGaslessKey: string;

  const post = async (payload: unknown, key = t.key) => {
    const res = await t.api.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': key }, payload: payload as object });
    return { status: res.statusCode, body: res.json<Record<string, any>>() };
  };
  const getOrder = async (id: string) =>
    (await t.api.inject({ url: `/v2/orders/${id}`, headers: { 'service-app-id': t.key } })).json<Record<string, any>>().result;
  const orderCount = async () => Number((await t.store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  const committed = async (asset: string) =>
    BigInt((await t.store.db.selectFrom('solver_balances').select('committed').where('asset', '=', asset).executeTakeFirstOrThrow()).committed);

  before(async () => {
    t = await openTestApi(kind);
    for (const asset of ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', 'arbitrum_localnet:usdc', 'ethereum_localnet:eth', 'arbitrum_localnet:eth', 'litecoin_localnet:ltc']) {
      await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset, balance: 10n ** 20n });
    }
    nonGaslessKey = (await createApp(t.store.db, { name: 'no gasless', gasless: false })).key;
  });
  after(() => t.close());

  test('a gasless ERC-20 order: EIP-712 data, approval and initiate calls, swaps with the contract order ids', async () => {
    const before = await committed('arbitrum_localnet:wbtc');
    const { status, body: res } = await post(body());
    assert.equal(status, 201, JSON.stringify(res));
    const r = res.result;
    assert.match(r.order_id, /^[0-9a-f]{64}$/);
    assert.equal(r.typed_data.primaryType, 'Initiate');
    assert.equal(r.typed_data.domain.verifyingContract, '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0');
    assert.equal(r.typed_data.message.redeemer, SOLVER.addresses.ethereum_localnet);
    assert.equal(r.typed_data.message.amount, '0x186a0');
    assert.ok(r.approval_transaction.data.startsWith('0x095ea7b3'));
    assert.ok(r.initiate_transaction.data.startsWith('0x97ffc7ae'));
    assert.equal(r.amount, '100000');

    const order = await getOrder(r.order_id);
    const s = order.source_swap;
    const d = order.destination_swap;
    assert.equal(s.initiator, USER);
    assert.equal(s.redeemer, SOLVER.addresses.ethereum_localnet);
    assert.equal(d.initiator, SOLVER.addresses.arbitrum_localnet);
    assert.equal(d.redeemer, USER);
    assert.deepEqual([s.timelock, d.timelock], [600, 150]);
    assert.deepEqual([s.required_confirmations, d.required_confirmations], [1, 1]);
    assert.equal(r.typed_data.message.secretHash, `0x${s.secret_hash}`);
    const id = (chainId: bigint, initiator: string, redeemer: string, timelock: bigint, amount: bigint, htlc: string) =>
      evmOrderId({ chainId, secretHash: `0x${s.secret_hash}`, initiator: initiator as `0x${string}`, redeemer: redeemer as `0x${string}`, timelock, amount, htlc: htlc as `0x${string}` }).slice(2);
    assert.equal(s.swap_id, id(31337n, USER, SOLVER.addresses.ethereum_localnet!, 600n, 100000n, '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0'));
    assert.equal(d.swap_id, id(31338n, SOLVER.addresses.arbitrum_localnet!, USER, 150n, 99700n, '0x0165878A594ca255338adfa4d48449f69242Eb8F'));
    assert.ok(Math.abs(order.deadline - (Math.floor(Date.now() / 1000) + 3600)) < 60);
    assert.equal(order.solver_id, SOLVER.id);
    assert.equal(order.integrator, 'test app');
    assert.equal(s.secret, '', 'the secret is not shown before it is revealed on chain');
    assert.equal(await committed('arbitrum_localnet:wbtc'), before + 99_700n, 'the destination amount is reserved');

    const row = await t.store.db.selectFrom('orders').select(['secret_ciphertext', 'secret_hash']).where('id', '=', r.order_id).executeTakeFirstOrThrow();
    assert.ok(row.secret_ciphertext && row.secret_ciphertext.length === 2 + 32 + 12 + 16 + 32, 'a service-held secret is stored sealed (marker, ephemeral key, nonce, tag, ciphertext)');
    assert.ok(!JSON.stringify(await getOrder(r.order_id)).includes(Buffer.from(row.secret_ciphertext).toString('hex')));
  });

  test('a client-held secret is used as given and nothing secret is stored; gasless off or ether gives no typed data', async () => {
    const secretHash = createHash('sha256').update(randomHex32()).digest('hex');
    const { status, body: res } = await post(body({ secret_hash: `0x${secretHash.toUpperCase()}` }), nonGaslessKey);
    assert.equal(status, 201, JSON.stringify(res));
    assert.equal(res.result.typed_data, null);
    assert.ok(res.result.approval_transaction);
    const row = await t.store.db.selectFrom('orders').select(['secret_ciphertext', 'secret_hash']).where('id', '=', res.result.order_id).executeTakeFirstOrThrow();
    assert.equal(row.secret_hash, secretHash);
    assert.equal(row.secret_ciphertext, null);

    const ether = await post(body({ source: { asset: 'ethereum_localnet:eth', owner: USER, amount: '10000000000000000' }, destination: { asset: 'arbitrum_localnet:eth', owner: USER, amount: '9970000000000000' } }));
    assert.equal(ether.status, 201, JSON.stringify(ether.body));
    assert.equal(ether.body.result.typed_data, null);
    assert.equal(ether.body.result.approval_transaction, null);
    assert.equal(ether.body.result.initiate_transaction.value, '0x2386f26fc10000');
  });

  test('a Litecoin source pays a taproot HTLC whose keys are the service-held or the client key and the solver key', async () => {
    // 1 LTC at 90 USD = 94,736 sats at 95,000 USD, less 0.3 %
    const { status, body: res } = await post(body({ source: { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: '100000000' }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '94000' } }));
    assert.equal(status, 201, JSON.stringify(res));
    assert.deepEqual(Object.keys(res.result).sort(), ['amount', 'order_id', 'to']);
    assert.equal(res.result.amount, '100000000');
    const order = await getOrder(res.result.order_id);
    const s = order.source_swap;
    assert.equal(s.initiator, LTC_OWNER);
    assert.equal(s.redeemer, SOLVER.addresses.litecoin_localnet);
    assert.match(s.delegate, /^[0-9a-f]{64}$/);
    assert.equal(s.swap_id, res.result.to);
    assert.equal(res.result.to, htlcAddress({ initiator: s.delegate, redeemer: s.redeemer, secretHash: s.secret_hash, timelock: 60n }, 'litecoin_regtest'));
    assert.ok(res.result.to.startsWith('rltc1p'));
    assert.ok(Math.abs(order.deadline - (Math.floor(Date.now() / 1000) + 6 * 3600)) < 60, 'a Bitcoin-family source gets 6 h');
    const row = await t.store.db.selectFrom('orders').select('delegate_key_ciphertext').where('id', '=', res.result.order_id).executeTakeFirstOrThrow();
    assert.ok(row.delegate_key_ciphertext, 'the service-held key is stored encrypted');

    const clientKey = Buffer.from(schnorr.getPublicKey(LTC_USER_KEY)).toString('hex');
    const own = await post(body({ source: { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: '100000000', delegate: clientKey }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '94000' } }));
    assert.equal(own.status, 201);
    const ownOrder = await getOrder(own.body.result.order_id);
    assert.equal(ownOrder.source_swap.delegate, clientKey);
    const ownRow = await t.store.db.selectFrom('orders').select('delegate_key_ciphertext').where('id', '=', own.body.result.order_id).executeTakeFirstOrThrow();
    assert.equal(ownRow.delegate_key_ciphertext, null);

    const toLtc = await post(body({ source: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '100000' }, destination: { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: '100000000' } }));
    assert.equal(toLtc.status, 201, JSON.stringify(toLtc.body));
    const d = (await getOrder(toLtc.body.result.order_id)).destination_swap;
    assert.equal(d.initiator, SOLVER.addresses.litecoin_localnet);
    assert.equal(d.redeemer, LTC_OWNER);
    assert.equal(d.swap_id, htlcAddress({ initiator: d.initiator, redeemer: d.delegate, secretHash: d.secret_hash, timelock: 12n }, 'litecoin_regtest'));
  });

  test('safety rule 7: the secret and the key the service holds for an order are in none of its answers', async () => {
    const created = await post(body({ source: { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: '100000000' }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '94000' } }));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.result.order_id as string;
    const row = await t.store.db.selectFrom('orders').select(['secret_ciphertext', 'delegate_key_ciphertext']).where('id', '=', id).executeTakeFirstOrThrow();
    const held = [row.secret_ciphertext, row.delegate_key_ciphertext].map((sealed) => {
      assert.ok(sealed, 'the service holds both');
      return Buffer.from(t.secrets.open(sealed)).toString('hex');
    });
    const answers = [JSON.stringify(created.body)];
    for (const url of [`/v2/orders/${id}`, `/v3/quote/${id}`, '/v2/orders?per_page=100', `/explorer/api/orders/${id}`, `/explorer/api/orders?q=${id}`]) {
      const res = await t.api.inject({ url, headers: { 'service-app-id': t.key } });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.ok(res.body.includes(id), `${url} answers about the order`);
      answers.push(res.body);
    }
    for (const answer of answers) {
      for (const secret of held) assert.ok(!answer.toLowerCase().includes(secret), `held in: ${answer.slice(0, 200)}`);
    }
  });

  test('the same nonce returns the same order; a different body with it is a conflict', async () => {
    const payload = body({ nonce: 1751978328975 });
    const first = await post(payload);
    assert.equal(first.status, 201);
    const again = await post(payload);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.result, first.body.result);
    const other = await post({ ...payload, destination: { ...payload.destination, amount: '99000' } });
    assert.equal(other.status, 409);
    assert.match(other.body.error, /nonce: already used by this app for a different order/);
  });

  test('ten concurrent creates with one nonce make one order and reserve once', async () => {
    const before = await committed('arbitrum_localnet:wbtc');
    const count = await orderCount();
    const payload = body();
    const results = await Promise.all(Array.from({ length: 10 }, () => post(payload)));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201].sort());
    assert.equal(new Set(results.map((r) => r.body.result.order_id)).size, 1);
    assert.equal(await orderCount(), count + 1);
    assert.equal(await committed('arbitrum_localnet:wbtc'), before + 99_700n);
  });

  test('25 concurrent creates against liquidity for 10: exactly 10 orders, never an overcommit', async () => {
    // The production path: each create runs create_order, whose conditional update reserves or refuses.
    const asset = 'arbitrum_localnet:wbtc';
    const before = await committed(asset);
    const count = await orderCount();
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset, balance: before + 10n * 99_700n });
    try {
      const results = await Promise.all(Array.from({ length: 25 }, () => post(body())));
      const created = results.filter((r) => r.status === 201);
      const refused = results.filter((r) => r.status !== 201);
      assert.equal(created.length, 10, JSON.stringify(refused.map((r) => r.body)));
      for (const r of refused) {
        assert.equal(r.status, 400);
        assert.match(r.body.error, /insufficient liquidity/);
      }
      assert.equal(await orderCount(), count + 10, 'a refused create writes nothing');
      assert.equal(await committed(asset), before + 10n * 99_700n, 'the whole balance, and not a unit more');
      const more = await post(body());
      assert.equal(more.status, 400, 'nothing left');
    } finally {
      await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset, balance: 10n ** 20n });
    }
  });

  test('an order the solver cannot cover is refused and leaves nothing behind', async () => {
    await setSolverBalance(t.store.db, { solverId: SOLVER.id, asset: 'arbitrum_localnet:usdc', balance: 50_000_000n });
    const count = await orderCount();
    const big = await post(body({ source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: '100000' }, destination: { asset: 'arbitrum_localnet:usdc', owner: USER, amount: '94000000' } }));
    assert.equal(big.status, 400);
    assert.match(big.body.error, /insufficient liquidity/);
    assert.equal(await orderCount(), count);
  });

  test('affiliate fees are stored per order in their fee asset at order-time prices', async () => {
    const { status, body: res } = await post(
      body({ destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '99400' }, affiliate_fees: [{ address: AFFILIATE, fee: 30 }] }),
    );
    assert.equal(status, 201, JSON.stringify(res));
    const fees = await t.store.db.selectFrom('affiliate_fees').selectAll().where('order_id', '=', res.result.order_id).execute();
    // 100,000 sats x 30 bips = 300 sats = 0.000003 BTC x 95,000 USD = 0.285 USD = 285,000 micro-USDC
    assert.deepEqual(fees.map((f) => [f.address, f.fee_bips, f.asset, f.amount, f.status]), [[AFFILIATE, 30, 'ethereum_localnet:usdc', '285000', 'pending']]);
    const order = await getOrder(res.result.order_id);
    assert.deepEqual(order.affiliate_fees, [{ address: AFFILIATE, asset: 'ethereum_localnet:usdc', fee: 30 }]);
    const over = await post(body({ affiliate_fees: [{ address: AFFILIATE, fee: 30 }] }));
    assert.equal(over.status, 400, 'the affiliate bips come out of the destination amount');
    assert.match(over.body.error, /destination\.amount: 99700 is more than the price allows; at most 99400/);
  });

  test('a destination within the slippage of the price is accepted, beyond it refused', async () => {
    const within = await post(body({ destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '100198' }, slippage: 50 }));
    assert.equal(within.status, 201, JSON.stringify(within.body));
    const beyond = await post(body({ destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '100199' }, slippage: 50 }));
    assert.equal(beyond.status, 400);
    assert.match(beyond.body.error, /at most 100198 with slippage 50 bips \(quote: 99700\)/);
  });

  test('a secret hash serves one order only', async () => {
    const secretHash = randomHex32();
    assert.equal((await post(body({ secret_hash: secretHash }))).status, 201);
    const reuse = await post(body({ secret_hash: secretHash }));
    assert.equal(reuse.status, 409);
    assert.match(reuse.body.error, /secret_hash: already used by another order/);
  });

  const side = (overrides: Record<string, unknown>, which: 'source' | 'destination' = 'source') => ({
    [which]: { ...body()[which], ...overrides },
  });
  const cases: Array<[string, Record<string, unknown>, RegExp, ErrorCode?]> = [
    ['no source', { source: undefined }, /'source': is required/],
    ['a source that is a string', { source: 'x' }, /'source': must be object/],
    ['no source asset', side({ asset: undefined }), /'source\.asset': is required/],
    ['an unknown source asset', side({ asset: 'ethereum_localnet:doge' }), /source\.asset: unknown asset ethereum_localnet:doge/],
    ['an unknown destination asset', side({ asset: 'nowhere:btc' }, 'destination'), /destination\.asset: unknown asset nowhere:btc/],
    ['the same asset on both sides', side({ asset: 'ethereum_localnet:wbtc' }, 'destination'), /destination\.asset: must differ from source\.asset/],
    ['an unquoted pair', side({ asset: 'arbitrum_localnet:eth', amount: '1000000000000000' }, 'destination'), /no order pair found for ethereum_localnet:wbtc -> arbitrum_localnet:eth/, 'no_route'],
    ['no source owner', side({ owner: undefined }), /'source\.owner': is required/],
    ['a source owner with a bad checksum', side({ owner: '0x90F79bf6EB2c4f870365E785982E1f101E93B906' }), /source\.owner: 0x90F79bf6EB2c4f870365E785982E1f101E93B906 is not a valid address on ethereum_localnet/],
    ['a destination owner that is not hex', side({ owner: 'bob' }, 'destination'), /destination\.owner: bob is not a valid address on arbitrum_localnet/],
    ['a Litecoin address on an EVM side', side({ owner: LTC_OWNER }, 'destination'), /destination\.owner: .* is not a valid address on arbitrum_localnet/],
    ['an EVM address on a Litecoin side', { source: { asset: 'litecoin_localnet:ltc', owner: USER, amount: '1000000' }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '90000' } }, /source\.owner: 0x90F7.* is not a valid address on litecoin_localnet/],
    ['a mainnet Litecoin address on regtest', { source: { asset: 'litecoin_localnet:ltc', owner: 'ltc1qg9stkxrszkdqsuj92lm4c7akvk36zvhqw7p6ck', amount: '1000000' }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '90000' } }, /source\.owner: ltc1q.* is not a valid address on litecoin_localnet/],
    ['a delegate on an EVM side', side({ delegate: 'ab'.repeat(32) }), /source\.delegate: only a side whose scripts name keys \(Bitcoin family\) takes a delegate/],
    ['a delegate that is no key', { source: { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: '1000000', delegate: 'zz' }, destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '90000' } }, /source\.delegate: must be an x-only public key/],
    ['an amount as a JSON number', side({ amount: 100000 }), /'source\.amount': must be a string of base units/],
    ['a negative amount', side({ amount: '-5' }), /'source\.amount': must be a string of base units/],
    ['a decimal amount', side({ amount: '1.5' }, 'destination'), /'destination\.amount': must be a string of base units/],
    ['a zero destination amount', side({ amount: '0' }, 'destination'), /destination\.amount: must be greater than 0/],
    ['a source amount below the minimum', side({ amount: '999' }), /source\.amount: expected amount to be within the range of 1000 to 1000000000/, 'amount_out_of_range'],
    ['a source amount above the maximum', side({ amount: '1000000001' }), /source\.amount: expected amount to be within the range/, 'amount_out_of_range'],
    ['a destination beyond the price', side({ amount: '99701' }, 'destination'), /destination\.amount: 99701 is more than the price allows/, 'slippage_exceeded'],
    ['slippage above 500', { slippage: 501 }, /slippage: must be a whole number of bips from 0 to 500/],
    ['negative slippage', { slippage: -1 }, /slippage: must be a whole number of bips/],
    ['fractional slippage', { slippage: 1.5 }, /'slippage': must be integer/],
    ['a nonce with spaces', { nonce: 'a b' }, /nonce: must be 1 to 128 printable characters/],
    ['an empty nonce', { nonce: '' }, /nonce: must be 1 to 128 printable characters/],
    ['a nonce object', { nonce: { a: 1 } }, /'nonce'/],
    ['a short secret hash', { secret_hash: 'abcd' }, /secret_hash: must be sha256\(secret\) as 64 hexadecimal characters/],
    ['a non-hex secret hash', { secret_hash: 'zz'.repeat(32) }, /secret_hash: must be sha256/],
    ['an unknown solver', { solver_id: 'someone' }, /solver_id: solver someone does not quote ethereum_localnet:wbtc -> arbitrum_localnet:wbtc/, 'no_route'],
    ['an affiliate fee of 0 bips', { affiliate_fees: [{ address: AFFILIATE, fee: 0 }] }, /affiliate_fees\[0\]\.fee: must be a whole number of bips from 1 to 1000/],
    ['an affiliate fee above 1000 bips', { affiliate_fees: [{ address: AFFILIATE, fee: 1001 }] }, /affiliate_fees\[0\]\.fee: must be a whole number of bips from 1 to 1000/],
    ['affiliate fees above 1000 bips in all', { affiliate_fees: [{ address: AFFILIATE, fee: 600 }, { address: AFFILIATE, fee: 600 }] }, /affiliate_fees: 1200 bips in all; at most 1000/],
    ['a bad affiliate address', { affiliate_fees: [{ address: '0x12', fee: 10 }] }, /affiliate_fees\[0\]\.address: 0x12 is not a valid address on ethereum_localnet/],
    ['an affiliate fee asset not offered', { affiliate_fees: [{ address: AFFILIATE, fee: 10, asset: 'ethereum_localnet:wbtc' }] }, /affiliate_fees\[0\]\.asset: must be one of ethereum_localnet:usdc, arbitrum_localnet:usdc/],
    ['six affiliate fees', { affiliate_fees: Array.from({ length: 6 }, () => ({ address: AFFILIATE, fee: 1 })) }, /affiliate_fees: at most 5 entries/],
    ['an affiliate fee without fee', { affiliate_fees: [{ address: AFFILIATE }] }, /'affiliate_fees\[0\]\.fee': is required/],
  ];

  for (const [name, overrides, message, code = 'invalid_request'] of cases) {
    test(`an order with ${name} gets a 400 naming the field and writes nothing`, async () => {
      const count = await orderCount();
      const payload = { ...body(), ...overrides };
      for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete (payload as Record<string, unknown>)[k];
      for (const s of ['source', 'destination'] as const) {
        const obj = (payload as Record<string, any>)[s];
        if (obj && typeof obj === 'object') for (const [k, v] of Object.entries(obj)) if (v === undefined) delete obj[k];
      }
      const { status, body: res } = await post(payload);
      assert.equal(status, 400, JSON.stringify(res));
      assert.equal(res.status, 'Error');
      assert.equal(res.code, code);
      assert.match(res.error, message);
      assert.equal(await orderCount(), count, 'no order was written');
    });
  }

  test('a malformed JSON body or none at all is a 400, never a 500', async () => {
    for (const payload of ['{"source":', '', 'null', '[]', '"text"']) {
      const res = await t.api.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': t.key, 'content-type': 'application/json' }, payload });
      assert.equal(res.statusCode, 400, `${payload}: ${res.body}`);
    }
  });
});
