// The Bitcoin-family client actions over HTTP against a real Litecoin Core regtest node: orders made
// through POST /v2/orders, HTLCs funded by the node's wallet, outputs recorded by the Bitcoin watcher,
// transactions broadcast by the transaction engine and checked on the node. Instant refund (the client's
// SACP signatures or the service-held key, the solver's co-signature under rule 5, a fee input of the
// solver's wallet), redeem of a Litecoin destination, refund after the CSV timelock.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, test, type TestContext } from 'node:test';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { hex } from '@scure/base';
import { p2wpkh, SigHash } from '@scure/btc-signer';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/api/app.ts';
import { htlcPayment } from '../../../src/chains/bitcoin/htlc.ts';
import { buildRefundTx, instantRefundSighashes, signInstantRefundSighashes } from '../../../src/chains/bitcoin/htlc-spend.ts';
import { bitcoinNetwork } from '../../../src/chains/bitcoin/network.ts';
import { swapScriptTerms } from '../../../src/chains/bitcoin/swap-terms.ts';
import { BitcoinWatcher } from '../../../src/chains/bitcoin/watcher.ts';
import { addressScript, buildTx, walletAddress, type Utxo } from '../../../src/chains/bitcoin/wallet-tx.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { BitcoinActions } from '../../../src/chains/bitcoin/client-actions.ts';
import { StaticPriceSource } from '../../../src/pricing/price-source.ts';
import { buildStrategies } from '../../../src/pricing/strategies.ts';
import { bitcoinEngine } from '../../../src/chains/bitcoin/driver.ts';
import type { TxEngine } from '../../../src/engine/engine.ts';
import { instantRefundSigned } from '../../helpers/order-flags.ts';
import { claimFunding } from '../../../src/store/solver-queries.ts';
import { createApp } from '../../../src/store/apps.ts';
import { utxosOf } from '../../../src/chains/bitcoin/store/utxos.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, type OrderRecord } from '../../../src/store/orders.ts';
import { findJob } from '../../../src/store/relayer-jobs.ts';
import { setSolverBalance } from '../../../src/store/solvers.ts';
import { TEST_PRICES } from '../../helpers/api.ts';
import { localnetRegistry, randomHex32, seedBasics, SOLVER, TEST_STRATEGIES, USER } from '../../helpers/fixtures.ts';
import { litecoinNodeOrSkip, syncWatcher } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';

const CHAIN = 'litecoin_localnet';
const NETWORK = 'litecoin_regtest';
const LTC_AMOUNT = 10_000_000n; // 0.1 LTC
const WBTC_FOR_LTC = '9400';
/** The devnet solver's key (anvil account 1): its x-only key is SOLVER.addresses.litecoin_localnet. */
const SOLVER_KEY = hex.decode(privateKeyOf(devAccount('solver')).slice(2));
const SOLVER_WALLET = walletAddress(SOLVER_KEY, NETWORK);
/** The client's script key (its delegate) and payout address. */
const CLIENT_KEY = schnorr.utils.randomSecretKey();
const CLIENT_XONLY = hex.encode(schnorr.getPublicKey(CLIENT_KEY));
const LTC_OWNER = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), bitcoinNetwork(NETWORK)).address;

let node: Promise<LitecoinNode | undefined> | undefined;
/** The file's one regtest node, started by the first test that needs it. */
const nodeOrSkip = (t: TestContext) => (node ??= litecoinNodeOrSkip(t));
after(async () => {
  await (await node)?.stop();
});

const coins = (sats: bigint) => `${sats / 100_000_000n}.${(sats % 100_000_000n).toString().padStart(8, '0')}`;
const sats = (value: number) => BigInt(Math.round(value * 1e8));

interface RawTx {
  txid: string;
  vsize: number;
  vin: Array<{ txid: string; vout: number }>;
  vout: Array<{ n: number; value: number; scriptPubKey: { address?: string; addresses?: string[] } }>;
}
const addressOf = (out: RawTx['vout'][number]) => out.scriptPubKey.address ?? out.scriptPubKey.addresses?.[0];

describeEachStore('Bitcoin-family order actions', (kind) => {
  let ready: Promise<boolean> | undefined;
  let ltc: LitecoinNode;
  let store: Store;
  let api: FastifyInstance;
  let key: string;
  let watcher: BitcoinWatcher;
  let relayer: TxEngine;

  async function setup(t: TestContext): Promise<boolean> {
    ready ??= (async () => {
      const started = await nodeOrSkip(t);
      if (!started) return false;
      ltc = started;
      await ltc.mine(1); // an empty mempool: the other suite may have left transactions
      store = await openTestStore(kind);
      const registry = localnetRegistry();
      ({ key } = await seedBasics(store.db, registry));
      for (const asset of ['arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', 'litecoin_localnet:ltc']) {
        await setSolverBalance(store.db, { solverId: SOLVER.id, asset, balance: 10n ** 12n });
      }
      const secrets = new SecretBox(randomBytes(32));
      const actions = new BitcoinActions(store.db, registry, { secrets, solverKey: SOLVER_KEY, rpc: ltc.rpc });
      api = await buildApi({
        store,
        registry,
        prices: new StaticPriceSource(TEST_PRICES),
        strategies: buildStrategies(TEST_STRATEGIES, [SOLVER], registry),
        solvers: [SOLVER],
        secrets,
        version: 'test',
        relayer: { actionsFor: (chain) => (chain === CHAIN ? actions : undefined), waitMs: 0 },
      });
      await api.ready();
      const startBlock = BigInt(await ltc.rpc.getBlockCount()) + 1n;
      watcher = new BitcoinWatcher(store.db, registry.chain(CHAIN)!, ltc.rpc, { startBlock, walletAddresses: [SOLVER_WALLET] });
      relayer = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
      // The solver's wallet: several outputs, one per instant-refund fee.
      for (let i = 0; i < 6; i++) await send(SOLVER_WALLET, 1_000_000n);
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

  const sync = () => syncWatcher(watcher);
  async function mine(blocks: number): Promise<void> {
    await ltc.mine(blocks);
    await sync();
  }
  const send = (address: string, amount: bigint) => ltc.rpc.call<string>('sendtoaddress', [address, coins(amount)]);
  const rawTx = (txid: string) => ltc.rpc.call<RawTx>('getrawtransaction', [txid, true]);
  const height = async () => BigInt(await ltc.rpc.getBlockCount());

  const headers = () => ({ 'service-app-id': key });
  const patch = async (version: 'v2' | 'v3', id: string, action: string, payload?: object, appKey = key) => {
    const res = await api.inject({ method: 'PATCH', url: `/${version}/orders/${id}?action=${action}`, headers: { 'service-app-id': appKey }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Record<string, any>>(), raw: res.body };
  };
  const hashes = async (id: string, auth = true) => {
    const res = await api.inject({ url: `/v2/orders/${id}/instant-refund-hash`, headers: auth ? headers() : {} });
    return { status: res.statusCode, body: res.json<Record<string, any>>() };
  };
  const jobsOf = async (id: string) => store.db.selectFrom('relayer_jobs').select(['idempotency_key', 'tx_hash', 'status']).where('order_id', '=', id).execute();

  async function post(source: object, destination: object, extra: object = {}, appKey = key): Promise<OrderRecord> {
    const res = await api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': appKey },
      payload: { source, destination, nonce: randomHex32().slice(0, 20), ...extra },
    });
    assert.equal(res.statusCode, 201, res.body);
    return (await findOrder(store.db, res.json<{ result: { order_id: string } }>().result.order_id))!;
  }
  /** A Litecoin -> WBTC order; `delegate` makes the client keep its own script key. */
  const ltcSourceOrder = (delegate?: string, appKey = key) =>
    post(
      { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: LTC_AMOUNT.toString(), ...(delegate ? { delegate } : {}) },
      { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: WBTC_FOR_LTC },
      {},
      appKey,
    );
  /** A WBTC -> Litecoin order whose secret the client keeps. */
  async function ltcDestinationOrder(delegate?: string) {
    const secret = randomBytes(32);
    const order = await post(
      { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '10000' },
      { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: LTC_AMOUNT.toString(), ...(delegate ? { delegate } : {}) },
      { secret_hash: createHash('sha256').update(secret).digest('hex') },
    );
    return { order, secret: secret.toString('hex') };
  }

  /** Broadcasts the order's job, mines it and settles it; returns the mined transaction. */
  async function relayAndMine(jobKey: string): Promise<RawTx> {
    await relayer.tick();
    const job = await findJob(store.db, jobKey);
    assert.ok(job);
    assert.equal(job.status, 'submitted', JSON.stringify(job));
    assert.ok((await ltc.rpc.call<string[]>('getrawmempool')).includes(job.txHash), 'the transaction is in the mempool');
    await mine(1);
    await relayer.tick();
    assert.equal((await findJob(store.db, jobKey))?.status, 'confirmed');
    return rawTx(job.txHash);
  }

  /** The instant-refund spend pays the client every HTLC output in full and takes the fee from one solver-wallet input. */
  async function assertInstantRefund(tx: RawTx, htlcUtxos: readonly Utxo[]): Promise<void> {
    assert.equal(tx.vin.length, htlcUtxos.length + 1);
    htlcUtxos.forEach((u, i) => {
      assert.deepEqual({ txid: tx.vin[i]!.txid, vout: tx.vin[i]!.vout }, { txid: u.txid, vout: u.vout });
      assert.equal(addressOf(tx.vout[i]!), LTC_OWNER);
      assert.equal(sats(tx.vout[i]!.value), u.value, 'the client gets each HTLC output in full');
    });
    const feeInput = tx.vin[htlcUtxos.length]!;
    const wallet = await utxosOf(store.db, CHAIN, SOLVER_WALLET);
    const feeUtxo = wallet.find((u) => u.txid === feeInput.txid && u.vout === feeInput.vout);
    assert.ok(feeUtxo, 'the fee input is an output of the solver wallet');
    assert.equal(feeUtxo.spentTxid, tx.txid);
    const change = tx.vout[htlcUtxos.length]!;
    assert.equal(addressOf(change), SOLVER_WALLET);
    const fee = feeUtxo.value - sats(change.value);
    assert.ok(fee >= BigInt(tx.vsize) && fee < 10_000n, `fee ${fee} for ${tx.vsize} vB`);
    for (const [i, u] of htlcUtxos.entries()) {
      const out = await ltc.rpc.call<{ value: number } | null>('gettxout', [tx.txid, i]);
      assert.equal(out && sats(out.value), u.value, 'the client output is unspent at the node');
    }
  }

  /** An order funded with one output per amount, mined; returns its unspent HTLC outputs. */
  async function funded(order: OrderRecord, amounts: readonly bigint[] = [LTC_AMOUNT]): Promise<Utxo[]> {
    for (const amount of amounts) await send(order.source.swapId, amount);
    await mine(1);
    return (await utxosOf(store.db, CHAIN, order.source.swapId, { unspent: true })).map(({ txid, vout, value }) => ({ txid, vout, value }));
  }

  test("instant-refund-hash: 409 before funding, then one hash per HTLC output as the node has them; an EVM source needs its chain's actions", async (t) => {
    if (!(await setup(t))) return;
    const order = await ltcSourceOrder(CLIENT_XONLY);
    const early = await hashes(order.id);
    assert.equal(early.status, 409, JSON.stringify(early.body));
    assert.match(early.body.error, /source HTLC rltc1p\w+ is not funded yet/);

    const fundings = [await send(order.source.swapId, 6_000_000n), await send(order.source.swapId, 4_000_000n)];
    await mine(1);
    // The outputs as the node shows them, oldest first (one block: by txid).
    const fromNode: Utxo[] = [];
    for (const txid of fundings.sort()) {
      const tx = await rawTx(txid);
      const out = tx.vout.find((o) => addressOf(o) === order.source.swapId)!;
      fromNode.push({ txid, vout: out.n, value: sats(out.value) });
    }
    const { status, body } = await hashes(order.id);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.status, 'Ok');
    const expected = instantRefundSighashes({ terms: swapScriptTerms(order.source, 'source', order.secretHash), network: NETWORK, utxos: fromNode, to: LTC_OWNER });
    assert.deepEqual(body.result, expected);
    assert.equal(body.result.length, 2);

    const evm = await post({ asset: 'arbitrum_localnet:wbtc', owner: USER, amount: '10000' }, { asset: 'litecoin_localnet:ltc', owner: LTC_OWNER, amount: LTC_AMOUNT.toString() });
    // An EVM source's hash is its Refund(orderId) digest, which takes its chain's actions: none run here.
    const evmSource = await hashes(evm.id);
    assert.equal(evmSource.status, 503);
    assert.match(evmSource.body.error, /arbitrum_localnet/);
    assert.equal((await hashes('ab'.repeat(32))).status, 404);
    assert.equal((await hashes(order.id, false)).status, 401);
    assert.equal((await hashes('xyz')).status, 400);
    const doc = (await api.inject({ url: '/docs/json' })).json<Record<string, any>>();
    const op = doc.paths['/v2/orders/{order}/instant-refund-hash']?.get;
    assert.ok(op, 'documented in the OpenAPI schema');
    assert.deepEqual(Object.keys(op.responses).map(Number).sort(), [200, 400, 401, 404, 409, 503]);
    assert.deepEqual(op.security, [{ appId: [] }, { gardenAppId: [] }]);
  });

  test("instant refund with the client's signatures: bad input 400 and no job, then one transaction paying the client every output in full", async (t) => {
    if (!(await setup(t))) return;
    const order = await ltcSourceOrder(CLIENT_XONLY);
    const utxos = await funded(order, [7_000_000n, 3_000_000n]);
    const { body } = await hashes(order.id);
    const signatures = signInstantRefundSighashes(body.result, CLIENT_KEY);
    const other = signInstantRefundSighashes(body.result, schnorr.utils.randomSecretKey());

    const bad: Array<[object | undefined, RegExp]> = [
      [undefined, /'signatures': is required/],
      [{}, /'signatures': is required/],
      [{ signatures: [signatures[0], other[1]] }, /'signatures\[1\]': does not sign hash 1/],
      [{ signatures: [signatures[1], signatures[0]] }, /'signatures\[0\]': does not sign hash 0/],
      [{ signatures: [signatures[0]] }, /1 signature\(s\) for 2 HTLC output\(s\)/],
      [{ signature: signatures[0] }, /1 signature\(s\) for 2 HTLC output\(s\)/],
      [{ signatures: 'ab' }, /'signatures': must be an array/],
      [{ signatures: [] }, /'signatures': must be an array/],
      [{ signatures: ['zz', signatures[1]] }, /'signatures\[0\]': must be a 65-byte BIP-340 signature/],
      [{ signatures: [signatures[0]!.slice(0, 128), signatures[1]] }, /'signatures\[0\]'.*byte 83/],
      [{ signatures: [12, 13] }, /'signatures\[0\]'/],
      [{ signatures, signature: signatures[0] }, /either signatures or signature/],
    ];
    for (const [payload, error] of bad) {
      const res = await patch('v3', order.id, 'instant-refund', payload);
      assert.equal(res.status, 400, `${JSON.stringify(payload)}: ${res.raw}`);
      assert.match(res.body.error, error);
    }
    assert.deepEqual(await jobsOf(order.id), [], 'no job for bad input');
    assert.equal(await instantRefundSigned(store.db, order.id), false, 'nor a co-signature');

    const res = await patch('v3', order.id, 'instant-refund', { signatures: signatures.map((s) => `0x${s.toUpperCase()}`) });
    assert.equal(res.status, 202, res.raw);
    assert.match(res.body.result, /^[0-9a-f]{64}$/);
    assert.equal(res.body.job.tx_hash, res.body.result);
    assert.equal(res.body.job.action, 'instant-refund');
    for (const s of signatures) assert.ok(!res.raw.includes(s), 'signatures are not echoed');
    assert.equal(await instantRefundSigned(store.db, order.id), true);
    assert.equal(await claimFunding(store.db, order.id), false, 'the solver may no longer fund the destination (rule 5)');
    const again = await patch('v2', order.id, 'instant-refund', { signatures });
    assert.equal(again.status, 202);
    assert.equal(again.body.result, res.body.result, 'a repeat gets the same transaction');

    const tx = await relayAndMine(`${order.id}:instant-refund`);
    assert.equal(tx.txid, res.body.result);
    await assertInstantRefund(tx, utxos);
    const stored = (await findOrder(store.db, order.id))!;
    assert.equal(stored.source.refundTxHash, tx.txid, 'the watcher shows the instant refund as the refund');
    assert.match(stored.source.instantRefundTx, /^02000000/, 'the zero-fee co-signed transaction is on the swap');
    const spent = await hashes(order.id);
    assert.equal(spent.status, 409);
    assert.match(spent.body.error, /already spent/);
    assert.equal((await patch('v3', order.id, 'instant-refund', { signatures })).body.result, tx.txid);
  });

  test('who may act: another app gets 403 and nothing is signed; an app without gasless may not have the service pay an instant refund, but may refund', async (t) => {
    if (!(await setup(t))) return;
    const order = await ltcSourceOrder();
    await funded(order);
    const { key: foreign } = await createApp(store.db, { name: 'another app', gasless: true });
    for (const [version, action, payload] of [
      ['v3', 'instant-refund', {}],
      ['v2', 'refund', {}],
      ['v2', 'redeem', { secret: randomHex32() }],
    ] as const) {
      const res = await patch(version, order.id, action, payload, foreign);
      assert.equal(res.status, 403, `${action}: ${res.raw}`);
      assert.match(res.body.error, /created by another app/);
    }
    assert.deepEqual(await jobsOf(order.id), [], 'no job');
    assert.equal(await instantRefundSigned(store.db, order.id), false, 'no co-signature');

    const { key: plain } = await createApp(store.db, { name: 'plain app', gasless: false });
    const own = await ltcSourceOrder(undefined, plain);
    await funded(own);
    const instant = await patch('v3', own.id, 'instant-refund', {}, plain);
    assert.equal(instant.status, 403, instant.raw);
    assert.match(instant.body.error, /gasless actions are not enabled/);
    assert.equal(await instantRefundSigned(store.db, own.id), false);
    // A refund pays its fee from the HTLC itself: allowed, and refused here only because the CSV lock runs.
    const refund = await patch('v3', own.id, 'refund', {}, plain);
    assert.equal(refund.status, 409, refund.raw);
    assert.deepEqual(await jobsOf(own.id), []);
  });

  test('instant refund: ten concurrent requests make one job and one transaction', async (t) => {
    if (!(await setup(t))) return;
    const order = await ltcSourceOrder(CLIENT_XONLY);
    const utxos = await funded(order);
    const signatures = signInstantRefundSighashes((await hashes(order.id)).body.result, CLIENT_KEY);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => patch(i % 2 ? 'v2' : 'v3', order.id, 'instant-refund', i % 3 ? { signatures } : { signature: signatures[0] })),
    );
    for (const a of answers) assert.equal(a.status, 202, a.raw);
    assert.equal(new Set(answers.map((a) => a.body.result)).size, 1);
    const jobs = await jobsOf(order.id);
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.tx_hash, answers[0]!.body.result);
    const tx = await relayAndMine(`${order.id}:instant-refund`);
    await assertInstantRefund(tx, utxos);
  });

  test('instant refunds of two orders at once pay their fees from two different wallet outputs', async (t) => {
    if (!(await setup(t))) return;
    const orders = [await ltcSourceOrder(), await ltcSourceOrder()];
    for (const order of orders) await send(order.source.swapId, LTC_AMOUNT);
    await mine(1);
    const answers = await Promise.all(orders.map((order) => patch('v3', order.id, 'instant-refund')));
    for (const a of answers) assert.equal(a.status, 202, a.raw);
    await relayer.tick();
    const mempool = await ltc.rpc.call<string[]>('getrawmempool');
    const txs = await Promise.all(answers.map((a) => rawTx(a.body.result)));
    for (const tx of txs) assert.ok(mempool.includes(tx.txid), 'both are accepted by the node');
    const feeInputs = txs.map((tx) => `${tx.vin.at(-1)!.txid}:${tx.vin.at(-1)!.vout}`);
    assert.notEqual(feeInputs[0], feeInputs[1]);
    await mine(1);
    await relayer.tick();
    for (const order of orders) assert.equal((await findJob(store.db, `${order.id}:instant-refund`))?.status, 'confirmed');
  });

  test('instant refund with the service-held key: an empty body, the service signs for the client', async (t) => {
    if (!(await setup(t))) return;
    const order = await ltcSourceOrder();
    const utxos = await funded(order);
    assert.equal((await hashes(order.id)).body.result.length, 1);
    const res = await patch('v3', order.id, 'instant-refund');
    assert.equal(res.status, 202, res.raw);
    await assertInstantRefund(await relayAndMine(`${order.id}:instant-refund`), utxos);
  });

  test('instant refund is refused (409) once the solver recorded its intent to fund the destination', async (t) => {
    if (!(await setup(t))) return;
    const order = await ltcSourceOrder(CLIENT_XONLY);
    await funded(order);
    const signatures = signInstantRefundSighashes((await hashes(order.id)).body.result, CLIENT_KEY);
    assert.equal(await claimFunding(store.db, order.id), true);
    const read = await hashes(order.id);
    assert.equal(read.status, 409);
    assert.match(read.body.error, /destination is initiated or being funded, so no instant refund/);
    const res = await patch('v2', order.id, 'instant-refund', { signatures });
    assert.equal(res.status, 409, res.raw);
    assert.match(res.body.error, /no instant refund: refund after the source timelock/);
    assert.deepEqual(await jobsOf(order.id), []);
    assert.equal(await instantRefundSigned(store.db, order.id), false);
  });

  test('redeem of a Litecoin destination with the service-held key: secret checks, funding checks, the client gets amount minus fee', async (t) => {
    if (!(await setup(t))) return;
    const { order, secret } = await ltcDestinationOrder();
    const htlc = order.destination.swapId;
    const notFunded = await patch('v2', order.id, 'redeem', { secret });
    assert.equal(notFunded.status, 409);
    assert.match(notFunded.body.error, /destination HTLC rltc1p\w+ is not funded yet/);
    await send(htlc, LTC_AMOUNT);
    await sync();
    const unmined = await patch('v2', order.id, 'redeem', { secret });
    assert.equal(unmined.status, 409);
    assert.equal(unmined.body.code, 'not_initiated', 'funded, not mined: as not initiated on the other families');
    assert.match(unmined.body.error, /holds 0 of 10000000 sats in mined outputs/);
    await mine(1);

    const bad: Array<[object | undefined, RegExp]> = [
      [undefined, /'secret': is required/],
      [{ secret: randomBytes(32).toString('hex') }, /'secret': its sha256 is not the order's secret_hash/],
      [{ secret: secret.slice(0, 62) }, /'secret': must be the 32-byte secret/],
      [{ secret: `${secret}00` }, /'secret': must be the 32-byte secret/],
      [{ secret: 42 }, /'secret'/],
    ];
    for (const [payload, error] of bad) {
      const res = await patch('v2', order.id, 'redeem', payload);
      assert.equal(res.status, 400, res.raw);
      assert.match(res.body.error, error);
    }
    assert.deepEqual(await jobsOf(order.id), []);

    const res = await patch('v2', order.id, 'redeem', { secret: `0x${secret}` });
    assert.equal(res.status, 202, res.raw);
    assert.ok(!res.raw.includes(secret), 'the secret is not echoed');
    const feeRate = await ltc.rpc.feeRate();
    const tx = await relayAndMine(`${order.id}:redeem`);
    assert.equal(tx.txid, res.body.result);
    assert.equal(tx.vout.length, 1);
    assert.equal(addressOf(tx.vout[0]!), LTC_OWNER);
    assert.equal(sats(tx.vout[0]!.value), LTC_AMOUNT - feeRate * BigInt(tx.vsize), 'amount minus fee');
    const stored = (await findOrder(store.db, order.id))!;
    assert.equal(stored.destination.redeemTxHash, tx.txid);
    assert.equal(stored.destination.secret, secret, 'the watcher read the secret from the witness');
    assert.equal((await patch('v2', order.id, 'redeem', { secret })).body.result, tx.txid, 'a repeat gets the same transaction');
  });

  test("redeem is refused (409) when the destination's key is the client's own delegate", async (t) => {
    if (!(await setup(t))) return;
    const { order, secret } = await ltcDestinationOrder(CLIENT_XONLY);
    await send(order.destination.swapId, LTC_AMOUNT);
    await mine(1);
    const res = await patch('v2', order.id, 'redeem', { secret });
    assert.equal(res.status, 409, res.raw);
    assert.match(res.body.error, /redeem key is the client's own \(it passed delegate\): sign the redeem with that key and broadcast it yourself/);
    assert.deepEqual(await jobsOf(order.id), []);
  });

  test("refund: the client's signed refund is checked, refused before the CSV timelock and relayed once it runs out; the service-held key refunds with an empty body", async (t) => {
    if (!(await setup(t))) return;
    const own = await ltcSourceOrder(CLIENT_XONLY);
    const held = await ltcSourceOrder();
    for (const order of [own, held]) await send(order.source.swapId, LTC_AMOUNT);
    await sync();
    const unmined = await patch('v3', held.id, 'refund');
    assert.equal(unmined.status, 409, unmined.raw);
    assert.equal(unmined.body.code, 'not_expired');
    assert.match(unmined.body.error, /an output of the source HTLC is not mined yet; it is refundable 60 blocks after it is/);
    await mine(1);
    const fundedAt = await height();
    const utxos = (await utxosOf(store.db, CHAIN, own.source.swapId, { unspent: true })).map(({ txid, vout, value }) => ({ txid, vout, value }));
    const terms = swapScriptTerms(own.source, 'source', own.secretHash);
    const timelock = terms.timelock;
    assert.equal(timelock, 60n);
    const refund = buildRefundTx({ terms, network: NETWORK, utxos, feeRate: 2n, to: LTC_OWNER, initiatorKey: CLIENT_KEY });

    // A refund leaf spend made by hand: another signer, or a sequence below the timelock.
    const handmade = (signer: Uint8Array, sequence: number) => {
      const payment = htlcPayment(terms, NETWORK);
      const { script, controlBlock } = payment.spends.refund;
      const input = { ...utxos[0]!, sequence, prevout: { script: payment.script, amount: utxos[0]!.value }, witness: (sign: (k: Uint8Array, h: number, l?: Uint8Array) => Uint8Array) => [sign(signer, SigHash.DEFAULT, script), script, controlBlock] };
      return buildTx([input], [{ script: addressScript(LTC_OWNER, NETWORK), amount: LTC_AMOUNT - 1_000n }]).hex;
    };
    const bad: Array<[object, RegExp]> = [
      [{ tx: 'zz' }, /'tx': must be the signed refund transaction in hex/],
      [{ tx: 12 }, /'tx'/],
      [{ tx: '00' }, /'tx': not a serialized signed transaction/],
      [{ tx: handmade(schnorr.utils.randomSecretKey(), Number(timelock)) }, /'tx': input 0: the signature does not verify against the source initiator key/],
      [{ tx: handmade(CLIENT_KEY, 5) }, /'tx': input 0 must have a block-based relative lock \(nSequence\) of at least the HTLC timelock 60/],
      [{ tx: refund.hex.replace(utxos[0]!.txid.match(/../g)!.reverse().join(''), '11'.repeat(32)) }, /'tx': must spend exactly the source HTLC's unspent outputs/],
    ];
    for (const [payload, error] of bad) {
      const res = await patch('v3', own.id, 'refund', payload);
      assert.equal(res.status, 400, res.raw);
      assert.match(res.body.error, error);
    }
    const noKey = await patch('v3', own.id, 'refund');
    assert.equal(noKey.status, 400);
    assert.match(noKey.body.error, /'tx': is required: the source HTLC's refund key is the client's own/);

    // Funded at block h: the refund can be mined from block h + 60, so it is relayed from height h + 59.
    const early = await patch('v3', own.id, 'refund', { tx: refund.hex });
    assert.equal(early.status, 409, early.raw);
    assert.match(early.body.error, new RegExp(`timelock has not run out: the refund can be mined from block ${fundedAt + timelock}, the chain is at ${fundedAt}`));
    await mine(Number(timelock) - 2);
    assert.equal((await patch('v3', own.id, 'refund', { tx: refund.hex })).status, 409, 'one block short');
    assert.equal((await patch('v3', held.id, 'refund')).status, 409, 'one block short');
    assert.deepEqual(await jobsOf(own.id), []);
    await mine(1);

    const accepted = await patch('v2', own.id, 'refund', { tx: refund.hex });
    assert.equal(accepted.status, 202, accepted.raw);
    assert.equal(accepted.body.result, refund.txid);
    const mined = await relayAndMine(`${own.id}:refund`);
    assert.equal(mined.txid, refund.txid);
    assert.equal(addressOf(mined.vout[0]!), LTC_OWNER);
    assert.equal(sats(mined.vout[0]!.value), LTC_AMOUNT - refund.fee);
    assert.equal((await findOrder(store.db, own.id))!.source.refundTxHash, refund.txid);

    const serviceRefund = await patch('v3', held.id, 'refund');
    assert.equal(serviceRefund.status, 202, serviceRefund.raw);
    const feeRate = await ltc.rpc.feeRate();
    const paid = await relayAndMine(`${held.id}:refund`);
    assert.equal(addressOf(paid.vout[0]!), LTC_OWNER);
    assert.equal(sats(paid.vout[0]!.value), LTC_AMOUNT - feeRate * BigInt(paid.vsize));
    const after = await patch('v3', held.id, 'refund');
    assert.equal(after.body.result, paid.txid, 'a repeat gets the same transaction');
  });
});
