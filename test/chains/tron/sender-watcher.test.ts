// The Tron transaction engine driver and watcher on the local Tron chain (a block per accepted
// transaction, solidified one block later), over both stores: jobs are simulated, signed offline and
// confirmed once solidified; a revert in simulation is the job's refused attempt, named; a signed
// transaction that expired unseen is signed afresh and lands once, unless its broadcast deadline
// (safety rule 2) has passed; the watcher records initiates, redeems (with the secret) and refunds on
// the orders from each block's transaction infos, with as many node reads however many orders exist.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { encodeFunctionData, erc20Abi, sha256, toHex, type Hex } from 'viem';
import { TronApi } from '../../../src/chains/tron/api.ts';
import { tronEngine, TronDriver } from '../../../src/chains/tron/driver.ts';
import type { TronJobPayload } from '../../../src/chains/tron/jobs.ts';
import { tronOrderId, tronToEvmHex } from '../../../src/chains/tron/index.ts';
import { hex41 } from '../../../src/chains/tron/transactions.ts';
import { TronWatcher } from '../../../src/chains/tron/watcher.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import { LOCAL_TRON_CHAIN_ID } from '../../../src/localnet/tron/local-chain.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder } from '../../../src/store/orders.ts';
import { claimJobs, enqueueJob, findJob, markSubmitted } from '../../../src/store/relayer-jobs.ts';
import { saveSignedTx } from '../../../src/store/signed-txs.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';
import { settleTronJob, startTronTestChain, tronAddressOf, type TronTestChain } from '../../helpers/tron-localnet.ts';

const registry = localnetRegistry();
const chain = registry.chain('tron_localnet')!;
const USDT = registry.asset('tron_localnet:usdt')!;
const SOLVER_KEY = privateKeyOf(devAccount('solver'));
const RELAYER_KEY = privateKeyOf(devAccount('relayer'));
const SOLVER = tronAddressOf('solver');
const USER = tronAddressOf('user');

let c: TronTestChain;

before(async () => (c = await startTronTestChain()));
after(() => c?.stop());

const usdtOf = async (who: string): Promise<bigint> => {
  const answer = await c.api.constantCall({ owner: hex41(who), contract: hex41(USDT.token.address), data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [tronToEvmHex(who)] }).slice(2) });
  return BigInt(`0x${answer.output}`);
};

function newSecret(): { secret: Hex; secretHash: Hex } {
  const secret = toHex(randomBytes(32));
  return { secret, secretHash: sha256(secret) };
}

describeEachStore('Tron sender and watcher', (kind) => {
  let store: Store;
  let appId: string;
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db, registry)).app.id;
  });
  after(() => store?.close());

  const engine = (signer: 'solver' | 'relayer', worker = 'w1', expirationMs?: number) =>
    tronEngine({ db: store.db, chain: chain.key, api: c.api, privateKey: signer === 'solver' ? SOLVER_KEY : RELAYER_KEY, signer, worker, recheckMs: 0, retryMs: 0, ...(expirationMs ? { expirationMs } : {}) });

  const statusOf = async (key: string) => (await findJob(store.db, key))!;

  const settle = (e: ReturnType<typeof engine>, key: string) => settleTronJob(store.db, c, e, key);

  /** A USDT destination order the solver funds for the user, its swap id the HTLC's order id of its terms. */
  async function destinationOrder(amount: bigint, timelock = 50n) {
    const { secret, secretHash } = newSecret();
    const base = sampleOrder(appId, { secretHash: secretHash.slice(2) });
    const swapId = tronOrderId({ chainId: `tron:${LOCAL_TRON_CHAIN_ID}`, secretHash: secretHash.slice(2), initiator: SOLVER, redeemer: USER, timelock, amount, htlc: USDT.htlc.address });
    const order = { ...base, destination: { ...base.destination, chain: chain.key, asset: USDT.id, initiator: SOLVER, redeemer: USER, timelock, amount, swapId } };
    await insertOrder(store.db, order);
    const fund: TronJobPayload = { kind: 'fund', htlc: USDT.htlc.address, redeemer: USER, timelock: toHex(timelock), amount: toHex(amount), secretHash };
    return { order, secret, secretHash, swapId, fund };
  }

  test('approve, fund and redeem: each simulated, signed offline, sent and confirmed once solidified; the watcher records them', async () => {
    const watcher = new TronWatcher(store.db, chain, c.api, { startBlock: (await c.api.nowBlock()).number + 1n });
    await watcher.poll();
    const solver = engine('solver');
    await enqueueJob(store.db, { chain: chain.key, action: 'approve', idempotencyKey: `approve:${kind}`, payload: { kind: 'approve', token: USDT.token.address, spender: USDT.htlc.address }, signer: 'solver' });
    assert.equal(await solver.tick(), 1);
    const sent = await statusOf(`approve:${kind}`);
    assert.equal(sent.status, 'submitted', sent.lastError);
    assert.match(sent.txHash, /^[0-9a-f]{64}$/);
    assert.ok(await c.api.transactionInfo(sent.txHash), 'in a block');
    assert.equal(await c.api.transactionInfo(sent.txHash, true), undefined, 'not solidified yet');
    await solver.tick();
    assert.equal((await statusOf(`approve:${kind}`)).status, 'submitted', 'seen, not final: it waits');
    assert.equal((await settle(solver, `approve:${kind}`)).status, 'confirmed');

    const o = await destinationOrder(2_500_000n);
    const [solverBefore, htlcBefore] = await Promise.all([usdtOf(SOLVER), usdtOf(USDT.htlc.address)]);
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'solver-fund', idempotencyKey: `${o.order.id}:solver-fund`, payload: o.fund, signer: 'solver', broadcastBy: new Date(Date.now() + 60_000) });
    const funded = await settle(solver, `${o.order.id}:solver-fund`);
    assert.equal(funded.status, 'confirmed', funded.lastError);
    assert.equal(await usdtOf(SOLVER), solverBefore - 2_500_000n);
    assert.equal(await usdtOf(USDT.htlc.address), htlcBefore + 2_500_000n);

    const polled = await watcher.poll();
    const initiated = polled.events.find((e) => e.swapId === o.swapId);
    assert.deepEqual([initiated?.kind, initiated?.txHash], ['initiated', funded.txHash]);
    let dst = (await findOrder(store.db, o.order.id))!.destination;
    assert.equal(dst.initiateTxHash, funded.txHash);
    assert.equal(dst.filledAmount, '2500000');
    assert.ok(dst.initiateTimestamp, 'with its block time');

    // The relayer redeems for the user with the secret: the user gets the USDT, the watcher the secret.
    const userBefore = await usdtOf(USER);
    const redeem: TronJobPayload = { kind: 'redeem', htlc: USDT.htlc.address, orderId: `0x${o.swapId}`, secret: o.secret };
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'redeem', idempotencyKey: `${o.order.id}:redeem`, payload: redeem });
    const redeemed = await settle(engine('relayer'), `${o.order.id}:redeem`);
    assert.equal(redeemed.status, 'confirmed', redeemed.lastError);
    assert.equal(await usdtOf(USER), userBefore + 2_500_000n);
    await watcher.poll();
    dst = (await findOrder(store.db, o.order.id))!.destination;
    assert.equal(dst.redeemTxHash, redeemed.txHash);
    assert.equal(dst.secret, o.secret.slice(2));
  });

  test('a call that would revert is refused in simulation, by its error name, and nothing is sent', async () => {
    const o = await destinationOrder(1_000_000n);
    const solver = engine('solver', 'w2');
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'solver-fund', idempotencyKey: `${o.order.id}:solver-fund`, payload: o.fund, signer: 'solver' });
    assert.equal((await settle(solver, `${o.order.id}:solver-fund`)).status, 'confirmed');
    const key = `${o.order.id}:solver-refund`;
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'solver-refund', idempotencyKey: key, payload: { kind: 'refund', htlc: USDT.htlc.address, orderId: `0x${o.swapId}` }, signer: 'solver', maxAttempts: 1 });
    const head = (await c.api.nowBlock()).number;
    await solver.tick();
    const refused = await statusOf(key);
    assert.equal(refused.status, 'failed');
    assert.match(refused.lastError, /HTLC__OrderNotExpired/, refused.lastError);
    assert.equal(refused.txHash, '', 'nothing signed');
    assert.equal((await c.api.nowBlock()).number, head, 'nothing reached the chain');
  });

  test('a signed transaction that expired unseen is signed afresh and lands once', async () => {
    const o = await destinationOrder(1_200_000n);
    const key = `${o.order.id}:solver-fund`;
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'solver-fund', idempotencyKey: key, payload: o.fund, signer: 'solver', broadcastBy: new Date(Date.now() + 120_000) });
    const lost = await signedButNeverSent(key, o.fund);
    await c.localnet.mine(3); // each block a second or more after its parent: past the 2 s expiration
    const solver = engine('solver', 'w3');
    await solver.tick(); // dropped: signed afresh with a new reference block and sent, in the same pass
    const resigned = await statusOf(key);
    assert.equal(resigned.status, 'submitted', resigned.lastError);
    assert.notEqual(resigned.txHash, lost);
    const done = await settle(solver, key);
    assert.equal(done.status, 'confirmed');
    assert.equal(await c.api.transactionInfo(lost), undefined, 'the lost one never landed');
    const before = await usdtOf(SOLVER);
    await c.localnet.mine();
    await solver.tick();
    assert.equal(await usdtOf(SOLVER), before, 'funded once');
  });

  test('past its broadcast deadline (safety rule 2), an expired funding is not signed again', async () => {
    const o = await destinationOrder(1_300_000n);
    const key = `${o.order.id}:solver-fund`;
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'solver-fund', idempotencyKey: key, payload: o.fund, signer: 'solver', broadcastBy: new Date(Date.now() + 1_500) });
    const lost = await signedButNeverSent(key, o.fund);
    await new Promise((r) => setTimeout(r, 1_600));
    await c.localnet.mine(3);
    const solver = engine('solver', 'w4');
    const before = await usdtOf(SOLVER);
    await solver.tick();
    const failed = await statusOf(key);
    assert.equal(failed.status, 'failed');
    assert.match(failed.lastError, /expired.*broadcast deadline passed \(safety rule 2\)/, failed.lastError);
    assert.equal(await c.api.transactionInfo(lost), undefined);
    assert.equal(await usdtOf(SOLVER), before, 'never funded');
  });

  test("the watcher's reads grow with blocks, not with orders", async () => {
    let reads = 0;
    const counting = new (class extends TronApi {
      override post<T>(path: string, body?: Record<string, unknown>): Promise<T> {
        reads++;
        return super.post<T>(path, body);
      }
    })(c.localnet.url);
    const watcher = new TronWatcher(store.db, chain, counting);
    await watcher.poll(); // caught up with what the other tests mined
    await c.localnet.mine(3);
    reads = 0;
    await watcher.poll();
    const readsForThree = reads;
    for (let i = 0; i < 20; i++) await insertOrder(store.db, sampleOrder(appId));
    await c.localnet.mine(3);
    reads = 0;
    await watcher.poll();
    assert.equal(reads, readsForThree, `${reads} reads for 3 blocks with 20 more orders, ${readsForThree} before`);
  });

  test('a reorganisation replacing the funding block: the watcher notices by block id and undoes what it recorded', async () => {
    const watcher = new TronWatcher(store.db, chain, c.api);
    await watcher.poll(); // caught up with what the other tests mined
    const o = await destinationOrder(1_100_000n);
    const key = `${o.order.id}:solver-fund`;
    const solver = engine('solver', 'w5');
    await enqueueJob(store.db, { chain: chain.key, action: 'approve', idempotencyKey: `approve:reorg:${kind}`, payload: { kind: 'approve', token: USDT.token.address, spender: USDT.htlc.address }, signer: 'solver' });
    assert.equal((await settle(solver, `approve:reorg:${kind}`)).status, 'confirmed');
    await watcher.poll();
    const snapshot = await c.localnet.chain.anvil.rpc('evm_snapshot');
    await enqueueJob(store.db, { chain: chain.key, orderId: o.order.id, action: 'solver-fund', idempotencyKey: key, payload: o.fund, signer: 'solver' });
    const funded = await settle(solver, key);
    assert.equal(funded.status, 'confirmed', funded.lastError);
    await watcher.poll();
    assert.equal((await findOrder(store.db, o.order.id))!.destination.initiateTxHash, funded.txHash, 'recorded from its block');

    // The blocks since the snapshot are replaced by a longer branch without the funding: same numbers, other ids.
    const replacedHead = (await c.api.nowBlock()).number;
    await c.localnet.chain.anvil.rpc('evm_revert', [snapshot]);
    await c.localnet.mine(Number(replacedHead - (await c.api.nowBlock()).number) + 2);
    assert.equal(await c.api.transactionInfo(funded.txHash), undefined, 'the funding is on no block of the new branch');
    await watcher.poll();
    const dst = (await findOrder(store.db, o.order.id))!.destination;
    assert.equal(dst.initiateTxHash, '', 'the initiate of the replaced block is undone');
    assert.equal(dst.filledAmount, '0');
  });

  /** As if a worker signed and stored the job's transaction (expiring in 2 s), then died before any node got it. */
  async function signedButNeverSent(key: string, payload: TronJobPayload): Promise<string> {
    const [claimed] = await claimJobs(store.db, { chain: chain.key, signer: 'solver', worker: 'crashed', leaseMs: 60_000, limit: 1 });
    assert.equal(claimed?.idempotencyKey, key);
    const driver = new TronDriver({ chain: chain.key, api: c.api, privateKey: SOLVER_KEY, signer: 'solver', expirationMs: 2_000 });
    const [signed] = (await driver.sign([{ job: claimed, payload }])[Symbol.asyncIterator]().next()).value as Array<{ signed: { raw: string; hash: string } }>;
    assert.ok(await saveSignedTx(store.db, claimed, 'crashed', signed!.signed));
    await markSubmitted(store.db, claimed.id, { worker: 'crashed', txHash: signed!.signed.hash, recheckMs: 0 });
    return signed!.signed.hash;
  }
});
