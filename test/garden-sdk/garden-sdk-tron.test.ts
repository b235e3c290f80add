// Garden's own published SDK (@gardenfi/core 3.1.3, unchanged) on Tron: the `TronRelay` that `Garden`
// builds from a TronWeb (tronweb 6.5.1) pointed at the local Tron chain sends the approval and the
// HTLC's `initiate(address,uint256,uint256,bytes32,bytes)` itself and pays their energy, and redeems a
// Tron destination through the relayer. Both ways between Tron USDT and ethereum_localnet USDC, against
// `hashlock dev` with ethereum_localnet on Garden's local port (8545, where the SDK's EVM relay looks).
//
// The SDK's chain list names Tron only as `tron` and `tron_shasta`, so whatever in it parses an asset id
// or chain (`Quote`, `createSwap`, the executor's choice of HTLC client) throws on `tron_localnet`. The
// quote is read over HTTP, the order made with the SDK's `createOrder` (which posts the legs as given),
// and the SDK's HTLC clients (`garden.htlcs.tron`, `garden.htlcs.evm`) are called as `createSwap` and
// the executor call them. The executor is not run: besides the chain, it finds orders by each client's
// address lowercased, and a lowercased base58 Tron address matches no order here (base58 matches exactly).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Garden, SecretManager } from '@gardenfi/core';
import { TronWeb } from 'tronweb';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TronApi } from '../../src/chains/tron/api.ts';
import { TronHtlcReader } from '../../src/chains/tron/htlc-reads.ts';
import { hex41 } from '../../src/chains/tron/transactions.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { portIsFree } from '../../src/localnet/free-port.ts';
import { tronAddressOf, tronDevConfig, tronPrivateKey } from '../helpers/tron-localnet.ts';
import { until } from '../helpers/wait.ts';
import { DigestKey, Network, type SdkOrder } from './sdk-types.ts';

/** Where the SDK's `ethereum_localnet` expects its node. */
const SDK_ETH_RPC = 'http://localhost:8545';

interface TxRequest {
  to: string;
  value: string;
  data: string;
  gas_limit: string;
  chain_id: number;
}
interface CreatedOrder {
  order_id: string;
  approval_transaction: TxRequest | null;
  initiate_transaction: TxRequest;
}

const evmUser = privateKeyToAccount(privateKeyOf(devAccount('user')));
const TRON_USER = tronAddressOf('user');
const TRON_SOLVER = tronAddressOf('solver');
const SOLVER_EVM = devAccount('solver').address;
const digestKey = DigestKey.generateRandom().val!;

let dev: Dev;
let garden: Garden;
let tronWeb: TronWeb;
let tron: TronApi;
let reader: TronHtlcReader;
let eth: PublicClient;

before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-garden-sdk-tron-'));
  const config = tronDevConfig(dataDir);
  // Other test files may hold this port for a while (a `hashlock dev` of their own): wait for it.
  await until('port 8545 to be free', async () => ((await portIsFree(8545)) ? true : undefined), 180_000, 250);
  dev = await startDev(config, { wellKnownPorts: true });
  const ethChain = dev.chains.find((c) => c.chain.key === 'ethereum_localnet')!;
  assert.equal(new URL(String(ethChain.access.rpc_url)).port, '8545', "ethereum_localnet must listen on 8545, where Garden's SDK looks for it");
  eth = createPublicClient({ transport: http(SDK_ETH_RPC) });
  const tronUrl = String(dev.chains.find((c) => c.chain.key === 'tron_localnet')!.access.rpc_url);
  tron = new TronApi(tronUrl);
  reader = new TronHtlcReader(tron);
  tronWeb = new TronWeb({ fullHost: tronUrl, privateKey: tronPrivateKey('user') });
  garden = Garden.fromWallets({
    environment: { network: Network.LOCALNET, baseurl: dev.apiUrl },
    apiKey: dev.appKey,
    digestKey,
    wallets: { evm: createWalletClient({ account: evmUser, transport: http(SDK_ETH_RPC) }), tron: tronWeb },
  });
});

after(async () => {
  await dev?.stop();
});

const asset = (id: string) => dev.service.registry.asset(id)!;
const usdtOf = (who: string) => reader.trc20Balance(asset('tron_localnet:usdt').token.address, who);
const usdcOf = (who: Address) => eth.readContract({ address: asset('ethereum_localnet:usdc').token.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [who] });
const trxOf = (who: string) => tron.balanceSun(hex41(who));

/** The best quote, read over HTTP: the SDK's `Quote` cannot parse `tron_localnet` (above). */
async function quote(from: string, to: string, amount: bigint): Promise<{ solverId: string; receive: bigint }> {
  const res = await fetch(`${dev.apiUrl}/v2/quote?from=${from}&to=${to}&from_amount=${amount}`, { headers: { 'garden-app-id': dev.appKey } });
  const body = (await res.json()) as { result: Array<{ solver_id: string; destination: { amount: string } }> };
  assert.equal(res.status, 200, JSON.stringify(body));
  return { solverId: body.result[0]!.solver_id, receive: BigInt(body.result[0]!.destination.amount) };
}

/** The order as the service states it (`completed`, ...); the SDK's getOrder replaces `status` with its own reading. */
async function serviceStatus(orderId: string): Promise<string> {
  const res = await fetch(`${dev.apiUrl}/v2/orders/${orderId}`, { headers: { 'garden-app-id': dev.appKey } });
  return ((await res.json()) as { result: { status: string } }).result.status;
}

async function sdkOrder(orderId: string): Promise<SdkOrder> {
  const read = await garden.getOrder(orderId);
  assert.ok(read.ok, `the SDK's getOrder failed: ${read.error}`);
  return read.val;
}

/** An order made by the SDK's createOrder, with a secret the SDK derives from its digest key. */
async function sdkCreateOrder(from: { asset: string; owner: string }, to: { asset: string; owner: string }, amount: bigint) {
  const { solverId, receive } = await quote(from.asset, to.asset, amount);
  const nonce = Date.now();
  const secret = await SecretManager.fromDigestKey(digestKey.digestKey).generateSecret(String(nonce));
  assert.ok(secret.ok, `the SDK's secret: ${secret.error}`);
  const created = await garden.createOrder({
    source: { ...from, delegate: null, amount: amount.toString() },
    destination: { ...to, delegate: null, amount: receive.toString() },
    nonce,
    secret_hash: secret.val!.secretHash.replace(/^0x/, ''),
    solver_id: solverId,
    slippage: 0,
  });
  assert.ok(created.ok, `the SDK's createOrder failed: ${created.error}`);
  return { created: created.val, order: created.val as unknown as CreatedOrder, secret: secret.val!.secret, receive };
}

/** The user's and the solver's balances on both chains. */
const balances = async () => ({ usdt: await usdtOf(TRON_USER), trx: await trxOf(TRON_USER), usdc: await usdcOf(evmUser.address), solverUsdt: await usdtOf(TRON_SOLVER), solverUsdc: await usdcOf(SOLVER_EVM) });

/** The order once the SDK reads it as `Awaiting Redeem` (its destination funded), waiting for `what`. */
const awaitingRedeem = (orderId: string, what: string) =>
  until(what, async () => {
    const o = await sdkOrder(orderId);
    return o.status === 'Awaiting Redeem' ? o : undefined;
  }, 90_000, 300);

/** The order once the service states it `completed`, as the SDK reads it then: `Redeemed`. */
async function redeemedOrder(orderId: string): Promise<SdkOrder> {
  await until('the order to be completed', async () => ((await serviceStatus(orderId)) === 'completed' ? true : undefined), 120_000, 300);
  const done = await sdkOrder(orderId);
  assert.equal(done.status, 'Redeemed', 'the SDK reads the order as Redeemed');
  return done;
}

const tronHead = async () => (await tronWeb.trx.getCurrentBlock()).block_header.raw_data.number;

/** The user's Tron transactions in blocks `fromBlock`+1 to the head, with the TRX each one burnt. */
async function userTronTransactions(fromBlock: number): Promise<Array<{ txID: string; feeSun: bigint }>> {
  const head = await tronHead();
  const blocks = head > fromBlock ? await tronWeb.trx.getBlockRange(fromBlock + 1, head) : [];
  const user41 = hex41(TRON_USER);
  const sent = [];
  for (const block of blocks) {
    for (const tx of block.transactions ?? []) {
      const owner = String(tx.raw_data.contract[0]!.parameter.value.owner_address).toLowerCase();
      if (owner !== user41) continue;
      const info = await tronWeb.trx.getTransactionInfo(tx.txID);
      sent.push({ txID: tx.txID, feeSun: BigInt(info.fee ?? 0) });
    }
  }
  return sent;
}

test("Garden's TronRelay initiates Tron USDT -> ethereum_localnet USDC itself (approve, then initiate); the SDK redeems through the relayer", async () => {
  const amount = 10_000_000n;
  const { created, order, secret, receive } = await sdkCreateOrder({ asset: 'tron_localnet:usdt', owner: TRON_USER }, { asset: 'ethereum_localnet:usdc', owner: evmUser.address }, amount);
  assert.equal(order.initiate_transaction.to, asset('tron_localnet:usdt').htlc.address, 'the HTLC the SDK is sent to is the registry\'s');
  assert.equal(order.approval_transaction?.to, asset('tron_localnet:usdt').token.address, 'the approval is of the registry\'s USDT');
  assert.equal(garden.htlcs.tron?.htlcActorAddress, TRON_USER, 'the TronRelay acts as the TronWeb\'s account');

  const startBlock = await tronHead();
  const before = await balances();

  const initiated = await garden.htlcs.tron!.initiate(created as never);
  assert.ok(initiated.ok, `the SDK's Tron initiate failed: ${initiated.error}`);
  const funded = await awaitingRedeem(order.order_id, 'the SDK to see the destination funded');
  assert.equal(funded.source_swap.initiate_tx_hash.replace(/^0x/, ''), initiated.val, 'the order records the SDK\'s initiate transaction');

  // What the SDK's executor does for an EVM destination: EvmRelay.redeem (PATCH ?action=redeem).
  const redeemed = await garden.htlcs.evm!.redeem(funded, secret);
  assert.ok(redeemed.ok, `the SDK's EVM redeem failed: ${redeemed.error}`);
  const done = await redeemedOrder(order.order_id);
  assert.equal(done.destination_swap.secret.replace(/^0x/, ''), secret.replace(/^0x/, ''), "the destination was redeemed with the SDK's secret");

  const sent = await userTronTransactions(startBlock);
  assert.equal(sent.length, 2, `the user sent the approval and the initiate on Tron, got ${sent.map((t) => t.txID).join(', ')}`);
  assert.equal(sent[1]!.txID, initiated.val, 'the initiate comes after the approval');
  assert.equal(await usdtOf(TRON_USER), before.usdt - amount, "the user's USDT is down by the amount");
  assert.equal(await usdcOf(evmUser.address), before.usdc + receive, "the user's USDC is up by the quoted amount");
  assert.equal(await usdtOf(TRON_SOLVER), before.solverUsdt + amount, 'the solver redeemed the Tron source');
  assert.equal(await usdcOf(SOLVER_EVM), before.solverUsdc - receive, 'the solver funded the destination');
  const fees = sent.reduce((sum, t) => sum + t.feeSun, 0n);
  assert.ok(fees > 0n, 'the user burnt TRX for the energy of its two transactions');
  assert.equal(await trxOf(TRON_USER), before.trx - fees, 'the user paid the energy of its own two transactions and nothing else');
});

test("ethereum_localnet USDC -> Tron USDT: the SDK's gasless EVM initiate; Garden's TronRelay redeems the Tron destination through the relayer", async () => {
  const amount = 5_000_000n;
  const { created, order, secret, receive } = await sdkCreateOrder({ asset: 'ethereum_localnet:usdc', owner: evmUser.address }, { asset: 'tron_localnet:usdt', owner: TRON_USER }, amount);
  const startBlock = await tronHead();
  const before = await balances();

  const initiated = await garden.htlcs.evm!.initiate(created as never);
  assert.ok(initiated.ok, `the SDK's EVM initiate failed: ${initiated.error}`);
  const funded = await awaitingRedeem(order.order_id, 'the solver to fund the Tron destination');

  const redeemed = await garden.htlcs.tron!.redeem(funded, secret);
  assert.ok(redeemed.ok, `the SDK's Tron redeem failed: ${redeemed.error}`);
  const done = await redeemedOrder(order.order_id);
  // The relayer answers "" when its job has not gone out within 5 s (a slow machine); else its hash.
  if (redeemed.val) assert.equal(done.destination_swap.redeem_tx_hash.replace(/^0x/, ''), redeemed.val.replace(/^0x/, ''), 'the redeem is the transaction the relayer answered the SDK with');

  assert.equal(await usdcOf(evmUser.address), before.usdc - amount, "the user's USDC is down by the amount");
  assert.equal(await usdtOf(TRON_USER), before.usdt + receive, "the user's USDT is up by the quoted amount");
  assert.equal(await usdcOf(SOLVER_EVM), before.solverUsdc + amount, 'the solver redeemed the EVM source');
  assert.equal(await usdtOf(TRON_SOLVER), before.solverUsdt - receive, 'the solver funded the Tron destination');
  assert.deepEqual(await userTronTransactions(startBlock), [], 'the user sent nothing on Tron');
  assert.equal(await trxOf(TRON_USER), before.trx, 'the user paid no TRX: the relayer paid the redeem');
});
