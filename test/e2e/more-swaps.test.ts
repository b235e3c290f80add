// More whole swaps on two real anvil chains, every worker stepped by hand: the client broadcasting its
// own initiate from GET /v3/quote/{id}, a native ether source, a refund after the source timelock and
// an instant refund before it. Each ends with every balance accounted for: user, solver and HTLCs,
// with ether moving only by the gas each account's own transactions paid.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getAddress, type Address, type Hex } from 'viem';
import { devAccount } from '../../src/localnet/accounts.ts';
import { findJob } from '../../src/store/relayer-jobs.ts';
import { localnetRegistry, SOLVER } from '../helpers/fixtures.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { htlcOrder, startChains, type LocalChain } from '../relayer/harness.ts';
import { AMOUNT, DEST_AMOUNT, openSwapWorld, swapClient, type SwapWorld } from './harness.ts';

const registry = localnetRegistry();
let chains: Awaited<ReturnType<typeof startChains>>;
const user = devAccount('user');
const solverAddress = getAddress(SOLVER.addresses.ethereum_localnet!);
const relayerAddress = devAccount('relayer').address;

before(async () => {
  chains = await startChains(registry);
});
after(async () => {
  await Promise.all(Object.values(chains).map((c) => c.node.stop()));
});

interface EvmTx {
  to: Address;
  data: Hex;
  value: string;
  gas_limit: string;
}

/** Ether `address` paid in gas for its own transactions in blocks (from, to] of `chain`. */
async function gasPaid(chain: LocalChain, address: Address, from: bigint, to: bigint): Promise<bigint> {
  let total = 0n;
  for (let n = from + 1n; n <= to; n++) {
    const block = await chain.client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (getAddress(tx.from) !== getAddress(address)) continue;
      const receipt = await chain.client.getTransactionReceipt({ hash: tx.hash });
      total += receipt.gasUsed * receipt.effectiveGasPrice;
    }
  }
  return total;
}

describeEachStore('more EVM swaps end to end', (kind) => {
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

  /** Every balance that a swap moves: WBTC and ether of user, solver and relayer, and the HTLCs. */
  async function snapshot() {
    const { wbtcHtlc: htlcA, nativeHtlc: nativeA } = eth.deployment.contracts;
    const { wbtcHtlc: htlcB, nativeHtlc: nativeB } = arb.deployment.contracts;
    return {
      blockA: await eth.client.getBlockNumber(),
      blockB: await arb.client.getBlockNumber(),
      wbtc: {
        userA: await eth.wbtcBalance(user.address),
        userB: await arb.wbtcBalance(user.address),
        solverA: await eth.wbtcBalance(solverAddress),
        solverB: await arb.wbtcBalance(solverAddress),
        htlcA: await eth.wbtcBalance(htlcA),
        htlcB: await arb.wbtcBalance(htlcB),
      },
      ether: {
        userA: await eth.client.getBalance({ address: user.address }),
        userB: await arb.client.getBalance({ address: user.address }),
        solverA: await eth.client.getBalance({ address: solverAddress }),
        solverB: await arb.client.getBalance({ address: solverAddress }),
        relayerA: await eth.client.getBalance({ address: relayerAddress }),
        relayerB: await arb.client.getBalance({ address: relayerAddress }),
        htlcA: await eth.client.getBalance({ address: nativeA }),
        htlcB: await arb.client.getBalance({ address: nativeB }),
      },
    };
  }
  type Snapshot = Awaited<ReturnType<typeof snapshot>>;

  /**
   * Checks every balance against the expected movements: `wbtc` and `ether` deltas for user and solver
   * (missing ones are 0), the HTLCs holding nothing, and every account's ether otherwise moved only by
   * the gas its own transactions paid.
   */
  async function assertBalances(
    start: Snapshot,
    expected: { wbtc?: Partial<Record<'userA' | 'userB' | 'solverA' | 'solverB', bigint>>; ether?: Partial<Record<'userA' | 'userB' | 'solverA' | 'solverB', bigint>> },
  ) {
    const end = await snapshot();
    for (const who of ['userA', 'userB', 'solverA', 'solverB'] as const) {
      assert.equal(end.wbtc[who] - start.wbtc[who], expected.wbtc?.[who] ?? 0n, `WBTC of ${who}`);
    }
    assert.equal(end.wbtc.htlcA, 0n, 'the source WBTC HTLC holds nothing');
    assert.equal(end.wbtc.htlcB, 0n, 'the destination WBTC HTLC holds nothing');
    assert.equal(end.ether.htlcA, 0n, 'the source NativeHTLC holds nothing');
    assert.equal(end.ether.htlcB, 0n, 'the destination NativeHTLC holds nothing');
    const gas = {
      userA: await gasPaid(eth, user.address, start.blockA, end.blockA),
      userB: await gasPaid(arb, user.address, start.blockB, end.blockB),
      solverA: await gasPaid(eth, solverAddress, start.blockA, end.blockA),
      solverB: await gasPaid(arb, solverAddress, start.blockB, end.blockB),
      relayerA: await gasPaid(eth, relayerAddress, start.blockA, end.blockA),
      relayerB: await gasPaid(arb, relayerAddress, start.blockB, end.blockB),
    };
    assert.equal(gas.userB, 0n, 'the user sends nothing on the destination chain');
    for (const who of ['userA', 'userB', 'solverA', 'solverB'] as const) {
      assert.equal(end.ether[who] - start.ether[who], (expected.ether?.[who] ?? 0n) - gas[who], `ether of ${who}: only the expected amount and its own gas`);
    }
    assert.equal(end.ether.relayerA, start.ether.relayerA - gas.relayerA, 'the relayer only pays gas');
    assert.equal(end.ether.relayerB, start.ether.relayerB - gas.relayerB, 'the relayer only pays gas');
    return { end, gas };
  }

  /** Polls the watchers (never the solver) until the order has `status`. */
  async function watchUntil(id: string, status: string) {
    let seen = '';
    for (let i = 0; i < 50; i++) {
      for (const watcher of Object.values(w.watchers)) await watcher.poll();
      seen = (await client.read(id)).status as string;
      if (seen === status) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`order ${id} is ${seen}, not ${status}`);
  }

  /** Steps watchers and solver until the order is completed (the service holds its secret). */
  async function stepUntilCompleted(id: string) {
    for (let i = 0; i < 10; i++) {
      await w.step();
      if ((await client.read(id)).status === 'completed') return;
    }
    assert.fail(`order ${id} is ${(await client.read(id)).status as string}, not completed`);
  }

  async function send(chain: LocalChain, tx: EvmTx) {
    const hash = await chain.wallet(user).sendTransaction({
      account: user,
      chain: undefined,
      to: tx.to,
      data: tx.data,
      value: BigInt(tx.value),
      gas: BigInt(tx.gas_limit),
    });
    assert.equal((await chain.client.waitForTransactionReceipt({ hash })).status, 'success');
  }

  const quoteById = async (id: string) => {
    const res = await w.api.inject({ url: `/v3/quote/${id}` });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ result: { status: string; initiate: { type: string; chain_id: number; approval_transaction: EvmTx | null; initiate_transaction: EvmTx; core_to_evm_transfer: null } } }>().result;
  };

  test('(a) the client broadcasts approval and initiate from GET /v3/quote/{id} itself (no PATCH), and the swap completes', async () => {
    const start = await snapshot();
    const o = await client.createOrder(false);
    const quote = await quoteById(o.id);
    assert.equal(quote.status, 'open');
    assert.equal(quote.initiate.type, 'evm');
    assert.equal(quote.initiate.chain_id, 31337);
    assert.ok(quote.initiate.approval_transaction, 'an ERC-20 source needs an approval');
    await send(eth, quote.initiate.approval_transaction);
    await send(eth, quote.initiate.initiate_transaction);

    await stepUntilCompleted(o.id);
    assert.equal(await findJob(w.store.db, `${o.id}:initiate`), undefined, 'no relayed initiate');
    const onChain = await htlcOrder(eth, o.order.source_swap.swap_id);
    assert.equal(onChain.initiator, getAddress(user.address), 'the user initiated the source itself');
    assert.notEqual(onChain.fulfilledAt, 0n, 'and the solver redeemed it');
    assert.equal((await quoteById(o.id)).status, 'fulfilled');
    await assertBalances(start, { wbtc: { userA: -AMOUNT, userB: DEST_AMOUNT, solverA: AMOUNT, solverB: -DEST_AMOUNT } });
  });

  test('(b) native ether ethereum_localnet:eth -> arbitrum_localnet:eth: the client sends the initiate with its value, and the swap completes', async () => {
    const amount = 10n ** 16n;
    const quoteRes = await w.api.inject({
      url: `/v2/quote?from=ethereum_localnet:eth&to=arbitrum_localnet:eth&from_amount=${amount}`,
      headers: { 'service-app-id': w.key },
    });
    assert.equal(quoteRes.statusCode, 200, quoteRes.body);
    const destAmount = BigInt(quoteRes.json<{ result: Array<{ destination: { amount: string } }> }>().result[0]!.destination.amount);
    assert.equal(destAmount, (amount * 9_970n) / 10_000n);

    const start = await snapshot();
    const res = await w.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': w.key },
      payload: {
        source: { asset: 'ethereum_localnet:eth', owner: user.address, amount: amount.toString() },
        destination: { asset: 'arbitrum_localnet:eth', owner: user.address, amount: destAmount.toString() },
        nonce: `native-${kind}-${Date.now()}`,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<{ result: { order_id: string; typed_data: unknown; approval_transaction: unknown; initiate_transaction: EvmTx } }>().result;
    assert.equal(created.typed_data, null, 'ether cannot be pulled with a signature');
    assert.equal(created.approval_transaction, null);
    assert.equal(BigInt(created.initiate_transaction.value), amount);
    assert.equal(getAddress(created.initiate_transaction.to), getAddress(eth.deployment.contracts.nativeHtlc));
    await send(eth, created.initiate_transaction);

    await stepUntilCompleted(created.order_id);
    await assertBalances(start, { ether: { userA: -amount, userB: destAmount, solverA: amount, solverB: -destAmount } });
  });

  test('(c) refund after expiry: the solver never runs, the source timelock passes, PATCH refund returns exactly the source amount', async () => {
    const start = await snapshot();
    const o = await client.createOrder(true);
    await client.initiate(o);
    await watchUntil(o.id, 'initiated');

    const early = await w.api.inject({ method: 'PATCH', url: `/v2/orders/${o.id}?action=refund`, headers: { 'service-app-id': w.key } });
    assert.equal(early.statusCode, 409, 'no refund before the timelock');

    // 600 source blocks: mine past them.
    await eth.node.rpc('anvil_mine', ['0x259']);
    await watchUntil(o.id, 'awaiting_refund');
    const refund = await w.patchRelayed(o.id, 'refund', 'ethereum_localnet');
    assert.equal(refund.status, 202, JSON.stringify(refund.body));
    assert.equal(refund.job?.status, 'confirmed');
    await watchUntil(o.id, 'refunded');

    // Now the solver runs: it funds nothing for this order.
    for (let i = 0; i < 2; i++) assert.deepEqual((await w.step()).funded, []);
    assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).initiator, '0x0000000000000000000000000000000000000000');
    const { gas } = await assertBalances(start, {});
    assert.ok(gas.relayerA > 0n, 'the relayer paid for the initiate and the refund');
  });

  test('(d) instant refund before expiry: PATCH instant-refund refunds the user at once, and the solver never funds', async () => {
    const start = await snapshot();
    const o = await client.createOrder(true);
    await client.initiate(o);
    await watchUntil(o.id, 'initiated');

    const refund = await w.patchRelayed(o.id, 'instant-refund', 'ethereum_localnet', { signature: await client.instantRefundConsent(o) });
    assert.equal(refund.status, 202, JSON.stringify(refund.body));
    assert.equal(refund.job?.status, 'confirmed');
    const source = await htlcOrder(eth, o.order.source_swap.swap_id);
    assert.notEqual(source.fulfilledAt, 0n, 'refunded on chain at once, long before the timelock');

    for (let i = 0; i < 3; i++) assert.deepEqual((await w.step()).funded, []);
    await watchUntil(o.id, 'refunded');
    assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).initiator, '0x0000000000000000000000000000000000000000', 'no destination');
    const { gas } = await assertBalances(start, {});
    assert.equal(gas.solverB, 0n, 'the solver sent nothing on the destination chain');
  });
});
