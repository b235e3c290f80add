// The Solana transaction sender and watcher on a local chain whose slots move only when the test
// says (slotMs 0), over both stores: a job is signed, sent, confirmed once its slot is; a transaction
// whose blockhash expired unseen is signed afresh and lands once; a client's signed transaction that
// expired fails for good; a program refusal fails the job; a redeem whose secret is not 32 bytes is
// never sent (safety rule 3); the watcher records the swaps' initiates from the program's logs,
// paging back through many transactions, and reads none twice.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type KeyPairSigner,
} from '@solana/kit';
import { solanaSide } from '../../../src/chains/solana/htlc-state.ts';
import { solanaJobInstructions } from '../../../src/chains/solana/job-instructions.ts';
import { solanaEngine } from '../../../src/chains/solana/driver.ts';
import { SolanaWatcher } from '../../../src/chains/solana/watcher.ts';
import { loadRegistry } from '../../../src/chains/registry.ts';
import type { Store } from '../../../src/store/database.ts';
import { insertOrder } from '../../../src/store/orders.ts';
import { claimJobs, enqueueJob, findJob, markSubmitted } from '../../../src/store/relayer-jobs.ts';
import { saveSignedTx } from '../../../src/store/signed-txs.ts';
import { LOCALNET_REGISTRY_PATH, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { solFundPayload } from '../../helpers/solana.ts';
import { startNativeSwapsLocalnet, type LocalnetHarness } from '../../helpers/solana-localnet.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';

const registry = loadRegistry(LOCALNET_REGISTRY_PATH);
const chain = registry.chain('solana_localnet')!;
const SOL = registry.asset('solana_localnet:sol')!;
let net: LocalnetHarness;
let payer: KeyPairSigner;
let redeemer: KeyPairSigner;

before(async () => {
  ({ net, payer, redeemer } = await startNativeSwapsLocalnet());
});
after(async () => {
  await net?.stop();
});

describeEachStore('Solana sender and watcher', (kind) => {
  let store: Store;
  let appId: string;
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db, registry)).app.id;
  });
  after(() => store?.close());

  const sender = (worker = 'w1') =>
    solanaEngine({ db: store.db, chain: chain.key, rpcUrl: net!.chain.rpcUrl, payer: Promise.resolve(payer), signer: 'solver', instructions: solanaJobInstructions, worker, recheckMs: 0, retryMs: 0 });

  /** A SOL swap of the payer's (it funds it as the solver funds a destination), as a job payload. */
  const fundPayload = (amount: bigint) => solFundPayload(payer.address, redeemer.address, amount);
  const swapAccountOf = (p: { initiator: string; secretHash: string }) =>
    solanaSide(registry, chain, { ...sampleSwap, asset: SOL.id, initiator: p.initiator, secretHash: p.secretHash }).swapAccount;
  const exists = async (p: { initiator: string; secretHash: string }) => (await net!.rpc.getAccountInfo(swapAccountOf(p), { encoding: 'base64' }).send()).value !== null;

  test('a job is signed and sent in one tick, and confirmed once its slot is', async () => {
    const payload = fundPayload(1_000_000n);
    await enqueueJob(store.db, { chain: chain.key, action: 'solver-fund', idempotencyKey: `fund:${payload.secretHash}`, payload, signer: 'solver' });
    const s = sender();
    assert.equal(await s.tick(), 1);
    const sent = (await findJob(store.db, `fund:${payload.secretHash}`))!;
    assert.equal(sent.status, 'submitted', sent.lastError);
    assert.ok(await exists(payload), 'the swap account is on chain');
    await s.tick();
    assert.equal((await findJob(store.db, sent.idempotencyKey))!.status, 'submitted', 'processed, not yet confirmed');
    net.chain.advanceSlots(1);
    await s.tick();
    const done = (await findJob(store.db, sent.idempotencyKey))!;
    assert.equal(done.status, 'confirmed');
    assert.equal(done.txHash, sent.txHash);
  });

  test('safety rule 3 at the relayer: a redeem job whose secret is not 32 bytes fails unsent, whoever wrote it', async () => {
    const swap = fundPayload(1_000n);
    for (const secret of [randomBytes(31).toString('hex'), randomBytes(33).toString('hex')]) {
      const key = `redeem:${swap.secretHash}:${secret.length}`;
      const payload = { kind: 'redeem', program: swap.program, programKind: swap.programKind, initiator: swap.initiator, secretHash: swap.secretHash, redeemer: swap.redeemer, secret };
      await enqueueJob(store.db, { chain: chain.key, action: 'solver-redeem', idempotencyKey: key, payload, signer: 'solver' });
      await sender().tick();
      const job = (await findJob(store.db, key))!;
      assert.equal(job.status, 'failed', `a ${secret.length / 2}-byte secret`);
      assert.match(job.lastError, /redeem: secret is malformed/);
      assert.equal(job.txHash, '', 'nothing was sent');
    }
  });

  test('a transaction whose blockhash expired unseen is signed afresh and lands once', async () => {
    const payload = fundPayload(2_000_000n);
    const key = `fund:${payload.secretHash}`;
    await enqueueJob(store.db, { chain: chain.key, action: 'solver-fund', idempotencyKey: key, payload, signer: 'solver' });
    // As if the worker signed and stored it, then died before the node got it.
    const [claimed] = await claimJobs(store.db, { chain: chain.key, signer: 'solver', worker: 'crashed', leaseMs: 60_000, limit: 1 });
    const { value: lifetime } = await net.rpc.getLatestBlockhash().send();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([], m),
    );
    const lost = await signTransactionMessageWithSigners(appendTransactionMessageInstructions(await solanaJobInstructions(payload, payer), message));
    assert.ok(await saveSignedTx(store.db, claimed!, 'crashed', { raw: getBase64EncodedWireTransaction(lost), hash: getSignatureFromTransaction(lost), validUntilHeight: lifetime.lastValidBlockHeight }));
    await markSubmitted(store.db, claimed!.id, { worker: 'crashed', txHash: getSignatureFromTransaction(lost), recheckMs: 0 });
    // Past its last valid block height even at `confirmed`, one slot behind.
    net.chain.advanceSlots(152);
    const s = sender('w2');
    await s.tick(); // expired: signed afresh with a new blockhash and sent, in the same pass
    const resigned = (await findJob(store.db, key))!;
    assert.equal(resigned.status, 'submitted');
    assert.notEqual(resigned.txHash, getSignatureFromTransaction(lost));
    net.chain.advanceSlots(1);
    await s.tick();
    const done = (await findJob(store.db, key))!;
    assert.equal(done.status, 'confirmed');
    assert.notEqual(done.txHash, getSignatureFromTransaction(lost), 'a new transaction');
    assert.ok(await exists(payload));
    const [lostStatus] = (await net.rpc.getSignatureStatuses([getSignatureFromTransaction(lost)], { searchTransactionHistory: true }).send()).value;
    assert.equal(lostStatus, null, 'the lost one never landed');
  });

  test("a client's signed transaction that expired fails for good; a refused attempt says why", async () => {
    const payload = fundPayload(3_000_000n);
    // The client signed the initiate (here the payer is the client) with a blockhash that then expires.
    const { value: lifetime } = await net.rpc.getLatestBlockhash().send();
    const tx = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
        (m) => appendTransactionMessageInstructions([], m),
      ),
    );
    net.chain.advanceSlots(151);
    const clientKey = `client:${payload.secretHash}`;
    await enqueueJob(store.db, {
      chain: chain.key,
      action: 'initiate',
      idempotencyKey: clientKey,
      payload: { kind: 'client-signed', tx: getBase64EncodedWireTransaction(tx), lastValidBlockHeight: lifetime.lastValidBlockHeight.toString() },
      signer: 'solver',
    });
    const s = sender('w3');
    await s.tick();
    const refused = (await findJob(store.db, clientKey))!;
    assert.match(refused.lastError, /blockhash|Blockhash/i, refused.lastError);
    await s.tick();
    const failed = (await findJob(store.db, clientKey))!;
    assert.equal(failed.status, 'failed');
    assert.match(failed.lastError, /expired .* sign a new one/);

    // A redeem with the wrong secret: the program refuses it in simulation, the job says so.
    const initiate = fundPayload(4_000_000n);
    await enqueueJob(store.db, { chain: chain.key, action: 'solver-fund', idempotencyKey: `fund:${initiate.secretHash}`, payload: initiate, signer: 'solver' });
    await s.tick();
    const redeemKey = `redeem:${initiate.secretHash}`;
    await enqueueJob(store.db, {
      chain: chain.key,
      action: 'solver-redeem',
      idempotencyKey: redeemKey,
      payload: { ...initiate, kind: 'redeem', secret: randomBytes(32).toString('hex') },
      signer: 'solver',
      maxAttempts: 1,
    });
    await s.tick();
    const wrong = (await findJob(store.db, redeemKey))!;
    assert.equal(wrong.status, 'failed');
    assert.match(wrong.lastError, /custom program error 6002/, 'InvalidSecret');
  });

  test('the watcher records initiates from the program logs, paging back through many transactions, each once', async () => {
    const watcher = new SolanaWatcher(store.db, chain, net.chain.rpcUrl, { startSlot: BigInt(net.chain.slot() - 1), pageSize: 3 });
    await watcher.poll();
    // Seven swaps in one slot: more than two pages of signatures for the watcher to read.
    const payloads = Array.from({ length: 7 }, (_, i) => fundPayload(5_000_000n + BigInt(i)));
    const orders = [];
    for (const p of payloads) {
      const order = sampleOrder(appId, { secretHash: p.secretHash });
      order.destination = { ...order.destination, chain: chain.key, asset: SOL.id, initiator: payer.address, redeemer: redeemer.address, swapId: Buffer.from(getAddressEncoder().encode(swapAccountOf(p))).toString('hex') };
      await insertOrder(store.db, order);
      orders.push(order);
      await enqueueJob(store.db, { chain: chain.key, action: 'solver-fund', idempotencyKey: `watch:${p.secretHash}`, payload: p, signer: 'solver' });
    }
    const s = sender('w4');
    await s.tick();
    net.chain.advanceSlots(1);
    const read = await watcher.poll();
    const ours = new Set(orders.map((o) => o.destination.swapId));
    assert.equal(read.events.filter((e) => e.kind === 'initiated' && ours.has(e.swapId)).length, 7);
    for (const order of orders) {
      const swap = await store.db.selectFrom('swaps').selectAll().where('order_id', '=', order.id).where('side', '=', 'destination').executeTakeFirstOrThrow();
      assert.notEqual(swap.initiate_tx_hash, '');
      assert.equal(String(swap.filled_amount), String(BigInt(payloads[orders.indexOf(order)]!.amount)));
    }
    const again = await watcher.poll();
    assert.equal(again.events.length, 0, 'nothing read twice');
  });
});

const sampleSwap = {
  swapId: '',
  chain: 'solana_localnet',
  asset: '',
  initiator: '',
  redeemer: '',
  delegate: '',
  timelock: '1000',
  amount: '0',
  filledAmount: '0',
  assetPrice: 0,
  secretHash: '',
  secret: '',
  instantRefundTx: '',
  initiateTxHash: '',
  redeemTxHash: '',
  refundTxHash: '',
  initiateBlockNumber: '0',
  redeemBlockNumber: '0',
  refundBlockNumber: '0',
  requiredConfirmations: 1,
  currentConfirmations: 0,
  initiateTimestamp: null,
  redeemTimestamp: null,
  refundTimestamp: null,
  createdAt: '',
};
