// The solver's crash points, its own refunds, fee accrual and the rule-5 race, on real anvil chains.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { erc20Abi, getAddress, maxUint256 } from 'viem';
import { htlcInitiateAbi } from '../../../src/chains/solidity-htlc/htlc-abi.ts';
import { devAccount } from '../../../src/localnet/accounts.ts';
import { mayCoSignInstantRefund } from '../../../src/store/instant-refund-gate.ts';
import { claimFunding, claimFundings } from '../../../src/store/solver-queries.ts';
import { destinationFundingAt } from '../../helpers/order-flags.ts';
import { insertOrder } from '../../../src/store/orders.ts';
import { localnetRegistry, sampleOrder, SOLVER } from '../../helpers/fixtures.ts';
import { describeEachStore } from '../../helpers/stores.ts';
import { htlcOrder, startChains, type LocalChain } from '../../relayer/harness.ts';
import { AMOUNT, DEST_AMOUNT, openSwapWorld, swapClient, type SwapWorld } from '../../e2e/harness.ts';

const registry = localnetRegistry();
let chains: Awaited<ReturnType<typeof startChains>>;
const solverAddress = getAddress(SOLVER.addresses.ethereum_localnet!);

before(async () => {
  chains = await startChains(registry);
});
after(async () => {
  await Promise.all(Object.values(chains).map((c) => c.node.stop()));
});

describeEachStore('Solver on EVM chains', (kind) => {
  let w: SwapWorld;
  let eth: LocalChain;
  let arb: LocalChain;
  let client: ReturnType<typeof swapClient>;

  before(async () => {
    eth = chains.ethereum_localnet;
    arb = chains.arbitrum_localnet;
    w = await openSwapWorld(kind, registry, chains);
    client = swapClient(w, eth);
  });
  after(() => w.close());

  const nonce = (chain: LocalChain) => chain.client.getTransactionCount({ address: solverAddress });

  test('a destination initiate still unmined (its pass died waiting for the receipt) is not sent again', async () => {
    const o = await client.createOrder(true);
    await client.initiate(o);
    for (const watcher of Object.values(w.watchers)) await watcher.poll();
    const d = o.order.destination_swap;
    const solver = devAccount('solver');
    const { wbtc, wbtcHtlc } = arb.deployment.contracts;
    assert.equal(
      await arb.client.readContract({ address: wbtc, abi: erc20Abi, functionName: 'allowance', args: [solverAddress, wbtcHtlc] }),
      maxUint256,
      'the solver approved the HTLC once, at start',
    );
    await arb.node.rpc('evm_setAutomine', [false]);
    try {
      // What a dead instance had sent: the initiate, still in the mempool, and no job for it here.
      await arb.wallet(solver).writeContract({
        account: solver,
        chain: undefined,
        address: wbtcHtlc,
        abi: htlcInitiateAbi,
        functionName: 'initiate',
        args: [getAddress(d.redeemer), BigInt(d.timelock), DEST_AMOUNT, `0x${d.secret_hash}`],
      });
      const pending = await arb.client.getTransactionCount({ address: solverAddress, blockTag: 'pending' });
      const pass = await Promise.race([w.pass(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the pass waited for a transaction')), 10_000))]);
      assert.ok(!pass.funded.includes(o.id));
      assert.equal(await arb.client.getTransactionCount({ address: solverAddress, blockTag: 'pending' }), pending, 'nothing more was sent');
    } finally {
      await arb.node.rpc('evm_setAutomine', [true]);
    }
    await arb.node.rpc('evm_mine', []);
    assert.equal((await htlcOrder(arb, d.swap_id)).amount, DEST_AMOUNT, 'funded once, by the first initiate');
    await w.step();
    assert.equal((await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: o.secret.slice(2) })).status, 202);
    await w.step();
    await w.step();
    assert.equal((await client.read(o.id)).status, 'completed');
  });

  test('crash points: intent recorded but nothing sent funds once; a sent funding or source redeem the watcher has not seen is not sent again', async () => {
    const o = await client.createOrder(true);
    await client.initiate(o);
    for (const watcher of Object.values(w.watchers)) await watcher.poll();
    // Crash right after the intent was recorded, before any broadcast.
    assert.equal(await claimFunding(w.store.db, o.id), true);
    const arbNonce = await nonce(arb);
    assert.deepEqual((await w.pass()).funded, [o.id]);
    assert.equal(await nonce(arb), arbNonce + 1, 'one initiate (the approval went out at start)');
    // Crash after the broadcast, before the watcher saw it: the next passes send nothing.
    for (let i = 0; i < 3; i++) assert.deepEqual((await w.pass()).funded, []);
    assert.equal(await nonce(arb), arbNonce + 1);

    await w.step();
    const redeem = await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: o.secret.slice(2) });
    assert.equal(redeem.status, 202);
    await w.watchers.arbitrum_localnet.poll();
    const ethNonce = await nonce(eth);
    assert.deepEqual((await w.pass()).redeemedSources, [o.id]);
    // The source redeem is on chain but not in the store yet: not sent again.
    for (let i = 0; i < 3; i++) assert.deepEqual((await w.pass()).redeemedSources, []);
    assert.equal(await nonce(eth), ethNonce + 1);
    await w.step();
    assert.equal((await client.read(o.id)).status, 'completed');
  });

  test('fees accrue once the order completes', async () => {
    const o = await client.createOrder(true);
    await w.store.db
      .insertInto('affiliate_fees')
      .values({ order_id: o.id, position: 0, address: '0x00000000000000000000000000000000000000aa', fee_bips: 10, asset: 'ethereum_localnet:wbtc', amount: '100' })
      .execute();
    await client.initiate(o);
    await w.step();
    await w.step();
    await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: o.secret.slice(2) });
    const p = await w.step();
    assert.deepEqual(p.redeemedSources, [o.id]);
    assert.deepEqual(p.accrued, [], 'not before the source redeem is seen');
    const done = await w.step();
    assert.deepEqual(done.accrued, [o.id]);
    const fee = await w.store.db.selectFrom('affiliate_fees').select('status').where('order_id', '=', o.id).executeTakeFirstOrThrow();
    assert.equal(fee.status, 'accrued');
    assert.deepEqual((await w.step()).accrued, []);
  });

  test('the solver refunds its own destination once it expired unredeemed', async () => {
    const o = await client.createOrder(true);
    await client.initiate(o);
    assert.deepEqual((await w.step()).funded, [o.id]);
    assert.equal((await w.settleSolverJob(`${o.id}:solver-fund`, 'arbitrum_localnet')).status, 'confirmed');
    const before = await arb.wbtcBalance(solverAddress);
    assert.deepEqual((await w.step()).refunded, [], 'not before the timelock');
    const dest = await htlcOrder(arb, o.order.destination_swap.swap_id);
    const head = await arb.client.getBlockNumber();
    await arb.node.rpc('anvil_mine', [`0x${(dest.initiatedAt + dest.timelock - head).toString(16)}`]);
    assert.deepEqual((await w.step()).refunded, [o.id]);
    assert.equal((await w.settleSolverJob(`${o.id}:solver-refund`, 'arbitrum_localnet')).status, 'confirmed');
    assert.equal(await arb.wbtcBalance(solverAddress), before + DEST_AMOUNT);
    assert.notEqual((await htlcOrder(arb, o.order.destination_swap.swap_id)).fulfilledAt, 0n);
    assert.deepEqual((await w.step()).refunded, []);
    assert.equal((await client.read(o.id)).status, 'awaiting_refund');
    assert.equal((await htlcOrder(eth, o.order.source_swap.swap_id)).amount, AMOUNT, 'the user refunds the source after its own timelock');
  });

  test('rule 5 race: concurrent funding claims and instant-refund co-signatures, exactly one side wins', async () => {
    const app = await w.store.db.selectFrom('apps').select('id').executeTakeFirstOrThrow();
    for (let round = 0; round < 5; round++) {
      const order = sampleOrder(app.id);
      await insertOrder(w.store.db, order);
      const results = await Promise.all(
        // The solver's pass claims many orders in one statement (claimFundings); both forms race here.
        Array.from({ length: 10 }, (_, i) =>
          i % 2 === round % 2
            ? (i % 4 < 2 ? claimFunding(w.store.db, order.id) : claimFundings(w.store.db, [order.id]).then((ids) => ids.has(order.id))).then((r) => ['fund', r] as const)
            : mayCoSignInstantRefund(w.store.db, order.id).then((r) => ['cosign', r] as const),
        ),
      );
      const winners = new Set(results.filter(([, r]) => r).map(([k]) => k));
      assert.equal(winners.size, 1, JSON.stringify(results));
      const funded = winners.has('fund');
      assert.equal((await destinationFundingAt(w.store.db, order.id)) !== null, funded);
      assert.equal(await claimFunding(w.store.db, order.id), funded, 'the loser stays refused');
      assert.equal(await mayCoSignInstantRefund(w.store.db, order.id), !funded);
    }
  });
});
