// `hashlock solver` on the other families: a market maker's own process, key and PGlite beside
// `hashlock serve` on PostgreSQL, over two anvil chains, Litecoin regtest and the local Solana chain.
// The same 32-byte key is its EVM account, its Litecoin x-only key (its wallet the key-path P2TR
// address) and its Solana ed25519 seed; it proves each address to the service at start. Swaps matched
// to it by `solver_id`, Litecoin -> EVM, EVM -> SOL and SOL -> EVM, all at once, then EVM -> Litecoin:
// each completes, the maker funds every destination and redeems every source with its own key (none
// of those steps is the service's), its balances move by the swaps' amounts (less its fees where it
// pays them), and the user receives each destination amount.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hexToBytes } from '@noble/curves/utils.js';
import { lamports, type Address as SolanaAddress } from '@solana/kit';
import pg from 'pg';
import { createWalletClient, erc20Abi, http, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { xOnlyPublicKeyOf } from '../../src/chains/bitcoin/address.ts';
import { scanUtxoSet } from '../../src/chains/bitcoin/utxo-scan.ts';
import { walletAddress } from '../../src/chains/bitcoin/wallet-tx.ts';
import { solanaAddressOfKey } from '../../src/chains/solana/keys.ts';
import { solanaRpc } from '../../src/chains/solana/rpc.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { createDatabase } from '../helpers/stores.ts';
import { familiesMissing } from './service-chains.ts';
import { registerMaker, startMakerProcess, type MakerProcess } from './solver-maker.ts';
import { AMOUNT, openServiceWorld, skipWithoutPostgres, type Chain, type CreatedOrder, type ServiceProcess, type ServiceWorld, type SwapRoute } from './service-process.ts';

const missing = skipWithoutPostgres('the hashlock solver process tests on Litecoin and Solana') || (await familiesMissing());
if (missing && !/DATABASE_URL/.test(missing)) console.warn(`\n*** SKIPPING the hashlock solver process tests on Litecoin and Solana: ${missing} ***\n`);
const skip = missing ?? false;

const MAKER = 'maker-families';
/** Swaps of each route. */
const SWAPS = 2;
const MAKER_WBTC = 2_000_000n;
/** The maker's LTC, in outputs of its wallet (each can carry its own chain of unconfirmed fundings). */
const MAKER_LTC_OUTPUTS = 4;
const MAKER_LTC_EACH = 200_000_000n;
const MAKER_SOL = 10_000_000_000n;
const LTC_SOURCE = 100_000_000n;
const SOL_SOURCE = 1_000_000_000n;
/** The most a Litecoin transaction of the maker's pays in fees (regtest's fallback rate pays far less). */
const LTC_FEE_BOUND = 100_000n;
/** One signature's fee on Solana: the maker's funding or redeem (rent comes back or is the relayer's), the user's own initiate. */
const SOL_FEE = 5_000n;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));

let world: ServiceWorld | undefined;
let service: ServiceProcess | undefined;
let database: { url: string; drop: () => Promise<void> } | undefined;
let maker: Maker | undefined;

/** The maker's process, and its addresses on each family. */
type Maker = MakerProcess & { evm: Address; ltcWallet: string; sol: SolanaAddress };

before(async () => {
  if (skip) return;
  world = await openServiceWorld({ litecoin: true, solana: true });
  database = await createDatabase(process.env.DATABASE_URL!, 'hashlock_solver_process_families');
  service = await world.startService(database.url);
});
after(async () => {
  await maker?.remove();
  await service?.killed();
  await world?.close();
  await database?.drop();
});

/** WBTC and gas on both EVM chains (from the user), LTC to its wallet (the node's wallet pays, then a block), SOL by an airdrop. */
async function fund(key: `0x${string}`, ltcWallet: string, sol: SolanaAddress): Promise<void> {
  const w = world!;
  const address = privateKeyToAccount(key).address;
  for (const c of [w.eth, w.arb]) {
    await c.node.rpc('anvil_setBalance', [address, `0x${parseEther('10').toString(16)}`]);
    const wallet = createWalletClient({ account: devAccount('user'), transport: http(c.node.rpcUrl) });
    const hash = await wallet.writeContract({ chain: undefined, address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [address, MAKER_WBTC] });
    await c.client.waitForTransactionReceipt({ hash });
  }
  for (let i = 0; i < MAKER_LTC_OUTPUTS; i++) await w.ltc!.pay(ltcWallet, MAKER_LTC_EACH);
  await w.ltc!.node.mine(1);
  const rpc = solanaRpc(w.sol!.rpcUrl);
  const signature = await rpc.requestAirdrop(sol, lamports(MAKER_SOL), { commitment: 'confirmed' }).send();
  for (const end = Date.now() + 30_000; (await solLamports(sol)) < MAKER_SOL; await pause(200)) {
    assert.ok(Date.now() < end, `the airdrop ${signature} to the maker never confirmed`);
  }
}

/** The maker's confirmed LTC: its wallet's unspent outputs in the node's UTXO set (asked again while the maker's or the service's own scan runs). */
async function ltcBalance(address: string): Promise<bigint> {
  return (await scanUtxoSet(world!.ltc!.node.rpc, [address])).reduce((sum, o) => sum + o.value, 0n);
}

const solLamports = async (address: SolanaAddress): Promise<bigint> => (await solanaRpc(world!.sol!.rpcUrl).getBalance(address, { commitment: 'confirmed' }).send()).value;

const wbtc = (c: Chain, who: Address) => c.client.readContract({ address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'balanceOf', args: [who] });

/** A maker with a new key, funded everywhere, quoting `feeBips` between WBTC and LTC or SOL both ways. */
async function startMaker(id: string, feeBips: number): Promise<Maker> {
  const w = world!;
  const key = generatePrivateKey();
  const ltcWallet = walletAddress(hexToBytes(key.slice(2)), w.ltc!.chain.network);
  const sol = solanaAddressOfKey(key);
  await fund(key, ltcWallet, sol);
  const wbtcs = ['ethereum_localnet:wbtc', 'arbitrum_localnet:wbtc'];
  const families = ['litecoin_localnet:ltc', 'solana_localnet:sol'];
  const started = await startMakerProcess({
    id,
    key,
    serviceApi: service!.api,
    apiKey: await registerMaker(database!.url, id),
    chains: Object.fromEntries([
      ...[w.eth, w.arb].map((c: Chain) => [c.deployment.chain, { rpc_url: c.node.rpcUrl, ws_url: c.node.rpcUrl.replace(/^http/, 'ws') }]),
      [w.ltc!.chain.key, w.ltc!.access],
      [w.sol!.chain.key, w.sol!.access],
    ]),
    strategies: [
      { solver: id, from: wbtcs, to: families, fee_bips: feeBips },
      { solver: id, from: families, to: wbtcs, fee_bips: feeBips },
    ],
    registry: w.registryPath,
  });
  maker = Object.assign(started, { evm: privateKeyToAccount(key).address, ltcWallet, sol });
  return maker;
}

/** Until the service hears the maker quote a route (it reads its own balances every 5 s; a Litecoin wallet once its watcher recorded the outputs). */
async function makerQuotes(route: SwapRoute): Promise<void> {
  const path = `/v2/quote?from=${route.from}&to=${route.to}&from_amount=${route.amount}`;
  for (const end = Date.now() + 60_000; ; await pause(250)) {
    const quote = await service!.request('GET', path);
    if (quote.status === 200 && quote.body.result.some((q: { solver_id: string }) => q.solver_id === MAKER)) return;
    assert.ok(Date.now() < end, `${MAKER} does not quote ${route.from} -> ${route.to}: ${JSON.stringify(quote.body)}\n${maker!.output().slice(-5_000)}`);
  }
}

interface Order {
  order_id: string;
  status: string;
  solver_id: string;
  source_swap: { chain: string; swap_id: string; amount: string; initiate_tx_hash: string; redeem_tx_hash: string; redeemer: string; initiator: string };
  destination_swap: { chain: string; swap_id: string; amount: string; initiate_tx_hash: string; redeem_tx_hash: string; redeemer: string; initiator: string };
}
const read = (id: string) => service!.call(`/v2/orders/${id}`) as Promise<Order>;
const sum = (orders: Order[], side: 'source_swap' | 'destination_swap') => orders.reduce((s, o) => s + BigInt(o[side].amount), 0n);

/** The service's own record of the maker's liquidity in `asset` (its solver_balances row), for messages. */
async function serviceLiquidity(asset: string): Promise<string> {
  const client = new pg.Client({ connectionString: database!.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ balance: string; committed: string }>('select balance::text, committed::text from solver_balances where solver_id = $1 and asset = $2', [MAKER, asset]);
    return rows[0] ? `balance ${rows[0].balance}, committed ${rows[0].committed}` : 'no row';
  } finally {
    await client.end();
  }
}

/** The maker's balances the swaps move. */
async function makerBalances(m: Maker) {
  const w = world!;
  return { eth: await wbtc(w.eth, m.evm), arb: await wbtc(w.arb, m.evm), ltc: await ltcBalance(m.ltcWallet), sol: await solLamports(m.sol) };
}

/** The service's jobs of `ids`: the clients' initiates it relayed and the redeems it made for them, none of the maker's steps. */
async function assertNoMakerStepsByService(ids: string[]): Promise<void> {
  const serviceJobs = (await service!.jobs()).filter((j) => j.order_id !== null && ids.includes(j.order_id));
  assert.ok(
    serviceJobs.every((j) => j.action === 'initiate' || j.action === 'redeem'),
    `the service's jobs of these orders are the clients' initiates and redeems, none of the maker's (fund, solver-fund, solver-redeem): ${JSON.stringify(serviceJobs.map((j) => `${j.chain} ${j.action}`))}`,
  );
}

/** Creates `SWAPS` swaps of each route matched to the maker, has the clients initiate them, and waits until all complete. */
async function settle<K extends string>(routes: Record<K, SwapRoute>): Promise<Record<K, Order[]>> {
  const w = world!;
  await Promise.all(Object.values<SwapRoute>(routes).map(makerQuotes));
  const created = Object.fromEntries(
    await Promise.all(Object.entries<SwapRoute>(routes).map(async ([name, route]) => [name, (await w.createSwaps(service!, SWAPS, route)).created] as const)),
  ) as Record<string, CreatedOrder[]>;
  // The clients' initiates: gasless on EVM, their own payment to the HTLC address on Litecoin, their signed transaction on Solana.
  await Promise.all(
    Object.entries<SwapRoute>(routes).flatMap(([name, route]): Array<Promise<unknown>> => {
      const list = created[name]!;
      if (route.from.startsWith('litecoin_localnet:')) return list.map((c) => w.ltc!.pay(c.to!, route.amount));
      if (route.from.startsWith('solana_localnet:')) return list.map((c) => w.sol!.send(c.versioned_tx!));
      return [w.initiate(service!, list)];
    }),
  );
  const ids = Object.values(created).flatMap((list) => list.map((c) => c.order_id));
  await w.waitCompleted(service!, ids, 300_000).catch((err: Error) => {
    throw new Error(`${err.message}\nthe maker's output:\n${maker!.output().slice(-8_000)}`);
  });
  const orders = Object.fromEntries(await Promise.all(Object.entries(created).map(async ([name, list]) => [name, await Promise.all(list.map((c) => read(c.order_id)))] as const)));
  for (const o of Object.values(orders).flat()) assert.equal(o.solver_id, MAKER, `${o.order_id} is matched to the maker`);
  return orders as Record<K, Order[]>;
}

/** Polls the maker's balances until `done` holds (its source redeems go out once the secrets show; a Litecoin one counts once mined). */
async function makerSettled(m: Maker, done: (b: Awaited<ReturnType<typeof makerBalances>>) => boolean, what: string) {
  for (const end = Date.now() + 90_000; ; await pause(500)) {
    const now = await makerBalances(m);
    if (done(now)) return now;
    assert.ok(Date.now() < end, `${what}: ${json(now)}\n${m.output().slice(-5_000)}`);
  }
}

/** Each Litecoin HTLC of `orders` on `side` was paid its amount once and spent once, by its redeem, paying `to` the amount less a fee. */
async function assertLitecoinOnce(orders: Order[], side: 'source_swap' | 'destination_swap', to: string, fromHeight: number) {
  const activity = await world!.ltc!.activity(orders.map((o) => o[side].swap_id), fromHeight);
  for (const o of orders) {
    const { payments, spends } = activity.get(o[side].swap_id)!;
    assert.deepEqual(payments.map((p) => p.value), [BigInt(o[side].amount)], `${o.order_id}: one payment of the amount to its Litecoin ${side} HTLC: ${json(payments)}`);
    assert.equal(payments[0]!.txid, o[side].initiate_tx_hash);
    assert.deepEqual(spends.map((s) => s.txid), [o[side].redeem_tx_hash], `${o.order_id}: one spend of its Litecoin ${side} HTLC, the redeem`);
    const out = spends[0]!.outputs;
    assert.ok(out.length === 1 && out[0]!.address === to && out[0]!.value > BigInt(o[side].amount) - LTC_FEE_BOUND && out[0]!.value < BigInt(o[side].amount), `${o.order_id}: the redeem pays ${to} the amount less a fee: ${json(out)}`);
  }
}

const evmUser = devAccount('user').address;

test('hashlock solver settles Litecoin -> EVM, EVM -> SOL and SOL -> EVM swaps matched to it, with its own key on every chain', { skip, timeout: 600_000 }, async (t) => {
  const w = world!;
  const ltc = w.ltc!;
  const sol = w.sol!;
  const started = Date.now();
  const m = await startMaker(MAKER, 5);
  t.diagnostic(`the maker started in ${Date.now() - started} ms`);
  // Litecoin -> arbitrum, SOL -> ethereum, ethereum -> SOL: each EVM chain sees one direction.
  const routes = {
    fromLtc: { from: 'litecoin_localnet:ltc', to: 'arbitrum_localnet:wbtc', fromOwner: ltc.user, toOwner: evmUser, amount: LTC_SOURCE, solverId: MAKER },
    toSol: { from: 'arbitrum_localnet:wbtc', to: 'solana_localnet:sol', fromOwner: evmUser, toOwner: sol.user.address, amount: AMOUNT, solverId: MAKER },
    fromSol: { from: 'solana_localnet:sol', to: 'ethereum_localnet:wbtc', fromOwner: sol.user.address, toOwner: evmUser, amount: SOL_SOURCE, solverId: MAKER },
  } satisfies Record<string, SwapRoute>;
  const before = { maker: await makerBalances(m), userEth: await wbtc(w.eth, evmUser), userArb: await wbtc(w.arb, evmUser), userSol: await sol.userLamports(), ltcHeight: await ltc.height() };
  assert.equal(before.maker.ltc, BigInt(MAKER_LTC_OUTPUTS) * MAKER_LTC_EACH, "the maker's LTC wallet holds what it was paid");
  const orders = await settle(routes);
  t.diagnostic(`${3 * SWAPS} swaps completed ${Date.now() - started} ms after the maker's start`);

  // The maker's parties: its key's x-only key on Litecoin, its ed25519 account on Solana.
  const xOnly = xOnlyPublicKeyOf(hexToBytes(m.key.slice(2)));
  for (const o of orders.fromLtc) assert.equal(o.source_swap.redeemer.toLowerCase(), xOnly, `${o.order_id}: the maker's x-only key redeems the Litecoin source`);
  for (const o of orders.toSol) assert.equal(o.destination_swap.initiator, m.sol, `${o.order_id}: the maker's Solana account funds the destination`);
  for (const o of orders.fromSol) assert.equal(o.source_swap.redeemer, m.sol, `${o.order_id}: the maker's Solana account redeems the source`);

  const expected = {
    eth: before.maker.eth - sum(orders.fromSol, 'destination_swap'),
    arb: before.maker.arb + sum(orders.toSol, 'source_swap') - sum(orders.fromLtc, 'destination_swap'),
    ltc: before.maker.ltc + sum(orders.fromLtc, 'source_swap'),
    sol: before.maker.sol + sum(orders.fromSol, 'source_swap') - sum(orders.toSol, 'destination_swap'),
  };
  const ltcFees = LTC_FEE_BOUND * BigInt(orders.fromLtc.length);
  // On Solana the maker pays one signature per step: exact. On Litecoin, the fee rate's: within the bound.
  const solFees = SOL_FEE * BigInt(orders.toSol.length + orders.fromSol.length);
  const now = await makerSettled(
    m,
    (b) => b.arb === expected.arb && b.ltc < expected.ltc && b.ltc > expected.ltc - ltcFees && b.sol <= expected.sol - solFees,
    `the maker did not redeem every source (expected ${json(expected)})`,
  );
  t.diagnostic(`the maker's fees: ${expected.ltc - now.ltc} litoshis for ${orders.fromLtc.length} Litecoin redeems, ${expected.sol - now.sol} lamports for ${orders.toSol.length} SOL fundings and ${orders.fromSol.length} SOL redeems`);
  assert.equal(now.sol, expected.sol - solFees, "the maker's SOL: each source received, each destination paid, a signature's fee per step");
  assert.equal(now.eth, expected.eth, 'the maker paid each ethereum destination');
  assert.equal(now.arb, expected.arb, 'the maker received each arbitrum source and paid each arbitrum destination');
  for (const o of Object.values(orders).flat()) assert.notEqual((await read(o.order_id)).source_swap.redeem_tx_hash, '', `${o.order_id}: its source redeemed`);

  // The user: each source paid once, each destination amount received.
  assert.equal(await wbtc(w.eth, evmUser), before.userEth + sum(orders.fromSol, 'destination_swap'), 'the user received each ethereum destination amount');
  assert.equal(await wbtc(w.arb, evmUser), before.userArb + sum(orders.fromLtc, 'destination_swap') - sum(orders.toSol, 'source_swap'), 'the user received each arbitrum destination amount and paid each source once');
  assert.equal(
    await sol.userLamports(),
    before.userSol + sum(orders.toSol, 'destination_swap') - sum(orders.fromSol, 'source_swap') - SOL_FEE * BigInt(orders.fromSol.length),
    'the user received each SOL destination amount and paid each SOL source once',
  );
  await assertLitecoinOnce(orders.fromLtc, 'source_swap', m.ltcWallet, before.ltcHeight);

  const ids = Object.values(orders).flatMap((list) => list.map((o) => o.order_id));
  await assertNoMakerStepsByService(ids);
  assert.ok(!service!.keys.some((k) => k.replace(/^0x/, '') === m.key.slice(2)), "the maker's key is not the service's");
  assert.ok(!m.output().toLowerCase().includes(m.key.slice(2)), 'rule 7: the maker prints no key');
});

// The service weighs a registered solver's answers against its own record of the solver's liquidity.
// On a Bitcoin-family chain that record is the confirmed outputs its watcher recorded at the solver's
// key-path address: the maker's wallet was funded before it proved its key, so the watcher reads those
// outputs from the node's UTXO set once the proof is in.
test('hashlock solver settles EVM -> Litecoin swaps matched to it, funding from its own key-path wallet', { skip, timeout: 300_000 }, async (t) => {
  const w = world!;
  const ltc = w.ltc!;
  const m = maker ?? (await startMaker(MAKER, 5));
  const route: SwapRoute = { from: 'ethereum_localnet:wbtc', to: 'litecoin_localnet:ltc', fromOwner: evmUser, toOwner: ltc.user, amount: AMOUNT, solverId: MAKER };
  const before = { maker: await makerBalances(m), userEth: await wbtc(w.eth, evmUser), ltcHeight: await ltc.height() };
  // The service reads its solvers' balances every 5 s: by now it has read the maker's wallet, or never will.
  for (const end = Date.now() + 15_000; !/^balance [1-9]/.test(await serviceLiquidity(route.to)); await pause(500)) {
    if (Date.now() > end) throw new Error(`the service's record of the maker's LTC: ${await serviceLiquidity(route.to)}; its wallet holds ${before.maker.ltc} litoshis`);
  }
  const orders = await settle({ toLtc: route });
  const xOnly = xOnlyPublicKeyOf(hexToBytes(m.key.slice(2)));
  for (const o of orders.toLtc) assert.equal(o.destination_swap.initiator.toLowerCase(), xOnly, `${o.order_id}: the maker's x-only key funds the Litecoin destination`);
  const expected = { eth: before.maker.eth + sum(orders.toLtc, 'source_swap'), ltc: before.maker.ltc - sum(orders.toLtc, 'destination_swap') };
  const ltcFees = LTC_FEE_BOUND * BigInt(orders.toLtc.length);
  const now = await makerSettled(m, (b) => b.eth === expected.eth && b.ltc < expected.ltc && b.ltc > expected.ltc - ltcFees, `the maker did not settle (expected ${json(expected)})`);
  t.diagnostic(`the maker's fees: ${expected.ltc - now.ltc} litoshis for ${orders.toLtc.length} Litecoin fundings`);
  assert.equal(await wbtc(w.eth, evmUser), before.userEth - sum(orders.toLtc, 'source_swap'), 'the user paid each source once');
  // The user's LTC: its HTLC paid exactly the amount by the maker, its redeem (the service's, for the client) paying the user that less the redeem's fee.
  await assertLitecoinOnce(orders.toLtc, 'destination_swap', ltc.user, before.ltcHeight);
  await assertNoMakerStepsByService(orders.toLtc.map((o) => o.order_id));
});
