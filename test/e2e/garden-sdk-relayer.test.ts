// Garden's SDK relayer routes for Bitcoin-family orders (POST /relayer/bitcoin/instant-refund-hash,
// /instant-refund, /redeem) over HTTP, with a real litecoind regtest node and anvil chains, every
// worker driven by hand as in bitcoin-swap.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import { sql } from 'kysely';
import { buildRedeemTx, signInstantRefundSighashes } from '../../src/chains/bitcoin/htlc-spend.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { swapScriptTerms } from '../../src/chains/bitcoin/swap-terms.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import type { LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';
import type { BitcoinSolverChain } from '../../src/chains/bitcoin/solver-chain.ts';
import { createApp } from '../../src/store/apps.ts';
import { utxosOf } from '../../src/chains/bitcoin/store/utxos.ts';
import { findOrder } from '../../src/store/orders.ts';
import { localnetRegistry } from '../helpers/fixtures.ts';
import { confirmedBalance, litecoinNodeForSuite, toCoins } from '../helpers/litecoin.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { newSecret, startChains, type LocalChain } from '../relayer/harness.ts';
import { swapClient, type SwapWorld } from './harness.ts';
import { LTC, openLitecoinWorld, solverKey, type LitecoinWorld } from './litecoin-world.ts';

const registry = localnetRegistry();
const ltcChain = registry.chain('litecoin_localnet')!;
const NETWORK = ltcChain.network;
const user = devAccount('user');
const userKey = hexToBytes(privateKeyOf(user).slice(2));
const userLtc = walletAddress(userKey, NETWORK);
const userXOnly = bytesToHex(schnorr.getPublicKey(userKey));

let chains: Awaited<ReturnType<typeof startChains>>;
let node: LitecoinNode | undefined;

before(async () => {
  chains = await startChains(registry);
  node = await litecoinNodeForSuite();
});
after(async () => {
  await Promise.all(Object.values(chains).map((c) => c.node.stop()));
  await node?.stop();
});

const ltcBalance = (address: string) => confirmedBalance(node!, address);

describeEachStore('Garden SDK relayer routes (Litecoin)', (kind) => {
  let world: LitecoinWorld;
  let w: SwapWorld;
  let eth: LocalChain;
  let btcSolver: BitcoinSolverChain;
  let otherKey: string;

  before(async () => {
    if (!node) return;
    eth = chains.ethereum_localnet;
    world = await openLitecoinWorld(kind, registry, chains, node);
    ({ w, btcSolver } = world);
    otherKey = (await createApp(w.store.db, { name: 'another app', gasless: true })).key;
  });
  after(() => w?.close());

  /** A POST as Garden's SDK sends it (the garden-app-id header). */
  const post = async (path: string, payload: object, key = w.key) => {
    const res = await w.api.inject({ method: 'POST', url: `/relayer/bitcoin/${path}`, headers: { 'garden-app-id': key }, payload });
    return { status: res.statusCode, body: res.json<Record<string, any>>() };
  };
  const ltcSource = async () => {
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount, delegate: userXOnly }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    return { ...o, amount };
  };
  const orderFlags = async (id: string) =>
    (
      await sql<{ signed: boolean; funding: boolean; consent: unknown }>`
        select instant_refund_signed as signed, destination_funding_at is not null as funding, instant_refund_consent as consent from orders where id = ${id}`.execute(w.store.db)
    ).rows[0]!;
  const jobsOf = async (id: string, action: string) =>
    Number((await sql<{ n: string }>`select count(*) as n from relayer_jobs where order_id = ${id} and action = ${action}`.execute(w.store.db)).rows[0]!.n);

  test('consent posted while the swap is in progress is stored, refunds nothing, and the solver still funds and completes it', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const o = await ltcSource();
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(o.amount)]);
    await node.mine(1);
    await world.catchUp();
    assert.equal((await world.read(o.id)).status, 'initiated');

    const viaGet = await w.api.inject({ url: `/v2/orders/${o.id}/instant-refund-hash`, headers: { 'service-app-id': w.key } });
    const hashes = await post('instant-refund-hash', { order_id: o.id });
    assert.equal(hashes.status, 200, JSON.stringify(hashes.body));
    assert.deepEqual(hashes.body, viaGet.json(), 'the same hashes as GET /v2/orders/{id}/instant-refund-hash');
    assert.equal(hashes.body.result.length, 1);

    assert.equal((await post('instant-refund-hash', { order_id: 'ab'.repeat(32) })).status, 404, 'unknown order');
    assert.equal((await post('instant-refund-hash', { order_id: o.id }, otherKey)).status, 403, "another app's order");
    const missingId = await post('instant-refund-hash', {});
    assert.equal(missingId.status, 400);
    assert.match(missingId.body.error, /order_id/);

    const signatures = signInstantRefundSighashes(hashes.body.result, userKey);
    const wrongKey = signInstantRefundSighashes(hashes.body.result, solverKey);
    for (const bad of [wrongKey, ['00'.repeat(65)], [], 'sig', [signatures[0], signatures[0]]]) {
      const res = await post('instant-refund', { order_id: o.id, signatures: bad });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error, /signatures/, res.body.error);
    }
    assert.equal((await post('instant-refund', { order_id: 'ab'.repeat(32), signatures })).status, 404);
    const foreign = await post('instant-refund', { order_id: o.id, signatures }, otherKey);
    assert.equal(foreign.status, 403, JSON.stringify(foreign.body));
    assert.equal((await orderFlags(o.id)).consent, null, 'nothing stored for refused requests');

    for (let i = 0; i < 3; i++) {
      const res = await post('instant-refund', { order_id: o.id, signatures });
      assert.deepEqual(res, { status: 200, body: { status: 'Ok', result: 'stored' } });
    }
    const flags = await orderFlags(o.id);
    assert.equal(flags.signed, false, 'rule 5 is not flagged by a consent');
    assert.deepEqual(flags.consent, { signatures });
    assert.equal(await jobsOf(o.id, 'instant-refund'), 0, 'nothing co-signed or queued');

    const done = await world.settleTo(o.id, 'completed');
    assert.notEqual(done.destination_swap.initiate_tx_hash, '', 'the solver funded the destination');
    assert.equal(done.source_swap.refund_tx_hash, '');
    assert.equal(await jobsOf(o.id, 'instant-refund'), 0, 'never instantly refunded');
  });

  test('a failed order (deadline passed, destination never funded) with stored consent is refunded at once, and never funded after', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const o = await ltcSource();
    // The client pays after the deadline: the solver declines to fund (a late initiation).
    await sql`update orders set deadline = ${Math.floor(Date.now() / 1000) - 60} where id = ${o.id}`.execute(w.store.db);
    const userBefore = await ltcBalance(userLtc);
    const solverBefore = await ltcBalance(btcSolver.wallet);
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(o.amount)]);
    await world.catchUp();
    const hashes = await post('instant-refund-hash', { order_id: o.id });
    assert.equal(hashes.status, 200, JSON.stringify(hashes.body));
    const consent = await post('instant-refund', { order_id: o.id, signatures: signInstantRefundSighashes(hashes.body.result, userKey) });
    assert.equal(consent.status, 200, JSON.stringify(consent.body));
    assert.deepEqual((await world.step()).instantRefunded, [], 'not while the funding is unconfirmed: the solver has not had its chance');

    await node.mine(1);
    const fundedAt = BigInt(await node.rpc.getBlockCount());
    const pass = await world.step();
    assert.ok(!pass.funded.includes(o.id), 'not funded');
    assert.ok(pass.skipped.some((s) => s.orderId === o.id && /deadline/.test(s.reason)), JSON.stringify(pass.skipped));
    assert.deepEqual(pass.instantRefunded, [o.id], 'the solver used the stored consent');
    assert.equal((await orderFlags(o.id)).signed, true, 'rule 5: co-signed, flagged');

    const done = await world.settleTo(o.id, 'refunded');
    const refundedAt = BigInt(await node.rpc.getBlockCount());
    const timelock = BigInt(done.source_swap.timelock);
    assert.ok(refundedAt - fundedAt < timelock, `refunded ${refundedAt - fundedAt} blocks after funding, before the ${timelock}-block CSV timelock`);
    assert.equal((await ltcBalance(userLtc)) - userBefore, o.amount, 'the client got the full amount back');
    const fee = solverBefore - (await ltcBalance(btcSolver.wallet));
    assert.ok(fee > 0n && fee < 100_000n, `the solver wallet paid only the network fee: ${fee} litoshis`);
    assert.equal(done.destination_swap.initiate_tx_hash, '', 'the destination was never funded');
    assert.equal((await orderFlags(o.id)).funding, false, 'the solver never claimed the funding');
    assert.equal(await jobsOf(o.id, 'instant-refund'), 1);
    assert.equal(await jobsOf(o.id, 'solver-fund'), 0);
  });

  test('a consent the HTLC outgrew (another payment changed the hashes) is dropped, not retried; a fresh one refunds', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const o = await ltcSource();
    await sql`update orders set deadline = ${Math.floor(Date.now() / 1000) - 60} where id = ${o.id}`.execute(w.store.db);
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(o.amount)]);
    await node.mine(1);
    await world.catchUp();
    const first = await post('instant-refund-hash', { order_id: o.id });
    assert.equal((await post('instant-refund', { order_id: o.id, signatures: signInstantRefundSighashes(first.body.result, userKey) })).status, 200);
    // Anyone can pay the HTLC address: a second output needs a second signature.
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(50_000n)]);
    await node.mine(1);
    const pass = await world.step();
    assert.deepEqual(pass.instantRefunded, [], 'the old consent signs one of two outputs');
    assert.equal((await orderFlags(o.id)).consent, null, 'so it is dropped');
    assert.equal((await orderFlags(o.id)).signed, false, 'and nothing was co-signed');

    const second = await post('instant-refund-hash', { order_id: o.id });
    assert.equal(second.body.result.length, 2);
    assert.equal((await post('instant-refund', { order_id: o.id, signatures: signInstantRefundSighashes(second.body.result, userKey) })).status, 200);
    assert.deepEqual((await world.step()).instantRefunded, [o.id]);
    await world.settleTo(o.id, 'refunded');
    assert.equal(await ltcBalance(o.created.to), 0n, 'both outputs came back');
  });

  test("/relayer/bitcoin/redeem: the client's own redeem is checked, queued once and mined; wrong ones are refused", async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = 100_000n;
    const destAmount = await world.quote('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount);
    const one = newSecret();
    const two = newSecret();
    const make = (secretHash: string) =>
      world.create(
        { asset: 'ethereum_localnet:wbtc', owner: user.address, amount },
        { asset: 'litecoin_localnet:ltc', owner: userLtc, amount: destAmount, delegate: userXOnly },
        { secret_hash: secretHash.slice(2) },
      );
    const a = await make(one.secretHash);
    const b = await make(two.secretHash);
    await swapClient(w, eth).initiate({ ...a, order: await world.read(a.id), ...one });
    await swapClient(w, eth).initiate({ ...b, order: await world.read(b.id), ...two });
    await world.settle(a.id, (o) => o.destination_swap.initiate_block_number !== '0', 'a mined LTC destination');
    await world.settle(b.id, (o) => o.destination_swap.initiate_block_number !== '0', 'a mined LTC destination');

    /** The client's redeem of an order's LTC destination, as the SDK's getRedeemHex builds it. */
    const redeemOf = async (id: string, secret: string, to = userLtc) => {
      const order = (await findOrder(w.store.db, id))!;
      const utxos = await utxosOf(w.store.db, ltcChain.key, order.destination.swapId, { unspent: true });
      return buildRedeemTx({
        terms: swapScriptTerms(order.destination, 'destination', order.secretHash),
        network: NETWORK,
        utxos: utxos.map(({ txid, vout, value }) => ({ txid, vout, value })),
        to,
        feeRate: 2n,
        secret: hexToBytes(secret.slice(2)),
        redeemerKey: userKey,
      });
    };
    const txA = await redeemOf(a.id, one.secret);
    const refused = async (order_id: string, redeem_tx_bytes: string, why: RegExp) => {
      const res = await post('redeem', { order_id, redeem_tx_bytes });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error, /redeem_tx_bytes/);
      assert.match(res.body.error, why);
    };
    // A wrong secret in the witness (the leaf still hashes the right one).
    await refused(a.id, txA.hex.replace(one.secret.slice(2), two.secret.slice(2)), /secret/);
    await refused(a.id, (await redeemOf(a.id, one.secret, btcSolver.wallet)).hex, /destination owner/);
    await refused(b.id, txA.hex, /not an unspent output of this order's destination HTLC/);
    await refused(a.id, 'zz', /hex/);
    assert.equal((await post('redeem', { order_id: 'ab'.repeat(32), redeem_tx_bytes: txA.hex })).status, 404);
    assert.equal((await post('redeem', { order_id: a.id, redeem_tx_bytes: txA.hex }, otherKey)).status, 403);
    assert.equal(await jobsOf(a.id, 'redeem'), 0, 'nothing queued for refused requests');

    const userBefore = await ltcBalance(userLtc);
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('redeem', { order_id: a.id, redeem_tx_bytes: txA.hex })));
    for (const res of answers) assert.deepEqual(res, { status: 200, body: { status: 'Ok', result: txA.txid } });
    assert.equal(await jobsOf(a.id, 'redeem'), 1, 'ten posts, one job');

    const done = await world.settleTo(a.id, 'completed');
    assert.equal(done.destination_swap.redeem_tx_hash, txA.txid, 'the posted redeem is the one mined');
    const mined = await node.rpc.call<{ vsize: number }>('getrawtransaction', [txA.txid, true]);
    assert.equal((await ltcBalance(userLtc)) - userBefore, destAmount - 2n * BigInt(mined.vsize), 'the client got the amount less its own fee');
    const again = await post('redeem', { order_id: a.id, redeem_tx_bytes: txA.hex });
    assert.deepEqual(again, { status: 200, body: { status: 'Ok', result: txA.txid } }, 'a repeat after mining answers the same txid');
    const other = await post('redeem', { order_id: a.id, redeem_tx_bytes: (await redeemOf(b.id, two.secret)).hex });
    assert.equal(other.status, 400, "b's redeem posted for a");
  });
});
