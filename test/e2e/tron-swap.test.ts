// Tron swaps end to end over HTTP against `hashlock dev`'s wiring (in process, PGlite): the local Tron
// chain (anvil behind Tron's HTTP API and transaction rules, a block every second as the test registry
// has it) with the test USDT and its HTLC, ethereum_localnet, and the service's own watchers, senders
// and solver. Tron USDT gasless -> EVM USDC and EVM USDC -> Tron USDT, every balance checked, fees
// named; ten identical PATCHes make one transaction; a swap whose on-chain terms differ from the
// order's is never matched; a secret the client keeps; rule 2 then a refund after expiry; an instant
// refund. (Tron <-> Litecoin and Solana run through `hashlock swap` in test/cli/swap.test.ts.)
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { TronApi } from '../../src/chains/tron/api.ts';
import { TronHtlcReader } from '../../src/chains/tron/htlc-reads.ts';
import { jobCall } from '../../src/chains/tron/jobs.ts';
import { hex41, signTronCall } from '../../src/chains/tron/transactions.ts';
import type { ServiceConfig } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { tronAddressOf, tronDevConfig } from '../helpers/tron-localnet.ts';
import { solverPassesFrom, until } from '../helpers/wait.ts';

const evmUser = privateKeyToAccount(privateKeyOf(devAccount('user')));
const USER_KEY = privateKeyOf(devAccount('user'));
const TRON_USER = tronAddressOf('user');
const TRON_SOLVER = tronAddressOf('solver');
const SOLVER_EVM = devAccount('solver').address;

let dev: Dev;
let config: ServiceConfig;
let tron: TronApi;
let reader: TronHtlcReader;
let eth: ReturnType<typeof createPublicClient>;
let ethRpc: string;
/** Mines `blocks` Tron blocks at once: the source's timelock passes without waiting a second a block. */
let advanceTron: (blocks: number) => Promise<void>;

before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-tron-swap-'));
  config = tronDevConfig(dataDir);
  dev = await startDev(config);
  const tronChain = dev.chains.find((c) => c.chain.key === 'tron_localnet');
  assert.ok(tronChain, 'the devnet runs tron_localnet');
  tron = new TronApi(String(tronChain.access.rpc_url));
  reader = new TronHtlcReader(tron);
  advanceTron = async (blocks) => tronChain.advance!(blocks);
  ethRpc = String(dev.chains.find((c) => c.chain.key === 'ethereum_localnet')!.access.rpc_url);
  eth = createPublicClient({ transport: http(ethRpc) });
});

after(async () => {
  await dev?.stop();
});

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: { status: string; result: T; error?: string } }> {
  const res = await fetch(`${dev.apiUrl}${path}`, {
    method,
    headers: { 'service-app-id': dev.appKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { status: string; result: T; error?: string } };
}

interface Order {
  order_id: string;
  status: string;
  source_swap: { swap_id: string; initiate_tx_hash: string; redeem_tx_hash: string; refund_tx_hash: string };
  destination_swap: { swap_id: string; initiate_tx_hash: string; redeem_tx_hash: string; secret: string };
}
const readOrder = async (id: string) => (await api<Order>('GET', `/v2/orders/${id}`)).body.result;
const orderReaches = async (id: string, status: string) => {
  let last: Order | undefined;
  try {
    return await until(`order ${id} to reach ${status}`, async () => {
      last = await readOrder(id);
      return last.status === status ? last : undefined;
    }, 120_000, 300);
  } catch (err) {
    throw new Error(`${(err as Error).message}; it is ${JSON.stringify(last)}`, { cause: err });
  }
};

async function createOrder(from: string, to: string, amount: bigint, owners: { from: string; to: string }, secretHash?: string) {
  const q = await api<Array<{ solver_id: string; destination: { amount: string } }>>('GET', `/v2/quote?from=${from}&to=${to}&from_amount=${amount}`);
  assert.equal(q.status, 200, JSON.stringify(q.body));
  const best = q.body.result[0]!;
  const res = await api<Record<string, any>>('POST', '/v2/orders', {
    source: { asset: from, owner: owners.from, amount: amount.toString() },
    destination: { asset: to, owner: owners.to, amount: best.destination.amount },
    solver_id: best.solver_id,
    ...(secretHash ? { secret_hash: secretHash } : {}),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { created: res.body.result, receive: BigInt(best.destination.amount) };
}

const asset = (id: string) => dev.service.registry.asset(id)!;
const usdtOf = (who: string) => reader.trc20Balance(asset('tron_localnet:usdt').token.address, who);
const usdcOf = (who: Address) => eth.readContract({ address: asset('ethereum_localnet:usdc').token.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
const trxOf = (who: string) => tron.balanceSun(hex41(who));

/** The user signs a Tron contract call offline and broadcasts it; answers its txID at once. */
async function broadcastAsTronUser(call: { contract: string; data: Hex }): Promise<string> {
  const head = await tron.nowBlock();
  const tx = await signTronCall({ call, owner: TRON_USER, privateKey: USER_KEY, reference: head, expiration: head.timestampMs + 60_000, feeLimitSun: 150_000_000n });
  assert.equal((await tron.broadcast(tx as unknown as Record<string, unknown>)).result, true, 'the node takes the user transaction');
  return tx.txID;
}

/** Waits until the transaction is in a block and succeeded; answers the TRX it burnt. */
async function landed(txId: string): Promise<bigint> {
  const info = await until('the user transaction to land', () => tron.transactionInfo(txId), 30_000, 300);
  assert.equal(info.failed, false, `user transaction ${txId} succeeded`);
  return info.feeSun;
}

/** The user signs a Tron contract call offline and broadcasts it; resolves once it is in a block. */
async function sendAsTronUser(call: { contract: string; data: Hex }): Promise<string> {
  const txId = await broadcastAsTronUser(call);
  await landed(txId);
  return txId;
}

async function signInitiate(td: Record<string, any>): Promise<Hex> {
  return evmUser.signTypedData({
    domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
    types: { Initiate: td.types.Initiate },
    primaryType: 'Initiate',
    message: { redeemer: td.message.redeemer, secretHash: td.message.secretHash, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
  });
}

test('Tron USDT gasless -> EVM USDC: the user approves once, signs TIP-712, ten identical PATCHes make one initiate the relayer pays; every balance checked', async () => {
  const amount = 10_000_000n;
  const { created, receive } = await createOrder('tron_localnet:usdt', 'ethereum_localnet:usdc', amount, { from: TRON_USER, to: evmUser.address });
  assert.deepEqual(Object.keys(created.initiate_transaction).sort(), ['chain_id', 'data', 'gas_limit', 'to', 'value']);
  await sendAsTronUser({ contract: created.approval_transaction.to, data: created.approval_transaction.data });
  const before = { usdt: await usdtOf(TRON_USER), trx: await trxOf(TRON_USER), usdc: await usdcOf(evmUser.address), solverUsdt: await usdtOf(TRON_SOLVER), solverUsdc: await usdcOf(SOLVER_EVM) };
  const signature = await signInitiate(created.typed_data);
  const answers = await Promise.all(Array.from({ length: 10 }, () => api('PATCH', `/v2/orders/${created.order_id}?action=initiate`, { signature })));
  for (const a of answers) assert.equal(a.status, 202, JSON.stringify(a.body));
  const done = await orderReaches(created.order_id, 'completed');
  const jobs = await dev.service.store.db.selectFrom('relayer_jobs').select(['tx_hash', 'tx_hashes']).where('order_id', '=', created.order_id).where('action', '=', 'initiate').execute();
  assert.equal(jobs.length, 1, 'one initiate job');
  assert.deepEqual(jobs[0]!.tx_hashes, [done.source_swap.initiate_tx_hash], 'one initiate transaction');
  assert.equal(await usdtOf(TRON_USER), before.usdt - amount);
  assert.equal(await trxOf(TRON_USER), before.trx, 'the user paid no TRX: the relayer paid the energy');
  assert.equal(await usdcOf(evmUser.address), before.usdc + receive);
  assert.equal(await usdtOf(TRON_SOLVER), before.solverUsdt + amount);
  assert.equal(await usdcOf(SOLVER_EVM), before.solverUsdc - receive);
});

test('EVM USDC -> Tron USDT: the gasless USDC initiate, the solver funds the Tron HTLC, the service redeems it to the user', async () => {
  const amount = 5_000_000n;
  const { created, receive } = await createOrder('ethereum_localnet:usdc', 'tron_localnet:usdt', amount, { from: evmUser.address, to: TRON_USER });
  const before = { usdt: await usdtOf(TRON_USER), trx: await trxOf(TRON_USER), usdc: await usdcOf(evmUser.address), solverUsdt: await usdtOf(TRON_SOLVER) };
  const wallet = createWalletClient({ account: evmUser, transport: http(ethRpc) });
  await eth.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: null, to: created.approval_transaction.to, data: created.approval_transaction.data }) });
  const patched = await api('PATCH', `/v2/orders/${created.order_id}?action=initiate`, { signature: await signInitiate(created.typed_data) });
  assert.equal(patched.status, 202, JSON.stringify(patched.body));
  const done = await orderReaches(created.order_id, 'completed');
  assert.ok(done.destination_swap.redeem_tx_hash);
  assert.equal(await usdcOf(evmUser.address), before.usdc - amount);
  assert.equal(await usdtOf(TRON_USER), before.usdt + receive);
  assert.equal(await trxOf(TRON_USER), before.trx, 'the user paid no TRX');
  assert.equal(await usdtOf(TRON_SOLVER), before.solverUsdt - receive);
});

test("a Tron HTLC with other terms than the order's is never matched: the order stays created and nothing is funded", async () => {
  const amount = 3_000_000n;
  const { created } = await createOrder('tron_localnet:usdt', 'ethereum_localnet:usdc', amount, { from: TRON_USER, to: evmUser.address });
  const secretHash = String(created.typed_data.message.secretHash).replace(/^0x/, '');
  await sendAsTronUser({ contract: created.approval_transaction.to, data: created.approval_transaction.data });
  // The order's secret hash, redeemer and amount, with a timelock one block longer: another HTLC order.
  const timelock = BigInt(created.typed_data.message.timelock) + 1n;
  const other = await sendAsTronUser(jobCall({ kind: 'fund', htlc: asset('tron_localnet:usdt').htlc.address, redeemer: TRON_SOLVER, timelock: `0x${timelock.toString(16)}`, amount: `0x${amount.toString(16)}`, secretHash: `0x${secretHash}` }));
  // The watcher has read the block of that HTLC (and would have matched it to the order in the same
  // write), then the solver has looked at everything since.
  const { blockNumber } = (await tron.transactionInfo(other))!;
  await until('the Tron watcher to read the block of the other HTLC', async () => {
    const cursor = await dev.service.store.db.selectFrom('watcher_cursors').select('block_number').where('chain', '=', 'tron_localnet').executeTakeFirst();
    return cursor && BigInt(cursor.block_number) >= blockNumber ? true : undefined;
  }, 60_000, 200);
  await solverPassesFrom(dev.apiUrl);
  const o = await readOrder(created.order_id);
  assert.equal(o.status, 'created');
  assert.equal(o.source_swap.initiate_tx_hash, '');
  assert.equal(o.destination_swap.initiate_tx_hash, '');
  const fund = await dev.service.store.db.selectFrom('relayer_jobs').select('id').where('order_id', '=', created.order_id).where('action', '=', 'solver-fund').execute();
  assert.deepEqual(fund, []);
});

test('EVM USDC -> Tron USDT with the secret the client keeps: the client redeems its Tron destination through PATCH ?action=redeem, the relayer pays', async () => {
  const secret = randomBytes(32);
  const secretHash = createHash('sha256').update(secret).digest('hex');
  const amount = 4_000_000n;
  const { created, receive } = await createOrder('ethereum_localnet:usdc', 'tron_localnet:usdt', amount, { from: evmUser.address, to: TRON_USER }, secretHash);
  const before = { usdt: await usdtOf(TRON_USER), trx: await trxOf(TRON_USER), solverUsdt: await usdtOf(TRON_SOLVER), solverUsdc: await usdcOf(SOLVER_EVM) };
  if (created.approval_transaction) {
    const wallet = createWalletClient({ account: evmUser, transport: http(ethRpc) });
    await eth.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: null, to: created.approval_transaction.to, data: created.approval_transaction.data }) });
  }
  assert.equal((await api('PATCH', `/v2/orders/${created.order_id}?action=initiate`, { signature: await signInitiate(created.typed_data) })).status, 202);
  await orderReaches(created.order_id, 'awaiting_redeem');
  const wrong = await api('PATCH', `/v2/orders/${created.order_id}?action=redeem`, { secret: randomBytes(32).toString('hex') });
  assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
  const redeem = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=redeem`, { secret: secret.toString('hex') });
  assert.equal(redeem.status, 202, JSON.stringify(redeem.body));
  const done = await orderReaches(created.order_id, 'completed');
  assert.equal(done.destination_swap.secret, secret.toString('hex'));
  assert.equal(await usdtOf(TRON_USER), before.usdt + receive);
  assert.equal(await trxOf(TRON_USER), before.trx, 'the user paid nothing on Tron');
  assert.equal(await usdtOf(TRON_SOLVER), before.solverUsdt - receive);
  assert.equal(await usdcOf(SOLVER_EVM), before.solverUsdc + amount, 'the solver redeemed the source with the secret the client revealed');
});

/**
 * How many Tron blocks to mine at once past a source's initiate so that rule 2 no longer allows its
 * ethereum_localnet destination: the source is left half the time rule 2 needs (the destination
 * timelock plus the margin, from the registry and the config: 225 s of the 450 s needed).
 */
function blocksPastRule2(): number {
  const source = dev.service.registry.chain('tron_localnet')!;
  const destination = dev.service.registry.chain('ethereum_localnet')!;
  const needMs = destination.destinationTimelock * destination.blockTimeMs + config.solverRule2MarginSeconds * 1_000;
  return source.sourceTimelock - Math.floor(needMs / 2 / source.blockTimeMs);
}

/**
 * The user initiates a Tron source with its own transaction, and the chain moves `blocksPastRule2()`
 * on at once: the source has half the time left that rule 2 needs to fund the destination.
 */
async function initiateTooLate(amount: bigint) {
  const { created } = await createOrder('tron_localnet:usdt', 'ethereum_localnet:usdc', amount, { from: TRON_USER, to: evmUser.address });
  const before = { usdt: await usdtOf(TRON_USER), trx: await trxOf(TRON_USER), solverUsdc: await usdcOf(SOLVER_EVM) };
  let userFees = 0n;
  if (created.approval_transaction) userFees += await landed(await broadcastAsTronUser({ contract: created.approval_transaction.to, data: created.approval_transaction.data }));
  const initiate = await broadcastAsTronUser({ contract: created.initiate_transaction.to, data: created.initiate_transaction.data });
  await advanceTron(blocksPastRule2());
  userFees += await landed(initiate);
  await orderReaches(created.order_id, 'initiated');
  return { created, before, userFees };
}

test('rule 2, then a refund after expiry: a Tron source with too little time left is not funded; PATCH ?action=refund is refused before the timelock and returns the USDT after it', async () => {
  const amount = 6_000_000n;
  const { created, before, userFees } = await initiateTooLate(amount);
  const early = await api('PATCH', `/v2/orders/${created.order_id}?action=refund`);
  assert.equal(early.status, 409, JSON.stringify(early.body));
  assert.match(String(early.body.error), /has not expired: refundable from block \d+/);
  await solverPassesFrom(dev.apiUrl); // the solver has looked at the initiated order
  assert.equal((await readOrder(created.order_id)).destination_swap.initiate_tx_hash, '', 'the solver did not fund (rule 2)');
  // The rest of the source timelock and a block: it has expired (blocks mined meanwhile only add to it).
  await advanceTron(dev.service.registry.chain('tron_localnet')!.sourceTimelock - blocksPastRule2() + 1);
  const refund = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=refund`);
  assert.equal(refund.status, 202, JSON.stringify(refund.body));
  const refunded = await orderReaches(created.order_id, 'refunded');
  assert.ok(refunded.source_swap.refund_tx_hash, 'the refund transaction is on the order');
  assert.equal(await usdtOf(TRON_USER), before.usdt, 'the whole amount came back');
  assert.equal(await trxOf(TRON_USER), before.trx - userFees, "the user paid its approval and initiate; the relayer paid the refund's energy");
  assert.equal(await usdcOf(SOLVER_EVM), before.solverUsdc, 'the solver paid nothing');
});

test('instant refund of a Tron source: the user signs the Refund digest, the solver co-signs, the USDT is back long before the timelock and the solver never funds', async () => {
  const amount = 7_000_000n;
  const { created, before, userFees } = await initiateTooLate(amount);
  const digest = await api<string>('GET', `/v2/orders/${created.order_id}/instant-refund-hash`);
  assert.equal(digest.status, 200, JSON.stringify(digest.body));
  assert.match(digest.body.result, /^(0x)?[0-9a-f]{64}$/);
  const forged = await sign({ hash: `0x${digest.body.result.replace(/^0x/, '')}`, privateKey: privateKeyOf(devAccount('solver')), to: 'hex' });
  const refused = await api('PATCH', `/v2/orders/${created.order_id}?action=instant-refund`, { signature: forged });
  assert.equal(refused.status, 400, `only the initiator's consent counts: ${JSON.stringify(refused.body)}`);
  const signature = await sign({ hash: `0x${digest.body.result.replace(/^0x/, '')}`, privateKey: USER_KEY, to: 'hex' });
  const patched = await api<string>('PATCH', `/v2/orders/${created.order_id}?action=instant-refund`, { signature });
  assert.equal(patched.status, 202, JSON.stringify(patched.body));
  const refunded = await orderReaches(created.order_id, 'refunded');
  assert.ok(refunded.source_swap.refund_tx_hash, 'the instant refund is on the order');
  const onChain = await reader.order(asset('tron_localnet:usdt').htlc.address, `0x${refunded.source_swap.swap_id}`);
  assert.ok(onChain.fulfilledAt > 0n && onChain.fulfilledAt < onChain.initiatedAt + onChain.timelock, 'refunded before the timelock');
  assert.equal(await usdtOf(TRON_USER), before.usdt);
  assert.equal(await trxOf(TRON_USER), before.trx - userFees, "the relayer paid the instant refund's energy");
  assert.equal((await readOrder(created.order_id)).destination_swap.initiate_tx_hash, '', 'the solver never funded (rule 5)');
  assert.equal(await usdcOf(SOLVER_EVM), before.solverUsdc);
});
