// Swaps between Litecoin (a real litecoind regtest node) and EVM tokens (real anvil chains), over
// HTTP, with every worker driven by hand: the Bitcoin-family watcher and broadcast queue, the EVM
// watchers and relayers, and the solver with its EVM and Bitcoin adapters.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hexToBytes } from '@noble/curves/utils.js';
import { BitcoinWatcher } from '../../src/chains/bitcoin/watcher.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { satoshis } from '../../src/chains/bitcoin/chain-data.ts';
import { devAccount, privateKeyOf } from '../../src/devnet/evm-devnet.ts';
import type { LitecoinNode } from '../../src/devnet/litecoind.ts';
import { BitcoinRelayer } from '../../src/relayer/bitcoin-relayer.ts';
import { BitcoinSolverChain } from '../../src/solver/bitcoin-chain.ts';
import { orderIdsToFund } from '../../src/solver/solver-store.ts';
import { setSolverBalance } from '../../src/store/solvers.ts';
import { localnetRegistry, SOLVER } from '../helpers/fixtures.ts';
import { litecoinNodeForSuite } from '../helpers/litecoin.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { startChains, type LocalChain } from '../relayer/harness.ts';
import { openSwapWorld, swapClient, type SwapWorld } from './harness.ts';

const registry = localnetRegistry();
const ltcChain = registry.chain('litecoin_localnet')!;
const NETWORK = ltcChain.network;
const solverKey = hexToBytes(privateKeyOf(devAccount('solver')).slice(2));
const user = devAccount('user');
const userLtc = walletAddress(hexToBytes(privateKeyOf(user).slice(2)), NETWORK);
const LTC = 100_000_000n;

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

const coins = (sats: bigint) => Number(sats) / 1e8;

/** The confirmed balance of any address, read from the node's UTXO set. */
async function ltcBalance(address: string): Promise<bigint> {
  const scan = await node!.rpc.call<{ total_amount: number }>('scantxoutset', ['start', [`addr(${address})`]]);
  return satoshis(scan.total_amount);
}

describeEachStore('Litecoin <-> EVM swaps', (kind) => {
  let w: SwapWorld;
  let eth: LocalChain;
  let arb: LocalChain;
  let btcSolver: BitcoinSolverChain;
  let watcher: BitcoinWatcher;
  let relayer: BitcoinRelayer;

  before(async () => {
    if (!node) return;
    eth = chains.ethereum_localnet;
    arb = chains.arbitrum_localnet;
    // A 60 s margin: the regtest source timelock (60 blocks of 10 s) leaves room for the EVM destination's.
    w = await openSwapWorld(kind, registry, chains, { marginSeconds: 60 }, (db, secrets) => {
      btcSolver = new BitcoinSolverChain(ltcChain, db, node!.rpc, solverKey, secrets);
      return [btcSolver];
    });
    watcher = new BitcoinWatcher(w.store.db, ltcChain, node.rpc, { walletAddresses: [btcSolver.wallet], startBlock: BigInt(await node.rpc.getBlockCount()) + 1n });
    relayer = new BitcoinRelayer({ db: w.store.db, chain: ltcChain.key, rpc: node.rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
    await setSolverBalance(w.store.db, { solverId: SOLVER.id, asset: 'litecoin_localnet:ltc', balance: 100n * LTC });
    await node.rpc.call('sendtoaddress', [btcSolver.wallet, 20]);
    await node.mine(1);
    await watcher.poll();
  });
  after(() => w?.close());

  /** One round: the Bitcoin watcher and broadcast queue, then the EVM watchers and the solver. */
  const step = async () => {
    await watcher.poll();
    await relayer.tick();
    return w.step();
  };
  const read = (id: string) => swapClient(w, eth).read(id);
  /** Mines a Litecoin block and steps until the order reaches `status` (a few rounds at most). */
  const settleTo = async (id: string, status: string) => {
    for (let round = 0; round < 12; round++) {
      await node!.mine(1);
      await step();
      await step();
      if ((await read(id)).status === status) return read(id);
    }
    assert.fail(`order ${id} stayed ${(await read(id)).status}, expected ${status}`);
  };
  const quote = async (from: string, to: string, amount: bigint): Promise<bigint> => {
    const res = await w.api.inject({ url: `/v2/quote?from=${from}&to=${to}&from_amount=${amount}`, headers: { 'service-app-id': w.key } });
    assert.equal(res.statusCode, 200, res.body);
    return BigInt(res.json<{ result: Array<{ destination: { amount: string } }> }>().result[0]!.destination.amount);
  };
  const create = async (source: { asset: string; owner: string; amount: bigint }, destination: { asset: string; owner: string; amount: bigint }) => {
    const res = await w.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': w.key },
      payload: {
        source: { ...source, amount: source.amount.toString() },
        destination: { ...destination, amount: destination.amount.toString() },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<{ result: Record<string, any> }>().result;
    return { id: created.order_id as string, created };
  };

  test('LTC -> arbitrum WBTC with a service-held secret: the solver funds, redeems for the client, then redeems its LTC', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    assert.equal(o.created.amount, amount.toString());
    assert.match(o.created.to, /^rltc1p/);
    const userWbtc = await arb.wbtcBalance(user.address);
    const solverLtc = await ltcBalance(btcSolver.wallet);

    // The client sends `amount` to `to` (here from the node's wallet).
    await node.rpc.call('sendtoaddress', [o.created.to, coins(amount)]);
    await step();
    assert.equal((await read(o.id)).status, 'initiate_detected', 'the funding is seen in the mempool');
    const done = await settleTo(o.id, 'completed');

    assert.equal((await arb.wbtcBalance(user.address)) - userWbtc, destAmount, 'the client received exactly the destination amount');
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
    const destAmount = await quote('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount);
    const o = await create({ asset: 'ethereum_localnet:wbtc', owner: user.address, amount }, { asset: 'litecoin_localnet:ltc', owner: userLtc, amount: destAmount });
    const userLtcBefore = await ltcBalance(userLtc);
    const userWbtc = await eth.wbtcBalance(user.address);
    const solverWbtc = await eth.wbtcBalance(SOLVER.addresses.ethereum_localnet! as `0x${string}`);
    await swapClient(w, eth).initiate({ ...o, order: await read(o.id), secret: '0x', secretHash: '0x' });
    const done = await settleTo(o.id, 'completed');

    const paid = (await ltcBalance(userLtc)) - userLtcBefore;
    const redeem = await node.rpc.call<{ vsize: number }>('getrawtransaction', [done.destination_swap.redeem_tx_hash, true]);
    assert.ok(paid < destAmount && destAmount - paid <= BigInt(redeem.vsize) * 10n, `the client got the destination amount less the redeem fee: ${paid}`);
    assert.equal(userWbtc - (await eth.wbtcBalance(user.address)), amount, 'the client paid exactly the source amount');
    assert.equal((await eth.wbtcBalance(SOLVER.addresses.ethereum_localnet! as `0x${string}`)) - solverWbtc, amount, 'the solver redeemed the source');
    assert.equal(await ltcBalance(done.destination_swap.swap_id), 0n, 'the HTLC is empty');
  });

  test('an LTC HTLC funded with less than the amount is never matched; topping it up is', async (t) => {
    if (!node) return t.skip('litecoin is not installed');
    const amount = LTC;
    const destAmount = await quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    await node.rpc.call('sendtoaddress', [o.created.to, coins(amount - 1n)]);
    for (let i = 0; i < 3; i++) {
      await node.mine(1);
      const pass = await step();
      assert.deepEqual(pass.funded, []);
    }
    const short = await read(o.id);
    assert.equal(short.status, 'created');
    assert.equal(short.source_swap.filled_amount, (amount - 1n).toString());
    assert.equal(short.destination_swap.initiate_tx_hash, '');
    await node.rpc.call('sendtoaddress', [o.created.to, coins(10_000n)]);
    await settleTo(o.id, 'completed');
  });

  test('a reorg that removes the funding block moves the order back, and the solver waits', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const amount = LTC;
    const destAmount = await quote('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount);
    const o = await create({ asset: 'litecoin_localnet:ltc', owner: userLtc, amount }, { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destAmount });
    await node.rpc.call('sendtoaddress', [o.created.to, coins(amount)]);
    const [block] = await node.mine(1);
    await watcher.poll();
    assert.equal((await read(o.id)).status, 'initiated');
    assert.deepEqual(await orderIdsToFund(w.store.db, { solverId: SOLVER.id, chains: [ltcChain.key, 'arbitrum_localnet'], limit: 10 }), [o.id]);
    await node.rpc.call('invalidateblock', [block]);
    await watcher.poll();
    const back = await read(o.id);
    assert.equal(back.status, 'initiate_detected', 'the funding is back in the mempool, unconfirmed');
    assert.equal(back.source_swap.initiate_block_number, '0');
    const pass = await w.step();
    assert.deepEqual(pass.funded, [], 'nothing is funded on an unconfirmed source');
    await node.rpc.call('reconsiderblock', [block]);
    await settleTo(o.id, 'completed');
  });
});
