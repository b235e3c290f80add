// Swaps between Litecoin (a real litecoind regtest node) and EVM tokens (real anvil chains), over
// HTTP, with every worker driven by hand: the Bitcoin-family watcher and broadcast queue, the EVM
// watchers and relayers, and the solver with its EVM and Bitcoin adapters.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import { signInstantRefundSighashes } from '../../src/chains/bitcoin/htlc-spend.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { satoshis } from '../../src/chains/bitcoin/chain-data.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import type { LitecoinNode } from '../../src/localnet/bitcoin/litecoind.ts';
import type { TxEngine } from '../../src/engine/engine.ts';
import { bitcoinJobTx } from '../../src/chains/bitcoin/store/jobs.ts';
import { bitcoinEngine } from '../../src/chains/bitcoin/driver.ts';
import { BitcoinRpc } from '../../src/chains/bitcoin/rpc.ts';
import { findOrder } from '../../src/store/orders.ts';
import type { BitcoinSolverChain } from '../../src/chains/bitcoin/solver-chain.ts';
import { solverWork } from '../../src/store/solver-queries.ts';
import { localnetRegistry, SOLVER } from '../helpers/fixtures.ts';
import { confirmedBalance, litecoinNodeForSuite, toCoins } from '../helpers/litecoin.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { newSecret, startChains, type LocalChain } from '../relayer/harness.ts';
import { swapClient, type SwapWorld } from './harness.ts';
import { LTC, openLitecoinWorld, type LitecoinWorld } from './litecoin-world.ts';

/** A funding deadline (safety rule 2 at broadcast) that these tests never reach. */
const IN_AN_HOUR = new Date(Date.now() + 3_600_000);

const registry = localnetRegistry();
const ltcChain = registry.chain('litecoin_localnet')!;
const NETWORK = ltcChain.network;
const user = devAccount('user');
const userKey = hexToBytes(privateKeyOf(user).slice(2));
const userLtc = walletAddress(userKey, NETWORK);
const userXOnly = bytesToHex(schnorr.getPublicKey(userKey));
const solverEvm = SOLVER.addresses.ethereum_localnet! as `0x${string}`;

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


/** Retries an assertion for up to 3 s (for what a short-lived cache may still hold). */
async function eventually(check: () => Promise<void>): Promise<void> {
  for (const until = Date.now() + 3_000; ; await new Promise((r) => setTimeout(r, 100))) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
    }
  }
}

const ltcBalance = (address: string) => confirmedBalance(node!, address);

describeEachStore('Litecoin <-> EVM swaps', (kind) => {
  let world: LitecoinWorld;
  let w: SwapWorld;
  let eth: LocalChain;
  let arb: LocalChain;
  let btcSolver: BitcoinSolverChain;
  let relayer: TxEngine;

  before(async () => {
    if (!node) return;
    eth = chains.ethereum_localnet;
    arb = chains.arbitrum_localnet;
    world = await openLitecoinWorld(kind, registry, chains, node);
    ({ w, btcSolver, relayer } = world);
  });
  after(() => w?.close());

  const patch = async (id: string, action: string, payload: object) => {
    const res = await w.api.inject({ method: 'PATCH', url: `/v2/orders/${id}?action=${action}`, headers: { 'service-app-id': w.key }, payload });
    return { status: res.statusCode, body: res.json<Record<string, any>>() };
  };

  test('LTC -> arbitrum WBTC with a service-held secret: the solver funds, redeems for the client, then redeems its LTC', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    assert.equal(o.created.amount, amount.toString());
    assert.match(o.created.to, /^rltc1p/);
    const userWbtc = await arb.wbtcBalance(user.address);
    const solverLtc = await ltcBalance(btcSolver.wallet);
    const solverWbtc = await arb.wbtcBalance(solverEvm);

    // The client sends `amount` to `to` (here from the node's wallet).
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount)]);
    await world.step();
    assert.equal((await world.read(o.id)).status, 'initiate_detected', 'the funding is seen in the mempool');
    const done = await world.settleTo(o.id, 'completed');

    assert.equal((await arb.wbtcBalance(user.address)) - userWbtc, destAmount, 'the client received exactly the destination amount');
    assert.equal(solverWbtc - (await arb.wbtcBalance(solverEvm)), destAmount, 'the solver paid exactly the destination amount');
    assert.equal(await ltcBalance(o.created.to), 0n, 'the HTLC is empty');
    const redeem = await node.rpc.call<{ vout: Array<{ value: number }>; vsize: number }>('getrawtransaction', [done.source_swap.redeem_tx_hash, true]);
    const received = satoshis(redeem.vout[0]!.value);
    assert.equal((await ltcBalance(btcSolver.wallet)) - solverLtc, received, 'the solver wallet received the redeem output');
    assert.ok(received < amount && amount - received <= BigInt(redeem.vsize) * 10n, `the redeem paid only a fee: ${amount - received} litoshis`);
    assert.match(done.destination_swap.secret, /^[0-9a-f]{64}$/);
  });

  test('ethereum WBTC -> LTC with a service-held secret: the solver funds the LTC HTLC and redeems it to the client', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = 100_000n;
    const destAmount = await world.quote('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount);
    const o = await world.create({ asset: 'ethereum_localnet:wbtc', owner: user.address, amount }, { asset: 'litecoin_localnet:ltc', owner: userLtc, amount: destAmount });
    const userLtcBefore = await ltcBalance(userLtc);
    const userWbtc = await eth.wbtcBalance(user.address);
    const solverWbtc = await eth.wbtcBalance(solverEvm);
    await swapClient(w, eth).initiate({ ...o, order: await world.read(o.id), secret: '0x', secretHash: '0x' });
    const done = await world.settleTo(o.id, 'completed');

    const paid = (await ltcBalance(userLtc)) - userLtcBefore;
    const redeem = await node.rpc.call<{ vsize: number }>('getrawtransaction', [done.destination_swap.redeem_tx_hash, true]);
    assert.ok(paid < destAmount && destAmount - paid <= BigInt(redeem.vsize) * 10n, `the client got the destination amount less the redeem fee: ${paid}`);
    assert.equal(userWbtc - (await eth.wbtcBalance(user.address)), amount, 'the client paid exactly the source amount');
    assert.equal((await eth.wbtcBalance(solverEvm)) - solverWbtc, amount, 'the solver redeemed the source');
    assert.equal(await ltcBalance(done.destination_swap.swap_id), 0n, 'the HTLC is empty');
  });

  test('LTC -> arbitrum WBTC with a client-held secret: the client redeems on arbitrum, the solver takes the secret to its LTC', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const { secret, secretHash } = newSecret();
    const o = await world.create(
      { asset: 'litecoin_localnet:ltc', owner: userLtc, amount },
      { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount },
      { secret_hash: secretHash.slice(2) },
    );
    const userWbtc = await arb.wbtcBalance(user.address);
    const solverLtc = await ltcBalance(btcSolver.wallet);
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount)]);
    await world.settleTo(o.id, 'awaiting_redeem');
    const redeem = await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: secret.slice(2) });
    assert.equal(redeem.status, 202, JSON.stringify(redeem.body));
    const done = await world.settleTo(o.id, 'completed');
    assert.equal((await arb.wbtcBalance(user.address)) - userWbtc, destAmount);
    const tx = await node.rpc.call<{ vout: Array<{ value: number }> }>('getrawtransaction', [done.source_swap.redeem_tx_hash, true]);
    assert.equal((await ltcBalance(btcSolver.wallet)) - solverLtc, satoshis(tx.vout[0]!.value));
    assert.equal(done.source_swap.secret, secret.slice(2), 'the LTC redeem witness carries the secret');
  });

  test('ethereum WBTC -> LTC with a client-held secret: PATCH redeem {secret} pays the LTC to the client', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = 100_000n;
    const destAmount = await world.quote('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount);
    const { secret, secretHash } = newSecret();
    const o = await world.create(
      { asset: 'ethereum_localnet:wbtc', owner: user.address, amount },
      { asset: 'litecoin_localnet:ltc', owner: userLtc, amount: destAmount },
      { secret_hash: secretHash.slice(2) },
    );
    const userLtcBefore = await ltcBalance(userLtc);
    const solverWbtc = await eth.wbtcBalance(solverEvm);
    await swapClient(w, eth).initiate({ ...o, order: await world.read(o.id), secret, secretHash });
    await world.settle(o.id, (order) => order.destination_swap.initiate_block_number !== '0', 'a mined LTC destination');
    const wrong = await patch(o.id, 'redeem', { secret: newSecret().secret.slice(2) });
    assert.equal(wrong.status, 400, 'a secret of another hash is refused');
    const res = await patch(o.id, 'redeem', { secret: secret.slice(2) });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const done = await world.settleTo(o.id, 'completed');
    assert.equal(done.destination_swap.redeem_tx_hash, res.body.result, 'the relayed redeem is the one mined');
    const redeemTx = await node.rpc.call<{ vsize: number }>('getrawtransaction', [res.body.result, true]);
    const paid = (await ltcBalance(userLtc)) - userLtcBefore;
    assert.ok(paid < destAmount && destAmount - paid <= BigInt(redeemTx.vsize) * 10n, `the client got the amount less the redeem fee: ${paid}`);
    assert.equal((await eth.wbtcBalance(solverEvm)) - solverWbtc, amount);
  });

  test('a solver that comes back after the CSV timelock does not fund, and refunds the client with the key the service holds', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    const userLtcBefore = await ltcBalance(userLtc);
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount)]);
    // The solver is down while the source's timelock runs out.
    // Funded in the first block mined here; the status says refundable once the height is past
    // that block + timelock (order reads see heights at most a second old).
    const timelock = Number((await world.read(o.id)).source_swap.timelock);
    await node.mine(timelock + 2);
    await world.catchUp();
    await eventually(async () => assert.equal((await world.read(o.id)).status, 'awaiting_refund'));
    const pass = await w.solver.tick();
    assert.ok(!pass.funded.includes(o.id), 'rule 2: no time left on the source');
    assert.ok(pass.skipped.some((s) => s.orderId === o.id && s.reason.startsWith('rule 2')), JSON.stringify(pass.skipped));
    assert.deepEqual(pass.refundedForClient, [o.id]);
    await relayer.tick();
    await node.mine(1);
    await world.catchUp();
    const done = await world.read(o.id);
    assert.equal(done.status, 'refunded');
    const refund = await node.rpc.call<{ vsize: number }>('getrawtransaction', [done.source_swap.refund_tx_hash, true]);
    const back = (await ltcBalance(userLtc)) - userLtcBefore;
    assert.ok(back < amount && amount - back <= BigInt(refund.vsize) * 10n, `the client got its LTC back less the refund fee: ${back}`);
    assert.equal(done.destination_swap.initiate_tx_hash, '', 'the destination was never funded');
  });

  test('instant refund with the client delegate key: the client signs the hashes, the solver co-signs and pays the fee, then never funds', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create(
      { asset: 'litecoin_localnet:ltc', owner: userLtc, amount, delegate: userXOnly },
      { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount },
    );
    const userLtcBefore = await ltcBalance(userLtc);
    const solverLtc = await ltcBalance(btcSolver.wallet);
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount)]);
    await node.mine(1);
    await world.catchUp();
    assert.equal((await world.read(o.id)).status, 'initiated');
    const hashes = await w.api.inject({ url: `/v2/orders/${o.id}/instant-refund-hash`, headers: { 'service-app-id': w.key } });
    assert.equal(hashes.statusCode, 200, hashes.body);
    const sighashes = hashes.json<{ result: string[] }>().result;
    assert.equal(sighashes.length, 1);
    const signatures = signInstantRefundSighashes(sighashes, userKey);
    const res = await w.api.inject({
      method: 'PATCH',
      url: `/v3/orders/${o.id}?action=instant-refund`,
      headers: { 'service-app-id': w.key },
      payload: { signatures },
    });
    assert.equal(res.statusCode, 202, res.body);
    await relayer.tick();
    await node.mine(1);
    const pass = await world.step();
    assert.ok(!pass.funded.includes(o.id), 'rule 5: co-signed, so never funded');
    const done = await world.read(o.id);
    assert.equal(done.status, 'refunded');
    assert.equal((await ltcBalance(userLtc)) - userLtcBefore, amount, 'the client got the full amount back');
    assert.ok((await ltcBalance(btcSolver.wallet)) < solverLtc, 'the solver wallet paid the fee');
    assert.ok(solverLtc - (await ltcBalance(btcSolver.wallet)) < 100_000n, 'only a fee');
  });

  test('instant refund leaves out an output below the payout dust limit, which anyone could add to block it', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    // A legacy payout address: its dust limit (5,460 litoshis) is above a taproot output's (3,300).
    const payout = await node.rpc.call<string>('getnewaddress', ['', 'legacy']);
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create(
      { asset: 'litecoin_localnet:ltc', owner: payout, amount, delegate: userXOnly },
      { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount },
    );
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount)]);
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(4_000n)]);
    await node.mine(1);
    await world.catchUp();
    const hashes = await w.api.inject({ url: `/v2/orders/${o.id}/instant-refund-hash`, headers: { 'service-app-id': w.key } });
    assert.equal(hashes.statusCode, 200, hashes.body);
    const sighashes = hashes.json<{ result: string[] }>().result;
    assert.equal(sighashes.length, 1, 'one hash: the 4,000-litoshi output is left out');
    const res = await w.api.inject({
      method: 'PATCH',
      url: `/v2/orders/${o.id}?action=instant-refund`,
      headers: { 'service-app-id': w.key },
      payload: { signatures: signInstantRefundSighashes(sighashes, userKey) },
    });
    assert.equal(res.statusCode, 202, res.body);
    await relayer.tick();
    await node.mine(1);
    await world.catchUp();
    assert.equal((await world.read(o.id)).status, 'refunded');
    assert.equal(await ltcBalance(payout), amount, 'the client got the full amount back');
    assert.equal(await ltcBalance(o.created.to), 4_000n, 'the dust output stays in the HTLC (refundable after the timelock)');
  });

  test('the solver refunds its own LTC destination once its CSV timelock runs out, and the client refunds its WBTC source', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = 100_000n;
    const destAmount = await world.quote('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount);
    const { secretHash } = newSecret();
    const o = await world.create(
      { asset: 'ethereum_localnet:wbtc', owner: user.address, amount },
      { asset: 'litecoin_localnet:ltc', owner: userLtc, amount: destAmount },
      { secret_hash: secretHash.slice(2) },
    );
    const userWbtc = await eth.wbtcBalance(user.address);
    await swapClient(w, eth).initiate({ ...o, order: await world.read(o.id), secret: '0x', secretHash });
    const funded = await world.settle(o.id, (order) => order.destination_swap.initiate_block_number !== '0', 'a mined LTC destination');
    const solverLtc = await ltcBalance(btcSolver.wallet);
    // The client never redeems: the destination's CSV timelock runs out.
    await node.mine(Number(funded.destination_swap.timelock));
    await world.catchUp();
    const pass = await w.step();
    assert.deepEqual(pass.refunded, [o.id], 'the solver refunded its expired destination');
    assert.deepEqual((await w.step()).refunded, [], 'once');
    await relayer.tick();
    await node.mine(1);
    await world.catchUp();
    const refunded = await world.read(o.id);
    assert.match(refunded.destination_swap.refund_tx_hash, /^[0-9a-f]{64}$/);
    const refundTx = await node.rpc.call<{ vsize: number }>('getrawtransaction', [refunded.destination_swap.refund_tx_hash, true]);
    const back = (await ltcBalance(btcSolver.wallet)) - solverLtc;
    assert.ok(back < destAmount && destAmount - back <= BigInt(refundTx.vsize) * 10n, `the solver got its LTC back less the refund fee: ${back}`);

    // The client refunds its source after the EVM timelock.
    await eth.node.rpc('anvil_mine', [`0x${(BigInt(refunded.source_swap.timelock) + 1n).toString(16)}`]);
    await w.watchers.ethereum_localnet.poll();
    const res = await w.patchRelayed(o.id, 'refund', 'ethereum_localnet');
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await w.step();
    assert.equal((await world.read(o.id)).status, 'refunded');
    assert.equal(await eth.wbtcBalance(user.address), userWbtc, 'the client has all its WBTC back');
  });

  test('rule 6 on Litecoin: a funding lost at broadcast is resent from its job by the engine, and asking again writes nothing new', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = 100_000n;
    const destAmount = await world.quote('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount);
    const o = await world.create({ asset: 'ethereum_localnet:wbtc', owner: user.address, amount }, { asset: 'litecoin_localnet:ltc', owner: userLtc, amount: destAmount });
    await swapClient(w, eth).initiate({ ...o, order: await world.read(o.id), secret: '0x', secretHash: '0x' });
    await w.watchers.ethereum_localnet.poll();
    const order = (await findOrder(w.store.db, o.id))!;
    // The connection drops as the engine sends the funding: its job is written, nothing reached the node.
    class DroppedBroadcast extends BitcoinRpc {
      override sendRawTransaction(): Promise<string> {
        return Promise.reject(new Error('socket hang up'));
      }
    }
    const dropping = bitcoinEngine({ db: w.store.db, chain: ltcChain.key, rpc: new DroppedBroadcast({ url: node.rpcUrl, auth: { cookieFile: node.cookieFile } }), worker: 'dropping', recheckMs: 0, retryMs: 0 });
    await btcSolver.fundDestination(order, IN_AN_HOUR);
    const job = await bitcoinJobTx(w.store.db, `${o.id}:fund`);
    assert.ok(job?.rawTx, 'the signed funding was written');
    await dropping.tick();
    assert.equal((await bitcoinJobTx(w.store.db, `${o.id}:fund`))?.status, 'queued', 'a lost broadcast costs no attempt');
    assert.ok(!(await node.rpc.call<string[]>('getrawmempool')).includes(job.txid));

    const pass = await w.solver.tick();
    assert.ok(!pass.funded.includes(o.id), 'not funded a second time');
    await relayer.tick();
    assert.ok((await node.rpc.call<string[]>('getrawmempool')).includes(job.txid), 'the engine resent the written funding');
    const mempool = await node.rpc.call<string[]>('getrawmempool');
    await btcSolver.fundDestination(order, IN_AN_HOUR);
    await relayer.tick();
    assert.deepEqual(await node.rpc.call<string[]>('getrawmempool'), mempool, 'asking again sends nothing new');
    assert.equal((await bitcoinJobTx(w.store.db, `${o.id}:fund:2`)), undefined, 'nor writes a second funding');
    const done = await world.settleTo(o.id, 'completed');
    assert.equal(done.destination_swap.initiate_tx_hash, job.txid);
    assert.equal(done.destination_swap.filled_amount, destAmount.toString(), 'funded once, with exactly the amount');
  });

  test('an LTC HTLC funded with less than the amount is never matched; topping it up is', async (t) => {
    if (!node) return t.skip('litecoin is not installed');
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount - 1n)]);
    for (let i = 0; i < 3; i++) {
      await node.mine(1);
      const pass = await world.step();
      assert.ok(!pass.funded.includes(o.id));
    }
    const short = await world.read(o.id);
    assert.equal(short.status, 'created');
    assert.equal(short.source_swap.filled_amount, (amount - 1n).toString());
    assert.equal(short.destination_swap.initiate_tx_hash, '');
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(10_000n)]);
    await world.settleTo(o.id, 'completed');
  });

  test('a reorg that removes the funding block moves the order back, and the solver waits', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await world.quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await world.create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    await node.rpc.call('sendtoaddress', [o.created.to, toCoins(amount)]);
    const [block] = await node.mine(1);
    await world.catchUp();
    assert.equal((await world.read(o.id)).status, 'initiated');
    assert.ok((await solverWork(w.store.db, { solverId: SOLVER.id, serviceSteps: true, chains: [ltcChain.key, 'arbitrum_localnet'], limit: 50, nowSeconds: Math.floor(Date.now() / 1000) })).steps.fund.includes(o.id));
    await node.rpc.call('invalidateblock', [block]);
    await world.catchUp();
    const back = await world.read(o.id);
    assert.equal(back.status, 'initiate_detected', 'the funding is back in the mempool, unconfirmed');
    assert.equal(back.source_swap.initiate_block_number, '0');
    const pass = await w.step();
    assert.ok(!pass.funded.includes(o.id), 'nothing is funded on an unconfirmed source');
    await node.rpc.call('reconsiderblock', [block]);
    await world.settleTo(o.id, 'completed');
  });
});
