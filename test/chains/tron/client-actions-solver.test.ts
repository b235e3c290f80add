// The Tron client actions and the solver's Tron operations on the local Tron chain, over both stores:
// a gasless initiate checks the TIP-712 signature before anything is written, ten identical requests
// make one job and one transaction, the relayer pays the energy; rule 1 reads the on-chain order and
// refuses a swap whose terms differ from the order's; the solver redeems its source with the secret,
// funds a destination and refunds it once expired; a client's refund waits for the timelock; an instant
// refund needs the initiator's signature and the solver's co-signature; balances per asset.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { hashTypedData, sha256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { systemClock } from '../../../src/clock.ts';
import { AppError } from '../../../src/errors.ts';
import { initiateTypedData as evmTypedData, refundTypedData } from '../../../src/chains/solidity-htlc/typed-data.ts';
import { TronApi } from '../../../src/chains/tron/api.ts';
import { tronClientActions, type TronClientActions } from '../../../src/chains/tron/client-actions.ts';
import { tronEngine } from '../../../src/chains/tron/driver.ts';
import { TronHtlcReader } from '../../../src/chains/tron/htlc-reads.ts';
import { tronOrderId, tronToEvmHex } from '../../../src/chains/tron/index.ts';
import { jobCall } from '../../../src/chains/tron/jobs.ts';
import { connectTronChain } from '../../../src/chains/tron/runtime.ts';
import { tronSolverChain, type TronSolverChain } from '../../../src/chains/tron/solver-chain.ts';
import { signTronCall } from '../../../src/chains/tron/transactions.ts';
import { devAccount, privateKeyOf } from '../../../src/localnet/accounts.ts';
import { LOCAL_TRON_CHAIN_ID } from '../../../src/localnet/tron/local-chain.ts';
import type { ParentLog } from '../../../src/log.ts';
import type { SecretBox } from '../../../src/orders/secret-box.ts';
import type { Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder, type OrderRecord } from '../../../src/store/orders.ts';
import { findJob, type RelayerJob } from '../../../src/store/relayer-jobs.ts';
import { localnetRegistry, sampleOrder, seedBasics } from '../../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';
import { settleTronJob, startTronTestChain, tronAddressOf, type TronTestChain } from '../../helpers/tron-localnet.ts';

const registry = localnetRegistry();
const chain = registry.chain('tron_localnet')!;
const USDT = registry.asset('tron_localnet:usdt')!;
const KEYS = { solver: privateKeyOf(devAccount('solver')), relayer: privateKeyOf(devAccount('relayer')), user: privateKeyOf(devAccount('user')) };
const SOLVER = tronAddressOf('solver');
const USER = tronAddressOf('user');
const RELAYER = tronAddressOf('relayer');
const CHAIN_ID = BigInt(LOCAL_TRON_CHAIN_ID);

let c: TronTestChain;
let api: TronApi;
let reader: TronHtlcReader;

before(async () => {
  c = await startTronTestChain();
  api = new TronApi(c.localnet.url);
  reader = new TronHtlcReader(api);
  // The user approves the HTLC once, with a transaction signed offline as the driver signs them.
  const approve = jobCall({ kind: 'approve', token: USDT.token.address, spender: USDT.htlc.address });
  const head = await api.nowBlock();
  const tx = await signTronCall({ call: approve, owner: USER, privateKey: KEYS.user, reference: head, expiration: head.timestampMs + 60_000, feeLimitSun: 100_000_000n });
  assert.equal((await api.broadcast(tx as unknown as Record<string, unknown>)).result, true);
  await c.localnet.mine();
});
after(() => c?.stop());

const usdt = (who: string) => reader.trc20Balance(USDT.token.address, who);

describeEachStore('Tron client actions and solver', (kind) => {
  let store: Store;
  let appId: string;
  let actions: TronClientActions;
  let solver: TronSolverChain;
  before(async () => {
    store = await openTestStore(kind);
    appId = (await seedBasics(store.db, registry)).app.id;
    actions = tronClientActions(store.db, registry, { reader, solverSigner: privateKeyToAccount(KEYS.solver) });
    solver = tronSolverChain(chain, registry, SOLVER, reader, store.db);
  });
  after(() => store?.close());

  const relayer = () => tronEngine({ db: store.db, chain: chain.key, api, privateKey: KEYS.relayer, signer: 'relayer', worker: 'r', recheckMs: 0, retryMs: 0 });
  const solverEngine = () => tronEngine({ db: store.db, chain: chain.key, api, privateKey: KEYS.solver, signer: 'solver', worker: 's', recheckMs: 0, retryMs: 0 });

  const settle = (engine: ReturnType<typeof relayer>, key: string): Promise<RelayerJob> => settleTronJob(store.db, c, engine, key);

  /** A Tron USDT source order from the user to the solver, its swap id the HTLC order id of its terms. */
  async function sourceOrder(amount: bigint, timelock = 200n): Promise<{ order: OrderRecord; secret: Hex }> {
    const secret = toHex(randomBytes(32));
    const secretHash = sha256(secret).slice(2);
    const base = sampleOrder(appId, { secretHash });
    const swapId = tronOrderId({ chainId: chain.id, secretHash, initiator: USER, redeemer: SOLVER, timelock, amount, htlc: USDT.htlc.address });
    await insertOrder(store.db, { ...base, source: { ...base.source, chain: chain.key, asset: USDT.id, initiator: USER, redeemer: SOLVER, timelock, amount, swapId } });
    return { order: (await findOrder(store.db, base.id))!, secret };
  }

  const initiateSignature = (order: OrderRecord, key: Hex = KEYS.user) =>
    privateKeyToAccount(key).signTypedData(
      evmTypedData({
        chainId: CHAIN_ID,
        htlc: tronToEvmHex(USDT.htlc.address),
        redeemer: tronToEvmHex(SOLVER),
        timelock: BigInt(order.source.timelock),
        amount: BigInt(order.source.amount),
        secretHash: `0x${order.secretHash}`,
      }),
    );

  const appError = (code: string) => (err: unknown) => err instanceof AppError && err.code === code;

  test('gasless initiate: a wrong signature is refused before anything is written; ten identical requests make one job; the relayer pays', async () => {
    const { order, secret } = await sourceOrder(3_000_000n);
    await assert.rejects(actions.perform(order, 'initiate', { signature: await initiateSignature(order, KEYS.solver) }), appError('invalid_signature'));
    await assert.rejects(actions.perform(order, 'initiate', { signature: 'zz' }), (err: unknown) => err instanceof AppError && /signature/.test(err.message));
    assert.equal(await findJob(store.db, `${order.id}:initiate`), undefined, 'nothing written');
    const signature = await initiateSignature(order);
    const jobs = await Promise.all(Array.from({ length: 10 }, () => actions.perform(order, 'initiate', { signature })));
    assert.equal(new Set(jobs.map((j) => j.id)).size, 1);
    const [userBefore, relayerTrx] = await Promise.all([usdt(USER), api.balanceSun(`41${tronToEvmHex(RELAYER).slice(2)}`)]);
    const done = await settle(relayer(), `${order.id}:initiate`);
    assert.equal(done.status, 'confirmed', done.lastError);
    assert.equal(await usdt(USER), userBefore - 3_000_000n);
    assert.ok((await api.balanceSun(`41${tronToEvmHex(RELAYER).slice(2)}`)) < relayerTrx, 'the relayer paid the energy');
    assert.equal((await api.transactionInfo(done.txHash))!.blockNumber > 0n, true);

    // Rule 1: the solver reads the on-chain order and finds the order's terms.
    const check = await solver.checkSource(order);
    assert.ok('blocksLeft' in check && check.blocksLeft > 0n, JSON.stringify(check, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
    // It redeems its source with the secret.
    const solverBefore = await usdt(SOLVER);
    assert.equal(await solver.redeem(order, 'source', Buffer.from(secret.slice(2), 'hex')), true);
    const redeemed = await settle(solverEngine(), `${order.id}:solver-redeem`);
    assert.equal(redeemed.status, 'confirmed', redeemed.lastError);
    assert.equal(await usdt(SOLVER), solverBefore + 3_000_000n);
    assert.equal(await solver.redeem(order, 'source', Buffer.from(secret.slice(2), 'hex')), false, 'nothing left to redeem');
  });

  test('rule 1: a swap whose on-chain terms differ from the order is never matched', async () => {
    const { order } = await sourceOrder(4_000_000n);
    // The user initiates the same secret hash with another amount: another order id, not this order's.
    const head = await api.nowBlock();
    const call = jobCall({ kind: 'fund', htlc: USDT.htlc.address, redeemer: SOLVER, timelock: toHex(BigInt(order.source.timelock)), amount: toHex(3_999_999n), secretHash: `0x${order.secretHash}` });
    const tx = await signTronCall({ call, owner: USER, privateKey: KEYS.user, reference: head, expiration: head.timestampMs + 60_000, feeLimitSun: 150_000_000n });
    assert.equal((await api.broadcast(tx as unknown as Record<string, unknown>)).result, true);
    await c.localnet.mine();
    assert.deepEqual(await solver.checkSource(order), { problem: 'the source HTLC order is not on chain' });
    // An order whose stored terms do not give its swap id is refused before the chain is read.
    assert.deepEqual(await solver.checkSource({ ...order, source: { ...order.source, amount: '3999999' } }), { problem: "the source swap id is not the HTLC order id of the order's terms" });
  });

  test("a client's refund waits for the timelock, then lands; an instant refund takes the initiator's and the solver's signatures", async () => {
    const { order } = await sourceOrder(1_000_000n, 3n);
    const jobKey = `${order.id}:initiate`;
    await actions.perform(order, 'initiate', { signature: await initiateSignature(order) });
    assert.equal((await settle(relayer(), jobKey)).status, 'confirmed');
    await assert.rejects(actions.perform(order, 'refund', {}), appError('not_expired'));
    await c.localnet.mine(3);
    const before = await usdt(USER);
    await actions.perform(order, 'refund', {});
    const refunded = await settle(relayer(), `${order.id}:refund`);
    assert.equal(refunded.status, 'confirmed', refunded.lastError);
    assert.equal(await usdt(USER), before + 1_000_000n);

    const instant = await sourceOrder(1_100_000n);
    await actions.perform(instant.order, 'initiate', { signature: await initiateSignature(instant.order) });
    assert.equal((await settle(relayer(), `${instant.order.id}:initiate`)).status, 'confirmed');
    const refund = refundTypedData({ chainId: CHAIN_ID, htlc: tronToEvmHex(USDT.htlc.address), orderId: `0x${instant.order.source.swapId}` });
    assert.equal(await actions.instantRefundDigest(instant.order), hashTypedData(refund));
    await assert.rejects(actions.perform(instant.order, 'instant-refund', { signature: await privateKeyToAccount(KEYS.solver).signTypedData(refund) }), appError('invalid_signature'));
    const userBefore = await usdt(USER);
    await actions.perform(instant.order, 'instant-refund', { signature: await privateKeyToAccount(KEYS.user).signTypedData(refund) });
    const done = await settle(relayer(), `${instant.order.id}:instant-refund`);
    assert.equal(done.status, 'confirmed', done.lastError);
    assert.equal(await usdt(USER), userBefore + 1_100_000n);
  });

  test('the solver approves once, funds a Tron destination, and refunds it once expired; balances read per asset', async () => {
    const secret = toHex(randomBytes(32));
    const secretHash = sha256(secret).slice(2);
    const base = sampleOrder(appId, { secretHash });
    const timelock = 2n;
    const amount = 2_000_000n;
    const swapId = tronOrderId({ chainId: chain.id, secretHash, initiator: SOLVER, redeemer: USER, timelock, amount, htlc: USDT.htlc.address });
    await insertOrder(store.db, { ...base, destination: { ...base.destination, chain: chain.key, asset: USDT.id, initiator: SOLVER, redeemer: USER, timelock, amount, swapId } });
    const order = (await findOrder(store.db, base.id))!;
    assert.equal(solver.checkDestination(order), undefined);
    const engine = solverEngine();
    // The first funding waits for the approval, which prepare() queued.
    await solver.prepare();
    for (let i = 0; i < 10 && !(await solver.ensureApproval({ asset: USDT, htlc: USDT.htlc.address })); i++) {
      await engine.tick();
      await c.localnet.mine();
    }
    const before = await usdt(SOLVER);
    await solver.fundDestination(order, new Date(Date.now() + 60_000));
    assert.equal(await solver.destinationFunded(order), true, 'its job counts as funded');
    assert.equal((await settle(engine, `${order.id}:solver-fund`)).status, 'confirmed');
    assert.equal(await usdt(SOLVER), before - amount);
    assert.equal(await solver.refundDestination(order), false, 'not expired yet');
    await c.localnet.mine(2);
    assert.equal(await solver.refundDestination(order), true);
    assert.equal((await settle(engine, `${order.id}:solver-refund`)).status, 'confirmed');
    assert.equal(await usdt(SOLVER), before);

    const log: ParentLog = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
    const runtime = connectTronChain({ chain, registry, access: { rpc_url: c.localnet.url }, db: store.db, secrets: {} as SecretBox, instance: 'test', clock: systemClock, log, relayerKey: KEYS.relayer, solverKey: KEYS.solver });
    const [balance] = await runtime.balances(SOLVER, [USDT]);
    assert.equal(balance!.balance, before);
    assert.ok(runtime.solver && runtime.clientActions);
    assert.deepEqual(runtime.workers.map((w) => w.lease).sort(), [`engine:${chain.key}:relayer`, `engine:${chain.key}:relayer:follow-up`, `engine:${chain.key}:solver`, `engine:${chain.key}:solver:follow-up`, `watcher:${chain.key}`]);
  });
});
