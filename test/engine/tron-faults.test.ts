// The Tron driver with its node out of reach (a TCP proxy in front of the local Tron chain, cut and
// restored): a new job waits without using an attempt and lands once the node is back; a job whose
// transaction is out waits too, and is confirmed once the node answers, its one transaction landed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TronApi } from '../../src/chains/tron/api.ts';
import { tronEngine, type TronEngine } from '../../src/chains/tron/driver.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import type { Store } from '../../src/store/database.ts';
import { enqueueJob, findJob } from '../../src/store/relayer-jobs.ts';
import { localnetRegistry, seedBasics } from '../helpers/fixtures.ts';
import { openTestStore } from '../helpers/stores.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { settleTronJob, startTronTestChain, type TronTestChain } from '../helpers/tron-localnet.ts';

const registry = localnetRegistry();
const USDT = registry.asset('tron_localnet:usdt')!;
let c: TronTestChain;
let proxy: TcpProxy;
let store: Store;
let engine: TronEngine;
let direct: TronApi;

before(async () => {
  c = await startTronTestChain();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: c.localnet.port });
  store = await openTestStore('pglite');
  await seedBasics(store.db, registry);
  direct = new TronApi(c.localnet.url);
  const api = new TronApi(proxy.through(c.localnet.url), { timeoutMs: 1_000 });
  engine = tronEngine({ db: store.db, chain: 'tron_localnet', api, privateKey: privateKeyOf(devAccount('solver')), signer: 'solver', worker: 'w', recheckMs: 0, retryMs: 0, maxRetryMs: 0 });
});
after(async () => {
  await store?.close();
  await proxy?.close();
  await c?.stop();
});

let n = 0;
const enqueue = async () => {
  const key = `approve:${++n}`;
  await enqueueJob(store.db, { chain: 'tron_localnet', action: 'approve', idempotencyKey: key, payload: { kind: 'approve', token: USDT.token.address, spender: USDT.htlc.address }, signer: 'solver', maxAttempts: 1 });
  return key;
};

const settle = (key: string) => settleTronJob(store.db, c, engine, key);

test('the node out of reach before a job is signed: no attempt is used, and the job lands once it is back', async () => {
  const key = await enqueue();
  proxy.cut();
  try {
    for (let i = 0; i < 5; i++) await engine.tick();
    const waiting = (await findJob(store.db, key))!;
    assert.equal(waiting.status, 'queued');
    assert.equal(waiting.attempts, 0);
    assert.equal(waiting.txHash, '');
    assert.match(waiting.lastError, /node unreachable/);
  } finally {
    proxy.restore();
  }
  const done = await settle(key);
  assert.equal(done.status, 'confirmed', done.lastError);
  assert.equal(done.attempts, 1);
});

test('the node out of reach while the transaction is out: the job keeps it, and is confirmed once the node answers', async () => {
  const key = await enqueue();
  await engine.tick();
  const sent = (await findJob(store.db, key))!;
  assert.equal(sent.status, 'submitted', sent.lastError);
  proxy.cut();
  try {
    await c.localnet.mine();
    for (let i = 0; i < 5; i++) await engine.tick();
    const waiting = (await findJob(store.db, key))!;
    assert.notEqual(waiting.status, 'failed');
    assert.equal(waiting.txHash, sent.txHash, 'the same transaction');
  } finally {
    proxy.restore();
  }
  const done = await settle(key);
  assert.equal(done.status, 'confirmed', done.lastError);
  assert.equal(done.txHash, sent.txHash);
  assert.ok(await direct.transactionInfo(sent.txHash, true), 'landed and solidified');
});
