// Replace-by-fee of a stuck redeem paying a client (no output of the solver's wallet to bump it from)
// against a real litecoind started with -mempoolreplacement=1 (Litecoin Core relays no replacement by
// default), and settlement accepting whichever of a job's transactions is mined.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { p2wpkh } from '@scure/btc-signer';
import { sql } from 'kysely';
import { xOnlyPublicKeyOf } from '../../../src/chains/bitcoin/address.ts';
import { BitcoinFeeBumper } from '../../../src/chains/bitcoin/fee-bump.ts';
import { saveSignedTx } from '../../../src/store/signed-txs.ts';
import { claimJobs } from '../../../src/store/relayer-jobs.ts';
import { htlcAddress } from '../../../src/chains/bitcoin/htlc.ts';
import { bitcoinNetwork } from '../../../src/chains/bitcoin/network.ts';
import type { TxVersion } from '../../../src/chains/bitcoin/rbf.ts';
import { BitcoinWatcher } from '../../../src/chains/bitcoin/watcher.ts';
import { findLitecoind, startLitecoind, type LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { bitcoinEngine } from '../../../src/chains/bitcoin/driver.ts';
import type { TxEngine } from '../../../src/engine/engine.ts';
import { BitcoinSolverChain } from '../../../src/chains/bitcoin/solver-chain.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder } from '../../../src/store/orders.ts';
import { findJob } from '../../../src/store/relayer-jobs.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { fundAddress, syncWatcher } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';
import { MovableClock } from '../../helpers/clock.ts';

const CHAIN = 'litecoin_localnet';
const NETWORK = 'litecoin_regtest';
const AMOUNT = 10_000_000n;

let node: LitecoinNode | undefined;
before(async () => {
  if (!findLitecoind()) {
    if (process.env.CI) throw new Error('litecoind is not on the PATH');
    console.warn('\n!!! SKIPPED: litecoind is not on the PATH\n');
    return;
  }
  node = await startLitecoind({ extraArgs: ['-mempoolreplacement=1'] });
});
after(() => node?.stop());

async function onChain(n: LitecoinNode, address: string): Promise<bigint[]> {
  const scan = await n.rpc.call<{ unspents: Array<{ amount: number }> }>('scantxoutset', ['start', [`addr(${address})`]]);
  return scan.unspents.map((u) => BigInt(Math.round(u.amount * 1e8)));
}

describeEachStore('Bitcoin-family replace-by-fee', (kind) => {
  let store: Store;
  let ltc: LitecoinNode;
  let appId: string;
  let watcher: BitcoinWatcher;
  let relayer: TxEngine;
  const solverKey = schnorr.utils.randomSecretKey();
  const secrets = new SecretBox(randomBytes(32));
  const registry = localnetRegistry();
  let solver: BitcoinSolverChain;

  before(async () => {
    if (!node) return;
    ltc = node;
    await ltc.mine(1);
    store = await openTestStore(kind);
    ({
      app: { id: appId },
    } = await seedBasics(store.db));
    solver = new BitcoinSolverChain(registry.chain(CHAIN)!, store.db, ltc.rpc, solverKey, secrets);
    relayer = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'test', recheckMs: 0, retryMs: 0 });
  });
  after(() => store?.close());

  const sync = () => syncWatcher(watcher);
  const mempool = () => ltc.rpc.call<string[]>('getrawmempool');

  /** An order whose Litecoin destination HTLC is funded and mined, the client's key held by the service; the solver redeems it for the client. */
  async function redeemedForClient() {
    const clientKey = schnorr.utils.randomSecretKey();
    const delegate = xOnlyPublicKeyOf(clientKey);
    const payout = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), bitcoinNetwork(NETWORK)).address;
    const secret = randomBytes(32);
    const secretHash = createHash('sha256').update(secret).digest('hex');
    const base = sampleOrder(appId, { secretHash, delegateKeyCiphertext: secrets.seal(clientKey) });
    const htlc = htlcAddress({ initiator: xOnlyPublicKeyOf(solverKey), redeemer: delegate, secretHash, timelock: 144n }, NETWORK);
    await insertOrder(store.db, {
      ...base,
      destination: { ...base.destination, swapId: htlc, chain: CHAIN, asset: `${CHAIN}:ltc`, initiator: xOnlyPublicKeyOf(solverKey), redeemer: payout, delegate, timelock: 144n, amount: AMOUNT },
    });
    watcher = new BitcoinWatcher(store.db, registry.chain(CHAIN)!, ltc.rpc, { startBlock: BigInt(await ltc.rpc.getBlockCount()) + 1n, walletAddresses: [solver.wallet] });
    await fundAddress(ltc, htlc, AMOUNT);
    await ltc.mine(1);
    await sync();
    const order = (await findOrder(store.db, base.id))!;
    assert.equal(await solver.redeem(order, 'destination', secret), true);
    await relayer.tick();
    const key = `${order.id}:redeem`;
    const job = (await findJob(store.db, key))!;
    const versions = (job.payload as { replacements: TxVersion[] }).replacements;
    return { key, original: job.txHash, versions, htlc, payout };
  }
  const txHashes = async (key: string) =>
    (await sql<{ tx_hashes: string[] | string }>`select tx_hashes from relayer_jobs where idempotency_key = ${key}`.execute(store.db)).rows[0]!.tx_hashes;

  test("a client's stuck redeem is replaced at a higher fee; the replacement is mined and the client paid once", async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { key, original, versions, htlc, payout } = await redeemedForClient();
    assert.deepEqual(versions.map((v) => v.feeRate), ['3', '4', '6'], 'replacements at rising rates are signed with the redeem');
    assert.ok((await mempool()).includes(original));
    const options = { db: store.db, chain: CHAIN, network: NETWORK, rpc: ltc.rpc, walletKey: solverKey, afterBlocks: 2 };
    const engine = (replaceByFee: boolean) =>
      bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'test', recheckMs: 0, retryMs: 0, bumper: new BitcoinFeeBumper({ ...options, replaceByFee }) });
    const replacing = engine(true);
    await replacing.tick();
    assert.equal((await findJob(store.db, key))!.txHash, original, 'a fresh redeem is left alone');

    const entry = (await ltc.rpc.mempoolEntry(original))!;
    await ltc.rpc.call('prioritisetransaction', [original, 0, -Number(entry.fee)]);
    await ltc.mine(2);
    await sync();
    assert.ok((await mempool()).includes(original), 'held out of blocks');
    await engine(false).tick();
    assert.equal((await findJob(store.db, key))!.txHash, original, "by default a Litecoin node's replacements are not sent, and nothing pays the wallet to CPFP from");
    await replacing.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.txHash, versions[0]!.txid);
    const pool = await mempool();
    assert.ok(pool.includes(versions[0]!.txid) && !pool.includes(original), 'the node replaced the redeem');
    await sync();
    await replacing.tick();
    assert.equal((await findJob(store.db, key))!.txHash, versions[0]!.txid, 'a fresh replacement is not replaced again');

    await ltc.mine(1);
    await sync();
    for (let i = 0; i < 3; i++) await relayer.tick();
    const settled = (await findJob(store.db, key))!;
    assert.equal(settled.status, 'confirmed');
    assert.equal(settled.txHash, versions[0]!.txid);
    assert.deepEqual(await txHashes(key), [original, versions[0]!.txid]);
    const replacement = await ltc.rpc.call<{ vsize: number; confirmations: number }>('getrawtransaction', [versions[0]!.txid, true]);
    assert.equal(replacement.confirmations, 1);
    assert.deepEqual(await onChain(ltc, payout), [AMOUNT - 3n * BigInt(replacement.vsize)], 'the client got one payment, less the replacement fee');
    assert.deepEqual(await onChain(ltc, htlc), []);
  });

  test('a job switched to a replacement settles from the first transaction when that one is mined', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const { key, original, versions, payout } = await redeemedForClient();
    await relayer.tick();
    // The engine's switch written, and the process gone before the replacement was sent.
    const [held] = await claimJobs(store.db, { chain: CHAIN, worker: 'crashed', limit: 10, leaseMs: 0 });
    assert.equal(held?.idempotencyKey, key);
    assert.equal(await saveSignedTx(store.db, held, 'crashed', { raw: versions[0]!.hex, hash: versions[0]!.txid }), true);
    await ltc.mine(1);
    await sync();
    for (let i = 0; i < 3; i++) await relayer.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'confirmed');
    assert.equal(job.txHash, original, 'confirmed with the hash that was mined');
    assert.equal((await onChain(ltc, payout)).length, 1);
  });

  test('safety rule 2: a funding still in the mempool at its broadcast deadline is taken back by a replacement paying the wallet; the HTLC is never funded', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const payer = new BitcoinSolverChain(registry.chain(CHAIN)!, store.db, ltc.rpc, solverKey, secrets, true);
    const base = sampleOrder(appId);
    const htlc = htlcAddress({ initiator: xOnlyPublicKeyOf(solverKey), redeemer: xOnlyPublicKeyOf(schnorr.utils.randomSecretKey()), secretHash: base.secretHash, timelock: 144n }, NETWORK);
    await insertOrder(store.db, {
      ...base,
      destination: { ...base.destination, swapId: htlc, chain: CHAIN, asset: `${CHAIN}:ltc`, initiator: xOnlyPublicKeyOf(solverKey), timelock: 144n, amount: AMOUNT },
    });
    watcher = new BitcoinWatcher(store.db, registry.chain(CHAIN)!, ltc.rpc, { startBlock: BigInt(await ltc.rpc.getBlockCount()) + 1n, walletAddresses: [payer.wallet] });
    await fundAddress(ltc, payer.wallet, 5n * AMOUNT);
    await ltc.mine(1);
    await sync();
    const clock = new MovableClock();
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: ltc.rpc, worker: 'test', recheckMs: 0, retryMs: 0, clock, cancelFunding: (p, s) => payer.cancelFunding(p, s) });
    const fundBy = new Date(clock.now() + 60_000);
    await payer.fundDestination((await findOrder(store.db, base.id))!, fundBy);
    const key = `${base.id}:fund`;
    const funding = (await findJob(store.db, key))!.txHash;
    await engine.tick();
    assert.ok((await mempool()).includes(funding), 'sent before its deadline');
    await engine.tick();
    assert.equal((await findJob(store.db, key))!.txHash, funding, 'left alone before its deadline');

    clock.advance(60_000);
    await sync();
    await engine.tick();
    const cancelling = (await findJob(store.db, key))!;
    const pool = await mempool();
    assert.ok(!pool.includes(funding), 'the funding left the mempool');
    assert.ok(pool.includes(cancelling.txHash) && cancelling.txHash !== funding, 'its replacement took its place');
    await ltc.mine(1);
    await sync();
    for (let i = 0; i < 3; i++) await engine.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'failed');
    assert.match(job.lastError, /cancelled: not landed by its broadcast deadline \(safety rule 2\)/);
    assert.deepEqual(await onChain(ltc, htlc), [], 'the destination HTLC was never funded');
    const back = await onChain(ltc, payer.wallet);
    assert.equal(back.length, 1, 'the wallet holds one output: its coin, back');
    assert.ok(back[0]! > 5n * AMOUNT - 100_000n && back[0]! < 5n * AMOUNT, `less only the fees: ${back[0]}`);
  });
});
