// The transaction engine with the EVM driver against a real anvil behind a loopback proxy the test
// cuts: a node out of reach costs no attempt, before or after a transaction was sent, and the job goes
// on when the node is back, and so does a node answering HTTP 429 or 503 (a provider's rate limit, an
// outage behind a gateway); a definite revert still fails after its attempts, with its reason; and
// safety rule 2 at broadcast: a funding past its deadline is never first sent, and one sent but not
// mined by then is cancelled by a transaction at its nonce.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmEngine, type EvmEngine } from '../../src/chains/evm/driver.ts';
import type { JobPayload } from '../../src/chains/evm/jobs.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import type { Store } from '../../src/store/database.ts';
import { enqueueJob, findJob, type RelayerJob } from '../../src/store/relayer-jobs.ts';
import { localnetRegistry, randomHex32, seedBasics } from '../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { startHttpFaultProxy, throughFaults, type HttpFaultProxy } from '../helpers/http-fault-proxy.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { startChains, type LocalChain } from '../relayer/harness.ts';
import { MovableClock } from '../helpers/clock.ts';

const registry = localnetRegistry();
const CHAIN = 'ethereum_localnet';
const solverKey = privateKeyOf(devAccount('solver'));
const solver = privateKeyToAccount(solverKey).address;
let eth: LocalChain;
let stopChains: () => Promise<void>;

before(async () => {
  const chains = await startChains(registry);
  eth = chains.ethereum_localnet;
  stopChains = async () => void (await Promise.all(Object.values(chains).map((c) => c.node.stop())));
});
after(() => stopChains());

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeEachStore('the engine, EVM driver, under faults', (kind) => {
  let store: Store;
  let proxy: TcpProxy;
  let engine: EvmEngine;
  let gateway: HttpFaultProxy;
  let viaGateway: EvmEngine;
  /** The engine's clock: rule 2's deadlines pass when the test moves it. */
  let clock: MovableClock;

  before(async () => {
    clock = new MovableClock();
    store = await openTestStore(kind);
    await seedBasics(store.db, registry);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: eth.node.port });
    engine = evmEngine({
      db: store.db,
      chain: CHAIN,
      chainId: 31337,
      rpcUrl: proxy.through(eth.node.rpcUrl),
      privateKey: solverKey,
      signer: 'solver',
      recheckMs: 0,
      retryMs: 5,
      maxRetryMs: 40,
      clock,
    });
    gateway = await startHttpFaultProxy(eth.node.rpcUrl);
    viaGateway = evmEngine({ db: store.db, chain: CHAIN, chainId: 31337, rpcUrl: gateway.url, privateKey: solverKey, signer: 'solver', recheckMs: 0, retryMs: 5, maxRetryMs: 40 });
  });
  after(async () => {
    await gateway.close();
    await proxy.close();
    await store.close();
  });

  /** The solver funding a native HTLC: a job that succeeds on chain with no approval first. */
  const fundPayload = (): JobPayload => ({
    kind: 'fund',
    htlc: eth.deployment.contracts.nativeHtlc,
    redeemer: devAccount('user').address,
    timelock: toHex(600n),
    amount: toHex(1_000n),
    secretHash: `0x${randomHex32()}`,
    value: toHex(1_000n),
  });
  const enqueue = async (payload: JobPayload, extra: { broadcastBy?: Date; maxAttempts?: number } = {}): Promise<string> => {
    const key = `test:${randomHex32()}:solver-fund`;
    await enqueueJob(store.db, { chain: CHAIN, action: 'solver-fund', idempotencyKey: key, payload, signer: 'solver', ...extra });
    return key;
  };
  const job = async (key: string): Promise<RelayerJob> => (await findJob(store.db, key))!;
  const deferrals = async (key: string): Promise<number> =>
    Number((await store.db.selectFrom('relayer_jobs').select('deferrals').where('idempotency_key', '=', key).executeTakeFirstOrThrow()).deferrals);
  const nonce = (blockTag: 'latest' | 'pending' = 'pending') => eth.client.getTransactionCount({ address: solver, blockTag });
  /** A dozen passes with the node cut off, then `check`, then the node back. */
  const whileCut = async (check: () => Promise<void>) => {
    proxy.cut();
    try {
      for (let i = 0; i < 12; i++) {
        await engine.tick();
        await pause(15);
      }
      await check();
    } finally {
      proxy.restore();
    }
  };
  /** Ticks until the job is settled (confirmed or failed). */
  const settle = async (key: string, by = engine): Promise<RelayerJob> => {
    for (let i = 0; i < 200; i++) {
      await by.tick();
      const j = await job(key);
      if (j.status === 'confirmed' || j.status === 'failed') return j;
      await pause(10);
    }
    return job(key);
  };

  test('the node out of reach before the transaction is signed: no attempt is used, the wait grows, and the job goes on once it is back', async () => {
    const key = await enqueue(fundPayload(), { maxAttempts: 3 });
    await whileCut(async () => {
      const waiting = await job(key);
      assert.equal(waiting.status, 'queued', 'more passes than max_attempts, and still queued');
      assert.equal(waiting.attempts, 0);
      assert.match(waiting.lastError, /node unreachable/);
      assert.ok((await deferrals(key)) >= 3, 'each pass that could not reach the node is counted for the backoff');
    });
    const done = await settle(key);
    assert.equal(done.status, 'confirmed', done.lastError);
    assert.equal(done.attempts, 1);
    assert.equal(await deferrals(key), 0, 'reset once the node answered');
  });

  test('a node answering 429 (rate-limited), then 503: no attempt is used, and the job goes on once it answers', async () => {
    const key = await enqueue(fundPayload(), { maxAttempts: 2 });
    await throughFaults(gateway, [429, 503], () => viaGateway.tick(), 3);
    const waiting = await job(key);
    assert.equal(waiting.status, 'queued', 'more passes than max_attempts, and still queued');
    assert.equal(waiting.attempts, 0);
    assert.match(waiting.lastError, /node unreachable.*(503|Service Unavailable)/);
    const done = await settle(key, viaGateway);
    assert.equal(done.status, 'confirmed', done.lastError);
    assert.equal(done.attempts, 1);
  });

  test('the node out of reach after the transaction was sent: it is kept, and confirmed once the node is back', async () => {
    await eth.node.rpc('evm_setAutomine', [false]);
    try {
      const key = await enqueue(fundPayload(), { maxAttempts: 2 });
      await engine.tick();
      const sent = await job(key);
      assert.equal(sent.status, 'submitted');
      await whileCut(async () => {
        const waiting = await job(key);
        assert.notEqual(waiting.status, 'failed');
        assert.equal(waiting.txHash, sent.txHash, 'the same transaction is kept');
      });
      await eth.node.rpc('evm_mine', []);
      const done = await settle(key);
      assert.equal(done.status, 'confirmed', done.lastError);
      assert.equal(done.txHash, sent.txHash);
    } finally {
      await eth.node.rpc('evm_setAutomine', [true]);
    }
  });

  test('a call that reverts for a definite reason still fails after its attempts, with the reason', async () => {
    // A funding of the WBTC HTLC by an account that never approved it.
    const relayerEngine = evmEngine({ db: store.db, chain: CHAIN, chainId: 31337, rpcUrl: eth.node.rpcUrl, privateKey: privateKeyOf(devAccount('relayer')), recheckMs: 0, retryMs: 0 });
    const key = `test:${randomHex32()}:fund`;
    await enqueueJob(store.db, { chain: CHAIN, action: 'fund', idempotencyKey: key, maxAttempts: 3, payload: { ...fundPayload(), htlc: eth.deployment.contracts.wbtcHtlc, value: '0x0' } });
    for (let i = 0; i < 5; i++) await relayerEngine.tick();
    const failed = await job(key);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.attempts, 3);
    assert.match(failed.lastError, /reverted|allowance/i);
  });

  test('safety rule 2: a funding whose deadline passed is never sent', async () => {
    const before = await nonce();
    const key = await enqueue(fundPayload(), { broadcastBy: new Date(clock.now() - 1_000) });
    await engine.tick();
    const refused = await job(key);
    assert.equal(refused.status, 'failed');
    assert.match(refused.lastError, /broadcast deadline passed \(safety rule 2\)/);
    assert.equal(refused.txHash, '');
    assert.equal(await nonce(), before, 'no transaction was signed or sent');
  });

  test('safety rule 2: a funding sent but not mined by its deadline is cancelled at its nonce, and never lands', async () => {
    await eth.node.rpc('evm_setAutomine', [false]);
    try {
      const balanceBefore = await eth.client.getBalance({ address: eth.deployment.contracts.nativeHtlc });
      const key = await enqueue(fundPayload(), { broadcastBy: new Date(clock.now() + 60_000) });
      await engine.tick();
      const sent = await job(key);
      assert.equal(sent.status, 'submitted');
      const funding = sent.txHash as Hex;
      clock.advance(60_000);
      await engine.tick(); // past the deadline, still pending: replaced at its nonce
      const cancelling = await job(key);
      assert.notEqual(cancelling.txHash, funding, 'a cancellation took its place');
      await eth.node.rpc('evm_mine', []);
      const done = await settle(key);
      assert.equal(done.status, 'failed');
      assert.match(done.lastError, /cancelled: not landed by its broadcast deadline \(safety rule 2\)/);
      const cancel = await eth.client.getTransactionReceipt({ hash: done.txHash as Hex });
      assert.equal(cancel.status, 'success');
      assert.equal(cancel.to?.toLowerCase(), solver.toLowerCase(), 'an empty transfer to the account itself');
      await assert.rejects(eth.client.getTransactionReceipt({ hash: funding }), 'the funding was never mined');
      assert.equal(await eth.client.getBalance({ address: eth.deployment.contracts.nativeHtlc }), balanceBefore, 'nothing reached the HTLC');
    } finally {
      await eth.node.rpc('evm_setAutomine', [true]);
    }
  });
});
