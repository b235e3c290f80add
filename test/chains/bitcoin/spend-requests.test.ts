// Bitcoin-family actions that sign with a key an API instance does not hold, handed to the workers:
// the API's BitcoinActions has a sealing-only secret box and no solver key, a worker's has both. Against
// a real Litecoin Core regtest node, over HTTP (PATCH /v2/orders/{id}?action=...) on the API side, with
// the workers' passes run by hand (signSpendRequests) so each step is seen.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, describe, test, type TestContext } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { hex } from '@scure/base';
import { p2wpkh } from '@scure/btc-signer';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app.ts';
import { BitcoinActions } from '../../../src/chains/bitcoin/client-actions.ts';
import { bitcoinEngine } from '../../../src/chains/bitcoin/driver.ts';
import { bitcoinNetwork } from '../../../src/chains/bitcoin/network.ts';
import { bitcoinRpcFor } from '../../../src/chains/bitcoin/rpc.ts';
import { signSpendRequests } from '../../../src/chains/bitcoin/spend-requests.ts';
import { walletAddress } from '../../../src/chains/bitcoin/wallet-tx.ts';
import { BitcoinWatcher } from '../../../src/chains/bitcoin/watcher.ts';
import type { TxEngine } from '../../../src/engine/engine.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { StaticPriceSource } from '../../../src/pricing/price-source.ts';
import { buildStrategies } from '../../../src/pricing/strategies.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, type OrderRecord } from '../../../src/store/orders.ts';
import { findJob } from '../../../src/store/relayer-jobs.ts';
import { setSolverBalance } from '../../../src/store/solvers.ts';
import { TEST_PRICES } from '../../helpers/api.ts';
import { localnetRegistry, randomHex32, seedBasics, SOLVER, TEST_STRATEGIES, USER } from '../../helpers/fixtures.ts';
import { litecoinNodeOrSkip, syncWatcher, toCoins } from '../../helpers/litecoin.ts';
import { openTestStore } from '../../helpers/stores.ts';

const CHAIN = 'litecoin_localnet';
const NETWORK = 'litecoin_regtest';
const LTC_AMOUNT = 10_000_000n;
const SOLVER_KEY = hex.decode(privateKeyOf(devAccount('solver')).slice(2));
const SOLVER_WALLET = walletAddress(SOLVER_KEY, NETWORK);
const LTC_OWNER = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), bitcoinNetwork(NETWORK)).address;
/** The API instance's bound on waiting for a worker. */
const WAIT_MS = 1_500;

let node: Promise<LitecoinNode | undefined> | undefined;
after(async () => {
  await (await node)?.stop();
});

describe('Bitcoin-family spends an API instance hands to the workers', () => {
  let ready: Promise<boolean> | undefined;
  let ltc: LitecoinNode;
  let store: Store;
  let api: FastifyInstance;
  let key: string;
  let watcher: BitcoinWatcher;
  let engine: TxEngine;
  const workerBox = new SecretBox(randomBytes(32));
  let worker: BitcoinActions;

  async function setup(t: TestContext): Promise<boolean> {
    ready ??= (async () => {
      const started = await (node ??= litecoinNodeOrSkip(t));
      if (!started) return false;
      ltc = started;
      store = await openTestStore('postgres');
      const registry = localnetRegistry();
      ({ key } = await seedBasics(store.db, registry));
      for (const asset of ['arbitrum_localnet:wbtc', 'litecoin_localnet:ltc']) await setSolverBalance(store.db, { solverId: SOLVER.id, asset, balance: 10n ** 12n });
      // The API instance: it seals to the workers' public key and opens nothing, and holds no solver key.
      const apiBox = SecretBox.sealingOnly(workerBox.publicKey);
      const apiActions = new BitcoinActions(store.db, registry, { secrets: apiBox, rpc: ltc.rpc, workerWait: { waitMs: WAIT_MS, pollMs: 50 } });
      worker = new BitcoinActions(store.db, registry, { secrets: workerBox, rpc: ltc.rpc, solverKey: SOLVER_KEY });
      api = await buildApi({
        store,
        registry,
        prices: new StaticPriceSource(TEST_PRICES),
        strategies: buildStrategies(TEST_STRATEGIES, [SOLVER], registry),
        solvers: [SOLVER],
        secrets: apiBox,
        version: 'test',
        relayer: { actionsFor: (chain) => (chain === CHAIN ? apiActions : undefined), waitMs: 0 },
      });
      await api.ready();
      watcher = new BitcoinWatcher(store.db, registry.chain(CHAIN)!, ltc.rpc, { startBlock: BigInt(await ltc.rpc.getBlockCount()) + 1n, walletAddresses: [SOLVER_WALLET] });
      engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
      for (let i = 0; i < 2; i++) await send(SOLVER_WALLET, 1_000_000n); // instant-refund fees
      await mine(1);
      return true;
    })();
    const ok = await ready;
    if (!ok) t.skip('litecoind is not installed');
    return ok;
  }

  after(async () => {
    if (await ready) {
      await api.close();
      await store.close();
    }
  });

  const send = (address: string, amount: bigint) => ltc.rpc.call<string>('sendtoaddress', [address, toCoins(amount)]);
  async function mine(blocks: number): Promise<void> {
    await ltc.mine(blocks);
    await syncWatcher(watcher);
  }
  const patch = async (id: string, action: string, payload?: object) => {
    const res = await api.inject({ method: 'PATCH', url: `/v2/orders/${id}?action=${action}`, headers: { 'service-app-id': key }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Record<string, any>>(), raw: res.body };
  };
  const requestOf = (orderId: string, action: string) =>
    store.db.selectFrom('bitcoin_spend_requests').selectAll().where('idempotency_key', '=', `${orderId}:${action}`).executeTakeFirst();
  /** Waits for the API's request to be pending, then runs one pass of a worker (this one by default). */
  async function workerPass(orderId: string, action: string, actions = worker): Promise<void> {
    for (let i = 0; (await requestOf(orderId, action))?.status !== 'pending'; i++) {
      assert.ok(i < 100, 'the API instance wrote no request');
      await new Promise((r) => setTimeout(r, 20));
    }
    await signSpendRequests(store.db, CHAIN, workerBox, actions.performForwarded);
  }

  async function post(source: object, destination: object, extra: object = {}): Promise<OrderRecord> {
    const res = await api.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': key }, payload: { source, destination, nonce: randomHex32().slice(0, 20), ...extra } });
    assert.equal(res.statusCode, 201, res.body);
    return (await findOrder(store.db, res.json<{ result: { order_id: string } }>().result.order_id))!;
  }
  /** WBTC -> LTC with the client's secret, the destination's redeem key held by the service. */
  async function ltcDestination(): Promise<{ order: OrderRecord; secret: string }> {
    const secret = randomBytes(32);
    const order = await post(
      { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '10000' },
      { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: LTC_AMOUNT.toString() },
      { secret_hash: createHash('sha256').update(secret).digest('hex') },
    );
    return { order, secret: secret.toString('hex') };
  }
  /** LTC -> WBTC, the source's refund key held by the service, funded and mined. */
  async function fundedLtcSource(): Promise<OrderRecord> {
    const order = await post({ asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: LTC_AMOUNT.toString() }, { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '9400' });
    await send(order.source.swapId, LTC_AMOUNT);
    await mine(1);
    return order;
  }

  test('redeem {secret}: checked on the API instance, signed by a worker pass, answered with the job the engine broadcasts', async (t) => {
    if (!(await setup(t))) return;
    const { order, secret } = await ltcDestination();
    // What the API instance can check without the key, it answers itself, writing no request.
    const early = await patch(order.id, 'redeem', { secret });
    assert.equal(early.status, 409, early.raw);
    assert.equal(early.body.code, 'not_initiated');
    await send(order.destination.swapId, LTC_AMOUNT);
    await mine(1);
    const wrong = await patch(order.id, 'redeem', { secret: randomHex32() });
    assert.equal(wrong.body.code, 'secret_mismatch', wrong.raw);
    assert.equal(await requestOf(order.id, 'redeem'), undefined);

    const answer = patch(order.id, 'redeem', { secret });
    await workerPass(order.id, 'redeem');
    const res = await answer;
    assert.equal(res.status, 202, res.raw);
    assert.ok(!res.raw.includes(secret), 'the secret is not echoed');
    const job = await findJob(store.db, `${order.id}:redeem`);
    assert.ok(job);
    assert.equal(res.body.result, job.txHash);
    const request = (await requestOf(order.id, 'redeem'))!;
    assert.equal(request.status, 'done');
    assert.ok(!Buffer.from(request.sealed_body).toString('hex').includes(secret), 'the body is sealed');
    assert.deepEqual(JSON.parse(Buffer.from(workerBox.open(request.sealed_body)).toString()), { secret });

    // The engine broadcasts the worker's transaction as any other; it pays the client.
    await engine.tick();
    assert.ok((await ltc.rpc.call<string[]>('getrawmempool')).includes(job.txHash));
    await mine(1);
    const stored = (await findOrder(store.db, order.id))!;
    assert.equal(stored.destination.redeemTxHash, job.txHash);
    assert.equal(stored.destination.secret, secret);
    const again = await patch(order.id, 'redeem', { secret });
    assert.equal(again.body.result, job.txHash, 'a repeat gets the same transaction');
  });

  test('refund before the timelock: the worker refuses, the API instance answers its not_expired; asked again, it is asked anew', async (t) => {
    if (!(await setup(t))) return;
    const order = await fundedLtcSource();
    for (let round = 0; round < 2; round++) {
      const answer = patch(order.id, 'refund');
      await workerPass(order.id, 'refund');
      const res = await answer;
      assert.equal(res.status, 409, res.raw);
      assert.equal(res.body.code, 'not_expired');
      assert.match(res.body.error, /the source HTLC's timelock has not run out/);
      const request = (await requestOf(order.id, 'refund'))!;
      assert.deepEqual([request.status, request.error_code], ['refused', 'not_expired']);
    }
    assert.equal(await findJob(store.db, `${order.id}:refund`), undefined);
  });

  test('instant-refund without signatures: the worker signs with the client key and co-signs with the solver key', async (t) => {
    if (!(await setup(t))) return;
    const order = await fundedLtcSource();
    const answer = patch(order.id, 'instant-refund');
    await workerPass(order.id, 'instant-refund');
    const res = await answer;
    assert.equal(res.status, 202, res.raw);
    const job = (await findJob(store.db, `${order.id}:instant-refund`))!;
    assert.equal(res.body.result, job.txHash);
    await engine.tick();
    assert.ok((await ltc.rpc.call<string[]>('getrawmempool')).includes(job.txHash));
    await mine(1);
  });

  test('no worker: 503 unavailable within the bound, the request left pending; a node outage leaves it so; a later pass and a retry get the job', async (t) => {
    if (!(await setup(t))) return;
    const { order, secret } = await ltcDestination();
    await send(order.destination.swapId, LTC_AMOUNT);
    await mine(1);
    const started = performance.now();
    const res = await patch(order.id, 'redeem', { secret });
    const took = performance.now() - started;
    assert.equal(res.status, 503, res.raw);
    assert.equal(res.body.code, 'unavailable');
    assert.match(res.body.error, /no worker instance signed it within 1.5 s; retry/);
    assert.ok(took >= WAIT_MS && took < WAIT_MS + 1_000, `answered after ${took} ms`);
    assert.equal((await requestOf(order.id, 'redeem'))!.status, 'pending');

    // A worker whose node is down leaves it pending.
    const registry = localnetRegistry();
    const cutOff = new BitcoinActions(store.db, registry, { secrets: workerBox, rpc: bitcoinRpcFor({ url: 'http://127.0.0.1:9' }), solverKey: SOLVER_KEY });
    await workerPass(order.id, 'redeem', cutOff);
    assert.equal((await requestOf(order.id, 'redeem'))!.status, 'pending');
    assert.equal(await findJob(store.db, `${order.id}:redeem`), undefined);

    await workerPass(order.id, 'redeem');
    assert.equal((await requestOf(order.id, 'redeem'))!.status, 'done');
    const retry = await patch(order.id, 'redeem', { secret });
    assert.equal(retry.status, 202, retry.raw);
    assert.equal(retry.body.result, (await findJob(store.db, `${order.id}:redeem`))!.txHash);
    await engine.tick();
    await mine(1);
  });
});
