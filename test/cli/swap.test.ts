// `hashlock swap` against one running `hashlock dev` that every test of this file shares (the test
// registry: Litecoin mines every 2 s, Tron every 1 s), and the CLI checks that need no devnet of
// their own. Every printed balance is checked against the chains.
// - EVM: an ERC-20 swap (gasless initiate) and a native ether swap (the client broadcasts its initiate).
// - Litecoin both ways: the client pays the HTLC address; the service redeems to the user's taproot address.
// - Tron USDT both ways against the EVM chains, Litecoin and Solana: a Tron source approves once (the
//   user's own transaction, signed offline) and signs the TIP-712 initiate the relayer sends; a Tron
//   destination is redeemed to the user by the service.
// - Solana: SOL and USDC (SPL) both ways against the EVM chains and Litecoin. The client signs and
//   broadcasts a SOL initiate (one signature, 5000 lamports), signs an SPL initiate for the relayer
//   (gasless), and the service redeems a Solana destination to the user.
// Each swap checks its user's balances before and after it, so no two swaps of one user run at once.
// Three users swap at the same time, each its swaps one after another: the EVM and Litecoin swaps are
// a user's of their own (and an app's, whose event stream shows only their orders), the Solana swaps
// another's (test/helpers/devnet-user.ts funds both), and the Tron swaps are the devnet's test user's
// (its first Tron source is the one that approves). The tests that only read the devnet or fail
// before a swap begins run beside them.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { address, createSolanaRpc, type Address, type Signature } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createPublicClient, erc20Abi, http, type Address as EvmAddress } from 'viem';
import { envFor, runHashlock, startHashlockDev, type RunningDev } from '../helpers/hashlock-cli.ts';
import { SseClient, type SseEvent } from '../helpers/sse.ts';
import { startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';
import { litecoindOrSkip } from '../helpers/litecoin.ts';
import { devnetUser } from '../helpers/devnet-user.ts';
import { findLitecoind } from '../../src/localnet/bitcoin/litecoind.ts';
import { printed, change, quoted } from '../helpers/swap-output.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { satoshis } from '../../src/chains/bitcoin/chain-data.ts';
import { bitcoinRpcFor } from '../../src/chains/bitcoin/rpc.ts';
import { TronApi } from '../../src/chains/tron/api.ts';
import { TronHtlcReader } from '../../src/chains/tron/htlc-reads.ts';
import { hex41 } from '../../src/chains/tron/transactions.ts';

const USDT = 'tron_localnet:usdt';
const LAMPORTS_PER_SIGNATURE = 5_000n;

let dataDir: string;
let dev: RunningDev | undefined;
const devOutput = () => dev?.output() ?? '';
/** Runs `hashlock` as the user of `dir` (the devnet's own test user by default). */
const run = (args: string[], timeoutMs?: number, dir = dataDir) => runHashlock(args, envFor(dir), timeoutMs);
/** The directories (devnet.json) of the users of the EVM and Litecoin swaps and of the Solana swaps. */
let evmLane: string;
let solanaLane: string;

/** Why the Solana programs cannot be built in CI (the Solana tests fail with it), or undefined. */
/** `hashlock apps create` run on the devnet's data directory before it started (its database is the devnet's, and PGlite is one process's at a time). */
let acmeApp: Awaited<ReturnType<typeof runHashlock>>;
/** The key of an app without gasless actions, created the same way. */
let plainAppKey: string;
/** The key of the gasless app of the EVM and Litecoin swaps, created the same way. */
let evmLaneAppKey: string;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'hashlock-swap-'));
  acmeApp = await run(['apps', 'create', '--name', 'Acme Wallet', '--gasless']);
  const plain = await run(['apps', 'create', '--name', 'no gasless']);
  assert.equal(plain.code, 0, plain.stderr);
  plainAppKey = /^([0-9a-f]{64})$/m.exec(plain.stdout)![1]!;
  const laneApp = await run(['apps', 'create', '--name', 'EVM and Litecoin swaps', '--gasless']);
  assert.equal(laneApp.code, 0, laneApp.stderr);
  evmLaneAppKey = /^([0-9a-f]{64})$/m.exec(laneApp.stdout)![1]!;
  dev = await startHashlockDev(dataDir);
  assert.ok(dev.devnet.api_url);
  // One WBTC on each EVM chain and one LTC (where litecoind runs) is far more than their swaps spend.
  const litoshis = findLitecoind() ? 100_000_000n : undefined;
  evmLane = await devnetUser(dataDir, { evmWbtc: 100_000_000n, ...(litoshis ? { litoshis } : {}) }, evmLaneAppKey);
  solanaLane = await devnetUser(dataDir, { evmWbtc: 100_000_000n, ...(litoshis ? { litoshis } : {}), solana: { lamports: 10_000_000_000n, usdc: 1_000_000_000n } });
});

after(async () => {
  await dev?.stop();
});

const readDevnetJson = (dir = dataDir) => JSON.parse(readFileSync(join(dir, 'devnet.json'), 'utf8'));

/** The status changes a swap printed, in order. */
const statusesOf = (stdout: string) => [...stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]!);

/** Runs a swap of the user of `dir` that must complete; returns what it printed. */
async function swap(dir: string, from: string, to: string, amount: bigint, timeoutSeconds = 120): Promise<string> {
  const res = await run(['swap', '--from', from, '--to', to, '--amount', amount.toString(), '--timeout', String(timeoutSeconds)], (timeoutSeconds + 30) * 1000, dir);
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  assert.equal(statusesOf(res.stdout).at(-1), 'completed', res.stdout);
  return res.stdout;
}

// The users' balances, read from the chains directly.
async function evmToken(dir: string, assetId: string): Promise<bigint> {
  const devnet = readDevnetJson(dir);
  const assets = (await (await fetch(`${devnet.api_url}/v2/assets`, { headers: { 'service-app-id': devnet.app_key } })).json()) as {
    result: Array<{ id: string; token: { address: EvmAddress } }>;
  };
  const token = assets.result.find((a) => a.id === assetId)!.token.address;
  const client = createPublicClient({ transport: http(devnet.chains[assetId.split(':')[0]!].rpc_url) });
  return client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [devnet.accounts.user.address] });
}

// ---- EVM and Litecoin ----------------------------------------------------------------------------

/** What the Litecoin tests run, as a skip names it. */
const LITECOIN_SWAPS = 'the Litecoin swaps of hashlock swap';

/** The swap exited 0, its last status `completed` and each status change printed once, with its time; answers the statuses. */
function assertRanToCompletion(res: { code: number | null; stdout: string; stderr: string }): string[] {
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  const statuses = statusesOf(res.stdout);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  assert.match(res.stdout, /^Completed in [\d.]+ s: .*completed$/m);
  return statuses;
}

function assertCompleted(res: { code: number | null; stdout: string; stderr: string }, from: string, to: string, amount: bigint) {
  const statuses = assertRanToCompletion(res);
  assert.ok(statuses.includes('created') || statuses.includes('initiated'), res.stdout);
  const destination = quoted(res.stdout);
  assert.ok(destination > 0n && destination < amount);
  assert.equal(printed(res.stdout, 'after', to) - printed(res.stdout, 'before', to), destination, 'the user received exactly the quoted amount');
  assert.ok(printed(res.stdout, 'after', from) <= printed(res.stdout, 'before', from) - amount, 'the user paid the source amount');
}

/**
 * Follows the app's event stream while a swap runs: the first order it shows gets two streams of
 * its own, one kept open and one that drops after two events and resumes with Last-Event-ID.
 */
async function followSwapEvents(dir: string) {
  const devnet = readDevnetJson(dir) as { api_url: string; app_key: string };
  const headers = { 'service-app-id': devnet.app_key };
  let kept: SseClient | undefined;
  let dropped: SseClient | undefined;
  let resumed: SseClient | undefined;
  let streamsOpened!: () => void;
  let streamsFailed!: (err: unknown) => void;
  const opened = new Promise<void>((resolve, reject) => {
    streamsOpened = resolve;
    streamsFailed = reject;
  });
  void opened.catch(() => undefined); // awaited by finish()
  const onAppEvent = (event: SseEvent) => {
    if (kept) return;
    const url = `${devnet.api_url}/v2/orders/${(JSON.parse(event.data) as { order_id: string }).order_id}/events`;
    kept = {} as SseClient; // claimed
    Promise.all([SseClient.open(url, headers), SseClient.open(url, headers)]).then(async ([k, d]) => {
      kept = k;
      dropped = d;
      await d.until(() => d.events.length >= 2, 60_000, 'two events');
      d.close();
      resumed = await SseClient.open(url, { ...headers, 'last-event-id': d.events[1]!.id! });
      streamsOpened();
    }, streamsFailed);
  };
  const appStream = await SseClient.open(`${devnet.api_url}/v2/events`, headers, onAppEvent);
  return {
    /** Once the swap completed: every stream's statuses. */
    finish: async () => {
      await opened;
      const done = (c: SseClient) => c.data().some((e) => e.status === 'completed');
      await kept!.until(() => done(kept!), 30_000, 'completed on the order stream');
      await resumed!.until(() => done(resumed!), 30_000, 'completed on the resumed stream');
      const statuses = (c: SseClient) => c.data().map((e) => e.status);
      const result = { orderId: kept!.data()[0]!.order_id, kept: statuses(kept!), dropped: statuses(dropped!), resumed: statuses(resumed!), app: appStream.data().filter((e) => e.order_id === kept!.data()[0]!.order_id).map((e) => e.status) };
      for (const c of [kept!, resumed!, appStream]) c.close();
      return result;
    },
  };
}

/** A receiver on loopback registered as a webhook endpoint of the app of `dir`; returns it and its secret. */
async function registerWebhook(dir: string): Promise<{ receiver: Receiver; secret: string }> {
  const devnet = readDevnetJson(dir) as { api_url: string; app_key: string };
  const receiver = await startReceiver();
  const res = await fetch(`${devnet.api_url}/v2/webhooks`, {
    method: 'POST',
    headers: { 'service-app-id': devnet.app_key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return { receiver, secret: ((await res.json()) as { result: { secret: string } }).result.secret };
}

/** The devnet's Litecoin node, from devnet.json (which must have it when litecoind is installed). */
function litecoinRpc() {
  const chain = readDevnetJson().chains.litecoin_localnet;
  assert.ok(chain?.rpc_url, `litecoind is installed but devnet.json has no litecoin_localnet:\n${devOutput()}`);
  return bitcoinRpcFor({ url: chain.rpc_url, cookieFile: chain.rpc_cookie_file });
}

interface RawTx {
  vin: Array<{ txid: string; vout: number }>;
  vout: Array<{ n: number; value: number; scriptPubKey: { hex: string } }>;
  confirmations?: number;
}

/** A Litecoin transaction's fee, worked out from the node: its inputs' values minus its outputs'. */
async function litecoinFee(txid: string): Promise<{ fee: bigint; tx: RawTx }> {
  const rpc = litecoinRpc();
  const tx = await rpc.call<RawTx>('getrawtransaction', [txid, true]);
  let fee = 0n;
  for (const input of tx.vin) {
    const prev = await rpc.call<RawTx>('getrawtransaction', [input.txid, true]);
    fee += satoshis(prev.vout.find((o) => o.n === input.vout)!.value);
  }
  for (const output of tx.vout) fee -= satoshis(output.value);
  return { fee, tx };
}

const LTC_SWAP_TIMEOUT_MS = 180_000;
const ltcSwapArgs = (from: string, to: string, amount: bigint) => ['swap', '--from', from, '--to', to, '--amount', amount.toString(), '--timeout', '150'];

function evmAndLitecoinSwaps() {
  test('hashlock swap: WBTC ethereum_localnet -> arbitrum_localnet with a gasless initiate completes; its event stream and webhook show each status once', async () => {
    const amount = 100_000n;
    const events = await followSwapEvents(evmLane);
    const hook = await registerWebhook(evmLane);
    after(() => hook.receiver.close());
    const res = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', amount.toString()], undefined, evmLane);
    assertCompleted(res, 'ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', amount);
    const streamed = await events.finish();
    assert.equal(streamed.kept[0], 'created', streamed.kept.join(' '));
    assert.equal(streamed.kept.at(-1), 'completed');
    assert.equal(new Set(streamed.kept).size, streamed.kept.length, `each status once: ${streamed.kept.join(' ')}`);
    const order = ['created', 'initiate_detected', 'initiated', 'awaiting_redeem', 'redeem_detected', 'redeemed', 'completed'];
    assert.deepEqual(streamed.kept, order.filter((s) => streamed.kept.includes(s)), 'in the order of the swap');
    for (const s of ['initiated', 'awaiting_redeem']) assert.ok(streamed.kept.includes(s), `${s} is streamed: ${streamed.kept.join(' ')}`);
    const printedStatuses = statusesOf(res.stdout);
    assert.deepEqual(printedStatuses, streamed.kept, `hashlock swap follows the order's stream: every status printed, once, in order: ${printedStatuses.join(' ')}`);
    assert.deepEqual([...streamed.dropped.slice(0, 2), ...streamed.resumed], streamed.kept, 'the reconnect with Last-Event-ID missed nothing and repeated nothing');
    assert.deepEqual(streamed.app, streamed.kept, "the app's stream shows the same changes");
    const orderId = streamed.orderId;
    const deliveredFor = () => hook.receiver.received.filter((r) => (JSON.parse(r.body) as { order_id: string }).order_id === orderId);
    await waitFor(() => deliveredFor().some((r) => (JSON.parse(r.body) as { status: string }).status === 'completed'), 30_000, 'the completed webhook');
    const delivered = deliveredFor();
    assert.ok(delivered.every((r) => verifyWebhookSignature(hook.secret, String(r.headers['hashlock-signature']), r.body)), 'every delivery is signed with the secret');
    const hooked = delivered.map((r) => JSON.parse(r.body) as { id: string; status: string });
    assert.deepEqual(hooked.map((e) => e.status).sort(), [...streamed.kept].sort(), 'a webhook per streamed status, each once');
    assert.deepEqual(delivered.map((r) => r.headers['hashlock-event-id']), hooked.map((e) => e.id), 'the event id header is the body\'s id');
    assert.match(res.stdout, /initiate \(gasless, relayed\): 0x[0-9a-f]{64}/);
    // An ERC-20 source costs the user exactly the amount in that token (gas is paid in ether).
    assert.equal(printed(res.stdout, 'before', 'ethereum_localnet:wbtc') - printed(res.stdout, 'after', 'ethereum_localnet:wbtc'), amount);
  });

  test('hashlock swap: native ether, the client broadcasts initiate_transaction itself, completes', async () => {
    const amount = 10_000_000_000_000_000n;
    const res = await run(['swap', '--from', 'ethereum_localnet:eth', '--to', 'arbitrum_localnet:eth', '--amount', amount.toString()], undefined, evmLane);
    assertCompleted(res, 'ethereum_localnet:eth', 'arbitrum_localnet:eth', amount);
    assert.match(res.stdout, /^\s*initiate: 0x[0-9a-f]{64}/m);
    assert.doesNotMatch(res.stdout, /gasless/);
  });

  test('hashlock swap: LTC -> arbitrum WBTC: the client pays the HTLC address from its coins and receives the quoted WBTC', { timeout: LTC_SWAP_TIMEOUT_MS }, async (t) => {
    if (!litecoindOrSkip(t, LITECOIN_SWAPS)) return;
    const amount = 10_000_000n;
    const res = await run(ltcSwapArgs('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount), LTC_SWAP_TIMEOUT_MS, evmLane);
    assertRanToCompletion(res);

    const funding = /^\s*fund: ([0-9a-f]{64}) \((\d+) litoshis to the HTLC (rltc1p\w+), fee (\d+)\)$/m.exec(res.stdout);
    assert.ok(funding, res.stdout);
    assert.equal(BigInt(funding[2]!), amount);
    const { fee, tx } = await litecoinFee(funding[1]!);
    assert.equal(BigInt(funding[4]!), fee, 'the printed funding fee is the transaction\'s');
    assert.ok(fee > 0n && fee < 10_000n, `a small funding fee: ${fee}`);
    assert.ok((tx.confirmations ?? 0) >= 1, 'the funding is mined');
    const paid = printed(res.stdout, 'before', 'litecoin_localnet:ltc') - printed(res.stdout, 'after', 'litecoin_localnet:ltc');
    assert.equal(paid, amount + fee, 'the user paid exactly the amount plus the funding fee');
    const received = printed(res.stdout, 'after', 'arbitrum_localnet:wbtc') - printed(res.stdout, 'before', 'arbitrum_localnet:wbtc');
    assert.equal(received, quoted(res.stdout), 'the user received exactly the quoted WBTC');
    assert.ok(received > 0n);
  });

  test('hashlock swap: ethereum WBTC -> LTC: a gasless initiate, and the service redeems the LTC to the user', { timeout: LTC_SWAP_TIMEOUT_MS }, async (t) => {
    if (!litecoindOrSkip(t, LITECOIN_SWAPS)) return;
    const amount = 100_000n;
    const res = await run(ltcSwapArgs('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount), LTC_SWAP_TIMEOUT_MS, evmLane);
    // The client samples the status every 500 ms: a status that lasts less (initiated, with 1 s EVM
    // blocks and an event-driven solver) may not be printed.
    assertRanToCompletion(res);
    assert.match(res.stdout, /initiate \(gasless, relayed\): 0x[0-9a-f]{64}/);
    assert.equal(printed(res.stdout, 'before', 'ethereum_localnet:wbtc') - printed(res.stdout, 'after', 'ethereum_localnet:wbtc'), amount);

    const destination = quoted(res.stdout);
    const redeem = /^\s*redeem \(by the service, mined\): ([0-9a-f]{64}): (\d+) litoshis to (rltc1p\w+), the destination amount (\d+) less the redeem fee (\d+)$/m.exec(res.stdout);
    assert.ok(redeem, res.stdout);
    assert.equal(redeem[3], readDevnetJson(evmLane).accounts.user.litecoin.address);
    assert.equal(BigInt(redeem[4]!), destination);
    const { fee, tx } = await litecoinFee(redeem[1]!);
    assert.equal(BigInt(redeem[5]!), fee, 'the printed redeem fee is the transaction\'s');
    assert.ok(fee > 0n && fee < 10_000n, `a small redeem fee: ${fee}`);
    assert.ok((tx.confirmations ?? 0) >= 1, 'the redeem is mined');
    const received = printed(res.stdout, 'after', 'litecoin_localnet:ltc') - printed(res.stdout, 'before', 'litecoin_localnet:ltc');
    assert.equal(received, destination - fee, 'the user received the destination amount less the redeem fee');
    assert.equal(BigInt(redeem[2]!), received);
  });
}

// ---- Tron ------------------------------------------------------------------------------------------

/** What the Tron tests' Litecoin swaps run, as a skip names it. */
const TRON_LITECOIN_SWAPS = 'the USDT <-> LTC swaps';

let tronApi: { tron: TronApi; reader: TronHtlcReader } | undefined;
/** The devnet's Tron chain, from devnet.json (every devnet runs it). */
function tronChain(): { tron: TronApi; reader: TronHtlcReader } {
  if (!tronApi) {
    const chain = readDevnetJson().chains.tron_localnet;
    assert.ok(chain?.api_url, `devnet.json has no tron_localnet:\n${devOutput()}`);
    const tron = new TronApi(chain.api_url);
    tronApi = { tron, reader: new TronHtlcReader(tron) };
  }
  return tronApi;
}

const userTron = (): string => readDevnetJson().accounts.user.tron.address;
const usdt = () => tronChain().reader.trc20Balance(readDevnetJson().chains.tron_localnet.contracts.usdt, userTron());

/** A Tron source: the user's approval landed on the chain, the initiate was relayed, and the user paid exactly the amount in USDT. */
async function assertTronSource(stdout: string, amount: bigint) {
  const initiate = /^\s*initiate \(gasless, relayed\): ([0-9a-f]{64})$/m.exec(stdout);
  assert.ok(initiate, `no relayed initiate in:\n${stdout}`);
  const info = await tronChain().tron.transactionInfo(initiate[1]!);
  assert.equal(info?.failed, false, `the relayed initiate ${initiate[1]} is on the chain and succeeded`);
  assert.equal(change(stdout, USDT), -amount, 'the user paid the amount in USDT');
  assert.equal(printed(stdout, 'after', USDT), await usdt(), "the printed USDT balance is the chain's");
}

/** A Tron destination: the user received the quoted USDT, redeemed by the service. */
async function assertTronDestination(stdout: string) {
  assert.equal(change(stdout, USDT), quoted(stdout), 'the user received the quoted USDT');
  assert.equal(printed(stdout, 'after', USDT), await usdt(), "the printed USDT balance is the chain's");
}

function tronSwaps() {
  test('hashlock swap: Tron USDT -> arbitrum USDC: an approval, then the gasless TIP-712 initiate the relayer sends', async () => {
    const { tron } = tronChain();
    const amount = 20_000_000n;
    const trxBefore = await tron.balanceSun(hex41(userTron()));
    const stdout = await swap(dataDir, USDT, 'arbitrum_localnet:usdc', amount);
    const approval = /^\s*approval: ([0-9a-f]{64}) \(block \d+, fee (\d+) SUN\)$/m.exec(stdout);
    assert.ok(approval, `the first swap approves the HTLC:\n${stdout}`);
    const approvalFee = BigInt(approval[2]!);
    assert.equal((await tron.transactionInfo(approval[1]!))?.feeSun, approvalFee, "the printed fee is the chain's");
    assert.ok(approvalFee > 0n, 'an approval burns TRX for its energy');
    await assertTronSource(stdout, amount);
    assert.match(stdout, new RegExp(`change ${USDT}\\s+-${amount}  \\(the amount; the approval burnt ${approvalFee} SUN of TRX; the relayer paid the initiate's energy\\)`));
    assert.equal(change(stdout, 'arbitrum_localnet:usdc'), quoted(stdout));
    assert.equal(printed(stdout, 'after', 'arbitrum_localnet:usdc'), await evmToken(dataDir, 'arbitrum_localnet:usdc'));
    const trxAfter = await tron.balanceSun(hex41(userTron()));
    assert.equal(trxAfter, trxBefore - approvalFee, 'the user burnt TRX for its approval only: the relayer paid the initiate');
  });

  test('hashlock swap: ethereum WBTC -> Tron USDT: a gasless WBTC initiate, the service redeems the USDT to the user', async () => {
    const amount = 100_000n; // 0.001 WBTC, about 95 USDT
    const stdout = await swap(dataDir, 'ethereum_localnet:wbtc', USDT, amount);
    assert.equal(change(stdout, 'ethereum_localnet:wbtc'), -amount);
    assert.equal(printed(stdout, 'after', 'ethereum_localnet:wbtc'), await evmToken(dataDir, 'ethereum_localnet:wbtc'));
    await assertTronDestination(stdout);
  });

  test('hashlock swap: Tron USDT -> LTC and LTC -> Tron USDT', { timeout: 400_000 }, async (t) => {
    if (!litecoindOrSkip(t, TRON_LITECOIN_SWAPS)) return;
    const amount = 10_000_000n;
    const toLtc = await swap(dataDir, USDT, 'litecoin_localnet:ltc', amount, 150);
    await assertTronSource(toLtc, amount);
    const redeem = /^\s*redeem \(by the service, mined\): [0-9a-f]{64}: (\d+) litoshis to rltc1p\w+, the destination amount (\d+) less the redeem fee (\d+)$/m.exec(toLtc);
    assert.ok(redeem, `no LTC redeem line in:\n${toLtc}`);
    assert.equal(BigInt(redeem[2]!), quoted(toLtc));
    assert.equal(change(toLtc, 'litecoin_localnet:ltc'), BigInt(redeem[1]!));

    const ltc = 10_000_000n;
    const toUsdt = await swap(dataDir, 'litecoin_localnet:ltc', USDT, ltc, 150);
    const fund = /^\s*fund: [0-9a-f]{64} \((\d+) litoshis to the HTLC rltc1p\w+, fee (\d+)\)$/m.exec(toUsdt);
    assert.ok(fund, `no LTC funding line in:\n${toUsdt}`);
    assert.equal(change(toUsdt, 'litecoin_localnet:ltc'), -(ltc + BigInt(fund[2]!)));
    await assertTronDestination(toUsdt);
  });

  test('hashlock swap: Tron USDT -> Solana USDC and SOL -> Tron USDT', { timeout: 300_000 }, async () => {
    assertSolanaRuns();
    const amount = 5_000_000n;
    const toUsdc = await swap(dataDir, USDT, 'solana_localnet:usdc', amount);
    await assertTronSource(toUsdc, amount);
    assert.equal(change(toUsdc, 'solana_localnet:usdc'), quoted(toUsdc), 'the user received the quoted USDC');

    const sol = 100_000_000n;
    const toUsdt = await swap(dataDir, 'solana_localnet:sol', USDT, sol);
    assert.ok(change(toUsdt, 'solana_localnet:sol') < -sol, 'the user paid the SOL amount and its initiate fee');
    await assertTronDestination(toUsdt);
  });
}

// ---- Solana ----------------------------------------------------------------------------------------

/** What the Solana tests' Litecoin swaps run, as a skip names it. */
const SOLANA_LITECOIN_SWAPS = 'the SOL <-> LTC swaps';

/**
 * A swap to and from `asset` against a copy of devnet.json without `chainKey` (and its address in
 * each of `accounts`), as `hashlock dev` writes it when it cannot run that chain: each fails before
 * anything happens, with one line naming the flag, the asset and `why` (a regular expression).
 */
async function assertOneLineWithout(chainKey: string, accounts: Array<'user' | 'solver'>, asset: string, amount: string, why: string) {
  const devnet = readDevnetJson();
  const family = chainKey.split('_')[0]!;
  delete devnet.chains[chainKey];
  for (const account of accounts) delete devnet.accounts[account][family];
  const dir = mkdtempSync(join(tmpdir(), `hashlock-swap-no-${family}-`));
  writeFileSync(join(dir, 'devnet.json'), JSON.stringify(devnet, null, 2));
  for (const [flag, from, to] of [
    ['--from', asset, 'arbitrum_localnet:wbtc'],
    ['--to', 'ethereum_localnet:wbtc', asset],
  ] as const) {
    const res = await run(['swap', '--from', from, '--to', to, '--amount', amount, '--data-dir', dir]);
    assert.equal(res.code, 1, res.stdout);
    assert.equal(res.stdout, '', 'nothing happens before the check');
    assert.match(res.stderr, new RegExp(`^swap failed: ${flag} ${asset}: ${why}`));
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  }
}

/** The devnet runs solana_localnet (the repository ships its programs: no machine lacks them). */
function assertSolanaRuns(): void {
  assert.ok(readDevnetJson().chains.solana_localnet?.rpc_url, `devnet.json has no solana_localnet:\n${devOutput()}`);
}

let solanaRpc: ReturnType<typeof createSolanaRpc> | undefined;
const rpc = () => (solanaRpc ??= createSolanaRpc(readDevnetJson().chains.solana_localnet.rpc_url));
/** The user of the Solana swaps. */
const solanaUser = (): Address => address(readDevnetJson(solanaLane).accounts.user.solana.address);

const lamports = async () => (await rpc().getBalance(solanaUser(), { commitment: 'confirmed' }).send()).value;
async function usdc(): Promise<bigint> {
  const mint = address(readDevnetJson().chains.solana_localnet.mints.usdc);
  const [ata] = await findAssociatedTokenPda({ owner: solanaUser(), mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const { value } = await rpc().getAccountInfo(ata, { encoding: 'base64', commitment: 'confirmed' }).send();
  return value ? Buffer.from(value.data[0], 'base64').readBigUInt64LE(64) : 0n;
}
async function solanaTx(signature: string) {
  const tx = await rpc().getTransaction(signature as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
  assert.ok(tx?.meta, `no transaction ${signature}`);
  assert.equal(tx.meta.err, null);
  return tx;
}

/** A swap of the user of the Solana swaps: it completes, each status change printed once. */
async function solanaSwap(from: string, to: string, amount: bigint, timeoutSeconds = 120) {
  const stdout = await swap(solanaLane, from, to, amount, timeoutSeconds);
  const statuses = statusesOf(stdout);
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  return stdout;
}

/** A SOL source: the printed initiate is on chain with one signature's fee, and the user paid the amount and that fee. */
async function assertSolSource(stdout: string, amount: bigint) {
  const m = /^\s*initiate: (\w{64,88}) \(fee (\d+) lamports: 1 signature\(s\) at 5000\)$/m.exec(stdout);
  assert.ok(m, stdout);
  const tx = await solanaTx(m[1]!);
  assert.equal(BigInt(tx.meta!.fee), LAMPORTS_PER_SIGNATURE);
  assert.equal(BigInt(m[2]!), LAMPORTS_PER_SIGNATURE);
  assert.equal(change(stdout, 'solana_localnet:sol'), -(amount + LAMPORTS_PER_SIGNATURE), 'the amount and the initiate fee; the rent came back');
  assert.match(stdout, /change solana_localnet:sol\s+-\d+ {2}\(the amount \+ the initiate fee 5000; the swap account's rent came back at the redeem\)/);
  assert.equal(printed(stdout, 'after', 'solana_localnet:sol'), await lamports(), 'the printed SOL balance is the chain\'s');
}

/** A Solana destination: the printed redeem paid the user exactly the quoted amount, and the user paid nothing. */
async function assertSolanaDestination(stdout: string, asset: string, unit: string) {
  const destination = quoted(stdout);
  const user = solanaUser();
  const m = new RegExp(`^\\s*redeem \\(by the service\\): (\\w{64,88}): (\\d+) ${unit} to ${user} \\(the service paid its fee, 5000 lamports\\)$`, 'm').exec(stdout);
  assert.ok(m, stdout);
  assert.equal(BigInt(m[2]!), destination);
  const tx = await solanaTx(m[1]!);
  assert.notEqual(tx.transaction.message.accountKeys[0], user, 'the service paid for the redeem');
  assert.equal(change(stdout, asset), destination, 'the user received exactly the quoted amount');
}

function solanaSwaps() {
  test('hashlock swap: SOL -> arbitrum WBTC: the client signs and broadcasts versioned_tx', async () => {
    assertSolanaRuns();
    const amount = 1_000_000_000n;
    const stdout = await solanaSwap('solana_localnet:sol', 'arbitrum_localnet:wbtc', amount);
    await assertSolSource(stdout, amount);
    assert.equal(change(stdout, 'arbitrum_localnet:wbtc'), quoted(stdout));
    assert.equal(printed(stdout, 'after', 'arbitrum_localnet:wbtc'), await evmToken(solanaLane, 'arbitrum_localnet:wbtc'));
  });

  test('hashlock swap: arbitrum WBTC -> SOL: the service redeems the SOL to the user', async () => {
    assertSolanaRuns();
    const amount = 200_000n;
    const stdout = await solanaSwap('arbitrum_localnet:wbtc', 'solana_localnet:sol', amount);
    assert.match(stdout, /initiate \(gasless, relayed\): 0x[0-9a-f]{64}/);
    assert.equal(change(stdout, 'arbitrum_localnet:wbtc'), -amount);
    await assertSolanaDestination(stdout, 'solana_localnet:sol', 'lamports');
    assert.equal(printed(stdout, 'after', 'solana_localnet:sol'), await lamports());
    assert.equal(printed(stdout, 'after', 'arbitrum_localnet:wbtc'), await evmToken(solanaLane, 'arbitrum_localnet:wbtc'));
  });

  test('hashlock swap: USDC -> ethereum WBTC: the user signs versioned_tx_gasless, the relayer pays every fee', async () => {
    assertSolanaRuns();
    const amount = 25_000_000n;
    const solBefore = await lamports();
    const stdout = await solanaSwap('solana_localnet:usdc', 'ethereum_localnet:wbtc', amount);
    const m = /^\s*initiate \(gasless, relayed\): (\w{64,88}) \(the relayer pays the fee\)$/m.exec(stdout);
    assert.ok(m, stdout);
    const tx = await solanaTx(m[1]!);
    assert.notEqual(tx.transaction.message.accountKeys[0], solanaUser(), 'the relayer is the fee payer');
    assert.equal(change(stdout, 'solana_localnet:usdc'), -amount);
    assert.equal(await lamports(), solBefore, 'the user paid no SOL');
    assert.equal(change(stdout, 'ethereum_localnet:wbtc'), quoted(stdout));
    assert.equal(printed(stdout, 'after', 'solana_localnet:usdc'), await usdc());
    assert.equal(printed(stdout, 'after', 'ethereum_localnet:wbtc'), await evmToken(solanaLane, 'ethereum_localnet:wbtc'));
  });

  test('hashlock swap: USDC -> ethereum WBTC for an app without gasless: the client broadcasts versioned_tx and pays its fee in SOL', async () => {
    assertSolanaRuns();
    const user = solanaUser();
    const plain = mkdtempSync(join(tmpdir(), 'hashlock-swap-plain-'));
    writeFileSync(join(plain, 'devnet.json'), JSON.stringify({ ...readDevnetJson(solanaLane), app_key: plainAppKey }, null, 2));
    const amount = 25_000_000n;
    const solBefore = await lamports();
    const res = await run(['swap', '--from', 'solana_localnet:usdc', '--to', 'ethereum_localnet:wbtc', '--amount', amount.toString(), '--data-dir', plain]);
    assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
    assert.doesNotMatch(res.stdout, /gasless/);
    const m = /^\s*initiate: (\w{64,88}) \(fee (\d+) lamports: 1 signature\(s\) at 5000\)$/m.exec(res.stdout);
    assert.ok(m, res.stdout);
    const tx = await solanaTx(m[1]!);
    assert.equal(tx.transaction.message.accountKeys[0], user, 'the user is the fee payer');
    assert.equal(BigInt(tx.meta!.fee), LAMPORTS_PER_SIGNATURE);
    assert.equal(change(res.stdout, 'solana_localnet:usdc'), -amount);
    assert.match(res.stdout, /change solana_localnet:usdc\s+-25000000 {2}\(the amount; the initiate's SOL is above\)/);
    // What the initiate cost the user in SOL, as printed and as the chain recorded it: its fee, the
    // swap account's rent (back at the solver's redeem) and, on the devnet's first SPL swap, the
    // program's identity and vault accounts.
    const cost = /^\s*the initiate cost the user (\d+) lamports of SOL: the fee 5000 and (\d+) of rent/m.exec(res.stdout);
    assert.ok(cost, res.stdout);
    const userIndex = tx.transaction.message.accountKeys.indexOf(user);
    assert.equal(BigInt(cost[1]!), BigInt(tx.meta!.preBalances[userIndex]!) - BigInt(tx.meta!.postBalances[userIndex]!));
    const order = (await (await fetch(`${readDevnetJson().api_url}/v2/orders/${/^Order (\w+) created$/m.exec(res.stdout)![1]}`, { headers: { 'service-app-id': plainAppKey } })).json()) as {
      result: { source_swap: { redeem_tx_hash: string } };
    };
    const redeem = await solanaTx(order.result.source_swap.redeem_tx_hash);
    const redeemIndex = redeem.transaction.message.accountKeys.indexOf(user);
    assert.ok(redeemIndex > 0, 'the solver\'s redeem returns the swap account\'s rent to the user');
    const rentBack = BigInt(redeem.meta!.postBalances[redeemIndex]!) - BigInt(redeem.meta!.preBalances[redeemIndex]!);
    assert.ok(rentBack > 0n);
    assert.equal(await lamports(), solBefore - BigInt(cost[1]!) + rentBack);
    assert.equal(printed(res.stdout, 'after', 'solana_localnet:usdc'), await usdc());
    assert.equal(change(res.stdout, 'ethereum_localnet:wbtc'), quoted(res.stdout));
  });

  test('hashlock swap: ethereum WBTC -> USDC: the service redeems the USDC to the user', async () => {
    assertSolanaRuns();
    const amount = 100_000n;
    const solBefore = await lamports();
    const stdout = await solanaSwap('ethereum_localnet:wbtc', 'solana_localnet:usdc', amount);
    assert.equal(change(stdout, 'ethereum_localnet:wbtc'), -amount);
    await assertSolanaDestination(stdout, 'solana_localnet:usdc', 'base units of USDC');
    assert.equal(await lamports(), solBefore, 'the user paid no SOL');
    assert.equal(printed(stdout, 'after', 'solana_localnet:usdc'), await usdc());
  });

  test('hashlock swap: SOL -> LTC and LTC -> SOL', { timeout: 400_000 }, async (t) => {
    assertSolanaRuns();
    if (!litecoindOrSkip(t, SOLANA_LITECOIN_SWAPS)) return;
    const sol = 1_000_000_000n;
    const toLtc = await solanaSwap('solana_localnet:sol', 'litecoin_localnet:ltc', sol, 150);
    await assertSolSource(toLtc, sol);
    const redeem = /^\s*redeem \(by the service, mined\): [0-9a-f]{64}: (\d+) litoshis to rltc1p\w+, the destination amount (\d+) less the redeem fee (\d+)$/m.exec(toLtc);
    assert.ok(redeem, toLtc);
    assert.equal(BigInt(redeem[2]!), quoted(toLtc));
    assert.equal(change(toLtc, 'litecoin_localnet:ltc'), BigInt(redeem[1]!));
    assert.equal(BigInt(redeem[1]!), quoted(toLtc) - BigInt(redeem[3]!));

    const ltc = 10_000_000n;
    const toSol = await solanaSwap('litecoin_localnet:ltc', 'solana_localnet:sol', ltc, 150);
    const fund = /^\s*fund: [0-9a-f]{64} \((\d+) litoshis to the HTLC rltc1p\w+, fee (\d+)\)$/m.exec(toSol);
    assert.ok(fund, toSol);
    assert.equal(change(toSol, 'litecoin_localnet:ltc'), -(ltc + BigInt(fund[2]!)));
    await assertSolanaDestination(toSol, 'solana_localnet:sol', 'lamports');
    assert.equal(printed(toSol, 'after', 'solana_localnet:sol'), await lamports());
  });
}

// ---- Beside the swaps: no chain moves, no balance changes ------------------------------------------

function checksBesideTheSwaps() {
  test('hashlock apps create prints a working key once, and only its hash is stored', async () => {
    assert.equal(acmeApp.code, 0, acmeApp.stderr);
    assert.match(acmeApp.stdout, /created app [0-9a-f-]{36} "Acme Wallet" \(gasless\)/);
    const key = /^([0-9a-f]{64})$/m.exec(acmeApp.stdout)?.[1];
    assert.ok(key, acmeApp.stdout);

    // A bad option is refused before the command opens any database: run on a data directory of its own.
    const bad = await runHashlock(['apps', 'create', '--name', 'x', '--slippage', 'lots'], envFor(mkdtempSync(join(tmpdir(), 'hashlock-apps-'))));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--slippage.*a whole number of bips/);

    // The devnet started on the database the app was created in.
    const devnet = readDevnetJson() as { api_url: string; app_key: string };
    assert.notEqual(devnet.app_key, key);
    const res = await fetch(`${devnet.api_url}/v3/chains`, { headers: { 'service-app-id': key } });
    assert.equal(res.status, 200);
  });

  test('hashlock swap: clear errors for an unknown asset and a missing devnet.json', async () => {
    const unknown = await run(['swap', '--from', 'ethereum_localnet:doge', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--from ethereum_localnet:doge: unknown asset; the service has .*ethereum_localnet:wbtc/);

    const empty = mkdtempSync(join(tmpdir(), 'hashlock-swap-empty-'));
    const missing = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000', '--data-dir', empty]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no devnet\.json in .*: run npm start first/);

    const badAmount = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', '1.5']);
    assert.equal(badAmount.code, 1);
    assert.match(badAmount.stderr, /--amount 1\.5: must be a positive whole number of base units/);
  });

  test('hashlock swap: an LTC swap against a devnet without litecoind fails with one clear line', async () => {
    // devnet.json as `hashlock dev` writes it when litecoind is not on the PATH.
    await assertOneLineWithout('litecoin_localnet', ['user', 'solver'], 'litecoin_localnet:ltc', '100000', 'litecoind is not running in the devnet \\(devnet.json has no litecoin_localnet\\)');
  });

  test('hashlock swap: a Solana swap against a devnet without solana_localnet fails with one clear line', async () => {
    assertSolanaRuns();
    // devnet.json as `hashlock dev` writes it when the Solana programs cannot be built.
    await assertOneLineWithout('solana_localnet', ['user'], 'solana_localnet:sol', '100000000', 'solana_localnet is not running in the devnet \\(devnet.json has no solana_localnet\\)');
    const unknown = await run(['swap', '--from', 'solana_localnet:bonk', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--from solana_localnet:bonk: unknown asset; the service has .*solana_localnet:usdc/);
  });
}

// Each user's swaps run in this order, one at a time; the three users, and the checks, at the same time.
describe('hashlock swap and the CLI against one shared hashlock dev', { concurrency: true }, () => {
  describe('EVM and Litecoin swaps of a user of their own, one at a time', { concurrency: false }, evmAndLitecoinSwaps);
  describe("Tron swaps of the devnet's test user, one at a time", { concurrency: false }, tronSwaps);
  describe('Solana swaps of a user of their own, one at a time', { concurrency: false }, solanaSwaps);
  checksBesideTheSwaps();
});
