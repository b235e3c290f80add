// The relayer worker against a real anvil: one job makes one transaction through a crash between
// signing and sending, a nonce taken by another transaction, a fee bump, and a call that would revert;
// safety rules 3 and 7 at the relayer: a redeem's secret is 32 bytes, and never reaches last_error or the log.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { erc20Abi, keccak256, parseTransaction, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmChainId } from '../../../src/chains/evm/index.ts';
import { initiateTypedData } from '../../../src/chains/solidity-htlc/typed-data.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import { evmEngine, type EvmEngine } from '../../../src/chains/evm/driver.ts';
import { jobCall, type JobPayload } from '../../../src/chains/evm/jobs.ts';
import { readSignedTxs, saveSignedTx } from '../../../src/store/signed-txs.ts';
import type { Store } from '../../../src/store/database.ts';
import { claimJobs, enqueueJob, findJob } from '../../../src/store/relayer-jobs.ts';
import { localnetRegistry, randomHex32, seedBasics, SOLVER } from '../../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';
import { htlcOrder, newSecret, startChains } from '../../relayer/harness.ts';
import { MovableClock } from '../../helpers/clock.ts';

const registry = localnetRegistry();
const CHAIN = 'ethereum_localnet';
let chains: Awaited<ReturnType<typeof startChains>>;
const user = devAccount('user');
const relayerKey = privateKeyOf(devAccount('relayer'));
const relayerAccount = privateKeyToAccount(relayerKey);

before(async () => {
  chains = await startChains(registry);
});
after(async () => {
  await Promise.all(Object.values(chains).map((c) => c.node.stop()));
});

describeEachStore('EVM relayer', (kind) => {
  let store: Store;
  let relayer: EvmEngine;
  const eth = () => chains.ethereum_localnet;
  const nonce = () => eth().client.getTransactionCount({ address: relayerAccount.address });
  /** The signed transaction the job of `key` holds, if any. */
  const signedTxOf = async (key: string) => {
    const id = (await findJob(store.db, key))!.id;
    return (await readSignedTxs(store.db, [id])).get(id);
  };

  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db, registry);
    relayer = evmEngine({ db: store.db, chain: CHAIN, chainId: 31337, rpcUrl: eth().node.rpcUrl, privateKey: relayerKey, recheckMs: 0, retryMs: 0 });
  });
  after(() => store.close());

  /** A gasless initiate the user approved and signed: a job that succeeds on chain. */
  async function initiateJob(): Promise<{ key: string; payload: JobPayload; swapId: string }> {
    const asset = registry.asset('ethereum_localnet:wbtc')!;
    const { secretHash } = newSecret();
    const htlc = eth().deployment.contracts.wbtcHtlc;
    const amount = 10_000n;
    const w = eth().wallet(user);
    const token = eth().deployment.contracts.wbtc;
    // Jobs of several tests may be pending at once: approve on top of what is still approved.
    const allowance = await eth().client.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [user.address, htlc] });
    const hash = await w.writeContract({ account: user, chain: undefined, address: token, abi: erc20Abi, functionName: 'approve', args: [htlc, allowance + amount] });
    await eth().client.waitForTransactionReceipt({ hash });
    const m = { chainId: evmChainId(asset.chain), htlc, redeemer: SOLVER.addresses.ethereum_localnet as Hex, timelock: 600n, amount, secretHash };
    const signature = await user.signTypedData(initiateTypedData(m));
    const payload: JobPayload = { kind: 'initiate', htlc, initiator: user.address, redeemer: m.redeemer, timelock: '0x258', amount: `0x${amount.toString(16)}`, secretHash, signature };
    const { evmOrderId } = await import('../../../src/chains/evm/order-id.ts');
    const swapId = evmOrderId({ ...m, initiator: user.address }).slice(2);
    const key = `test:${randomHex32()}:initiate`;
    await enqueueJob(store.db, { chain: CHAIN, action: 'initiate', idempotencyKey: key, payload });
    return { key, payload, swapId };
  }

  /** What a worker that died right after storing its signed transaction leaves behind. */
  async function signAndDie(key: string, payload: JobPayload, txNonce: number): Promise<Hex> {
    const [job] = await claimJobs(store.db, { chain: CHAIN, worker: 'dead', leaseMs: 1, limit: 1 });
    assert.equal(job?.idempotencyKey, key);
    const call = jobCall(payload);
    const fees = await eth().client.estimateFeesPerGas();
    const raw = await relayerAccount.signTransaction({ type: 'eip1559', chainId: 31337, to: call.to, data: call.data, nonce: txNonce, gas: 300_000n, ...fees });
    assert.ok(await saveSignedTx(store.db, job, 'dead', { raw, hash: keccak256(raw), nonce: BigInt(txNonce) }));
    await new Promise((r) => setTimeout(r, 10)); // the dead worker's lease runs out
    return keccak256(raw);
  }

  async function tickUntilSettled(key: string) {
    for (let i = 0; i < 20; i++) {
      await relayer.tick();
      const job = await findJob(store.db, key);
      if (job?.status === 'confirmed' || job?.status === 'failed') return job;
    }
    assert.fail(`job ${key} did not settle`);
  }

  test('a crash between signing and sending resends the stored transaction; a later job takes the next nonce', async () => {
    const first = await initiateJob();
    const start = await nonce();
    const storedHash = await signAndDie(first.key, first.payload, start);
    const second = await initiateJob();

    const a = await tickUntilSettled(first.key);
    const b = await tickUntilSettled(second.key);
    assert.equal(a.status, 'confirmed', a.lastError);
    assert.equal(b.status, 'confirmed', b.lastError);
    assert.equal(a.txHash, storedHash, 'the very transaction signed before the crash');
    assert.equal(b.status, 'confirmed');
    assert.deepEqual([a.nonce, b.nonce], [String(start), String(start + 1)]);
    assert.equal(await nonce(), start + 2, 'two jobs, two transactions');
    assert.equal((await htlcOrder(eth(), first.swapId)).amount, 10_000n);
    assert.equal((await htlcOrder(eth(), second.swapId)).amount, 10_000n);
  });

  test('a nonce taken by another transaction: the job signs again with a new nonce, once', async () => {
    const job = await initiateJob();
    const start = await nonce();
    const storedHash = await signAndDie(job.key, job.payload, start);
    // The relayer key spends that nonce elsewhere before the job's transaction goes out.
    const w = eth().wallet(relayerAccount as unknown as typeof user);
    await eth().client.waitForTransactionReceipt({ hash: await w.sendTransaction({ account: relayerAccount, chain: undefined, to: relayerAccount.address, value: 0n, nonce: start }) });

    const settled = await tickUntilSettled(job.key);
    assert.equal(settled.status, 'confirmed');
    assert.notEqual(settled.txHash, storedHash);
    assert.equal(settled.nonce, String(start + 1));
    assert.equal(await nonce(), start + 2);
    const { rows } = await import('kysely').then(({ sql }) => sql<{ n: number }>`select cardinality(tx_hashes) as n from relayer_jobs where id = ${settled.id}`.execute(store.db));
    assert.equal(Number(rows[0]!.n), 2);
    assert.equal((await htlcOrder(eth(), job.swapId)).amount, 10_000n);
  });

  test('a transaction left unmined is re-signed with higher fees and the same nonce; only one is mined', async () => {
    const clock = new MovableClock();
    const bumping = evmEngine({ db: store.db, chain: CHAIN, chainId: 31337, rpcUrl: eth().node.rpcUrl, privateKey: relayerKey, recheckMs: 0, retryMs: 0, bumpAfterMs: 30_000, clock });
    const job = await initiateJob();
    const start = await nonce();
    await eth().node.rpc('evm_setAutomine', [false]);
    try {
      await bumping.tick(); // signed and sent, not mined
      const first = (await signedTxOf(job.key))!;
      await bumping.tick();
      assert.equal((await signedTxOf(job.key))!.hash, first.hash, 'not bumped before bumpAfterMs');
      clock.advance(30_000);
      await bumping.tick(); // old enough by the engine's clock: bumped
      const second = (await signedTxOf(job.key))!;
      assert.notEqual(second.hash, first.hash);
      assert.equal(second.nonce, first.nonce);
      assert.deepEqual(second.hashes.slice(-2), [first.hash, second.hash]);
      await eth().node.rpc('evm_mine', []);
      await bumping.tick();
      const settled = (await findJob(store.db, job.key))!;
      assert.equal(settled.status, 'confirmed');
      assert.equal(settled.txHash, second.hash, 'the replacement was mined');
      assert.equal(await nonce(), start + 1);
    } finally {
      await eth().node.rpc('evm_setAutomine', [true]);
    }
  });

  test('nonce repair: a transaction dropped from the node\'s pool is sent again, and the nonce after it still goes through', async () => {
    const a = await initiateJob();
    const b = await initiateJob();
    const start = await nonce();
    await eth().node.rpc('evm_setAutomine', [false]);
    try {
      await relayer.tick(); // both signed with consecutive nonces and sent, neither mined
      const sa = (await signedTxOf(a.key))!;
      const sb = (await signedTxOf(b.key))!;
      assert.deepEqual([sa.nonce, sb.nonce], [BigInt(start), BigInt(start + 1)]);
      // The node forgets the first (evicted, or lost with a restart): the second cannot be mined after it.
      await eth().node.rpc('anvil_dropTransaction', [sa.hash]);
      await eth().node.rpc('evm_mine', []);
      assert.equal(await nonce(), start, 'nothing mined past the gap');
      await relayer.tick(); // the first is sent again from its stored bytes
      await eth().node.rpc('evm_mine', []);
      assert.equal(await nonce(), start + 2);
      const [ja, jb] = [await tickUntilSettled(a.key), await tickUntilSettled(b.key)];
      assert.equal(ja.status, 'confirmed', ja.lastError);
      assert.equal(jb.status, 'confirmed', jb.lastError);
      assert.equal(ja.txHash, sa.hash, 'the same transaction, not a second one');
      assert.equal(jb.txHash, sb.hash);
      assert.equal((await htlcOrder(eth(), a.swapId)).amount, 10_000n);
      assert.equal((await htlcOrder(eth(), b.swapId)).amount, 10_000n);
    } finally {
      await eth().node.rpc('evm_setAutomine', [true]);
    }
  });

  test('a fee cap: a new transaction pays at most the cap, and one at the cap is resent but never bumped past it', async () => {
    const job = await initiateJob();
    const estimate = await eth().client.estimateFeesPerGas();
    // Just under the estimate: still above the base fee, and any 12.5 % bump passes it.
    const cap = estimate.maxFeePerGas - 1n;
    const capped = evmEngine({ db: store.db, chain: CHAIN, chainId: 31337, rpcUrl: eth().node.rpcUrl, privateKey: relayerKey, recheckMs: 0, retryMs: 0, bumpAfterMs: 0, maxFeePerGas: cap });
    await eth().node.rpc('evm_setAutomine', [false]);
    try {
      await capped.tick();
      const first = (await signedTxOf(job.key))!;
      assert.equal(parseTransaction(first.raw as Hex).maxFeePerGas, cap, 'capped below the estimate');
      await capped.tick(); // old enough to bump, but the bump would pass the cap
      const again = (await signedTxOf(job.key))!;
      assert.equal(again.hash, first.hash, 'not re-signed');
      assert.deepEqual(again.hashes, [first.hash]);
    } finally {
      await eth().node.rpc('evm_setAutomine', [true]);
    }
    // The base fee is below the cap, so the capped transaction is mined.
    await eth().node.rpc('evm_mine', []);
    await capped.tick();
    assert.equal((await findJob(store.db, job.key))!.status, 'confirmed');
  });

  test('a call that would revert sends nothing and records the contract error by name', async () => {
    const key = `test:${randomHex32()}:refund`;
    await enqueueJob(store.db, { chain: CHAIN, action: 'refund', idempotencyKey: key, payload: { kind: 'refund', htlc: eth().deployment.contracts.wbtcHtlc, orderId: `0x${randomHex32()}` } });
    const start = await nonce();
    await relayer.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'queued');
    assert.equal(job.lastError, 'reverted: HTLC__OrderNotInitiated');
    assert.equal((await readSignedTxs(store.db, [job.id])).get(job.id), undefined);
    assert.equal(await nonce(), start);
  });

  test('safety rule 3 at the relayer: a redeem job whose secret is not 32 bytes fails unsent, whoever wrote it', async () => {
    const start = await nonce();
    for (const secret of [`0x${randomHex32().slice(0, 62)}`, `0x${randomHex32()}00`] as const) {
      const key = `test:${randomHex32()}:redeem`;
      await enqueueJob(store.db, { chain: CHAIN, action: 'redeem', idempotencyKey: key, payload: { kind: 'redeem', htlc: eth().deployment.contracts.wbtcHtlc, orderId: `0x${randomHex32()}`, secret } });
      await relayer.tick();
      const job = (await findJob(store.db, key))!;
      assert.equal(job.status, 'failed', `a ${(secret.length - 2) / 2}-byte secret`);
      assert.match(job.lastError, /the secret is not 32 bytes/);
      assert.equal((await readSignedTxs(store.db, [job.id])).get(job.id), undefined);
    }
    assert.equal(await nonce(), start, 'nothing was signed or sent');
  });

  test("safety rule 7: a redeem that reverts keeps its secret and the relayer's key out of last_error and the log", async () => {
    const lines: string[] = [];
    const capture = (fields: object, message: string) => void lines.push(`${message} ${JSON.stringify(fields)}`);
    const logged = evmEngine({ db: store.db, chain: CHAIN, chainId: 31337, rpcUrl: eth().node.rpcUrl, privateKey: relayerKey, recheckMs: 0, retryMs: 0, log: { info: capture, warn: capture, error: capture } });
    const secret = randomHex32();
    const key = `test:${randomHex32()}:redeem`;
    // A redeem of an order the HTLC does not hold: its call carries the secret and reverts.
    await enqueueJob(store.db, { chain: CHAIN, action: 'redeem', idempotencyKey: key, maxAttempts: 2, payload: { kind: 'redeem', htlc: eth().deployment.contracts.wbtcHtlc, orderId: `0x${randomHex32()}`, secret: `0x${secret}` } });
    for (let i = 0; i < 3; i++) await logged.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'failed');
    assert.match(job.lastError, /HTLC__OrderNotInitiated/);
    assert.ok(lines.length > 0, 'the refusals were logged');
    for (const text of [job.lastError, ...lines].map((t) => t.toLowerCase())) {
      assert.ok(!text.includes(secret), `the secret in: ${text}`);
      assert.ok(!text.includes(relayerKey.slice(2).toLowerCase()), `the key in: ${text}`);
    }
  });
});
