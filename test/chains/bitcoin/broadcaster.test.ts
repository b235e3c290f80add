// The Bitcoin-family broadcast queue against a real litecoind: a node out of reach never uses up a
// job's attempts (nor does one answering HTTP 429 or 503), rechecks of a submitted job are not attempts,
// and only the node's refusal fails one;
// safety rule 2: a funding past its deadline is never sent, and one no mempool has then fails and frees its inputs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BitcoinRpc } from '../../../src/chains/bitcoin/rpc.ts';
import { freePort } from '../../../src/localnet/free-port.ts';
import type { LitecoinNode } from '../../../src/localnet/bitcoin/litecoind.ts';
import { bitcoinEngine } from '../../../src/chains/bitcoin/driver.ts';
import { BitcoinFeeBumper } from '../../../src/chains/bitcoin/fee-bump.ts';
import { schnorr } from '@noble/curves/secp256k1.js';
import { enqueueBitcoinTx, outpointKey, reservedOutpoints } from '../../../src/chains/bitcoin/store/jobs.ts';
import type { Store } from '../../../src/store/database.ts';
import { findJob } from '../../../src/store/relayer-jobs.ts';
import { randomHex32, seedBasics } from '../../helpers/fixtures.ts';
import { litecoinNodeForSuite } from '../../helpers/litecoin.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';
import { startHttpFaultProxy, throughFaults } from '../../helpers/http-fault-proxy.ts';
import { MovableClock } from '../../helpers/clock.ts';

const CHAIN = 'litecoin_localnet';
let node: LitecoinNode | undefined;

before(async () => {
  node = await litecoinNodeForSuite();
});
after(() => node?.stop());

/**
 * A transaction of the node's wallet, signed and not broadcast: its hex, txid and inputs; with
 * `replacementFees`, also replacements of it (BIP125-signalling) paying those fees, in coins.
 */
async function signedWalletTx(n: LitecoinNode, replacementFees: number[] = []) {
  const [coin] = await n.rpc.call<Array<{ txid: string; vout: number; amount: number }>>('listunspent', [1]);
  assert.ok(coin, 'the node wallet has a mature coin');
  const to = await n.rpc.call<string>('getnewaddress', ['', 'bech32']);
  const sign = async (fee: number) => {
    const outputs = { [to]: Number((coin.amount - fee).toFixed(8)) };
    const unsigned = await n.rpc.call<string>('createrawtransaction', [[{ txid: coin.txid, vout: coin.vout }], outputs, 0, replacementFees.length > 0]);
    const { hex } = await n.rpc.call<{ hex: string }>('signrawtransactionwithwallet', [unsigned]);
    const { txid, vsize } = await n.rpc.call<{ txid: string; vsize: number }>('decoderawtransaction', [hex]);
    return { hex, txid, feeRate: String(Math.floor((fee * 1e8) / vsize)) };
  };
  // Replaceable ones start at about 1.4 sat/vB, so that a bump finds them stuck.
  const { hex, txid } = await sign(replacementFees.length > 0 ? 0.0000015 : 0.001);
  const replacements = await Promise.all(replacementFees.map(sign));
  return { hex, txid, inputs: [{ txid: coin.txid, vout: coin.vout }], replacements };
}

describeEachStore('Bitcoin-family broadcast queue', (kind) => {
  let store: Store;
  before(async () => {
    store = await openTestStore(kind);
    await seedBasics(store.db);
  });
  after(() => store.close());

  test('a node out of reach leaves the job queued with its attempts intact; then it is sent, and rechecks are not attempts', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const tx = await signedWalletTx(node);
    const key = `test:${randomHex32()}:fund`;
    await enqueueBitcoinTx(store.db, { chain: CHAIN, action: 'fund', idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs: tx.inputs });

    const unreachable = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: new BitcoinRpc({ url: `http://127.0.0.1:${await freePort()}` }), worker: 'w', retryMs: 0, recheckMs: 0 });
    for (let i = 0; i < 15; i++) await unreachable.tick();
    const waiting = (await findJob(store.db, key))!;
    assert.equal(waiting.status, 'queued', 'more failed tries than max_attempts, and still queued');
    assert.equal(waiting.attempts, 0);
    assert.match(waiting.lastError, /fetch failed|ECONNREFUSED/);
    assert.ok(!(await node.rpc.call<string[]>('getrawmempool')).includes(tx.txid));

    const relayer = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'w', retryMs: 0, recheckMs: 0 });
    await relayer.tick();
    assert.ok((await node.rpc.call<string[]>('getrawmempool')).includes(tx.txid), 'broadcast');
    for (let i = 0; i < 15; i++) await relayer.tick();
    const sent = (await findJob(store.db, key))!;
    assert.equal(sent.status, 'submitted');
    assert.equal(sent.txHash, tx.txid);
    assert.equal(sent.attempts, 1, 'fifteen rechecks of the submitted transaction are not attempts');
  });

  test('a node answering 429 (rate-limited), then 503, leaves the job queued with its attempts intact; then it is sent', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const tx = await signedWalletTx(node);
    const key = `test:${randomHex32()}:fund`;
    await enqueueBitcoinTx(store.db, { chain: CHAIN, action: 'fund', idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs: tx.inputs });
    const gateway = await startHttpFaultProxy(node.rpcUrl);
    try {
      const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: new BitcoinRpc({ url: gateway.url, auth: { cookieFile: node.cookieFile } }), worker: 'w', retryMs: 0, recheckMs: 0 });
      await throughFaults(gateway, [429, 503], () => engine.tick());
      assert.ok(gateway.faults >= 8, `every pass met the fault (${gateway.faults})`);
      const waiting = (await findJob(store.db, key))!;
      assert.equal(waiting.status, 'queued');
      assert.equal(waiting.attempts, 0, 'eight passes met the fault, none counted');
      assert.match(waiting.lastError, /node unreachable.*503/);
      await engine.tick();
      assert.ok((await node.rpc.call<string[]>('getrawmempool')).includes(tx.txid), 'sent once the node answers');
      assert.equal((await findJob(store.db, key))!.status, 'submitted');
    } finally {
      await gateway.close();
    }
    await node.mine(1);
  });

  test('a replacement the node refuses (Litecoin relays none by default) costs no attempt, and the transaction it would replace stays the one sent', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const tx = await signedWalletTx(node, [0.00002]);
    const key = `test:${randomHex32()}:redeem`;
    await enqueueBitcoinTx(store.db, { chain: CHAIN, action: 'redeem', idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs: tx.inputs, replacements: tx.replacements });
    // Told, wrongly, that the node relays replacements, and that a transaction is stuck at once.
    const bumper = new BitcoinFeeBumper({ db: store.db, chain: CHAIN, network: 'litecoin_regtest', rpc: node.rpc, walletKey: schnorr.utils.randomSecretKey(), afterBlocks: 0, replaceByFee: true });
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'w', retryMs: 0, recheckMs: 0, bumper });
    await engine.tick();
    const sent = (await findJob(store.db, key))!;
    assert.ok((await node.rpc.call<string[]>('getrawmempool')).includes(tx.txid), 'sent');
    for (let i = 0; i < 5; i++) await engine.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'submitted');
    assert.equal(job.txHash, tx.txid, 'the refused replacement gave its place back');
    assert.equal(job.attempts, sent.attempts, 'refused replacements are not attempts');
    const pool = await node.rpc.call<string[]>('getrawmempool');
    assert.ok(pool.includes(tx.txid) && !pool.includes(tx.replacements[0]!.txid));
    await node.mine(1);
  });

  test("the node's refusal uses up attempts: a transaction spending nothing that exists fails for good", async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    // A transaction whose input is an outpoint that does not exist.
    const bogusInput = { txid: randomHex32(), vout: 0 };
    const raw = await node.rpc.call<string>('createrawtransaction', [[bogusInput], { [await node.rpc.call<string>('getnewaddress', ['', 'bech32'])]: 1 }]);
    const key = `test:${randomHex32()}:fund`;
    await enqueueBitcoinTx(store.db, { chain: CHAIN, action: 'fund', idempotencyKey: key, rawTx: raw, txid: randomHex32(), inputs: [bogusInput] });
    const relayer = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'w', retryMs: 0, recheckMs: 0 });
    for (let i = 0; i < 12; i++) await relayer.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'failed');
    assert.match(job.lastError, /missing|inputs|bad-txns/i);
  });

  test('safety rule 2: a funding past its deadline is never sent; no mempool has it, so it fails and its inputs are free again', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const tx = await signedWalletTx(node);
    const key = `test:${randomHex32()}:fund`;
    await enqueueBitcoinTx(store.db, { chain: CHAIN, action: 'fund', idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs: tx.inputs, broadcastBy: new Date(Date.now() - 1_000) });
    assert.ok((await reservedOutpoints(store.db, CHAIN)).has(outpointKey(tx.inputs[0]!)), 'reserved while the job is open');
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'w', retryMs: 0, recheckMs: 0 });
    await engine.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'failed');
    assert.match(job.lastError, /never reached a mempool and its broadcast deadline passed \(safety rule 2\)/);
    assert.ok(!(await node.rpc.call<string[]>('getrawmempool')).includes(tx.txid), 'never sent');
    assert.ok(!(await reservedOutpoints(store.db, CHAIN)).has(outpointKey(tx.inputs[0]!)), 'its input is free for the wallet again');
  });

  test('safety rule 2: a funding sent before its deadline stays open past it while a mempool holds it (it may still be mined)', async (t) => {
    if (!node) return t.skip('litecoind is not installed');
    const tx = await signedWalletTx(node);
    const key = `test:${randomHex32()}:fund`;
    const clock = new MovableClock();
    await enqueueBitcoinTx(store.db, { chain: CHAIN, action: 'fund', idempotencyKey: key, rawTx: tx.hex, txid: tx.txid, inputs: tx.inputs, broadcastBy: new Date(clock.now() + 60_000) });
    const engine = bitcoinEngine({ db: store.db, chain: CHAIN, rpc: node.rpc, worker: 'w', retryMs: 0, recheckMs: 0, clock });
    await engine.tick();
    assert.ok((await node.rpc.call<string[]>('getrawmempool')).includes(tx.txid), 'sent before its deadline');
    clock.advance(60_000);
    await engine.tick();
    const job = (await findJob(store.db, key))!;
    assert.equal(job.status, 'submitted', 'it may still be mined');
    await node.mine(1);
  });
});
