// The EVM watcher against a real anvil chain with the localnet contracts: events recorded on the
// swaps, confirmations, reorgs undone, idempotence, and one eth_getLogs per range whatever the
// number of orders.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  http,
  maxUint256,
  parseEther,
  sha256,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from 'viem';
import type { HDAccount } from 'viem/accounts';
import { contractArtifact } from '../../../src/chains/evm/contracts.ts';
import { evmOrderId } from '../../../src/chains/evm/order-id.ts';
import { EvmWatcher, type PollResult } from '../../../src/chains/evm/watcher.ts';
import type { ChainContext } from '../../../src/chains/adapter.ts';
import { chainAdapter } from '../../../src/chains/adapters.ts';
import type { Chain } from '../../../src/chains/registry.ts';
import { startAnvil, type AnvilNode } from '../../../src/localnet/evm/anvil.ts';
import { deployLocalnet, type EvmDeployment } from '../../../src/localnet/evm/devnet.ts';
import { devAccount } from '../../../src/localnet/accounts.ts';
import { runWorker } from '../../../src/lease-loop.ts';
import type { ParentLog } from '../../../src/log.ts';
import { SecretBox } from '../../../src/orders/secret-box.ts';
import { listChainHeights } from '../../../src/store/chain-heights.ts';
import { toRfc3339Seconds, type Store } from '../../../src/store/database.ts';
import { findOrder, insertOrder, type NewOrder, type SwapRecord } from '../../../src/store/orders.ts';
import { recordWatcherPoll } from '../../../src/store/swap-events.ts';
import { localnetRegistry, sampleOrder, seedBasics, USER } from '../../helpers/fixtures.ts';
import { describeEachStore, openTestStore } from '../../helpers/stores.ts';
import { waitFor } from '../../helpers/wait.ts';
import { systemClock } from '../../../src/clock.ts';

const CHAIN_ID = 31337;
const HTLC_ABI = contractArtifact('HTLC').abi;
const TOKEN_ABI = contractArtifact('TestToken').abi;
/** The local chain for viem's clients; every client here gets its transport explicitly. */
const ANVIL = defineChain({
  id: CHAIN_ID,
  name: 'anvil',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: [] } },
});

interface OnChainOrder {
  order: NewOrder;
  secret: Hex;
  secretHash: Hex;
  orderId: Hex;
}

describeEachStore('EvmWatcher', (kind) => {
  let anvil: AnvilNode;
  let store: Store;
  let chain: Chain;
  let deployment: EvmDeployment;
  let appId: string;
  let watcher: EvmWatcher;
  /** Every JSON-RPC method the watcher's client sent, in order. */
  const calls: string[] = [];
  let viewer: PublicClient<Transport, typeof ANVIL>;
  let watcherClient: PublicClient;
  /** What src/service.ts gives a chain's adapter, less the access and keys. */
  let runtimeContext: Omit<ChainContext, 'access'>;

  const htlc = (): Address => deployment.contracts.wbtcHtlc;
  const solver = devAccount('solver');
  const user = devAccount('user');

  async function send(account: HDAccount, address: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<TransactionReceipt> {
    const wallet = createWalletClient({ account, transport: http(anvil.rpcUrl), chain: ANVIL });
    const hash = await wallet.writeContract({ address, abi, functionName, args, chain: ANVIL, account });
    const receipt = await viewer.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success', `${functionName} reverted`);
    return receipt;
  }

  const mine = async (blocks: number) => void (await anvil.rpc('anvil_mine', [toHex(blocks)]));
  const head = () => viewer.getBlockNumber({ cacheTime: 0 });
  const sourceSwap = async (o: OnChainOrder): Promise<SwapRecord> => (await findOrder(store.db, o.order.id))!.source;
  const blockTime = async (blockNumber: bigint) =>
    new Date(Number((await viewer.getBlock({ blockNumber })).timestamp) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const allSwaps = () => store.db.selectFrom('swaps').selectAll().orderBy('order_id').orderBy('side').execute();
  const getLogsCalls = () => calls.filter((m) => m === 'eth_getLogs').length;

  /** A WBTC order from the test user whose source swap id is the real on-chain order id of its terms. */
  function onChainOrder(options: { timelock?: bigint; required?: number } = {}): OnChainOrder {
    const secret = toHex(randomBytes(32));
    const secretHash = sha256(secret);
    const base = sampleOrder(appId, { secretHash: secretHash.slice(2) });
    const source = { ...base.source, timelock: options.timelock ?? 600n, requiredConfirmations: options.required ?? 3 };
    const orderId = evmOrderId({
      chainId: BigInt(CHAIN_ID),
      secretHash,
      initiator: USER,
      redeemer: solver.address,
      timelock: source.timelock,
      amount: source.amount,
      htlc: htlc(),
    });
    return { order: { ...base, source: { ...source, swapId: orderId.slice(2) } }, secret, secretHash, orderId };
  }

  async function createOrder(options: { timelock?: bigint; required?: number } = {}): Promise<OnChainOrder> {
    const o = onChainOrder(options);
    await insertOrder(store.db, o.order);
    return o;
  }

  const initiate = (o: OnChainOrder) =>
    send(user, htlc(), HTLC_ABI, 'initiate', [solver.address, o.order.source.timelock, o.order.source.amount, o.secretHash]);

  const emptyInitiate = (swap: SwapRecord) => {
    assert.equal(swap.initiateTxHash, '');
    assert.equal(swap.initiateBlockNumber, '0');
    assert.equal(swap.initiateTimestamp, null);
    assert.equal(swap.filledAmount, '0');
    assert.equal(swap.currentConfirmations, 0);
  };

  async function assertInitiated(o: OnChainOrder, receipt: TransactionReceipt): Promise<void> {
    const swap = await sourceSwap(o);
    assert.equal(swap.initiateTxHash, receipt.transactionHash);
    assert.equal(swap.initiateBlockNumber, receipt.blockNumber.toString());
    assert.equal(toRfc3339Seconds(swap.initiateTimestamp!), await blockTime(receipt.blockNumber));
    assert.equal(swap.filledAmount, o.order.source.amount.toString());
  }

  before(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    const registry = localnetRegistry();
    chain = registry.chain('ethereum_localnet')!;
    deployment = await deployLocalnet(chain, anvil.rpcUrl, CHAIN_ID);
    store = await openTestStore(kind);
    ({ app: { id: appId } } = await seedBasics(store.db, registry));
    viewer = createPublicClient({ chain: ANVIL, transport: http(anvil.rpcUrl), pollingInterval: 50, cacheTime: 0 });
    watcherClient = createPublicClient({
      transport: custom({
        request: ({ method, params }: { method: string; params?: unknown }) => {
          calls.push(method);
          return anvil.rpc(method, (params ?? []) as unknown[]);
        },
      }),
    });
    await send(user, deployment.contracts.wbtc, TOKEN_ABI, 'approve', [htlc(), maxUint256]);
    watcher = new EvmWatcher(store.db, chain, watcherClient, { startBlock: 0n });
    const log: ParentLog = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
    runtimeContext = { chain, registry, db: store.db, clock: systemClock, secrets: new SecretBox(randomBytes(32)), instance: 'watcher-test', log };
  });

  after(async () => {
    await store?.close();
    await anvil?.stop();
  });

  test('the first poll reads from the start block to the head and records the height', async () => {
    const result = await watcher.poll();
    assert.equal(result.from, 0n);
    assert.equal(result.to, await head());
    assert.deepEqual(result.events, []);
    assert.equal((await listChainHeights(store.db)).get(chain.key), result.to);
  });

  test('initiate: the real tx hash, block, block time and amount; confirmations grow, capped at the required count', async () => {
    const o = await createOrder({ required: 3 });
    const receipt = await initiate(o);
    const result = await watcher.poll();
    assert.deepEqual(
      result.events.map((e) => [e.kind, e.swapId, e.txHash, e.blockNumber]),
      [['initiated', o.orderId.slice(2), receipt.transactionHash, receipt.blockNumber]],
    );
    await assertInitiated(o, receipt);
    assert.equal((await sourceSwap(o)).currentConfirmations, 1);

    await mine(1);
    await watcher.poll();
    assert.equal((await sourceSwap(o)).currentConfirmations, 2);
    await mine(5);
    const later = await watcher.poll();
    assert.equal((await sourceSwap(o)).currentConfirmations, 3);
    assert.equal((await listChainHeights(store.db)).get(chain.key), later.head);
    await assertInitiated(o, receipt);
    const destination = (await findOrder(store.db, o.order.id))!.destination;
    assert.equal(destination.initiateTxHash, '');
  });

  test('redeem: the secret and the redeem fields are recorded; the initiate fields stay', async () => {
    const o = await createOrder({ required: 1 });
    const initiated = await initiate(o);
    await watcher.poll();
    const redeemed = await send(solver, htlc(), HTLC_ABI, 'redeem', [o.orderId, o.secret]);
    const result = await watcher.poll();
    assert.deepEqual(result.events.map((e) => e.kind), ['redeemed']);
    const swap = await sourceSwap(o);
    assert.equal(swap.secret, o.secret.slice(2));
    assert.equal(swap.redeemTxHash, redeemed.transactionHash);
    assert.equal(swap.redeemBlockNumber, redeemed.blockNumber.toString());
    assert.equal(toRfc3339Seconds(swap.redeemTimestamp!), await blockTime(redeemed.blockNumber));
    await assertInitiated(o, initiated);
    assert.equal(swap.refundTxHash, '');
  });

  test('refund: after the timelock the refund fields are recorded', async () => {
    const o = await createOrder({ timelock: 3n, required: 1 });
    const initiated = await initiate(o);
    await mine(3);
    const refunded = await send(user, htlc(), HTLC_ABI, 'refund', [o.orderId]);
    // Both events in one range.
    const result = await watcher.poll();
    assert.deepEqual(result.events.map((e) => e.kind), ['initiated', 'refunded']);
    const swap = await sourceSwap(o);
    assert.equal(swap.refundTxHash, refunded.transactionHash);
    assert.equal(swap.refundBlockNumber, refunded.blockNumber.toString());
    assert.equal(toRfc3339Seconds(swap.refundTimestamp!), await blockTime(refunded.blockNumber));
    assert.equal(swap.secret, '');
    await assertInitiated(o, initiated);
  });

  test("an event of an order that is not ours is ignored", async () => {
    await mine(5);
    await watcher.poll(); // every swap at its required count
    const before = await allSwaps();
    const stranger = onChainOrder(); // never written to the store
    await initiate(stranger);
    const result = await watcher.poll();
    assert.deepEqual(result.events.map((e) => e.swapId), [stranger.orderId.slice(2)]);
    assert.equal(result.changed, 0);
    assert.deepEqual(await allSwaps(), before);
  });

  test('the same blocks processed again change nothing', async () => {
    const before = await allSwaps();
    const cursor = await head();
    await store.db.deleteFrom('watcher_cursors').execute();
    await store.db.deleteFrom('watched_blocks').execute();
    const again = new EvmWatcher(store.db, chain, watcherClient, { startBlock: 0n });
    const result = await again.poll();
    assert.equal(result.to, cursor);
    assert.equal(result.events.length, 6); // 4 initiates, a redeem and a refund
    assert.equal(result.changed, 0);
    assert.equal(await recordWatcherPoll(store.db, chain.key, { events: result.events, head: result.head }), 0);
    assert.deepEqual(await allSwaps(), before);
  });

  test('one poll over N blocks makes ONE eth_getLogs call, however many orders exist', async () => {
    const pollOver = async (orders: number): Promise<{ result: PollResult; methods: string[] }> => {
      for (let i = 0; i < orders; i++) await insertOrder(store.db, sampleOrder(appId));
      await initiate(await createOrder());
      await initiate(await createOrder());
      await mine(40);
      calls.length = 0;
      const result = await watcher.poll();
      return { result, methods: [...calls] };
    };
    const few = await pollOver(10);
    const many = await pollOver(300);
    for (const { result, methods } of [few, many]) {
      assert.equal(result.to - result.from + 1n, 42n);
      assert.equal(result.events.length, 2);
      assert.equal(methods.filter((m) => m === 'eth_getLogs').length, 1);
    }
    assert.deepEqual(many.methods.sort(), few.methods.sort(), 'the same RPC calls with 30 times the orders');
    const rows = await store.db.selectFrom('swaps').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    assert.ok(Number(rows.n) > 600);
  });

  test("a new block costs the head, its logs and its header: its parent hash proves the cursor's block, no separate reorg probe", async () => {
    await watcher.poll();
    await mine(1);
    calls.length = 0;
    const result = await watcher.poll();
    assert.equal(result.to - result.from + 1n, 1n);
    assert.deepEqual([...calls].sort(), ['eth_blockNumber', 'eth_getBlockByNumber', 'eth_getLogs']);
    // With no new block, the cursor's block is probed (a reorg at the same height shows there).
    calls.length = 0;
    await watcher.poll();
    assert.deepEqual([...calls].sort(), ['eth_blockNumber', 'eth_getBlockByNumber']);
  });

  test('a range longer than batchBlocks takes one eth_getLogs per batch', async () => {
    const batched = new EvmWatcher(store.db, chain, watcherClient, { batchBlocks: 10 });
    await mine(35);
    calls.length = 0;
    const results: PollResult[] = [];
    do results.push(await batched.poll());
    while (results.at(-1)!.to < results.at(-1)!.head);
    assert.deepEqual(results.map((r) => r.to - r.from + 1n), [10n, 10n, 10n, 5n]);
    assert.equal(getLogsCalls(), 4);
  });

  test('REORG: a removed initiate is undone, and recorded again with its new block when re-included', async () => {
    const snapshot = (await anvil.rpc('evm_snapshot')) as Hex;
    const o = await createOrder({ required: 3 });
    const first = await initiate(o);
    await watcher.poll();
    await assertInitiated(o, first);

    assert.equal(await anvil.rpc('evm_revert', [snapshot]), true);
    // Another transaction at the initiate's height, so the block there has another hash.
    const deployer = createWalletClient({ account: devAccount('deployer'), transport: http(anvil.rpcUrl), chain: ANVIL });
    await viewer.waitForTransactionReceipt({ hash: await deployer.sendTransaction({ to: USER, value: parseEther('1') }) });
    await mine(1);
    assert.notEqual((await viewer.getBlock({ blockNumber: first.blockNumber })).hash, first.blockHash);

    const result = await watcher.poll();
    assert.equal(result.reorg?.ancestor, first.blockNumber - 1n);
    assert.equal(result.reorg?.beyondWindow, false);
    assert.deepEqual(result.events, []);
    emptyInitiate(await sourceSwap(o));

    const second = await initiate(o);
    assert.ok(second.blockNumber > first.blockNumber);
    const recorded = await watcher.poll();
    assert.equal(recorded.reorg, undefined);
    await assertInitiated(o, second);
    assert.equal((await sourceSwap(o)).currentConfirmations, 1);
  });

  test('REORG to a shorter chain: a removed redeem is undone (secret too), the initiate before it stays', async () => {
    const o = await createOrder({ required: 1 });
    const initiated = await initiate(o);
    await watcher.poll();
    const snapshot = (await anvil.rpc('evm_snapshot')) as Hex;
    const redeemed = await send(solver, htlc(), HTLC_ABI, 'redeem', [o.orderId, o.secret]);
    await mine(2);
    await watcher.poll();
    assert.equal((await sourceSwap(o)).secret, o.secret.slice(2));

    assert.equal(await anvil.rpc('evm_revert', [snapshot]), true);
    assert.equal(await head(), redeemed.blockNumber - 1n);
    const result = await watcher.poll();
    assert.deepEqual(result.reorg, { ancestor: redeemed.blockNumber - 1n, previousCursor: redeemed.blockNumber + 2n, beyondWindow: false });
    assert.ok(result.from > result.to);
    const swap = await sourceSwap(o);
    assert.equal(swap.secret, '');
    assert.equal(swap.redeemTxHash, '');
    assert.equal(swap.redeemBlockNumber, '0');
    assert.equal(swap.redeemTimestamp, null);
    await assertInitiated(o, initiated);

    const cursor = await store.db.selectFrom('watcher_cursors').select('block_number').where('chain', '=', chain.key).executeTakeFirstOrThrow();
    assert.equal(cursor.block_number, (redeemed.blockNumber - 1n).toString());
    await mine(1);
    const next = await watcher.poll();
    assert.equal(next.reorg, undefined);
    assert.equal(next.from, redeemed.blockNumber);
  });

  test('A CHAIN BACK FROM OLDER SAVED STATE: the head far below the cursor (deeper than the kept window) undoes everything above it; the order moves back', async () => {
    const o = await createOrder({ required: 1 });
    const snapshot = (await anvil.rpc('evm_snapshot')) as Hex;
    const restoredHead = await head();
    const initiated = await initiate(o);
    await mine(20); // well past the 12 kept blocks
    await watcher.poll();
    await assertInitiated(o, initiated);
    const cursorBefore = await head();

    // What a devnet restarted from a state saved 21 blocks earlier looks like: a shorter chain.
    assert.equal(await anvil.rpc('evm_revert', [snapshot]), true);
    assert.equal(await head(), restoredHead);
    const result = await watcher.poll();
    assert.deepEqual(result.reorg, { ancestor: restoredHead, previousCursor: cursorBefore, beyondWindow: true });
    emptyInitiate(await sourceSwap(o));
    const cursor = await store.db.selectFrom('watcher_cursors').select('block_number').where('chain', '=', chain.key).executeTakeFirstOrThrow();
    assert.equal(cursor.block_number, restoredHead.toString());

    // The chain grows again from there, and the initiate sent again is recorded at its new block.
    const again = await initiate(o);
    const next = await watcher.poll();
    assert.equal(next.reorg, undefined);
    await assertInitiated(o, again);
  });

  test("the service's watcher (the chain runtime's worker, run under its lease) records an initiate on its own, and a failing node's errors go to onError while it keeps polling", async () => {
    const runWatcher = (rpcUrl: string, onError: (error: unknown) => void) => {
      // As src/service.ts connects a chain without keys: its workers are the watcher alone.
      const runtime = chainAdapter(chain)!.connect!({ ...runtimeContext, access: { rpc_url: rpcUrl } });
      assert.deepEqual(runtime.workers.map((w) => w.lease), [`watcher:${chain.key}`]);
      return runWorker(store.db, runtime.workers[0]!, { holder: 'watcher-test', onError });
    };
    const errors: unknown[] = [];
    const loop = runWatcher(anvil.rpcUrl, (e) => errors.push(e));
    try {
      const o = await createOrder();
      const receipt = await initiate(o);
      await waitFor(async () => (await sourceSwap(o)).initiateTxHash !== '', 10_000, 'the worker to record the initiate');
      await assertInitiated(o, receipt);
    } finally {
      await loop.stop();
    }
    assert.equal(errors.length, 0, String(errors[0]));

    const failures: unknown[] = [];
    const broken = runWatcher('http://127.0.0.1:1', (e) => failures.push(e));
    try {
      await waitFor(() => failures.length >= 2, 20_000, 'two failed polls');
    } finally {
      await broken.stop();
    }
  });
});
