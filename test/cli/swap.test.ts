// `hashlock swap` against a running `hashlock dev`: an ERC-20 swap (gasless initiate), a native
// ether swap (the client broadcasts its initiate) and Litecoin swaps both ways (the client pays the
// HTLC address; the service redeems to the user's taproot address) complete, and the printed
// balances agree with the chains.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { envFor, runHashlock, startHashlockDev, type RunningDev } from '../helpers/hashlock-cli.ts';
import { SseClient, type SseEvent } from '../helpers/sse.ts';
import { startReceiver, type Receiver } from '../helpers/webhooks.ts';
import { waitFor } from '../helpers/wait.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { satoshis } from '../../src/chains/bitcoin/chain-data.ts';
import { bitcoinRpcFor } from '../../src/chains/bitcoin/rpc.ts';
import { litecoindOrSkip } from '../helpers/litecoin.ts';
import { printed, quoted } from '../helpers/swap-output.ts';

/** What the Litecoin tests run, as a skip names it. */
const LITECOIN_SWAPS = 'the Litecoin swaps of hashlock swap';

const run = runHashlock;

let dataDir: string;
let dev: RunningDev | undefined;
const devOutput = () => dev?.output() ?? '';

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'hashlock-swap-'));
  dev = await startHashlockDev(dataDir);
  assert.ok(JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')).api_url);
});

after(async () => {
  await dev?.stop();
});

function assertCompleted(res: { code: number | null; stdout: string; stderr: string }, from: string, to: string, amount: bigint) {
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  const statuses = [...res.stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  assert.ok(statuses.includes('created') || statuses.includes('initiated'), res.stdout);
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  assert.match(res.stdout, /^Completed in [\d.]+ s: .*completed$/m);
  const destination = quoted(res.stdout);
  assert.ok(destination > 0n && destination < amount);
  assert.equal(printed(res.stdout, 'after', to) - printed(res.stdout, 'before', to), destination, 'the user received exactly the quoted amount');
  assert.ok(printed(res.stdout, 'after', from) <= printed(res.stdout, 'before', from) - amount, 'the user paid the source amount');
}

/**
 * Follows the app's event stream while a swap runs: the first order it shows gets two streams of
 * its own, one kept open and one that drops after two events and resumes with Last-Event-ID.
 */
async function followSwapEvents() {
  const devnet = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as { api_url: string; app_key: string };
  const headers = { 'service-app-id': devnet.app_key };
  let kept: SseClient | undefined;
  let dropped: SseClient | undefined;
  let resumed: SseClient | undefined;
  const opened = new Promise<void>((resolve, reject) => {
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
        resolve();
      }, reject);
    };
    void SseClient.open(`${devnet.api_url}/v2/events`, headers, onAppEvent).then((app) => (appStream = app));
  });
  let appStream: SseClient | undefined;
  while (!appStream) await new Promise((r) => setTimeout(r, 20));
  return {
    /** Once the swap completed: every stream's statuses. */
    finish: async () => {
      await opened;
      const done = (c: SseClient) => c.data().some((e) => e.status === 'completed');
      await kept!.until(() => done(kept!), 30_000, 'completed on the order stream');
      await resumed!.until(() => done(resumed!), 30_000, 'completed on the resumed stream');
      const statuses = (c: SseClient) => c.data().map((e) => e.status);
      const result = { orderId: kept!.data()[0]!.order_id, kept: statuses(kept!), dropped: statuses(dropped!), resumed: statuses(resumed!), app: appStream!.data().filter((e) => e.order_id === kept!.data()[0]!.order_id).map((e) => e.status) };
      for (const c of [kept!, resumed!, appStream!]) c.close();
      return result;
    },
  };
}

/** A receiver on loopback registered as a webhook endpoint of the devnet app; returns it and its secret. */
async function registerWebhook(): Promise<{ receiver: Receiver; secret: string }> {
  const devnet = JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8')) as { api_url: string; app_key: string };
  const receiver = await startReceiver();
  const res = await fetch(`${devnet.api_url}/v2/webhooks`, {
    method: 'POST',
    headers: { 'service-app-id': devnet.app_key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return { receiver, secret: ((await res.json()) as { result: { secret: string } }).result.secret };
}

test('hashlock swap: WBTC ethereum_localnet -> arbitrum_localnet with a gasless initiate completes; its event stream and webhook show each status once', async () => {
  const amount = 100_000n;
  const events = await followSwapEvents();
  const hook = await registerWebhook();
  after(() => hook.receiver.close());
  const res = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', amount.toString()], envFor(dataDir));
  assertCompleted(res, 'ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc', amount);
  const streamed = await events.finish();
  assert.equal(streamed.kept[0], 'created', streamed.kept.join(' '));
  assert.equal(streamed.kept.at(-1), 'completed');
  assert.equal(new Set(streamed.kept).size, streamed.kept.length, `each status once: ${streamed.kept.join(' ')}`);
  const order = ['created', 'initiate_detected', 'initiated', 'awaiting_redeem', 'redeem_detected', 'redeemed', 'completed'];
  assert.deepEqual(streamed.kept, order.filter((s) => streamed.kept.includes(s)), 'in the order of the swap');
  for (const s of ['initiated', 'awaiting_redeem']) assert.ok(streamed.kept.includes(s), `${s} is streamed: ${streamed.kept.join(' ')}`);
  const printedStatuses = [...res.stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]!);
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
  const res = await run(['swap', '--from', 'ethereum_localnet:eth', '--to', 'arbitrum_localnet:eth', '--amount', amount.toString()], envFor(dataDir));
  assertCompleted(res, 'ethereum_localnet:eth', 'arbitrum_localnet:eth', amount);
  assert.match(res.stdout, /^\s*initiate: 0x[0-9a-f]{64}/m);
  assert.doesNotMatch(res.stdout, /gasless/);
});

test('hashlock swap: clear errors for an unknown asset and a missing devnet.json', async () => {
  const unknown = await run(['swap', '--from', 'ethereum_localnet:doge', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000'], envFor(dataDir));
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /--from ethereum_localnet:doge: unknown asset; the service has .*ethereum_localnet:wbtc/);

  const empty = mkdtempSync(join(tmpdir(), 'hashlock-swap-empty-'));
  const missing = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', '100000', '--data-dir', empty], envFor(dataDir));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no devnet\.json in .*: run npm start first/);

  const badAmount = await run(['swap', '--from', 'ethereum_localnet:wbtc', '--to', 'arbitrum_localnet:wbtc', '--amount', '1.5'], envFor(dataDir));
  assert.equal(badAmount.code, 1);
  assert.match(badAmount.stderr, /--amount 1\.5: must be a positive whole number of base units/);
});

const readDevnetJson = () => JSON.parse(readFileSync(join(dataDir, 'devnet.json'), 'utf8'));

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

/** The status changes a swap printed, in order. */
const statusesOf = (stdout: string) => [...stdout.matchAll(/^\s*\[\s*[\d.]+ s\] (\w+)$/gm)].map((m) => m[1]);

test('hashlock swap: LTC -> arbitrum WBTC: the client pays the HTLC address from its coins and receives the quoted WBTC', { timeout: LTC_SWAP_TIMEOUT_MS }, async (t) => {
  if (!litecoindOrSkip(t, LITECOIN_SWAPS)) return;
  const amount = 10_000_000n;
  const res = await run(ltcSwapArgs('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', amount), envFor(dataDir), LTC_SWAP_TIMEOUT_MS);
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  const statuses = statusesOf(res.stdout);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  assert.match(res.stdout, /^Completed in [\d.]+ s: .*completed$/m);

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
  const res = await run(ltcSwapArgs('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', amount), envFor(dataDir), LTC_SWAP_TIMEOUT_MS);
  assert.equal(res.code, 0, `${res.stdout}\n${res.stderr}\n--- dev ---\n${devOutput()}`);
  const statuses = statusesOf(res.stdout);
  assert.equal(statuses.at(-1), 'completed', res.stdout);
  // The client samples the status every 500 ms: a status that lasts less (initiated, with 1 s EVM
  // blocks and an event-driven solver) may not be printed.
  assert.equal(new Set(statuses).size, statuses.length, 'each status change is printed once');
  assert.match(res.stdout, /initiate \(gasless, relayed\): 0x[0-9a-f]{64}/);
  assert.equal(printed(res.stdout, 'before', 'ethereum_localnet:wbtc') - printed(res.stdout, 'after', 'ethereum_localnet:wbtc'), amount);

  const destination = quoted(res.stdout);
  const redeem = /^\s*redeem \(by the service, mined\): ([0-9a-f]{64}): (\d+) litoshis to (rltc1p\w+), the destination amount (\d+) less the redeem fee (\d+)$/m.exec(res.stdout);
  assert.ok(redeem, res.stdout);
  assert.equal(redeem[3], readDevnetJson().accounts.user.litecoin.address);
  assert.equal(BigInt(redeem[4]!), destination);
  const { fee, tx } = await litecoinFee(redeem[1]!);
  assert.equal(BigInt(redeem[5]!), fee, 'the printed redeem fee is the transaction\'s');
  assert.ok(fee > 0n && fee < 10_000n, `a small redeem fee: ${fee}`);
  assert.ok((tx.confirmations ?? 0) >= 1, 'the redeem is mined');
  const received = printed(res.stdout, 'after', 'litecoin_localnet:ltc') - printed(res.stdout, 'before', 'litecoin_localnet:ltc');
  assert.equal(received, destination - fee, 'the user received the destination amount less the redeem fee');
  assert.equal(BigInt(redeem[2]!), received);
});

test('hashlock swap: an LTC swap against a devnet without litecoind fails with one clear line', async () => {
  // A copy of devnet.json as `hashlock dev` writes it when litecoind is not on the PATH.
  const devnet = readDevnetJson();
  delete devnet.chains.litecoin_localnet;
  delete devnet.accounts.user.litecoin;
  delete devnet.accounts.solver.litecoin;
  const noLitecoin = mkdtempSync(join(tmpdir(), 'hashlock-swap-noltc-'));
  writeFileSync(join(noLitecoin, 'devnet.json'), JSON.stringify(devnet, null, 2));
  for (const [flag, from, to] of [
    ['--from', 'litecoin_localnet:ltc', 'arbitrum_localnet:wbtc'],
    ['--to', 'ethereum_localnet:wbtc', 'litecoin_localnet:ltc'],
  ] as const) {
    const res = await run(['swap', '--from', from, '--to', to, '--amount', '100000', '--data-dir', noLitecoin], envFor(dataDir));
    assert.equal(res.code, 1, res.stdout);
    assert.equal(res.stdout, '', 'nothing happens before the check');
    assert.match(res.stderr, new RegExp(`^swap failed: ${flag} litecoin_localnet:ltc: litecoind is not running in the devnet \\(devnet.json has no litecoin_localnet\\)`));
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  }
});
