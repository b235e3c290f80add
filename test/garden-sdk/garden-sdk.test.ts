// Garden's own published SDK (@gardenfi/core and @gardenfi/orderbook 3.1.3, unchanged, with their
// built-in localnet definitions) against `hashlock dev` laid out as Garden's local environment:
// quotes, orders, the gasless initiate, the SDK's executor redeeming with the secret the SDK keeps,
// and the order status as the SDK parses it, both ways between the two EVM chains.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Garden, SecretManager } from '@gardenfi/core';
import { AssetManager, ParseOrderStatus } from '@gardenfi/orderbook';
import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type Hash, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { portIsFree } from '../../src/localnet/free-port.ts';
import { until } from '../helpers/wait.ts';
import { DigestKey, Network, type SdkOrder } from './sdk-types.ts';

/** Where the SDK's localnet chains (`ethereum_localnet`, `arbitrum_localnet`) expect their nodes. */
const SDK_RPC = { ethereum_localnet: 'http://localhost:8545', arbitrum_localnet: 'http://localhost:8546' } as const;
type ChainKey = keyof typeof SDK_RPC;
/** The token each chain's `wbtc` is, as the SDK's own localnet asset definitions name it. */
const SDK_WBTC: Record<ChainKey, Address> = {
  ethereum_localnet: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  arbitrum_localnet: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
};
const SDK_WBTC_HTLC: Record<ChainKey, Address> = {
  ethereum_localnet: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
  arbitrum_localnet: '0x0165878A594ca255338adfa4d48449f69242Eb8F',
};

const BLACKLISTED = 'arbitrum_localnet:usdc -> ethereum_localnet:*';

const user = privateKeyToAccount(privateKeyOf(devAccount('user')));
const solver = devAccount('solver').address;
const digestKey = DigestKey.generateRandom().val!;

let dev: Dev;
let garden: Garden;
const clients = {} as Record<ChainKey, PublicClient>;

before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-garden-sdk-'));
  // One rule, so that the SDK's own route validation and the service's are both seen at work.
  const routePolicy = { default: 'open' as const, isolation_groups: [], blacklist_pairs: [BLACKLISTED], whitelist_overrides: [] };
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, databaseUrl: undefined, logLevel: 'warn', routePolicy };
  // Other test files may hold these ports for a while (a `hashlock dev` of their own): wait for them.
  for (const url of Object.values(SDK_RPC)) await until(`port ${new URL(url).port} to be free`, async () => ((await portIsFree(Number(new URL(url).port))) ? true : undefined), 180_000, 250);
  dev = await startDev(config, { wellKnownPorts: true });
  for (const key of Object.keys(SDK_RPC) as ChainKey[]) {
    const port = new URL(SDK_RPC[key]).port;
    const running = dev.chains.find((c) => c.chain.key === key)!;
    assert.equal(new URL(String(running.access.rpc_url)).port, port, `${key} must listen on ${port}, where Garden's SDK looks for it: is another node using that port?`);
    clients[key] = createPublicClient({ transport: http(SDK_RPC[key]) });
  }
  const wallet = createWalletClient({ account: user, transport: http(SDK_RPC.ethereum_localnet) });
  garden = Garden.fromWallets({
    environment: { network: Network.LOCALNET, baseurl: dev.apiUrl },
    apiKey: dev.appKey,
    digestKey,
    wallets: { evm: wallet },
  });
});

after(async () => {
  await dev?.stop();
});

const wbtcBalance = (chain: ChainKey, who: Address) =>
  clients[chain].readContract({ address: SDK_WBTC[chain], abi: erc20Abi, functionName: 'balanceOf', args: [who] });

/** What the user's approval transactions (if any) cost in ether on `chain` since `fromBlock`. */
async function gasSpentBy(chain: ChainKey, who: Address, hashes: Hash[]): Promise<bigint> {
  let total = 0n;
  for (const hash of hashes) {
    const receipt = await clients[chain].getTransactionReceipt({ hash });
    assert.equal(receipt.from.toLowerCase(), who.toLowerCase());
    total += receipt.gasUsed * receipt.effectiveGasPrice;
  }
  return total;
}

/** The user's transactions in blocks after `fromBlock` on `chain` (the approval, when the SDK sends one). */
async function userTransactions(chain: ChainKey, fromBlock: bigint): Promise<Hash[]> {
  const head = await clients[chain].getBlockNumber();
  const hashes: Hash[] = [];
  for (let n = fromBlock + 1n; n <= head; n++) {
    const block = await clients[chain].getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) if (tx.from.toLowerCase() === user.address.toLowerCase()) hashes.push(tx.hash);
  }
  return hashes;
}

async function sdkOrder(orderId: string): Promise<SdkOrder> {
  const read = await garden.getOrder(orderId);
  assert.ok(read.ok, `the SDK's getOrder failed: ${read.error}`);
  return read.val;
}

for (const [from, to] of [
  ['ethereum_localnet', 'arbitrum_localnet'],
  ['arbitrum_localnet', 'ethereum_localnet'],
] as const) {
  test(`Garden's SDK swaps ${from}:wbtc -> ${to}:wbtc with the secret it keeps; its executor redeems`, async () => {
    const amount = 200_000;
    const quote = await garden.quote.getQuote(`${from}:wbtc`, `${to}:wbtc`, amount);
    assert.ok(quote.ok, `the SDK's quote failed: ${quote.error}`);
    const best = quote.val[0]!;
    assert.equal(best.source.amount, String(amount));
    const receive = BigInt(best.destination.amount);
    assert.ok(receive > 0n && receive < BigInt(amount), `a quote that pays less than it takes (${receive})`);

    const startBlocks = { [from]: await clients[from].getBlockNumber(), [to]: await clients[to].getBlockNumber() } as Record<ChainKey, bigint>;
    const before = {
      userFrom: await wbtcBalance(from, user.address),
      userTo: await wbtcBalance(to, user.address),
      solverFrom: await wbtcBalance(from, solver),
      solverTo: await wbtcBalance(to, solver),
      userEther: await clients[from].getBalance({ address: user.address }),
      userEtherTo: await clients[to].getBalance({ address: user.address }),
    };

    // The secret is the SDK's: derived from its digest key and the order's nonce, as its executor derives it again.
    const nonce = Date.now();
    const secret = await SecretManager.fromDigestKey(digestKey.digestKey).generateSecret(String(nonce));
    assert.ok(secret.ok, secret.error);
    const created = await garden.createOrder({
      source: { asset: `${from}:wbtc`, owner: user.address, delegate: null, amount: String(amount) },
      destination: { asset: `${to}:wbtc`, owner: user.address, delegate: null, amount: best.destination.amount },
      nonce,
      secret_hash: secret.val!.secretHash.replace(/^0x/, ''),
      solver_id: best.solver_id,
      slippage: 0,
    });
    assert.ok(created.ok, `the SDK's createOrder failed: ${created.error}`);
    const order = created.val as { order_id: string; typed_data: { domain: { verifyingContract: string } }; initiate_transaction: { to: string } };
    assert.equal(order.initiate_transaction.to.toLowerCase(), SDK_WBTC_HTLC[from].toLowerCase(), 'the HTLC the SDK is sent to is the one its localnet definitions name');

    const initiated = await garden.htlcs.evm!.initiate(created.val as never);
    assert.ok(initiated.ok, `the SDK's gasless initiate failed: ${initiated.error}`);
    const afterInitiate = await sdkOrder(order.order_id);
    assert.ok(['Created', 'Initiate Detected', 'Initiated', 'Awaiting Redeem'].includes(afterInitiate.status), afterInitiate.status);

    const stopExecutor = await garden.executor!.execute(500);
    try {
      const redeemed = await until('the SDK to see its order Redeemed', async () => {
        const o = await sdkOrder(order.order_id);
        return o.status === 'Redeemed' ? o : undefined;
      }, 90_000, 250);
      assert.equal(ParseOrderStatus(redeemed as never), 'Redeemed');
      assert.equal(redeemed.destination_swap.secret.replace(/^0x/, ''), secret.val!.secret.replace(/^0x/, ''), 'the destination was redeemed with the SDK\'s secret');
    } finally {
      stopExecutor();
    }
    // The solver redeems its source with the secret the SDK revealed.
    const completed = await until('the solver to redeem the source', async () => {
      const o = await sdkOrder(order.order_id);
      return o.source_swap.redeem_tx_hash && Number(o.source_swap.redeem_block_number) > 0 ? o : undefined;
    }, 90_000, 250);
    assert.ok(completed.source_swap.redeem_tx_hash);

    const approvals = await userTransactions(from, startBlocks[from]);
    assert.ok(approvals.length <= 1, `the user sent ${approvals.length} transactions on ${from}; a gasless swap needs at most an approval`);
    assert.deepEqual(await userTransactions(to, startBlocks[to]), [], `the user sent nothing on ${to}`);
    assert.equal(await wbtcBalance(from, user.address), before.userFrom - BigInt(amount));
    assert.equal(await wbtcBalance(from, solver), before.solverFrom + BigInt(amount));
    assert.equal(await wbtcBalance(to, user.address), before.userTo + receive);
    assert.equal(await wbtcBalance(to, solver), before.solverTo - receive);
    assert.equal(await clients[from].getBalance({ address: user.address }), before.userEther - (await gasSpentBy(from, user.address, approvals)), 'the user paid gas for its approval only');
    assert.equal(await clients[to].getBalance({ address: user.address }), before.userEtherTo, 'the user paid no gas on the destination');
  });
}

test("Garden's SDK createSwap (the service keeps the secret and redeems for the user): quote to Redeemed", async () => {
  const quote = await garden.quote.getQuote('arbitrum_localnet:wbtc', 'ethereum_localnet:wbtc', 150_000);
  assert.ok(quote.ok, `the SDK's quote failed: ${quote.error}`);
  const best = quote.val[0]!;
  const before = { userFrom: await wbtcBalance('arbitrum_localnet', user.address), userTo: await wbtcBalance('ethereum_localnet', user.address) };
  const swap = await garden.createSwap({
    fromAsset: 'arbitrum_localnet:wbtc',
    toAsset: 'ethereum_localnet:wbtc',
    sendAmount: best.source.amount,
    receiveAmount: best.destination.amount,
    solverId: best.solver_id,
  });
  assert.ok(swap.ok, `the SDK's createSwap failed: ${swap.error}`);
  assert.equal(typeof swap.val, 'string', 'an initiated EVM swap answers its order id');
  const done = await until('the order to be Redeemed', async () => {
    const o = await sdkOrder(swap.val as string);
    return o.status === 'Redeemed' && Number(o.source_swap.redeem_block_number) > 0 ? o : undefined;
  }, 90_000, 250);
  assert.match(done.destination_swap.secret.replace(/^0x/, ''), /^[0-9a-f]{64}$/);
  assert.equal(await wbtcBalance('arbitrum_localnet', user.address), before.userFrom - BigInt(best.source.amount));
  assert.equal(await wbtcBalance('ethereum_localnet', user.address), before.userTo + BigInt(best.destination.amount));
});

test("Garden's SDK reads the chains (GET /v2/chains) and the route policy (GET /v2/policy) as the service serves and enforces them", async () => {
  const assets = new AssetManager({ baseUrl: dev.apiUrl }, dev.appKey);
  await assets.initialize();
  for (const key of Object.keys(SDK_RPC) as ChainKey[]) {
    const wbtc = assets.getAsset(`${key}:wbtc`) as unknown as { htlc: { address: string }; token: { address: string }; decimals: number } | undefined;
    assert.ok(wbtc, `the SDK lists ${key}:wbtc`);
    assert.equal(wbtc.htlc.address, SDK_WBTC_HTLC[key]);
    assert.equal(wbtc.token.address, SDK_WBTC[key]);
    assert.equal(wbtc.decimals, 8);
  }
  const route = (from: string, to: string) => assets.isRouteValid({ id: from }, { id: to });
  assert.equal(await route('ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc'), true);
  assert.equal(await route('arbitrum_localnet:usdc', 'ethereum_localnet:usdc'), false, 'the SDK applies the blacklist rule it read');
  assert.equal(await route('ethereum_localnet:usdc', 'arbitrum_localnet:usdc'), true, 'a one-way rule leaves the other way open');

  const refused = await garden.quote.getQuote('arbitrum_localnet:usdc', 'ethereum_localnet:usdc', 10_000_000);
  assert.ok(!refused.ok);
  // The SDK hands on the service's error body as text, quotes escaped.
  assert.match(String(refused.error), /refused by blacklist_pairs rule \\*"arbitrum_localnet:usdc -> ethereum_localnet:\*\\*"/);
  const allowed = await garden.quote.getQuote('ethereum_localnet:usdc', 'arbitrum_localnet:usdc', 10_000_000);
  assert.ok(allowed.ok, `the open direction quotes: ${allowed.error}`);
});
