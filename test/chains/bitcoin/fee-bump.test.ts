// Fee bumping of stuck Bitcoin-family transactions against a real litecoind, through the transaction
// engine (it asks the driver on every pass; the driver counts blocks): a solver funding kept out of
// blocks is bumped by one CPFP child from its change, and the funding reaches the chain once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { hex } from '@scure/base';
import { xOnlyPublicKeyOf } from '../../../src/chains/bitcoin/address.ts';
import { htlcAddress } from '../../../src/chains/bitcoin/htlc.ts';
import { BitcoinWatcher } from '../../../src/chains/bitcoin/watcher.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { bitcoinEngine } from '../../../src/chains/bitcoin/driver.ts';
import type { TxEngine } from '../../../src/engine/engine.ts';
import { BitcoinSolverChain } from '../../../src/chains/bitcoin/solver-chain.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder } from '../../../src/store/orders.ts';
import { findJob } from '../../../src/store/relayer-jobs.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { fundAddress, litecoinNodeForSuite, syncWatcher } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';

/** A funding deadline (safety rule 2 at broadcast) that these tests never reach. */
const IN_AN_HOUR = new Date(Date.now() + 3_600_000);

const CHAIN = 'litecoin_localnet';
const NETWORK = 'litecoin_regtest';
const AMOUNT = 10_000_000n;
const WALLET_START = 50_000_000n;

let node: LitecoinNode | undefined;
before(async () => {
  node = await litecoinNodeForSuite();
});
after(() => node?.stop());

interface RawTx {
  txid: string;
  confirmations?: number;
  vin: Array<{ txid: string; vout: number }>;
  vout: Array<{ n: number; value: number; scriptPubKey?: { address?: string; addresses?: string[] } }>;
}

/** The coins the chain's UTXO set holds for `address`, from the node itself. */
async function onChain(n: LitecoinNode, address: string): Promise<{ total: bigint; count: number }> {
  const scan = await n.rpc.call<{ unspents: Array<{ amount: number }> }>('scantxoutset', ['start', [`addr(${address})`]]);
  return { total: scan.unspents.reduce((s, u) => s + BigInt(Math.round(u.amount * 1e8)), 0n), count: scan.unspents.length };
}

describeEachStore('Bitcoin-family fee bumping', (kind) => {
  let store: Store;
  let ltc: LitecoinNode;
  let watcher: BitcoinWatcher;
  let relayer: TxEngine;
  let appId: string;

  before(async () => {
    if (!node) return;
    ltc = node;
    await ltc.mine(1);
    store = await openTestStore(kind);
    const { app } = await seedBasics(store.db);
    appId = app.id;
  });
  after(() => store?.close());

  const sync = () => syncWatcher(watcher);
  const mempool = () => ltc.rpc.call<string[]>('getrawmempool');
  const rawTx = (txid: string) => ltc.rpc.call<RawTx>('getrawtransaction', [txid, true]);
  /** Mines blocks holding none of the mempool's transactions. */
  const mineEmpty = async (blocks: number) => {
    const to = await ltc.rpc.call<string>('getnewaddress');
    for (let i = 0; i < blocks; i++) await ltc.rpc.call('generateblock', [to, []]);
  };

  /** A fresh solver wallet with one confirmed coin, and an order whose Litecoin destination it funds; the engine bumps from that wallet. */
  async function fundedSolver(bump: { afterBlocks: number; maxRounds?: number } = { afterBlocks: 2 }) {
    const key = schnorr.utils.randomSecretKey();
    const secrets = new SecretBox(randomBytes(32));
    const registry = localnetRegistry();
    const solver = new BitcoinSolverChain(registry.chain(CHAIN)!, store.db, ltc.rpc, key, secrets);
    watcher = new BitcoinWatcher(store.db, registry.chain(CHAIN)!, ltc.rpc, { startBlock: BigInt(await ltc.rpc.getBlockCount()) + 1n, walletAddresses: [solver.wallet] });
    relayer = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'test', recheckMs: 0, retryMs: 0, bumper: solver.feeBumper(bump) });
    await fundAddress(ltc, solver.wallet, WALLET_START);
    await ltc.mine(1);
    await sync();
    const base = sampleOrder(appId);
    const redeemer = hex.encode(schnorr.getPublicKey(schnorr.utils.randomSecretKey()));
    const terms = { initiator: xOnlyPublicKeyOf(key), redeemer, secretHash: base.secretHash, timelock: 144n };
    const htlc = htlcAddress(terms, NETWORK);
    await insertOrder(store.db, {
      ...base,
      destination: { ...base.destination, swapId: htlc, chain: CHAIN, asset: `${CHAIN}:ltc`, initiator: terms.initiator, redeemer, delegate: redeemer, timelock: 144n, amount: AMOUNT },
    });
    const order = (await findOrder(store.db, base.id))!;
    return { solver, order, htlc, bump };
  }

  test('a stuck funding is bumped by one CPFP child from its change; the HTLC is funded once and the wallet debited once', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { solver, order, htlc } = await fundedSolver();
    await solver.fundDestination(order, IN_AN_HOUR);
    const fundKey = `${order.id}:fund`;
    const parent = (await findJob(store.db, fundKey))!.txHash;
    assert.ok(!(await mempool()).includes(parent), 'the solver only writes the job');
    await relayer.tick();
    assert.ok((await mempool()).includes(parent), 'the engine broadcasts the funding');
    await sync();
    await relayer.tick();
    assert.equal(await findJob(store.db, `${fundKey}:cpfp:1`), undefined, 'a fresh funding paying the estimate is left alone');

    const before = (await ltc.rpc.mempoolEntry(parent))!;
    await ltc.rpc.call('prioritisetransaction', [parent, 0, -Number(before.fee)]);
    assert.equal((await ltc.rpc.mempoolEntry(parent))!.modifiedFee, 0n);
    await ltc.mine(2);
    await sync();
    assert.ok((await mempool()).includes(parent), 'the funding with no modified fee stays out of blocks');

    await relayer.tick();
    const childJob = (await findJob(store.db, `${fundKey}:cpfp:1`))!;
    assert.ok(childJob, 'the child is a job');
    assert.ok(!(await mempool()).includes(childJob.txHash), 'the bumper only writes the child');
    await relayer.tick();
    assert.ok((await mempool()).includes(childJob.txHash), "the engine's next pass broadcasts the child");
    const child = await rawTx(childJob.txHash);
    assert.deepEqual(child.vin.map((i) => [i.txid, i.vout]), [[parent, 1]], "the child spends the funding's change");
    const childEntry = (await ltc.rpc.mempoolEntry(child.txid))!;
    assert.ok(childEntry.ancestorFee >= 2n * BigInt(childEntry.ancestorVsize), 'the package pays the estimate (2 sat/vB on regtest)');
    await sync();
    await relayer.tick();
    await relayer.tick();
    assert.equal(await findJob(store.db, `${fundKey}:cpfp:2`), undefined, 'the same round is not bumped twice');

    await ltc.mine(1);
    await sync();
    for (let i = 0; i < 3; i++) await relayer.tick();
    assert.equal((await findJob(store.db, fundKey))!.status, 'confirmed');
    assert.equal((await findJob(store.db, `${fundKey}:cpfp:1`))!.status, 'confirmed');
    assert.equal((await rawTx(parent)).confirmations, 1);
    assert.equal((await rawTx(child.txid)).confirmations, 1);

    const funded = await onChain(ltc, htlc);
    assert.deepEqual(funded, { total: AMOUNT, count: 1 }, 'the HTLC holds one output of the amount');
    assert.equal((await findOrder(store.db, order.id))!.destination.filledAmount, AMOUNT.toString());
    const wallet = await onChain(ltc, solver.wallet);
    assert.equal(wallet.total, WALLET_START - AMOUNT - before.fee - childEntry.fee, 'the wallet paid the amount once, plus the two fees');
    // The child turned one of the funding's change outputs (the solver splits its change) into one of its own.
    const changeOutputs = (await rawTx(parent)).vout.filter((o) => (o.scriptPubKey?.address ?? o.scriptPubKey?.addresses?.[0]) === solver.wallet).length;
    assert.ok(changeOutputs >= 1);
    assert.equal(wallet.count, changeOutputs);
    // Asking the solver again sends nothing new.
    await solver.fundDestination((await findOrder(store.db, order.id))!, IN_AN_HOUR);
    assert.deepEqual(await onChain(ltc, htlc), funded);
  });

  test('a funding left out of blocks with a normal fee is bumped after the threshold, and no more than maxRounds times', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { solver, order, htlc, bump } = await fundedSolver({ afterBlocks: 2, maxRounds: 1 });
    await solver.fundDestination(order, IN_AN_HOUR);
    const fundKey = `${order.id}:fund`;
    const parent = (await findJob(store.db, fundKey))!.txHash;
    await relayer.tick();
    await sync();
    await mineEmpty(1);
    await relayer.tick();
    assert.equal(await findJob(store.db, `${fundKey}:cpfp:1`), undefined, 'one block is below the threshold');
    await mineEmpty(1);
    // Two engines at once (a lease handed over mid-pass) write one child between them.
    const other = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'other', recheckMs: 0, retryMs: 0, bumper: solver.feeBumper(bump) });
    await Promise.all([relayer.tick(), other.tick()]);
    const child = (await findJob(store.db, `${fundKey}:cpfp:1`))!.txHash;
    await Promise.all([relayer.tick(), other.tick()]);
    const spenders = (await mempool()).filter((txid) => txid !== parent);
    assert.deepEqual(spenders, [child], 'one child in the mempool');
    const entry = (await ltc.rpc.mempoolEntry(child))!;
    const parentEntry = (await ltc.rpc.mempoolEntry(parent))!;
    assert.equal(entry.ancestorVsize, parentEntry.vsize + entry.vsize);
    assert.ok(entry.ancestorFee >= 3n * BigInt(entry.ancestorVsize), 'the package rate is raised above the 2 sat/vB it paid');
    await sync();
    await mineEmpty(2);
    await relayer.tick();
    assert.equal(await findJob(store.db, `${fundKey}:cpfp:2`), undefined, 'one round at most');

    await ltc.mine(1);
    await sync();
    for (let i = 0; i < 3; i++) await relayer.tick();
    assert.equal((await findJob(store.db, fundKey))!.status, 'confirmed');
    assert.equal((await findJob(store.db, `${fundKey}:cpfp:1`))!.status, 'confirmed');
    assert.deepEqual(await onChain(ltc, htlc), { total: AMOUNT, count: 1 });
    assert.equal((await onChain(ltc, solver.wallet)).total, WALLET_START - AMOUNT - parentEntry.fee - entry.fee);
  });
});
