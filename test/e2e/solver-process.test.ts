// `hashlock solver` as a market maker runs it: its own process, key and PGlite, beside `hashlock serve`
// on PostgreSQL, over two anvil chains mining every second. The swaps matched to it settle once each
// through its SIGKILL and restart, and through the service's; its key is never the service's; and a
// maker that goes silent after a match is suspended while the client's refund goes through.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createWalletClient, erc20Abi, http, parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { createDatabase } from '../helpers/stores.ts';
import { AMOUNT, openServiceWorld, skipWithoutPostgres, type ServiceProcess, type ServiceWorld, type SwapRoute } from './service-process.ts';
import { registerMaker, startMakerProcess, type MakerProcess } from './solver-maker.ts';

const skip = skipWithoutPostgres('the hashlock solver process tests');
const FROM = 'ethereum_localnet:wbtc';
const TO = 'arbitrum_localnet:wbtc';
const MAKER_WBTC = 2_000_000n;

let world: ServiceWorld | undefined;
let service: ServiceProcess | undefined;
let database: { url: string; drop: () => Promise<void> } | undefined;
const makers: MakerProcess[] = [];

before(async () => {
  if (skip) return;
  world = await openServiceWorld({ config: { solver_fund_within_seconds: 10 } });
  database = await createDatabase(process.env.DATABASE_URL!, 'hashlock_solver_process');
  service = await world.startService(database.url);
});
after(async () => {
  for (const m of makers) await m.remove();
  await service?.killed();
  await world?.close();
  await database?.drop();
});

/** Gas money and WBTC on both chains, from the user (the service's solver sends from its own account meanwhile). */
async function fund(address: `0x${string}`): Promise<void> {
  for (const c of [world!.eth, world!.arb]) {
    await c.node.rpc('anvil_setBalance', [address, `0x${parseEther('10').toString(16)}`]);
    const wallet = createWalletClient({ account: devAccount('user'), transport: http(c.node.rpcUrl) });
    const hash = await wallet.writeContract({ chain: undefined, address: c.deployment.contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [address, MAKER_WBTC] });
    await c.client.waitForTransactionReceipt({ hash });
  }
}

/** A maker with a new key, funded, quoting `feeBips` on WBTC both ways between the two chains. */
async function startMaker(id: string, feeBips: number): Promise<MakerProcess & { address: Address }> {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await fund(address);
  const maker = await startMakerProcess({
    id,
    key,
    serviceApi: service!.api,
    apiKey: await registerMaker(database!.url, id),
    chains: Object.fromEntries([world!.eth, world!.arb].map((c) => [c.deployment.chain, { rpc_url: c.node.rpcUrl, ws_url: c.node.rpcUrl.replace(/^http/, 'ws') }])),
    strategies: [{ solver: id, from: [FROM, TO], to: [FROM, TO], fee_bips: feeBips }],
    registry: world!.registryPath,
  });
  makers.push(maker);
  return Object.assign(maker, { address });
}

const route = (solverId: string): SwapRoute => {
  const user = devAccount('user').address;
  return { from: FROM, to: TO, fromOwner: user, toOwner: user, amount: AMOUNT, solverId };
};

/** Until the service has read the maker's funds (every 5 s) and it quotes. */
async function makerQuotes(id: string): Promise<void> {
  for (const end = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 250))) {
    const quote = await service!.request('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=${AMOUNT}`);
    if (quote.status === 200 && quote.body.result.some((q: { solver_id: string }) => q.solver_id === id)) return;
    assert.ok(Date.now() < end, `${id} is not quoted: ${JSON.stringify(quote.body)}`);
  }
}

test('swaps matched to hashlock solver settle once each through its SIGKILL and restart, and through the service\'s', { skip, timeout: 600_000 }, async () => {
  const w = world!;
  const maker = await startMaker('maker-a', 5);
  await makerQuotes('maker-a');
  const mark = await w.mark(maker.address);

  // Both batches are matched now: a maker late to fund while it was down may be suspended from
  // quoting, which is no concern of orders it already has.
  const first = await w.createSwaps(service!, 4, route('maker-a'));
  const second = await w.createSwaps(service!, 3, route('maker-a'));

  // Killed mid-swap: after the first destination is funded, before the rest are.
  await w.initiate(service!, first.created);
  const firstIds = first.created.map((c) => c.order_id);
  for (const end = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
    const statuses = await w.statuses(service!, firstIds);
    if (statuses.some((s) => ['awaiting_redeem', 'redeem_detected', 'redeemed', 'completed'].includes(s))) break;
    assert.ok(Date.now() < end, `no destination funded: ${statuses.join(', ')}\n${maker.output().slice(-5_000)}`);
  }
  await maker.kill();
  await new Promise((r) => setTimeout(r, 2_000));
  await maker.restart();

  // The service killed and restarted while the maker runs, with swaps in flight.
  await w.initiate(service!, second.created);
  await service!.killed();
  await new Promise((r) => setTimeout(r, 2_000));
  await service!.restart();

  const ids = [...firstIds, ...second.created.map((c) => c.order_id)];
  await w.waitCompleted(service!, ids, 240_000).catch((err: Error) => {
    throw new Error(`${err.message}\nthe maker's output:\n${maker.output().slice(-8_000)}`);
  });
  // The maker redeems its sources once the secrets show; wait for the last before counting.
  for (const end = Date.now() + 60_000; (await w.balances(maker.address)).solverEth < mark.balances.solverEth + 7n * AMOUNT; await new Promise((r) => setTimeout(r, 500))) {
    assert.ok(Date.now() < end, `the maker did not redeem every source\n${maker.output().slice(-5_000)}`);
  }
  await w.assertSettledOnce(mark, 7, first.destinationAmount);
  for (const id of ids) assert.equal((await service!.call(`/v2/orders/${id}`)).solver_id, 'maker-a');

  // The maker's key is nowhere in the service: not given to it, not printed, no job of the maker's in its store.
  assert.ok(!service!.keys.some((k) => k.replace(/^0x/, '') === maker.key.slice(2)));
  assert.ok(!service!.output().toLowerCase().includes(maker.key.slice(2)));
  const serviceJobs = (await service!.jobs()).filter((j) => j.order_id !== null && ids.includes(j.order_id));
  assert.deepEqual([...new Set(serviceJobs.map((j) => j.action))].sort(), ['initiate', 'redeem'], "the service relays the client's initiate and redeems for it; the maker's steps are not its own");
  assert.ok(!maker.output().toLowerCase().includes(maker.key.slice(2)), 'rule 7: the maker prints no key');
});

test('a maker that goes silent after a match: suspended, left out of quotes, and the client refunds', { skip, timeout: 300_000 }, async () => {
  const w = world!;
  const maker = await startMaker('maker-b', 1);
  await makerQuotes('maker-b');
  const { created } = await w.createSwaps(service!, 1, route('maker-b'));
  await maker.kill();
  await w.initiate(service!, created);
  const ids = created.map((c) => c.order_id);

  // Unfunded 10 s past the source's confirmations: suspended at the next check (every 10 s).
  type Listed = Array<{ solver_id: string; record?: { unfilled: number; suspended: boolean; suspended_reason: string | null } }>;
  const recordOf = async () => ((await service!.call('/v2/liquidity')) as Listed).find((s) => s.solver_id === 'maker-b')?.record;
  for (const end = Date.now() + 90_000; !(await recordOf())?.suspended; await new Promise((r) => setTimeout(r, 500))) {
    assert.ok(Date.now() < end, `maker-b was not suspended: ${JSON.stringify(await recordOf())}`);
  }
  assert.equal((await recordOf())?.unfilled, 1);

  // The client's refund after the source's timelock.
  const before = await w.balances();
  await w.refundAfterTimelock(service!, ids, w.eth);
  assert.equal((await w.balances()).userEth, before.userEth + AMOUNT, 'the client got its source back');

  // Back and answering with the best price, it is still left out until the operator restores it.
  await maker.restart();
  const chosen = () =>
    service!.request('POST', '/v2/orders', {
      source: { asset: FROM, owner: devAccount('user').address, amount: AMOUNT.toString() },
      destination: { asset: TO, owner: devAccount('user').address, amount: '99000' },
      solver_id: 'maker-b',
    });
  let refused = await chosen();
  for (const end = Date.now() + 15_000; /does not quote/.test(refused.body.error) && Date.now() < end; refused = await chosen()) {
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /suspended \(maker-b: /, 'its quote stream is open again, and it is refused as suspended');
  const quote = await service!.request('GET', `/v2/quote?from=${FROM}&to=${TO}&from_amount=${AMOUNT}`);
  assert.equal(quote.status, 200);
  assert.ok(!quote.body.result.some((q: { solver_id: string }) => q.solver_id === 'maker-b'), 'later quotes leave it out (its 1 bip would be the best)');
});
