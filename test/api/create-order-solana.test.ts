import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { base58 } from '@scure/base';
import { p2wpkh } from '@scure/btc-signer';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/app.ts';
import { bitcoinNetwork } from '../../src/chains/bitcoin/network.ts';
import { chainSigningOptions } from '../../src/chains/chain-access.ts';
import { loadRegistry } from '../../src/chains/registry.ts';
import { SecretBox } from '../../src/orders/secret-box.ts';
import { StaticPriceSource } from '../../src/pricing/price-source.ts';
import { buildStrategies } from '../../src/pricing/strategies.ts';
import { createApp } from '../../src/store/apps.ts';
import type { Store } from '../../src/store/database.ts';
import { syncRegistry } from '../../src/store/registry-sync.ts';
import { setSolverBalance, syncSolvers } from '../../src/store/solvers.ts';
import { MAINNET_REGISTRY_PATH } from '../helpers/fixtures.ts';
import { openTestStore } from '../helpers/stores.ts';
import { decodeTransaction } from '../chains/solana/fixtures.ts';

// A Solana validator cannot run here; this server answers the one JSON-RPC call the service makes,
// so @solana/kit's real client is exercised over real HTTP.
const BLOCKHASH = base58.encode(randomBytes(32));
let rpcCalls = 0;
let rpc: Server;
let rpcUrl: string;

const solanaAddress = () => base58.encode(randomBytes(32));
const SOLVER = {
  id: 'solver-1',
  name: 'mainnet solver',
  addresses: { solana: solanaAddress(), bitcoin: Buffer.from(schnorr.getPublicKey(schnorr.utils.randomSecretKey())).toString('hex') },
};
const RELAYER = solanaAddress();
const USER_SOL = solanaAddress();
const USER_BTC = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), bitcoinNetwork('bitcoin')).address;

let store: Store;
let key: string;

async function api(withRpc: boolean): Promise<FastifyInstance> {
  const registry = loadRegistry(MAINNET_REGISTRY_PATH);
  const app = await buildApi({
    store,
    registry,
    prices: new StaticPriceSource({ solana: 150, bitcoin: 95000, 'usd-coin': 1 }),
    strategies: buildStrategies([{ solver: SOLVER.id, from: ['solana:sol', 'solana:usdc'], to: 'bitcoin:btc', fee_bips: 30 }], [SOLVER], registry),
    solvers: [SOLVER],
    secrets: new SecretBox(randomBytes(32)),
    signingOptions: chainSigningOptions(withRpc ? { solana: { rpc_url: rpcUrl, relayer: RELAYER } } : {}, registry),
    version: 'test',
  });
  await app.ready();
  return app;
}

before(async () => {
  rpc = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string };
      rpcCalls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { context: { slot: 1 }, value: { blockhash: BLOCKHASH, lastValidBlockHeight: 100 } } }));
    });
  });
  await new Promise<void>((r) => rpc.listen(0, '127.0.0.1', r));
  rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
  store = await openTestStore('pglite');
  const registry = loadRegistry(MAINNET_REGISTRY_PATH);
  await syncRegistry(store.db, registry);
  await syncSolvers(store.db, [SOLVER]);
  await setSolverBalance(store.db, { solverId: SOLVER.id, asset: 'bitcoin:btc', balance: 10n ** 12n });
  key = (await createApp(store.db, { name: 'wallet', gasless: true })).key;
});
after(async () => {
  await store.close();
  await new Promise<void>((r) => rpc.close(() => r()));
});

const order = (asset: string, amount: string, destination: string) => ({
  source: { asset, owner: USER_SOL, amount },
  destination: { asset: 'bitcoin:btc', owner: USER_BTC, amount: destination },
});

test('a SOL source gets an unsigned versioned transaction on a fresh blockhash, the client paying fees', async () => {
  const app = await api(true);
  try {
    // 1 SOL at 150 USD = 157,894 sats at 95,000 USD, less 0.3 %
    const res = await app.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': key }, payload: order('solana:sol', '1000000000', '157000') });
    assert.equal(res.statusCode, 201, res.body);
    const result = res.json<{ result: { order_id: string; versioned_tx: string; versioned_tx_gasless: string | null } }>().result;
    assert.equal(result.versioned_tx_gasless, null, 'native SOL has no gasless form');
    const tx = decodeTransaction(result.versioned_tx);
    assert.equal(tx.compiled.lifetimeToken, BLOCKHASH);
    assert.deepEqual(tx.signers, [USER_SOL]);
    assert.ok(rpcCalls >= 1);
    const read = await app.inject({ url: `/v2/orders/${result.order_id}`, headers: { 'service-app-id': key } });
    const swap = read.json<{ result: { source_swap: { swap_id: string; initiator: string; redeemer: string } } }>().result.source_swap;
    assert.match(swap.swap_id, /^[0-9a-f]{64}$/);
    assert.deepEqual([swap.initiator, swap.redeemer], [USER_SOL, SOLVER.addresses.solana]);

    const quote = await app.inject({ url: `/v3/quote/${result.order_id}` });
    const initiate = quote.json<{ result: { initiate: { type: string; versioned_tx: string } } }>().result.initiate;
    assert.equal(initiate.type, 'solana');
    assert.equal(decodeTransaction(initiate.versioned_tx).compiled.lifetimeToken, BLOCKHASH);
    assert.deepEqual(decodeTransaction(initiate.versioned_tx).signers, [USER_SOL]);
  } finally {
    await app.close();
  }
});

test('an SPL source also gets the gasless transaction, where the relayer pays and the client signs second', async () => {
  const app = await api(true);
  try {
    const res = await app.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': key }, payload: order('solana:usdc', '100000000', '104000') });
    assert.equal(res.statusCode, 201, res.body);
    const result = res.json<{ result: { versioned_tx: string; versioned_tx_gasless: string } }>().result;
    assert.deepEqual(decodeTransaction(result.versioned_tx).signers, [USER_SOL]);
    assert.deepEqual(decodeTransaction(result.versioned_tx_gasless).signers, [RELAYER, USER_SOL]);
  } finally {
    await app.close();
  }
});

test('without a Solana RPC the order is refused with 503, and nothing is written', async () => {
  const app = await api(false);
  try {
    const before = await store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const res = await app.inject({ method: 'POST', url: '/v2/orders', headers: { 'service-app-id': key }, payload: order('solana:sol', '1000000000', '157000') });
    assert.equal(res.statusCode, 503, res.body);
    assert.match(res.json<{ error: string }>().error, /cannot build the solana transactions now: .*recentBlockhash/);
    const after = await store.db.selectFrom('orders').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    assert.equal(after.n, before.n);
  } finally {
    await app.close();
  }
});

test('a relayer that is not an address of its chain is a config error naming the field', () => {
  const registry = loadRegistry(MAINNET_REGISTRY_PATH);
  assert.throws(() => chainSigningOptions({ solana: { relayer: '0xabc' } }, registry), /config: chains\.solana\.relayer: 0xabc is not a valid address on solana/);
  assert.throws(() => chainSigningOptions({ nowhere: {} }, registry), /config: chains\.nowhere: no chain nowhere in the registry/);
});
