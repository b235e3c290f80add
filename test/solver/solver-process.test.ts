// `hashlock solver` against the service's own wiring (`hashlock dev` on its two anvil chains): a
// market maker with its own key and its own PGlite proves its addresses, registers its pairs, wins the
// quote with a better price and settles the swap on chain; the service holds none of its keys and
// sends none of its transactions, and still redeems the destination for the client.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createPublicClient, createWalletClient, erc20Abi, http, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { runSwap } from '../../src/cli/swap.ts';
import type { ServiceConfig } from '../../src/config/service-config.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { startDev, type Dev } from '../../src/localnet/dev.ts';
import { startSolverProcess, type SolverProcess } from '../../src/solver-process/solver-process.ts';
import { registerSolver } from '../../src/store/solver-registry.ts';
import { evmOnlyConfig } from '../helpers/service-config.ts';

type Json = Record<string, any>;
const FROM = 'ethereum_localnet:wbtc';
const USDC = 'ethereum_localnet:usdc';
const TO = 'arbitrum_localnet:wbtc';
const FUNDS = 5_000_000n;
const AMOUNT = 100_000n;

let serviceDir: string;
let solverDir: string;
let dev: Dev;
let maker: SolverProcess | undefined;
/** The maker's price feed (CoinGecko's simple-price shape): BTC at another price than the config's static 95,000. */
let feedPrices: Record<string, { usd: number }> = { bitcoin: { usd: 50_000 }, 'usd-coin': { usd: 1 } };
let feed: Server;
let feedUrl: string;
const makerKey = generatePrivateKey();
const makerAccount = privateKeyToAccount(makerKey);

before(async () => {
  serviceDir = mkdtempSync(join(tmpdir(), 'hashlock-solver-process-service-'));
  solverDir = mkdtempSync(join(tmpdir(), 'hashlock-solver-process-'));
  dev = await startDev(evmOnlyConfig(serviceDir));
  feed = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(feedPrices)));
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/api/v3/simple/price`;
});
after(async () => {
  await maker?.stop();
  feed?.close();
  await dev?.stop();
  rmSync(serviceDir, { recursive: true, force: true });
  rmSync(solverDir, { recursive: true, force: true });
});

interface EvmChain {
  rpc_url: string;
  contracts: { wbtc: Address };
}
const chainOf = (key: string) => dev.chains.find((c) => c.chain.key === key)!.record as unknown as EvmChain;
const wbtcOf = (key: string, owner: Address) =>
  createPublicClient({ transport: http(chainOf(key).rpc_url) }).readContract({ address: chainOf(key).contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** The dev solver's account pays the maker gas money on both chains and WBTC on both. */
async function fundMaker(): Promise<void> {
  for (const key of ['ethereum_localnet', 'arbitrum_localnet']) {
    const { rpc_url, contracts } = chainOf(key);
    const wallet = createWalletClient({ account: devAccount('solver'), transport: http(rpc_url) });
    const client = createPublicClient({ transport: http(rpc_url) });
    await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ chain: undefined, to: makerAccount.address, value: parseEther('10') }) });
    const hash = await wallet.writeContract({ chain: undefined, address: contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [makerAccount.address, FUNDS] });
    await client.waitForTransactionReceipt({ hash });
  }
}

/** The maker's config: the dev chains and registry, its own data dir and key, 5-bips strategies (WBTC both ways, USDC into WBTC), its own price feed. */
function makerConfig(): ServiceConfig {
  const base = evmOnlyConfig(solverDir);
  return {
    ...base,
    chains: Object.fromEntries(dev.chains.map((c) => [c.chain.key, c.access])),
    keys: { solver: makerKey },
    solvers: [],
    strategies: [
      { solver: 'maker', from: [FROM, TO], to: [FROM, TO], fee_bips: 5 },
      { solver: 'maker', from: USDC, to: TO, fee_bips: 5 },
    ],
    priceFeed: { url: feedUrl, refresh_ms: 1_000, max_age_ms: 60_000 },
  };
}

const api = async (path: string): Promise<Json> => {
  const res = await fetch(`${dev.apiUrl}${path}`, { headers: { 'service-app-id': dev.appKey } });
  return (await res.json()) as Json;
};
const until = async (what: string, done: () => Promise<boolean>, ms = 30_000) => {
  for (const deadline = Date.now() + ms; !(await done()); await new Promise((r) => setTimeout(r, 250))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
};

test('hashlock solver proves its addresses, wins the quote and settles EVM -> EVM with its own key; the service redeems for the client', async () => {
  await fundMaker();
  const { key } = await registerSolver(dev.service.store.db, { id: 'maker', name: 'Maker' });
  maker = await startSolverProcess(makerConfig(), { serviceUrl: dev.apiUrl, solverApiKey: key });
  assert.equal(maker.id, 'maker');
  assert.deepEqual(maker.addresses, { ethereum_localnet: makerAccount.address, arbitrum_localnet: makerAccount.address });

  // Its proven addresses and pairs, as the service has them; its funds once the service has read them.
  const me = await (await fetch(`${dev.apiUrl}/solver/v1/me`, { headers: { 'solver-key': key } })).json() as Json;
  assert.deepEqual(me.result.addresses.map((a: Json) => [a.chain, a.address]), [['arbitrum_localnet', makerAccount.address], ['ethereum_localnet', makerAccount.address]]);
  assert.equal(me.result.pairs.length, 3);
  await until("the maker's funds in the liquidity read", async () =>
    (await api('/v2/liquidity')).result.find((s: Json) => s.solver_id === 'maker')?.liquidity.find((l: Json) => l.asset === TO)?.balance === FUNDS.toString(),
  );
  const quote = await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=${AMOUNT}`);
  assert.deepEqual(quote.result.map((q: Json) => q.destination.amount), ['99950', '99700'], '5 bips against the in-process 30');
  assert.equal(quote.result[0].solver_id, 'maker');

  const user = devAccount('user').address;
  const before = { makerSrc: await wbtcOf('ethereum_localnet', makerAccount.address), makerDst: await wbtcOf('arbitrum_localnet', makerAccount.address), userDst: await wbtcOf('arbitrum_localnet', user) };
  const { orderId, statuses } = await runSwap({ from: FROM, to: TO, amount: AMOUNT.toString(), dataDir: serviceDir, timeoutMs: 90_000, print: () => undefined });
  assert.equal(statuses.at(-1), 'completed');
  const order = (await api(`/v2/orders/${orderId}`)).result;
  assert.equal(order.solver_id, 'maker');
  assert.equal(order.destination_swap.initiator, makerAccount.address);

  // The client got the destination amount; the maker paid it and, once it redeemed its source, got the source amount.
  assert.equal(await wbtcOf('arbitrum_localnet', user), before.userDst + 99_950n);
  assert.equal(await wbtcOf('arbitrum_localnet', makerAccount.address), before.makerDst - 99_950n);
  await until('the maker to redeem its source', async () => (await wbtcOf('ethereum_localnet', makerAccount.address)) === before.makerSrc + AMOUNT);

  // Who sent what: the maker's funding and redeem are jobs of its own store; the service's store holds
  // the client's redeem only, and nothing of the maker's key.
  const actions = async (db: typeof dev.service.store.db) =>
    (await db.selectFrom('relayer_jobs').select('action').where('order_id', '=', orderId).execute()).map((j) => j.action).sort();
  assert.deepEqual(await actions(maker.store.db), ['solver-fund', 'solver-redeem']);
  assert.deepEqual(await actions(dev.service.store.db), ['initiate', 'redeem']);
  assert.ok(!JSON.stringify(process.env).includes(makerKey.slice(2)), "the maker's key is in no environment variable");
});

test('hashlock solver prices with its own price feed, and follows it', async () => {
  assert.ok(maker, 'the maker of the test before runs');
  const makerQuote = async () => (await api(`/v2/quote?from=${USDC}&to=${TO}&from_amount=1000000000`)).result.find((q: Json) => q.solver_id === 'maker');
  // 1,000 USDC at $1 for BTC at $50,000 (its feed; the config's static price is $95,000): 0.02 BTC less 5 bips.
  assert.equal((await makerQuote())?.destination.amount, '1999000');
  feedPrices = { bitcoin: { usd: 100_000 }, 'usd-coin': { usd: 1 } };
  await until('the maker to price BTC at its feed\'s new $100,000', async () => (await makerQuote())?.destination.amount === '999500', 10_000);
});
