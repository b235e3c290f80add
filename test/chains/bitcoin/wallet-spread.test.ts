// The solver's Litecoin fundings on a real regtest node, many at once: they build on the wallet's own
// unconfirmed change instead of waiting for blocks, stay under the node's unconfirmed-chain limits
// (25 ancestors, 25 descendants), and fund each HTLC exactly once, however often they are asked.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import { htlcAddress } from '../../../src/chains/bitcoin/htlc.ts';
import { BitcoinWatcher } from '../../../src/chains/bitcoin/watcher.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { bitcoinEngine } from '../../../src/chains/bitcoin/driver.ts';
import { bitcoinJobTx } from '../../../src/chains/bitcoin/store/jobs.ts';
import { BitcoinSolverChain, WALLET_SPREAD } from '../../../src/chains/bitcoin/solver-chain.ts';
import { MEMPOOL_CHAIN_LIMIT } from '../../../src/chains/bitcoin/wallet-coins.ts';
import { utxosOf } from '../../../src/chains/bitcoin/store/utxos.ts';
import { insertOrder, type OrderRecord } from '../../../src/store/orders.ts';
import type { Store } from '../../../src/store/database.ts';
import { localnetRegistry, randomHex32, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { litecoinNodeOrSkip, toCoins } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';

/** A funding deadline (safety rule 2 at broadcast) that these tests never reach. */
const IN_AN_HOUR = new Date(Date.now() + 3_600_000);

const registry = localnetRegistry();
const chain = registry.chain('litecoin_localnet')!;
const SOLVER_KEY = hexToBytes(privateKeyOf(devAccount('solver')).slice(2));
const AMOUNT = 10_000_000n; // 0.1 LTC per HTLC

interface MempoolEntry {
  ancestorcount: number;
  descendantcount: number;
}
interface RawTx {
  txid: string;
  confirmations?: number;
  vout: Array<{ value: number; scriptPubKey: { address?: string; addresses?: string[] } }>;
}

let node: LitecoinNode | undefined;
after(async () => {
  await node?.stop();
});

describeEachStore('solver fundings on Litecoin, many at once', (kind) => {
  let store: Store;
  after(async () => {
    await store?.close();
  });

  test('20 fundings from one confirmed output, then 40 more after one block: each HTLC funded once, chains under the limits', async (t) => {
    node ??= await litecoinNodeOrSkip(t);
    if (!node) return;
    const rpc = node.rpc;
    store = await openTestStore(kind);
    const { app } = await seedBasics(store.db, registry);
    const solver = new BitcoinSolverChain(chain, store.db, rpc, SOLVER_KEY, new SecretBox(randomBytes(32)));
    const watcher = new BitcoinWatcher(store.db, chain, rpc, { walletAddresses: [solver.wallet], startBlock: BigInt(await rpc.getBlockCount()) + 1n });
    const relayer = bitcoinEngine({ db: store.db, chain: chain.key, rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
    // One confirmed output: the worst start, every funding of the first burst descends from one transaction.
    await rpc.call('sendtoaddress', [solver.wallet, toCoins(100n * AMOUNT)]);
    await node.mine(1);
    await watcher.poll();

    const orders = async (n: number): Promise<OrderRecord[]> => {
      const made: OrderRecord[] = [];
      for (let i = 0; i < n; i++) {
        const secretHash = randomHex32();
        const redeemer = bytesToHex(schnorr.getPublicKey(schnorr.utils.randomSecretKey()));
        const order = sampleOrder(app.id, { secretHash });
        const destination = {
          ...order.destination,
          chain: chain.key,
          asset: 'litecoin_localnet:ltc',
          initiator: solver.xOnly,
          redeemer,
          delegate: redeemer,
          timelock: 12n,
          amount: AMOUNT,
          swapId: htlcAddress({ initiator: solver.xOnly, redeemer, secretHash, timelock: 12n }, chain.network),
        };
        await insertOrder(store.db, { ...order, destination });
        made.push({ ...order, destination } as unknown as OrderRecord);
      }
      return made;
    };

    /** All fundings at once (16 in flight), twice (a repeated pass must not pay again), then the watcher and the broadcast queue. */
    const burst = async (batch: OrderRecord[]) => {
      const tip = await rpc.getBlockCount();
      for (let round = 0; round < 2; round++) {
        // As the solver's pass runs them: 16 at a time (litecoind queues 16 RPC requests at most).
        const failures: unknown[] = [];
        let next = 0;
        const worker = async () => {
          while (next < batch.length) await solver.fundDestination(batch[next++]!, IN_AN_HOUR).catch((err: unknown) => failures.push(err));
        };
        await Promise.all(Array.from({ length: 16 }, worker));
        assert.deepEqual(failures, [], 'no funding failed');
        await watcher.poll();
        await relayer.tick();
      }
      assert.equal(await rpc.getBlockCount(), tip, 'no block was needed');
      const mempool = await rpc.call<Record<string, MempoolEntry>>('getrawmempool', [true]);
      const entries = Object.values(mempool);
      assert.ok(Math.max(...entries.map((e) => e.ancestorcount)) <= MEMPOOL_CHAIN_LIMIT);
      assert.ok(Math.max(...entries.map((e) => e.descendantcount)) <= MEMPOOL_CHAIN_LIMIT);
      // Each HTLC is paid by exactly one output, of exactly its amount, in the job's transaction.
      const paid = new Map<string, bigint[]>();
      for (const txid of Object.keys(mempool)) {
        const tx = await rpc.call<RawTx>('getrawtransaction', [txid, true]);
        for (const out of tx.vout) {
          const address = out.scriptPubKey.address ?? out.scriptPubKey.addresses?.[0] ?? '';
          paid.set(address, [...(paid.get(address) ?? []), BigInt(Math.round(out.value * 1e8))]);
        }
      }
      for (const o of batch) {
        assert.deepEqual(paid.get(o.destination.swapId), [AMOUNT], `HTLC of order ${o.id}`);
        const job = await bitcoinJobTx(store.db, `${o.id}:fund`);
        assert.ok(job && mempool[job.txid], `the job of order ${o.id} is in the mempool`);
      }
      await node!.mine(1);
      assert.deepEqual(await rpc.call<string[]>('getrawmempool'), [], 'one block mines them all');
      await watcher.poll();
      await relayer.tick();
      return entries;
    };

    const first = await burst(await orders(20));
    assert.ok(first.length >= 20);
    // The first funding split its change: the wallet is spread over several confirmed outputs now.
    const spread = (await utxosOf(store.db, chain.key, solver.wallet, { unspent: true })).filter((u) => u.blockNumber !== null);
    assert.ok(spread.length >= WALLET_SPREAD, `the wallet holds ${spread.length} confirmed outputs`);

    // More fundings than one unconfirmed chain could carry (25), all in one block interval.
    const second = await burst(await orders(40));
    assert.ok(second.length >= 40);
  });
});
