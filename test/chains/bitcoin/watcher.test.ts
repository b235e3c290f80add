// The Bitcoin-family watcher against a real Litecoin Core regtest node: HTLC fundings from the
// mempool and from blocks (several summing to the amount, too little), redeem / refund / instant
// refund spends read from their witnesses, wallet outputs, reorgs by invalidateblock (funding back
// to the mempool, funding double-spent, redeem undone), restarts, and a per-block cost that does not
// grow with the number of orders.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test, type TestContext } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { hex } from '@scure/base';
import { p2tr, SigHash, Transaction } from '@scure/btc-signer';
import { sql } from 'kysely';
import { htlcPayment, type HtlcPayment } from '../../../src/chains/bitcoin/htlc.ts';
import { bitcoinNetwork } from '../../../src/chains/bitcoin/network.ts';
import { BitcoinRpcError } from '../../../src/chains/bitcoin/rpc.ts';
import { BitcoinWatcher, type BitcoinPollResult, type BitcoinRpcClient } from '../../../src/chains/bitcoin/watcher.ts';
import { chainAdapter } from '../../../src/chains/adapters.ts';
import type { Chain } from '../../../src/chains/registry.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { runWorker } from '../../../src/lease-loop.ts';
import type { ParentLog } from '../../../src/log.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { orderStatus, type OrderStatus } from '../../../src/orders/status.ts';
import { solverWork } from '../../../src/store/solver-queries.ts';
import { confirmedBalance, utxosOf } from '../../../src/chains/bitcoin/store/utxos.ts';
import { registerSolver, revokeSolver, setSolverAddress } from '../../../src/store/solver-registry.ts';
import { listChainHeights } from '../../../src/store/chain-heights.ts';
import { toRfc3339Seconds, type Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder, type NewOrder, type SwapRecord } from '../../../src/store/orders.ts';
import { localnetRegistry, sampleOrder, seedBasics, SOLVER } from '../../helpers/fixtures.ts';
import { litecoinNodeOrSkip } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore, StatementCounter } from '../../helpers/stores.ts';
import { waitFor } from '../../helpers/wait.ts';
import { systemClock } from '../../../src/clock.ts';

const CHAIN = 'litecoin_localnet';
const NETWORK_NAME = 'litecoin_regtest';
const NETWORK = bitcoinNetwork(NETWORK_NAME);
const FEE = 20_000n;
const AMOUNT = 1_000_000n;

let node: Promise<LitecoinNode | undefined> | undefined;
/** The file's one regtest node, started by the first test that needs it (skips every test when litecoind is missing). */
const nodeOrSkip = (t: TestContext) => (node ??= litecoinNodeOrSkip(t));

after(async () => {
  await (await node)?.stop();
});

const coins = (sats: bigint) => `${sats / 100_000_000n}.${(sats % 100_000_000n).toString().padStart(8, '0')}`;
const xOnly = (key: Uint8Array) => hex.encode(schnorr.getPublicKey(key));

/** An order whose source is a Litecoin HTLC, with the keys and secret to spend it. */
interface LtcOrder {
  order: NewOrder;
  secret: Uint8Array;
  userKey: Uint8Array;
  solverKey: Uint8Array;
  timelock: bigint;
  payment: HtlcPayment;
  /** The HTLC address: the source swap id. */
  address: string;
}

describeEachStore('BitcoinWatcher', (kind) => {
  let ready: Promise<boolean> | undefined;
  let ltc: LitecoinNode;
  let store: Store;
  let chain: Chain;
  let appId: string;
  let watcher: BitcoinWatcher;
  let startHeight: bigint;
  let rpc: BitcoinRpcClient;
  const statements = new StatementCounter();
  /** Every RPC method the watchers sent, in order. */
  const calls: string[] = [];
  /** The descriptors of every UTXO-set scan the watchers asked for. */
  const scanned: string[] = [];
  const walletKey = schnorr.utils.randomSecretKey();
  const wallet = p2tr(schnorr.getPublicKey(walletKey), undefined, NETWORK);

  /** Starts the node (once per file) and this suite's store and watcher; false when the node cannot run here. */
  async function setup(t: TestContext): Promise<boolean> {
    ready ??= (async () => {
      const started = await nodeOrSkip(t);
      if (!started) return false;
      ltc = started;
      await ltc.mine(1); // an empty mempool: the other suite may have left transactions
      store = await openTestStore(kind);
      const registry = localnetRegistry();
      chain = registry.chain(CHAIN)!;
      ({ app: { id: appId } } = await seedBasics(store.db, registry));
      rpc = {
        call: <T>(method: string, params?: unknown[]) => {
          calls.push(method);
          if (method === 'scantxoutset') scanned.push(...(params![1] as string[]));
          return ltc.rpc.call<T>(method, params);
        },
      };
      startHeight = BigInt(await ltc.rpc.getBlockCount());
      return true;
    })();
    const ok = await ready;
    if (!ok) t.skip('litecoind is not installed');
    return ok;
  }

  after(async () => {
    if (await ready) await store.close();
  });

  const newWatcher = (options: { startBlock?: bigint } = {}) =>
    new BitcoinWatcher(store.db.withPlugin(statements), chain, rpc, { startBlock: options.startBlock ?? startHeight, walletAddresses: [wallet.address] });

  function ltcOrder(options: { amount?: bigint; timelock?: bigint; required?: number } = {}): LtcOrder {
    const secret = randomBytes(32);
    const secretHash = hex.encode(sha256(secret));
    const userKey = schnorr.utils.randomSecretKey();
    const solverKey = schnorr.utils.randomSecretKey();
    const timelock = options.timelock ?? 60n;
    const terms = { initiator: xOnly(userKey), redeemer: xOnly(solverKey), secretHash, timelock };
    const payment = htlcPayment(terms, NETWORK_NAME);
    const base = sampleOrder(appId, { secretHash });
    const order: NewOrder = {
      ...base,
      source: {
        swapId: payment.address,
        chain: CHAIN,
        asset: `${CHAIN}:ltc`,
        initiator: p2tr(schnorr.getPublicKey(userKey), undefined, NETWORK).address,
        redeemer: terms.redeemer,
        delegate: terms.initiator,
        timelock,
        amount: options.amount ?? AMOUNT,
        assetPrice: 100,
        requiredConfirmations: options.required ?? 1,
      },
      destination: { ...base.source, initiator: SOLVER.addresses.ethereum_localnet!, redeemer: base.source.initiator, timelock: 150n },
    };
    return { order, secret, userKey, solverKey, timelock, payment, address: payment.address };
  }

  async function createOrder(options: Parameters<typeof ltcOrder>[0] = {}): Promise<LtcOrder> {
    const o = ltcOrder(options);
    await insertOrder(store.db, o.order);
    return o;
  }

  const fund = (address: string, sats: bigint) => ltc.rpc.call<string>('sendtoaddress', [address, coins(sats)]);
  const mine = async (blocks = 1) => ltc.mine(blocks);
  const heightOf = async (hash: string) => BigInt((await ltc.rpc.call<{ height: number }>('getblockheader', [hash])).height);
  const blockTime = async (hash: string) =>
    new Date((await ltc.rpc.call<{ time: number }>('getblockheader', [hash])).time * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const source = async (o: LtcOrder): Promise<SwapRecord> => (await findOrder(store.db, o.order.id))!.source;
  const status = async (o: LtcOrder): Promise<OrderStatus> =>
    orderStatus((await findOrder(store.db, o.order.id))!, { unixSeconds: Math.floor(Date.now() / 1000), heights: await listChainHeights(store.db) });
  const nodeAddress = () => ltc.rpc.call<string>('getnewaddress', ['', 'bech32']);
  const allRows = async () => ({
    swaps: await store.db.selectFrom('swaps').selectAll().orderBy('order_id').orderBy('side').execute(),
    utxos: (await sql`select * from bitcoin_utxos order by txid, vout`.execute(store.db)).rows,
  });

  /** The HTLC's one recorded output. */
  async function htlcOutput(o: LtcOrder) {
    const [utxo, ...rest] = await utxosOf(store.db, CHAIN, o.address);
    assert.ok(utxo, 'the HTLC output is recorded');
    assert.equal(rest.length, 0);
    return utxo;
  }

  /** A script-path spend of one HTLC output to a node address (witness built by hand, as the HTLC leaves need). */
  async function spendHtlc(o: LtcOrder, leaf: 'redeem' | 'refund' | 'instantRefund'): Promise<string> {
    const utxo = await htlcOutput(o);
    const tx = new Transaction({ version: 2 });
    // The refund leaf's CSV needs nSequence = timelock; the other leaves leave the input final.
    const sequence = leaf === 'refund' ? Number(o.timelock) : 0xffffffff;
    tx.addInput({ txid: utxo.txid, index: utxo.vout, witnessUtxo: { script: o.payment.script, amount: utxo.value }, sequence });
    tx.addOutputAddress(await nodeAddress(), utxo.value - FEE, NETWORK);
    const spend = o.payment.spends[leaf];
    const sign = (key: Uint8Array) =>
      schnorr.sign(tx.preimageWitnessV1(0, [o.payment.script], SigHash.DEFAULT, [utxo.value], -1, spend.script, 0xc0), key);
    const args = leaf === 'redeem' ? [sign(o.solverKey), o.secret] : leaf === 'refund' ? [sign(o.userKey)] : [sign(o.solverKey), sign(o.userKey)];
    tx.updateInput(0, { finalScriptWitness: [...args, spend.script, spend.controlBlock] });
    return ltc.rpc.sendRawTransaction(tx.hex);
  }

  test('the first poll reads from the start block to the head, indexes the open swaps and records the height', async (t) => {
    if (!(await setup(t))) return;
    await createOrder();
    watcher = newWatcher();
    const result = await watcher.poll();
    assert.equal(result.from, startHeight);
    assert.equal(result.to, BigInt(await ltc.rpc.getBlockCount()));
    assert.equal(watcher.watchedScripts, 3, "the order HTLC, the wallet address and the configured solver's key-path wallet");
    assert.deepEqual(result.received, []);
    assert.equal((await listChainHeights(store.db)).get(CHAIN), result.to);
  });

  test('funding in the mempool: initiate detected; mined: initiated with the amount, txid, block and block time; confirmations rise to the required count', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder({ required: 2 });
    const txid = await fund(o.address, AMOUNT);
    const detected = await watcher.poll();
    assert.ok(detected.mempool && detected.mempool.fetched >= 1);
    assert.deepEqual(
      detected.received.map((u) => [u.txid, u.address, u.value, u.blockNumber]),
      [[txid, o.address, AMOUNT, null]],
    );
    let swap = await source(o);
    assert.equal(swap.initiateTxHash, txid);
    assert.equal(swap.initiateBlockNumber, '0');
    assert.equal(swap.initiateTimestamp, null);
    assert.equal(swap.filledAmount, AMOUNT.toString());
    assert.equal(swap.currentConfirmations, 0);
    assert.equal(await status(o), 'initiate_detected');

    const [hash] = await mine();
    const mined = await watcher.poll();
    assert.deepEqual(mined.received.map((u) => [u.txid, u.blockNumber]), [[txid, await heightOf(hash!)]]);
    swap = await source(o);
    assert.equal(swap.initiateTxHash, txid);
    assert.equal(swap.initiateBlockNumber, (await heightOf(hash!)).toString());
    assert.equal(toRfc3339Seconds(swap.initiateTimestamp!), await blockTime(hash!));
    assert.equal(swap.filledAmount, AMOUNT.toString());
    assert.equal(swap.currentConfirmations, 1);
    assert.equal(await status(o), 'initiate_detected', 'one confirmation of two');
    const utxo = await htlcOutput(o);
    assert.deepEqual([utxo.script, utxo.value, utxo.blockNumber, utxo.spentTxid], [hex.encode(o.payment.script), AMOUNT, await heightOf(hash!), null]);

    await mine();
    await watcher.poll();
    assert.equal((await source(o)).currentConfirmations, 2);
    assert.equal(await status(o), 'initiated');
    await mine(2);
    await watcher.poll();
    assert.equal((await source(o)).currentConfirmations, 2, 'capped at the required count');
  });

  test('two fundings: the sum counts, the tx hash lists both, initiated at the block where the mined sum reached the amount', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    const first = await fund(o.address, 600_000n);
    const [firstBlock] = await mine();
    await watcher.poll();
    let swap = await source(o);
    assert.equal(swap.filledAmount, '600000');
    assert.equal(swap.initiateTxHash, '', 'below the amount: not initiated');
    assert.equal(await status(o), 'created');

    const second = await fund(o.address, 400_000n);
    await watcher.poll();
    swap = await source(o);
    assert.equal(swap.filledAmount, AMOUNT.toString());
    assert.equal(swap.initiateTxHash, `${first},${second}`, 'mined first, then the mempool');
    assert.equal(swap.initiateBlockNumber, '0', 'the amount is reached only with a mempool output');
    assert.equal(await status(o), 'initiate_detected');

    const [secondBlock] = await mine();
    await watcher.poll();
    swap = await source(o);
    assert.equal(swap.initiateTxHash, `${first},${second}`);
    assert.equal(swap.initiateBlockNumber, (await heightOf(secondBlock!)).toString());
    assert.notEqual(swap.initiateBlockNumber, (await heightOf(firstBlock!)).toString());
    assert.equal(toRfc3339Seconds(swap.initiateTimestamp!), await blockTime(secondBlock!));
    assert.equal(swap.currentConfirmations, 1);
    assert.equal(await status(o), 'initiated');
  });

  test('an underfunded HTLC is never initiated and the solver does not fund it; a top-up that reaches the amount initiates it', async (t) => {
    if (!(await setup(t))) return;
    const short = await createOrder();
    const full = await createOrder();
    await fund(short.address, AMOUNT - 1n);
    await fund(full.address, AMOUNT);
    await mine(3);
    await watcher.poll();
    let swap = await source(short);
    assert.equal(swap.filledAmount, (AMOUNT - 1n).toString());
    assert.deepEqual([swap.initiateTxHash, swap.initiateBlockNumber, swap.initiateTimestamp, swap.currentConfirmations], ['', '0', null, 0]);
    assert.equal(await status(short), 'created');
    const toFund = (await solverWork(store.db, { solverId: SOLVER.id, serviceSteps: true, chains: [CHAIN, 'ethereum_localnet'], limit: 1000, nowSeconds: Math.floor(Date.now() / 1000) })).steps.fund;
    assert.ok(toFund.includes(full.order.id), 'the fully funded order is one the solver funds');
    assert.ok(!toFund.includes(short.order.id), 'the underfunded one is not');

    const topUp = await fund(short.address, 10_000n);
    const [block] = await mine();
    await watcher.poll();
    swap = await source(short);
    assert.equal(swap.filledAmount, (AMOUNT + 9_999n).toString());
    assert.ok(swap.initiateTxHash.endsWith(`,${topUp}`));
    assert.equal(swap.initiateBlockNumber, (await heightOf(block!)).toString());
    assert.equal(await status(short), 'initiated');
  });

  test('a redeem spend: the secret from the witness, detected from the mempool, then mined', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    await fund(o.address, AMOUNT);
    await mine();
    await watcher.poll();
    const redeem = await spendHtlc(o, 'redeem');
    const detected = await watcher.poll();
    assert.deepEqual(detected.events.map((e) => [e.kind, e.swapId, e.txHash, e.blockNumber]), [['redeemed', o.address, redeem, 0n]]);
    let swap = await source(o);
    assert.equal(swap.secret, hex.encode(o.secret));
    assert.equal(swap.redeemTxHash, redeem);
    assert.equal(swap.redeemBlockNumber, '0');
    assert.equal(swap.redeemTimestamp, null);
    assert.equal(await status(o), 'redeem_detected');
    assert.deepEqual([(await htlcOutput(o)).spentTxid, (await htlcOutput(o)).spentBlockNumber], [redeem, null]);

    const [block] = await mine();
    await watcher.poll();
    swap = await source(o);
    assert.equal(swap.redeemBlockNumber, (await heightOf(block!)).toString());
    assert.equal(toRfc3339Seconds(swap.redeemTimestamp!), await blockTime(block!));
    assert.equal(swap.secret, hex.encode(o.secret));
    assert.equal(swap.refundTxHash, '');
    assert.equal((await htlcOutput(o)).spentBlockNumber, await heightOf(block!));
  });

  test('a refund after the CSV timelock is recorded as refunded', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder({ timelock: 3n });
    await fund(o.address, AMOUNT);
    await mine();
    await watcher.poll();
    await assert.rejects(spendHtlc(o, 'refund'), (err: unknown) => err instanceof BitcoinRpcError && /non-BIP68-final/.test(err.message));
    await mine(2); // the next block is the third on top of the funding one
    const refund = await spendHtlc(o, 'refund');
    await watcher.poll();
    let swap = await source(o);
    assert.deepEqual([swap.refundTxHash, swap.refundBlockNumber, swap.secret], [refund, '0', '']);
    assert.equal(await status(o), 'refund_detected');
    const [block] = await mine();
    const mined = await watcher.poll();
    assert.deepEqual(mined.events.map((e) => [e.kind, e.txHash]), [['refunded', refund]]);
    swap = await source(o);
    assert.equal(swap.refundBlockNumber, (await heightOf(block!)).toString());
    assert.equal(swap.redeemTxHash, '');
    assert.equal(await status(o), 'refunded');
  });

  test('a cooperative instant refund (2-of-2 leaf) is recorded as refunded', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    await fund(o.address, AMOUNT);
    await mine();
    await watcher.poll();
    const refund = await spendHtlc(o, 'instantRefund');
    const [block] = await mine();
    const result = await watcher.poll();
    assert.deepEqual(result.events.map((e) => [e.kind, e.txHash]), [['refunded', refund]]);
    const swap = await source(o);
    assert.deepEqual([swap.refundTxHash, swap.refundBlockNumber, swap.redeemTxHash, swap.secret], [refund, (await heightOf(block!)).toString(), '', '']);
    assert.equal(await status(o), 'refunded');
  });

  test('REORG: invalidateblock of the funding block moves the swap back to detected (the funding is back in the mempool); reconsiderblock restores it', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    const txid = await fund(o.address, AMOUNT);
    const [block] = await mine();
    const height = await heightOf(block!);
    await watcher.poll();
    assert.equal((await source(o)).initiateBlockNumber, height.toString());

    await ltc.rpc.call('invalidateblock', [block]);
    const undone = await watcher.poll();
    assert.deepEqual(undone.reorg, { ancestor: height - 1n, previousCursor: height, beyondWindow: false });
    let swap = await source(o);
    assert.deepEqual([swap.initiateTxHash, swap.initiateBlockNumber, swap.initiateTimestamp, swap.currentConfirmations], [txid, '0', null, 0]);
    assert.equal(swap.filledAmount, AMOUNT.toString());
    assert.equal(await status(o), 'initiate_detected');
    assert.equal((await htlcOutput(o)).blockNumber, null);
    assert.equal((await listChainHeights(store.db)).get(CHAIN), height - 1n);

    await ltc.rpc.call('reconsiderblock', [block]);
    const restored = await watcher.poll();
    assert.equal(restored.reorg, undefined);
    swap = await source(o);
    assert.deepEqual([swap.initiateTxHash, swap.initiateBlockNumber, swap.currentConfirmations], [txid, height.toString(), 1]);
    assert.equal(toRfc3339Seconds(swap.initiateTimestamp!), await blockTime(block!));
    assert.equal(await status(o), 'initiated');
  });

  test('A CHAIN BACK FROM OLDER STATE: invalidateblock 30 blocks down (deeper than the kept window) undoes what was above; the order moves back', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    const txid = await fund(o.address, AMOUNT);
    const [block] = await mine();
    const height = await heightOf(block!);
    await mine(29);
    const cursorBefore = height + 29n;
    while ((await watcher.poll()).to < cursorBefore);
    assert.equal(await status(o), 'initiated');

    await ltc.rpc.call('invalidateblock', [block]);
    assert.equal(BigInt(await ltc.rpc.getBlockCount()), height - 1n);
    // The funding spent a coinbase output that the shorter chain has not matured: the node dropped it.
    assert.equal((await ltc.rpc.call<string[]>('getrawmempool')).includes(txid), false);
    const undone = await watcher.poll();
    assert.deepEqual(undone.reorg, { ancestor: height - 1n, previousCursor: cursorBefore, beyondWindow: true });
    const swap = await source(o);
    assert.deepEqual([swap.initiateTxHash, swap.initiateBlockNumber, swap.filledAmount, swap.currentConfirmations], ['', '0', '0', 0]);
    assert.equal(await status(o), 'created', 'back to waiting for its funding');
    assert.equal((await listChainHeights(store.db)).get(CHAIN), height - 1n);

    await ltc.rpc.call('reconsiderblock', [block]);
    while ((await watcher.poll()).to < cursorBefore);
    assert.equal(await status(o), 'initiated');
    assert.equal((await source(o)).initiateTxHash, txid);
  });

  test('REORG with the funding double-spent: detected while back in the mempool, then nothing once a block mines a conflicting transaction', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    const txid = await fund(o.address, AMOUNT);
    const [block] = await mine();
    await watcher.poll();
    assert.equal(await status(o), 'initiated');

    await ltc.rpc.call('invalidateblock', [block]);
    await watcher.poll();
    assert.equal((await source(o)).initiateTxHash, txid);
    assert.equal(await status(o), 'initiate_detected');

    // The funding's inputs paid to the node's wallet instead, mined straight into a block: Litecoin
    // Core relays no replacements (-mempoolreplacement is off), but a block may hold the conflict,
    // and the node then evicts the funding from its mempool.
    type Tx = { vin: Array<{ txid: string; vout: number }>; vout: Array<{ value: number }> };
    const funding = await ltc.rpc.call<Tx>('getrawtransaction', [txid, true]);
    let inputs = 0n;
    for (const input of funding.vin) {
      inputs += BigInt(Math.round((await ltc.rpc.call<Tx>('getrawtransaction', [input.txid, true])).vout[input.vout]!.value * 1e8));
    }
    const raw = await ltc.rpc.call<string>('createrawtransaction', [
      funding.vin.map((i) => ({ txid: i.txid, vout: i.vout })),
      { [await nodeAddress()]: coins(inputs - 100_000n) },
    ]);
    const signed = await ltc.rpc.call<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [raw]);
    assert.ok(signed.complete);
    await ltc.rpc.call('generateblock', [await nodeAddress(), [signed.hex]]);
    assert.deepEqual(await ltc.rpc.call<string[]>('getrawmempool'), []);

    const dropped = await watcher.poll();
    assert.deepEqual(dropped.mempool?.dropped, [txid]);
    let swap = await source(o);
    assert.deepEqual([swap.initiateTxHash, swap.filledAmount, swap.initiateBlockNumber], ['', '0', '0']);
    assert.equal(await status(o), 'created');
    assert.deepEqual(await utxosOf(store.db, CHAIN, o.address), []);
    await mine(2);
    await watcher.poll();
    swap = await source(o);
    assert.deepEqual([swap.initiateTxHash, swap.filledAmount], ['', '0']);
  });

  test('REORG of a redeem: back to redeem detected with the redeem in the mempool; reconsiderblock restores the mined redeem', async (t) => {
    if (!(await setup(t))) return;
    const o = await createOrder();
    await fund(o.address, AMOUNT);
    const [fundBlock] = await mine();
    await watcher.poll();
    const redeem = await spendHtlc(o, 'redeem');
    const [redeemBlock] = await mine();
    await watcher.poll();
    assert.equal((await source(o)).redeemBlockNumber, (await heightOf(redeemBlock!)).toString());

    await ltc.rpc.call('invalidateblock', [redeemBlock]);
    await watcher.poll();
    let swap = await source(o);
    assert.deepEqual([swap.redeemTxHash, swap.redeemBlockNumber, swap.redeemTimestamp, swap.secret], [redeem, '0', null, hex.encode(o.secret)]);
    assert.equal(swap.initiateBlockNumber, (await heightOf(fundBlock!)).toString(), 'the funding below the ancestor stays');
    assert.deepEqual([(await htlcOutput(o)).spentTxid, (await htlcOutput(o)).spentBlockNumber], [redeem, null]);
    assert.equal(await status(o), 'redeem_detected');

    await ltc.rpc.call('reconsiderblock', [redeemBlock]);
    await watcher.poll();
    swap = await source(o);
    assert.equal(swap.redeemBlockNumber, (await heightOf(redeemBlock!)).toString());
    assert.equal((await htlcOutput(o)).spentBlockNumber, await heightOf(redeemBlock!));
  });

  test('wallet outputs are recorded, read back as unspent coins, and their spends recorded', async (t) => {
    if (!(await setup(t))) return;
    const txid = await fund(wallet.address, 5_000_000n);
    const seen = await watcher.poll();
    assert.deepEqual(seen.received.map((u) => [u.txid, u.address]), [[txid, wallet.address]]);
    const [block] = await mine();
    await watcher.poll();
    const [coin, ...others] = await utxosOf(store.db, CHAIN, wallet.address, { unspent: true });
    assert.ok(coin);
    assert.equal(others.length, 0);
    assert.deepEqual([coin.txid, coin.value, coin.blockNumber, coin.script], [txid, 5_000_000n, await heightOf(block!), hex.encode(wallet.script)]);

    const tx = new Transaction();
    tx.addInput({ txid: coin.txid, index: coin.vout, witnessUtxo: { script: wallet.script, amount: coin.value }, tapInternalKey: wallet.tapInternalKey });
    tx.addOutputAddress(await nodeAddress(), coin.value - FEE, NETWORK);
    tx.sign(walletKey);
    tx.finalize();
    const spend = await ltc.rpc.sendRawTransaction(tx.hex);
    const spent = await watcher.poll();
    assert.deepEqual(spent.spent.map((s) => [s.txid, s.spender]), [[txid, spend]]);
    assert.deepEqual(spent.events, [], 'a wallet spend is no swap event');
    assert.deepEqual(await utxosOf(store.db, CHAIN, wallet.address, { unspent: true }), []);
    const [spendBlock] = await mine();
    await watcher.poll();
    const [recorded] = await utxosOf(store.db, CHAIN, wallet.address);
    assert.deepEqual([recorded?.spentTxid, recorded?.spentBlockNumber], [spend, await heightOf(spendBlock!)]);
  });

  test("a registered solver's wallet: outputs paid before it proved its key are read once from the UTXO set, later ones from blocks; a revoked solver's is not watched", async (t) => {
    if (!(await setup(t))) return;
    const maker = schnorr.utils.randomSecretKey();
    const makerWallet = p2tr(schnorr.getPublicKey(maker), undefined, NETWORK).address;
    const revokedKey = schnorr.utils.randomSecretKey();
    const revokedWallet = p2tr(schnorr.getPublicKey(revokedKey), undefined, NETWORK).address;
    const before = await fund(makerWallet, 3_000_000n);
    await fund(revokedWallet, 1_000_000n);
    await mine();
    await watcher.poll();
    assert.deepEqual(await utxosOf(store.db, CHAIN, makerWallet), [], 'not watched yet');

    for (const [id, key] of [['ltc-maker', maker], ['ltc-revoked', revokedKey]] as const) {
      await registerSolver(store.db, { id, name: id });
      await setSolverAddress(store.db, { solverId: id, chain: CHAIN, address: xOnly(key), proof: 'signed' });
    }
    await revokeSolver(store.db, 'ltc-revoked');
    const scans = calls.filter((c) => c === 'scantxoutset').length;
    await watcher.poll();
    assert.equal(calls.filter((c) => c === 'scantxoutset').length, scans + 1, 'one scan for the new wallet');
    assert.deepEqual(scanned.at(-1), `addr(${makerWallet})`);
    const [old] = await utxosOf(store.db, CHAIN, makerWallet, { unspent: true });
    assert.deepEqual([old?.txid, old?.value], [before, 3_000_000n]);
    assert.ok(old?.blockNumber !== null && old?.blockTime !== null, 'recorded as mined, with its block');
    assert.equal(await confirmedBalance(store.db, CHAIN, makerWallet), 3_000_000n);
    assert.deepEqual(await utxosOf(store.db, CHAIN, revokedWallet), [], "a revoked solver's wallet is not watched");

    const after = await fund(makerWallet, 2_000_000n);
    await mine();
    await watcher.poll();
    await watcher.poll();
    assert.equal(calls.filter((c) => c === 'scantxoutset').length, scans + 1, 'scanned once');
    assert.equal(await confirmedBalance(store.db, CHAIN, makerWallet), 5_000_000n);
    assert.ok((await utxosOf(store.db, CHAIN, makerWallet)).some((u) => u.txid === after));
    const scannedBefore = scanned.length;
    const restarted = newWatcher();
    await restarted.poll();
    assert.ok(!scanned.slice(scannedBefore).includes(`addr(${makerWallet})`), 'after a restart a wallet with recorded outputs is not scanned again');
    assert.equal(await confirmedBalance(store.db, CHAIN, makerWallet), 5_000_000n);
    watcher = restarted;
  });

  test('restart: a new watcher resumes from the cursor without double counting; the same blocks scanned again change nothing', async (t) => {
    if (!(await setup(t))) return;
    await mine();
    await watcher.poll();
    const before = await allRows();
    const cursor = BigInt(await ltc.rpc.getBlockCount());

    const o = await createOrder();
    const txid = await fund(o.address, AMOUNT);
    const restarted = newWatcher();
    const resumed = await restarted.poll();
    assert.equal(resumed.from, cursor + 1n, 'from the cursor, not the start block');
    assert.ok(resumed.from > resumed.to);
    assert.deepEqual(resumed.received.map((u) => u.txid), [txid], 'the new order is indexed; the old outputs are not counted again');
    assert.equal((await source(o)).filledAmount, AMOUNT.toString());
    await mine();
    await restarted.poll();
    assert.equal((await source(o)).filledAmount, AMOUNT.toString());
    watcher = restarted;

    const settled = await allRows();
    await store.db.deleteFrom('watcher_cursors').execute();
    await store.db.deleteFrom('watched_blocks').execute();
    const rescan = newWatcher({ startBlock: startHeight });
    let result: BitcoinPollResult;
    let changed = 0;
    do {
      result = await rescan.poll();
      changed += result.changed;
    } while (result.to < result.head);
    assert.equal(changed, 0);
    assert.deepEqual(await allRows(), settled);
    assert.ok(settled.utxos.length > before.utxos.length);
    watcher = rescan;
  });

  test('an order created, paid and mined while a poll runs (after its first refresh, before it reads the block) is recorded from that block', async (t) => {
    if (!(await setup(t))) return;
    await watcher.poll(); // caught up
    let o: LtcOrder | undefined;
    let txid = '';
    // The node answers the head only once the order exists and its payment is mined: as a client
    // quick enough (or a node slow enough) would make it.
    const racing: BitcoinRpcClient = {
      call: async <T>(method: string, params?: unknown[]) => {
        if (method === 'getblockcount' && !o) {
          o = await createOrder();
          txid = await fund(o.address, AMOUNT);
          await mine();
        }
        return rpc.call<T>(method, params);
      },
    };
    const cursorWatcher = new BitcoinWatcher(store.db, chain, racing, { walletAddresses: [wallet.address] });
    const result = await cursorWatcher.poll();
    assert.ok(o, 'the order was created during the poll');
    assert.deepEqual(
      result.received.filter((u) => u.address === o!.address).map((u) => [u.txid, u.value, u.blockNumber !== null]),
      [[txid, AMOUNT, true]],
      'the payment is recorded from the block read in the same poll',
    );
    assert.equal((await source(o)).initiateTxHash, txid);
  });

  test('the cost of a block does not grow with the orders: the same RPC calls and statements with 10 and 500 more orders', async (t) => {
    if (!(await setup(t))) return;
    const blockWith = async (orders: number) => {
      for (let i = 0; i < orders; i++) await insertOrder(store.db, ltcOrder().order);
      const o = await createOrder();
      await watcher.poll(); // the index takes in the new orders
      await fund(o.address, AMOUNT);
      await fund(await nodeAddress(), 300_000n);
      await mine();
      calls.length = 0;
      statements.count = 0;
      const result = await watcher.poll();
      assert.equal(result.to - result.from, 0n);
      assert.equal(result.received.length, 1);
      return { calls: [...calls].sort(), statements: statements.count };
    };
    const few = await blockWith(10);
    const many = await blockWith(500);
    assert.deepEqual(many, few);
    assert.ok(watcher.watchedScripts > 500);
    assert.ok(few.calls.filter((m) => m === 'getblock').length === 1, 'each block is read once');
  });

  test("the service's watcher (the chain runtime's worker, run under its lease) records a funding on its own, and a failing node's errors go to onError while it keeps polling", async (t) => {
    if (!(await setup(t))) return;
    const log: ParentLog = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
    const runWatcher = (access: { rpc_url: string; rpc_cookie_file?: string }, onError: (error: unknown) => void) => {
      // As src/service.ts connects a chain without keys; of its workers, only the watcher runs here.
      const runtime = chainAdapter(chain)!.connect!({ chain, registry: localnetRegistry(), access, db: store.db, clock: systemClock, secrets: new SecretBox(randomBytes(32)), instance: 'watcher-test', log });
      const worker = runtime.workers.find((w) => w.lease === `watcher:${CHAIN}`);
      assert.ok(worker, 'the runtime has a watcher worker');
      return runWorker(store.db, worker, { holder: 'watcher-test', onError });
    };
    const errors: unknown[] = [];
    const loop = runWatcher({ rpc_url: ltc.rpcUrl, rpc_cookie_file: ltc.cookieFile }, (e) => errors.push(e));
    try {
      const o = await createOrder();
      const txid = await fund(o.address, AMOUNT);
      await waitFor(async () => (await source(o)).initiateTxHash !== '', 10_000, 'the worker to record the funding');
      assert.equal((await source(o)).initiateTxHash, txid);
    } finally {
      await loop.stop();
    }
    assert.equal(errors.length, 0, String(errors[0]));

    const failures: unknown[] = [];
    const broken = runWatcher({ rpc_url: 'http://127.0.0.1:1' }, (e) => failures.push(e));
    try {
      await waitFor(() => failures.length >= 2, 20_000, 'two failed polls');
    } finally {
      await broken.stop();
    }
  });
});
