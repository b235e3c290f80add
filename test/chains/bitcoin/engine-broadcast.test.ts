// Every Bitcoin-family broadcast goes through the transaction engine, against a real litecoind: the
// solver only writes jobs (a funding, its CPFP child), and the engine sends them, a funding's unmined
// parents first. Safety rule 2 is checked there alone. A funding whose inputs were spent elsewhere is
// funded again under a new job while its deadline allows, never beside a live one.
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
import { engineWorkers } from '../../../src/engine/engine.ts';
import { runWorker } from '../../../src/lease-loop.ts';
import { BitcoinSolverChain } from '../../../src/chains/bitcoin/solver-chain.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder, type OrderRecord } from '../../../src/store/orders.ts';
import { findJob } from '../../../src/store/relayer-jobs.ts';
import { sql } from 'kysely';
import { fundingAttempts } from '../../../src/chains/bitcoin/store/jobs.ts';
import { buildWalletTx } from '../../../src/chains/bitcoin/wallet-tx.ts';
import { utxosOf } from '../../../src/chains/bitcoin/store/utxos.ts';
import { MovableClock } from '../../helpers/clock.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { fundAddress, litecoinNodeForSuite, syncWatcher } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';

const IN_AN_HOUR = new Date(Date.now() + 3_600_000);
const CHAIN = 'litecoin_localnet';
const NETWORK = 'litecoin_regtest';
const AMOUNT = 10_000_000n;

let node: LitecoinNode | undefined;
before(async () => {
  node = await litecoinNodeForSuite();
});
after(() => node?.stop());

describeEachStore('Bitcoin-family broadcasts through the engine', (kind) => {
  let store: Store;
  let appId: string;
  const registry = localnetRegistry();
  const chain = registry.chain(CHAIN)!;

  before(async () => {
    if (!node) return;
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db)).app.id;
  });
  after(() => store?.close());

  const mempool = () => node!.rpc.call<string[]>('getrawmempool');
  /** The broadcast deadline of the order's `n`th funding job. */
  const deadlineOf = async (orderId: string, n: number) => (await fundingAttempts(store.db, CHAIN, orderId))[n - 1]?.broadcastBy;

  /** A fresh solver wallet holding one confirmed coin, its watcher, and a way to make orders it funds. */
  async function solverWallet() {
    const key = schnorr.utils.randomSecretKey();
    const solver = new BitcoinSolverChain(chain, store.db, node!.rpc, key, new SecretBox(randomBytes(32)));
    const watcher = new BitcoinWatcher(store.db, chain, node!.rpc, { startBlock: BigInt(await node!.rpc.getBlockCount()) + 1n, walletAddresses: [solver.wallet] });
    await fundAddress(node!, solver.wallet, 20n * AMOUNT);
    await node!.mine(1);
    await syncWatcher(watcher);
    const order = async (): Promise<OrderRecord> => {
      const base = sampleOrder(appId);
      const redeemer = hex.encode(schnorr.getPublicKey(schnorr.utils.randomSecretKey()));
      const terms = { initiator: xOnlyPublicKeyOf(key), redeemer, secretHash: base.secretHash, timelock: 144n };
      await insertOrder(store.db, {
        ...base,
        destination: { ...base.destination, swapId: htlcAddress(terms, NETWORK), chain: CHAIN, asset: `${CHAIN}:ltc`, initiator: terms.initiator, redeemer, delegate: redeemer, timelock: 144n, amount: AMOUNT },
      });
      return (await findOrder(store.db, base.id))!;
    };
    return { key, solver, watcher, order };
  }

  test('the solver only writes a funding; the engine broadcasts it, sending its unmined parent first', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { solver, order } = await solverWallet();
    const [first, second] = [await order(), await order()];
    await solver.fundDestination(first, IN_AN_HOUR);
    await solver.fundDestination(second, IN_AN_HOUR);
    const parent = (await findJob(store.db, `${first.id}:fund`))!;
    const child = (await findJob(store.db, `${second.id}:fund`))!;
    const spends = (await node.rpc.call<{ vin: Array<{ txid: string }> }>('decoderawtransaction', [(await sql<{ raw_tx: string }>`select raw_tx from relayer_jobs where id = ${child.id}`.execute(store.db)).rows[0]!.raw_tx])).vin;
    assert.ok(spends.some((i) => i.txid === parent.txHash), "the second funding spends the first one's change");
    assert.ok(await solver.destinationFunded(first), 'a written funding counts as funded');
    let pool = await mempool();
    assert.ok(!pool.includes(parent.txHash) && !pool.includes(child.txHash), 'with no engine running, nothing reaches the node');

    // The parent's job is not due: only the child's broadcast can send it.
    await sql`update relayer_jobs set run_after = now() + interval '1 hour' where id = ${parent.id}`.execute(store.db);
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
    await engine.tick();
    pool = await mempool();
    assert.ok(pool.includes(parent.txHash) && pool.includes(child.txHash), 'the engine sent the funding, its parent first');
    const sent = (await findJob(store.db, `${second.id}:fund`))!;
    assert.equal(sent.status, 'submitted');
    assert.equal(sent.attempts, 1, 'the refusal for its missing parent cost no attempt');
    await node.mine(1);
  });

  test('safety rule 2: a funding written before its deadline whose engine pass comes after it is never sent, nor is it sent as a later funding\'s parent', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { solver, order } = await solverWallet();
    const clock = new MovableClock();
    const [first, second] = [await order(), await order()];
    await solver.fundDestination(first, new Date(clock.now() + 60_000));
    await solver.fundDestination(second, IN_AN_HOUR);
    const parent = (await findJob(store.db, `${first.id}:fund`))!;
    const child = (await findJob(store.db, `${second.id}:fund`))!;
    await sql`update relayer_jobs set run_after = now() + interval '1 hour' where id = ${parent.id}`.execute(store.db);
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'test', recheckMs: 0, retryMs: 0, clock });
    clock.advance(60_000);
    await engine.tick();
    let pool = await mempool();
    assert.ok(!pool.includes(parent.txHash), 'the parent past its deadline is not sent for its child');
    assert.ok(!pool.includes(child.txHash));
    const waiting = (await findJob(store.db, `${second.id}:fund`))!;
    assert.equal(waiting.status, 'queued', 'the child waits while its parent job is unsettled');
    assert.equal(waiting.attempts, 0, 'without an attempt');

    await sql`update relayer_jobs set run_after = now() where id = ${parent.id}`.execute(store.db);
    await engine.tick();
    const late = (await findJob(store.db, `${first.id}:fund`))!;
    assert.equal(late.status, 'failed');
    assert.match(late.lastError, /broadcast deadline passed \(safety rule 2\)/);
    pool = await mempool();
    assert.ok(!pool.includes(parent.txHash), 'never sent');
    assert.ok(await solver.destinationFunded(first), 'a funding failed by rule 2 is not funded again');
    await solver.fundDestination(first, IN_AN_HOUR);
    assert.equal(await findJob(store.db, `${first.id}:fund:2`), undefined);
  });

  test('a funding whose inputs were spent elsewhere is funded again under a new job while its deadline allows, never beside a live one, and not after it', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { key, solver, watcher, order } = await solverWallet();
    const clock = new MovableClock();
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'test', recheckMs: 0, retryMs: 0, clock });
    const other = hex.encode(schnorr.getPublicKey(schnorr.utils.randomSecretKey()));
    const elsewhere = htlcAddress({ initiator: other, redeemer: other, secretHash: hex.encode(randomBytes(32)), timelock: 10n }, NETWORK);

    /** Writes the order's funding, then spends its inputs in a mined transaction of the wallet's key that is not it. */
    const fundThenSpendElsewhere = async (o: OrderRecord, fundBy: Date) => {
      await solver.fundDestination(o, fundBy);
      const job = (await findJob(store.db, `${o.id}:fund`))!;
      assert.ok(await solver.destinationFunded(o));
      await solver.fundDestination(o, fundBy);
      assert.equal(await findJob(store.db, `${o.id}:fund:2`), undefined, 'no second funding beside a live one');
      const inputs = (job.payload as { inputs: Array<{ txid: string; vout: number }> }).inputs;
      const coins = (await utxosOf(store.db, CHAIN, solver.wallet, { unspent: true })).filter((u) => inputs.some((i) => i.txid === u.txid && i.vout === u.vout));
      const spend = buildWalletTx({ privateKey: key, network: NETWORK, utxos: coins, to: { address: elsewhere, amount: 1_000_000n }, feeRate: 2n, changeAddress: solver.wallet });
      await node!.rpc.sendRawTransaction(spend.hex);
      await node!.mine(1);
      await syncWatcher(watcher);
      await engine.tick();
      const failed = (await findJob(store.db, `${o.id}:fund`))!;
      assert.equal(failed.status, 'failed');
      assert.match(failed.lastError, /another transaction spent its inputs/);
      assert.ok(!(await mempool()).includes(job.txHash));
    };

    const o = await order();
    const fundBy = new Date(clock.now() + 600_000);
    await fundThenSpendElsewhere(o, fundBy);
    assert.equal(await solver.destinationFunded(o), false, 'its funding can never be mined: the order is to be funded again');
    await solver.fundDestination(o, new Date(clock.now() + 3_600_000));
    const again = (await findJob(store.db, `${o.id}:fund:2`))!;
    assert.ok(again, 'funded again under a new key');
    assert.equal((await deadlineOf(o.id, 2))?.getTime(), fundBy.getTime(), 'keeping the first deadline, the earlier');
    assert.ok(await solver.destinationFunded(o));
    await solver.fundDestination(o, new Date(clock.now() + 3_600_000));
    assert.equal(await findJob(store.db, `${o.id}:fund:3`), undefined, 'never two live fundings');
    await engine.tick();
    assert.ok((await mempool()).includes(again.txHash), 'the engine sends the new funding');
    await node.mine(1);
    await syncWatcher(watcher);
    await engine.tick();
    assert.equal((await findJob(store.db, `${o.id}:fund:2`))!.status, 'confirmed');
    const htlc = await utxosOf(store.db, CHAIN, o.destination.swapId);
    assert.deepEqual(htlc.map((u) => u.value), [AMOUNT], 'the HTLC is funded once');

    // The same, with the deadline passed before the new funding's pass: it is written, never sent.
    const late = await order();
    const lateBy = new Date(clock.now() + 60_000);
    await fundThenSpendElsewhere(late, lateBy);
    clock.advance(60_000);
    await solver.fundDestination(late, new Date(clock.now() + 3_600_000));
    const lateAgain = (await findJob(store.db, `${late.id}:fund:2`))!;
    assert.equal((await deadlineOf(late.id, 2))?.getTime(), lateBy.getTime());
    await engine.tick();
    assert.ok(!(await mempool()).includes(lateAgain.txHash), 'not sent after the deadline');
    const refused = (await findJob(store.db, `${late.id}:fund:2`))!;
    assert.equal(refused.status, 'failed');
    assert.match(refused.lastError, /\(safety rule 2\)/);
    assert.ok(await solver.destinationFunded(late), 'and not funded a third time');
    await solver.fundDestination(late, new Date(clock.now() + 3_600_000));
    assert.equal(await findJob(store.db, `${late.id}:fund:3`), undefined);
  });

  test('a funding that failed with its inputs unspent (it might still be mined somewhere) is not funded again', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { solver, order } = await solverWallet();
    const o = await order();
    await solver.fundDestination(o, IN_AN_HOUR);
    await sql`update relayer_jobs set status = 'failed', last_error = 'broadcast refused: mempool full' where idempotency_key = ${`${o.id}:fund`}`.execute(store.db);
    assert.ok(await solver.destinationFunded(o));
    await solver.fundDestination(o, IN_AN_HOUR);
    assert.equal(await findJob(store.db, `${o.id}:fund:2`), undefined);
  });

  test('diagnostic: the delay from writing a funding to its broadcast, with the engine woken by job_queued', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { solver, order } = await solverWallet();
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'diag' });
    const loops = engineWorkers(engine).map((w) => runWorker(store.db, w, { holder: 'diag', onError: (err) => assert.fail(String(err)) }));
    const unlisten = await store.listen('job_queued', { message: (name) => name === engine.wakeOnJob && loops.forEach((l) => l.wake()), connected: () => undefined });
    try {
      // Let the loops take their leases and go idle first.
      await new Promise((r) => setTimeout(r, 500));
      const delays: number[] = [];
      const calls: number[] = [];
      for (let i = 0; i < 5; i++) {
        const o = await order();
        const started = performance.now();
        await solver.fundDestination(o, IN_AN_HOUR);
        calls.push(Math.round(performance.now() - started));
        const txid = (await findJob(store.db, `${o.id}:fund`))!.txHash;
        while (!(await mempool()).includes(txid)) {
          assert.ok(performance.now() - started < 15_000, 'broadcast within 15 s');
          await new Promise((r) => setTimeout(r, 2));
        }
        delays.push(Math.round(performance.now() - started));
      }
      t.diagnostic(`${kind}: fundDestination call to the funding in the mempool, ms: ${delays.join(', ')} (the call itself: ${calls.join(', ')})`);
    } finally {
      await unlisten();
      await Promise.all(loops.map((l) => l.stop()));
      await node.mine(1);
    }
  });
});
