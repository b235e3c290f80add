// Whole swaps over HTTP on two real anvil chains: the client creates and initiates (gasless), the
// watchers record what happens on chain, the solver funds the destination and redeems the source,
// the relayer redeems the destination for the client. Every worker is stepped by hand.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { erc20Abi, getAddress, type Hex } from 'viem';
import { htlcInitiateAbi } from '../../src/chains/solidity-htlc/htlc-abi.ts';
import { devAccount } from '../../src/localnet/accounts.ts';
import { ZERO_ADDRESS } from '../../src/chains/evm/htlc-reads.ts';
import { findJob } from '../../src/store/relayer-jobs.ts';
import { localnetRegistry, randomHex32, SOLVER, USER } from '../helpers/fixtures.ts';
import { destinationFundingAt, instantRefundSigned } from '../helpers/order-flags.ts';
import { describeEachStore } from '../helpers/stores.ts';
import { htlcOrder, newSecret, startChains, type LocalChain } from '../relayer/harness.ts';
import { instantRefundConsent, openSwapWorld, swapClient, type SwapWorld } from './harness.ts';

const registry = localnetRegistry();
let chains: Awaited<ReturnType<typeof startChains>>;
const user = devAccount('user');
const solverAddress = getAddress(SOLVER.addresses.ethereum_localnet!);
const AMOUNT = 100_000n;
const DEST_AMOUNT = 99_700n;

before(async () => {
  chains = await startChains(registry);
});
after(async () => {
  await Promise.all(Object.values(chains).map((c) => c.node.stop()));
});

describeEachStore('EVM swap end to end', (kind) => {
  let w: SwapWorld;
  let eth: LocalChain;
  let arb: LocalChain;

  before(async () => {
    eth = chains.ethereum_localnet;
    arb = chains.arbitrum_localnet;
    w = await openSwapWorld(kind, registry, chains);
  });
  after(() => w.close());

  const read = async (id: string) =>
    (await w.api.inject({ url: `/v2/orders/${id}`, headers: { 'service-app-id': w.key } })).json<Record<string, any>>().result;

  async function createOrder(withSecret: boolean) {
    const { secret, secretHash } = newSecret();
    const res = await w.api.inject({
      method: 'POST',
      url: '/v2/orders',
      headers: { 'service-app-id': w.key },
      payload: {
        source: { asset: 'ethereum_localnet:wbtc', owner: USER, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: USER, amount: DEST_AMOUNT.toString() },
        nonce: randomHex32().slice(0, 20),
        ...(withSecret ? { secret_hash: secretHash } : {}),
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<Record<string, any>>().result;
    return { id: created.order_id as string, created, order: await read(created.order_id), secret, secretHash };
  }

  async function approveAndSign(created: Record<string, any>): Promise<Hex> {
    const approval = created.approval_transaction;
    const hash = await eth.wallet(user).sendTransaction({ account: user, chain: undefined, to: approval.to, data: approval.data });
    assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
    const td = created.typed_data;
    return user.signTypedData({
      domain: { ...td.domain, chainId: BigInt(td.domain.chainId) },
      types: { Initiate: td.types.Initiate },
      primaryType: 'Initiate',
      message: { ...td.message, timelock: BigInt(td.message.timelock), amount: BigInt(td.message.amount) },
    });
  }

  async function initiate(o: Awaited<ReturnType<typeof createOrder>>) {
    const signature = await approveAndSign(o.created);
    const res = await w.patchRelayed(o.id, 'initiate', 'ethereum_localnet', { signature });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.job?.status, 'confirmed');
  }

  async function balances() {
    const { wbtcHtlc: ethHtlc } = eth.deployment.contracts;
    const { wbtcHtlc: arbHtlc } = arb.deployment.contracts;
    return {
      userA: await eth.wbtcBalance(user.address),
      userB: await arb.wbtcBalance(user.address),
      solverA: await eth.wbtcBalance(solverAddress),
      solverB: await arb.wbtcBalance(solverAddress),
      htlcA: await eth.wbtcBalance(ethHtlc),
      htlcB: await arb.wbtcBalance(arbHtlc),
    };
  }

  function assertSettled(start: Awaited<ReturnType<typeof balances>>, end: Awaited<ReturnType<typeof balances>>) {
    assert.equal(end.userA, start.userA - AMOUNT, 'the user paid the source amount on A');
    assert.equal(end.userB, start.userB + DEST_AMOUNT, 'the user received the destination amount on B');
    assert.equal(end.solverA, start.solverA + AMOUNT, 'the solver received the source amount on A');
    assert.equal(end.solverB, start.solverB - DEST_AMOUNT, 'the solver paid the destination amount on B');
    assert.equal(end.htlcA, start.htlcA, 'the source HTLC keeps nothing');
    assert.equal(end.htlcB, start.htlcB, 'the destination HTLC keeps nothing');
    const total = (b: typeof start) => b.userA + b.userB + b.solverA + b.solverB + b.htlcA + b.htlcB;
    assert.equal(total(end), total(start), 'no token was created or lost');
  }

  /** Steps until nothing more happens; returns every order id each step touched. */
  async function idle() {
    for (let i = 0; i < 3; i++) {
      const pass = await w.step();
      assert.deepEqual([pass.funded, pass.redeemedForClient, pass.redeemedSources, pass.refunded, pass.accrued], [[], [], [], [], []]);
    }
  }

  test('client-held secret: gasless initiate, the solver funds, the client redeems through the relayer, the solver redeems the source', async () => {
    const start = await balances();
    const o = await createOrder(true);
    await initiate(o);
    assert.equal((await read(o.id)).status, 'created', 'the watcher has not polled yet');

    const p1 = await w.step();
    assert.deepEqual(p1.funded, [o.id], JSON.stringify(p1.skipped));
    assert.equal((await read(o.id)).status, 'initiated');
    const dest = await htlcOrder(arb, o.order.destination_swap.swap_id);
    assert.equal(dest.initiator, solverAddress);
    assert.equal(dest.redeemer, getAddress(USER));
    assert.equal(dest.amount, DEST_AMOUNT);
    assert.equal(dest.timelock, 150n);
    assert.notEqual(await destinationFundingAt(w.store.db, o.id), null);
    const liquidity = await w.store.db.selectFrom('orders').select('commitment_released').where('id', '=', o.id).executeTakeFirstOrThrow();
    assert.equal(liquidity.commitment_released, true, 'the destination amount left the solver balance');

    const p2 = await w.step();
    assert.deepEqual([p2.funded, p2.redeemedForClient, p2.redeemedSources], [[], [], []], 'the secret is the client’s');
    assert.equal((await read(o.id)).status, 'awaiting_redeem');

    const redeem = await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: o.secret.slice(2) });
    assert.equal(redeem.status, 202, JSON.stringify(redeem.body));
    assert.equal(redeem.job?.status, 'confirmed');

    const p3 = await w.step();
    assert.deepEqual(p3.redeemedSources, [o.id], 'the solver redeems the source as soon as the secret is on chain');
    assert.equal((await read(o.id)).status, 'redeemed');
    await w.step();
    const done = await read(o.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.destination_swap.secret.replace(/^0x/, ''), o.secret.slice(2));
    assertSettled(start, await balances());
    await idle();
  });

  test('service-held secret: the solver redeems the destination for the client, then its source', async () => {
    const start = await balances();
    const o = await createOrder(false);
    await initiate(o);
    const p1 = await w.step();
    assert.deepEqual(p1.funded, [o.id], JSON.stringify(p1.skipped));
    const p2 = await w.step();
    assert.deepEqual(p2.redeemedForClient, [o.id]);
    const p3 = await w.step();
    assert.deepEqual(p3.redeemedSources, [o.id]);
    await w.step();
    assert.equal((await read(o.id)).status, 'completed');
    assertSettled(start, await balances());
    await idle();
  });

  test('rule 1: a source HTLC with other terms than the order is never matched, and a source the chain does not hold is never funded', async () => {
    const o = await createOrder(true);
    const { wbtc, wbtcHtlc } = eth.deployment.contracts;
    const wallet = eth.wallet(user);
    const send = async (hash: Hex) => assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
    await send(await wallet.writeContract({ account: user, chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, AMOUNT] }));
    // The order's secret hash, redeemer and amount, but a timelock of 601: another HTLC order id.
    const initiateHash = await wallet.writeContract({
      account: user,
      chain: undefined,
      address: wbtcHtlc,
      abi: htlcInitiateAbi,
      functionName: 'initiate',
      args: [solverAddress, 601n, AMOUNT, o.secretHash],
    });
    await send(initiateHash);
    for (let i = 0; i < 3; i++) assert.deepEqual((await w.step()).funded, []);
    assert.equal((await read(o.id)).status, 'created', 'the watcher does not take the other HTLC for the order');
    assert.equal((await htlcOrder(eth, o.order.source_swap.swap_id)).initiator, ZERO_ADDRESS);

    // Even a store that says the source is initiated (a faulty watcher) does not make the solver fund.
    const receipt = await eth.client.getTransactionReceipt({ hash: initiateHash });
    await w.store.db
      .updateTable('swaps')
      .set({ initiate_tx_hash: initiateHash, initiate_block_number: receipt.blockNumber.toString(), current_confirmations: 5 })
      .where('order_id', '=', o.id)
      .where('side', '=', 'source')
      .execute();
    for (let i = 0; i < 3; i++) {
      const pass = await w.solver.tick();
      assert.deepEqual(pass.funded, []);
      assert.ok(
        pass.skipped.some((s) => s.orderId === o.id && /not on chain/.test(s.reason)),
        JSON.stringify(pass.skipped),
      );
    }
    assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).initiator, ZERO_ADDRESS, 'no destination');
    assert.equal(await destinationFundingAt(w.store.db, o.id), null, 'not even the intent to fund');
  });

  test("rule 1: an HTLC at the registry's address that locks another token is never matched", async () => {
    const { usdc, wbtcHtlc, usdcHtlc } = eth.deployment.contracts;
    // The registry's WBTC HTLC address, locking USDC: the USDC HTLC's code (its token is immutable, in the code).
    const wbtcHtlcCode = await eth.client.getCode({ address: wbtcHtlc });
    await eth.node.rpc('anvil_setCode', [wbtcHtlc, await eth.client.getCode({ address: usdcHtlc })]);
    // A service that has not read this contract's token before (this world's solver read WBTC there, and a
    // contract's code cannot change on a real chain).
    const fresh = await openSwapWorld(kind, registry, chains);
    try {
      const o = await swapClient(fresh, eth).createOrder(true);
      const wallet = eth.wallet(user);
      const send = async (hash: Hex) => assert.equal((await eth.client.waitForTransactionReceipt({ hash })).status, 'success');
      await send(await wallet.writeContract({ account: user, chain: undefined, address: usdc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, AMOUNT] }));
      // The order's exact terms at the order's own contract address: only the token differs.
      await send(
        await wallet.writeContract({
          account: user,
          chain: undefined,
          address: wbtcHtlc,
          abi: htlcInitiateAbi,
          functionName: 'initiate',
          args: [solverAddress, BigInt(o.order.source_swap.timelock), AMOUNT, o.secretHash],
        }),
      );
      assert.equal((await htlcOrder(eth, o.order.source_swap.swap_id)).amount, AMOUNT, "the order's HTLC order id holds the USDC");
      const reasons: string[] = [];
      for (let i = 0; i < 3; i++) {
        const pass = await fresh.step();
        assert.deepEqual(pass.funded, []);
        reasons.push(...pass.skipped.filter((s) => s.orderId === o.id).map((s) => s.reason));
      }
      assert.ok(reasons.some((r) => /locks another token/.test(r)), reasons.join('; '));
      assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).initiator, ZERO_ADDRESS, 'no destination');
      assert.equal(await destinationFundingAt(fresh.store.db, o.id), null, 'not even the intent to fund');
    } finally {
      await fresh.close();
      await eth.node.rpc('anvil_setCode', [wbtcHtlc, wbtcHtlcCode]);
    }
  });

  test('rule 1: the solver funds only once the source has its required confirmations', async () => {
    const REQUIRED = 3;
    const o = await createOrder(true);
    // What a registry with a confirmation target of 3 writes (the localnet's is 1).
    await w.store.db.updateTable('swaps').set({ required_confirmations: REQUIRED }).where('order_id', '=', o.id).where('side', '=', 'source').execute();
    await initiate(o);
    let waited = 0;
    for (let i = 0; i < 10; i++) {
      const pass = await w.step();
      const seen = (await read(o.id)).source_swap.current_confirmations as number;
      if (pass.funded.includes(o.id)) {
        assert.ok(seen >= REQUIRED, `funded with ${seen} of ${REQUIRED} confirmations`);
        break;
      }
      assert.ok(seen < REQUIRED, `${seen} confirmations and not funded: ${JSON.stringify(pass.skipped)}`);
      assert.equal((await read(o.id)).status, 'initiate_detected');
      assert.equal(await destinationFundingAt(w.store.db, o.id), null, 'not even the intent to fund');
      waited++;
      await eth.node.rpc('anvil_mine', ['0x1']);
    }
    assert.ok(waited >= 1, 'the solver waited at least one block');
    assert.notEqual(await destinationFundingAt(w.store.db, o.id), null, 'funded at last');
    // Settle it so later tests start from idle chains.
    await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: o.secret.slice(2) });
    await w.step();
    await w.step();
    assert.equal((await read(o.id)).status, 'completed');
  });

  test('rule 2: with too little time left on the source, the solver does not fund', async () => {
    const o = await createOrder(true);
    await initiate(o);
    // 600 source blocks of 1 s; the destination needs 150 s + the 300 s margin: leave 440 s.
    await eth.node.rpc('anvil_mine', ['0xa0']);
    for (let i = 0; i < 2; i++) {
      const pass = await w.step();
      assert.deepEqual(pass.funded, []);
      assert.ok(pass.skipped.some((s) => s.orderId === o.id && /rule 2/.test(s.reason)), JSON.stringify(pass.skipped));
    }
    assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).initiator, ZERO_ADDRESS);
    assert.equal(await destinationFundingAt(w.store.db, o.id), null);
  });

  test('rule 5: after an instant-refund co-signature the solver never funds, even with the source confirmed', async () => {
    const start = await balances();
    const o = await createOrder(true);
    await initiate(o);
    for (const watcher of Object.values(w.watchers)) await watcher.poll();
    assert.equal((await read(o.id)).status, 'initiated', 'the source is confirmed');

    // The relayer is not ticked: the co-signature exists, the refund is not on chain yet.
    const res = await w.api.inject({
      method: 'PATCH',
      url: `/v2/orders/${o.id}?action=instant-refund`,
      headers: { 'service-app-id': w.key },
      payload: { signature: await instantRefundConsent(user, o.created, o.order.source_swap.swap_id) },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(await instantRefundSigned(w.store.db, o.id), true);
    for (let i = 0; i < 3; i++) assert.deepEqual((await w.step()).funded, []);
    assert.equal((await htlcOrder(arb, o.order.destination_swap.swap_id)).initiator, ZERO_ADDRESS, 'no destination');
    assert.equal(await destinationFundingAt(w.store.db, o.id), null);

    // The relayer puts the refund on chain; the user has the tokens back and the solver never paid.
    for (let i = 0; i < 100 && (await findJob(w.store.db, `${o.id}:instant-refund`))?.status !== 'confirmed'; i++) {
      await w.relayers.ethereum_localnet.tick();
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal((await findJob(w.store.db, `${o.id}:instant-refund`))?.status, 'confirmed');
    for (let i = 0; i < 2; i++) assert.deepEqual((await w.step()).funded, []);
    assert.equal((await read(o.id)).status, 'refunded');
    const end = await balances();
    assert.equal(end.userA, start.userA);
    assert.equal(end.solverB, start.solverB);
  });

  test('the funding intent recorded first: the instant-refund PATCH is refused (409) and the solver funds', async () => {
    const o = await createOrder(true);
    await initiate(o);
    const p = await w.step();
    assert.deepEqual(p.funded, [o.id]);
    const res = await w.api.inject({
      method: 'PATCH',
      url: `/v3/orders/${o.id}?action=instant-refund`,
      headers: { 'service-app-id': w.key },
      payload: { signature: await instantRefundConsent(user, o.created, o.order.source_swap.swap_id) },
    });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(await instantRefundSigned(w.store.db, o.id), false);
    // Settle it so later tests start from idle chains.
    await w.step();
    await w.patchRelayed(o.id, 'redeem', 'arbitrum_localnet', { secret: o.secret.slice(2) });
    await w.step();
    await w.step();
    assert.equal((await read(o.id)).status, 'completed');
  });
});


