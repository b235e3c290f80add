// The transaction engine with the Solana driver against the local Solana chain behind a loopback
// proxy the test cuts: a node out of reach costs no attempt and the job lands once it is back, and so
// does a node answering HTTP 429 or 503 (a provider's rate limit, an outage behind a gateway); and
// safety rule 2 at broadcast: a funding past its deadline is never first sent, and one signed before
// it but not landed is never sent again, so its blockhash expires and the job fails.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KeyPairSigner } from '@solana/kit';
import { solanaEngine } from '../../src/chains/solana/driver.ts';
import { solanaJobInstructions } from '../../src/chains/solana/job-instructions.ts';
import type { TxEngine } from '../../src/engine/engine.ts';
import type { Store } from '../../src/store/database.ts';
import { claimJobs, enqueueJob, findJob, markSubmitted } from '../../src/store/relayer-jobs.ts';
import { saveSignedTx } from '../../src/store/signed-txs.ts';
import { localnetRegistry, seedBasics } from '../helpers/fixtures.ts';
import { solFundPayload } from '../helpers/solana.ts';
import { signedTransaction, startNativeSwapsLocalnet, type LocalnetHarness } from '../helpers/solana-localnet.ts';
import { describeEachStore, openTestStore } from '../helpers/stores.ts';
import { startHttpFaultProxy, throughFaults, type HttpFaultProxy } from '../helpers/http-fault-proxy.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { MovableClock } from '../helpers/clock.ts';

const registry = localnetRegistry();
const CHAIN = 'solana_localnet';
let net: LocalnetHarness;
let payer: KeyPairSigner;
let redeemer: KeyPairSigner;

before(async () => {
  ({ net, payer, redeemer } = await startNativeSwapsLocalnet());
});
after(async () => {
  await net?.stop();
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeEachStore('the engine, Solana driver, under faults', (kind) => {
  let store: Store;
  let proxy: TcpProxy;
  let engine: TxEngine;
  let gateway: HttpFaultProxy;
  let viaGateway: TxEngine;
  /** The engines' clock: rule 2's deadlines pass when the test moves it. */
  const clock = new MovableClock();

  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db, registry);
    const url = new URL(net.chain.rpcUrl);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    // The solver's engine of the chain, reaching its node at `rpcUrl`.
    const engineAt = (rpcUrl: string) =>
      solanaEngine({ db: store.db, chain: CHAIN, rpcUrl, payer: Promise.resolve(payer), signer: 'solver', instructions: solanaJobInstructions, recheckMs: 0, retryMs: 5, maxRetryMs: 40, clock });
    engine = engineAt(proxy.through(net.chain.rpcUrl));
    gateway = await startHttpFaultProxy(net.chain.rpcUrl);
    viaGateway = engineAt(gateway.url);
  });
  after(async () => {
    await gateway?.close();
    await proxy?.close();
    await store.close();
  });

  const enqueue = async (extra: { broadcastBy?: Date; maxAttempts?: number } = {}) => {
    const payload = solFundPayload(payer.address, redeemer.address, 1_000_000n);
    const key = `test:fund:${payload.secretHash}`;
    await enqueueJob(store.db, { chain: CHAIN, action: 'solver-fund', idempotencyKey: key, payload, signer: 'solver', ...extra });
    return { key, payload };
  };
  const job = async (key: string) => (await findJob(store.db, key))!;
  /** Passes of `by` until the job's transaction is sent, then a slot: it is confirmed, on its first attempt. */
  const landsWithOneAttempt = async (by: TxEngine, key: string) => {
    for (let i = 0; i < 100 && (await job(key)).status !== 'submitted'; i++) {
      await by.tick();
      await pause(10);
    }
    net!.chain.advanceSlots(1);
    await by.tick();
    const done = await job(key);
    assert.equal(done.status, 'confirmed', done.lastError);
    assert.equal(done.attempts, 1);
  };

  test('the node out of reach: no attempt is used, and the job lands once it is back', async () => {
    const { key } = await enqueue({ maxAttempts: 2 });
    proxy.cut();
    try {
      for (let i = 0; i < 10; i++) {
        await engine.tick();
        await pause(15);
      }
      const waiting = await job(key);
      assert.equal(waiting.status, 'queued');
      assert.equal(waiting.attempts, 0);
      assert.match(waiting.lastError, /node unreachable/);
    } finally {
      proxy.restore();
    }
    await landsWithOneAttempt(engine, key);
  });

  test('a node answering 429 (rate-limited), then 503: no attempt is used, and the job lands once it answers', async () => {
    const { key } = await enqueue({ maxAttempts: 2 });
    await throughFaults(gateway, [429, 503], () => viaGateway.tick());
    const waiting = await job(key);
    assert.equal(waiting.status, 'queued');
    assert.equal(waiting.attempts, 0);
    assert.match(waiting.lastError, /node unreachable/);
    await landsWithOneAttempt(viaGateway, key);
  });

  test('safety rule 2: a funding whose deadline passed is never sent', async () => {
    const { key } = await enqueue({ broadcastBy: new Date(clock.now() - 1_000) });
    await engine.tick();
    const refused = await job(key);
    assert.equal(refused.status, 'failed');
    assert.match(refused.lastError, /broadcast deadline passed \(safety rule 2\)/);
    assert.equal(refused.txHash, '');
  });

  test('safety rule 2: a funding signed before its deadline but not landed is never sent after it, and fails when it expires', async () => {
    const { key, payload } = await enqueue({ broadcastBy: new Date(clock.now() + 60_000) });
    // As if a worker signed and stored it, then died before the node got it.
    const [claimed] = await claimJobs(store.db, { chain: CHAIN, signer: 'solver', worker: 'crashed', leaseMs: 60_000, limit: 1 });
    const { wire, signature, lastValidBlockHeight } = await signedTransaction(net.rpc, payer, await solanaJobInstructions(payload, payer));
    assert.ok(await saveSignedTx(store.db, claimed!, 'crashed', { raw: wire, hash: signature, validUntilHeight: lastValidBlockHeight }));
    await markSubmitted(store.db, claimed!.id, { worker: 'crashed', txHash: signature, recheckMs: 0 });
    clock.advance(60_000);
    await engine.tick(); // past the deadline: not sent
    net.chain.advanceSlots(1);
    assert.equal((await net.rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send()).value[0], null, 'not sent');
    net.chain.advanceSlots(152);
    await engine.tick(); // expired
    const done = await job(key);
    assert.equal(done.status, 'failed');
    assert.match(done.lastError, /expired .*broadcast deadline passed \(safety rule 2\)/);
    assert.equal((await net.rpc.getSignatureStatuses([signature], { searchTransactionHistory: true }).send()).value[0], null, 'it never landed');
  });
});
