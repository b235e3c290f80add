// Settlement latency and throughput: two anvil chains, the API, relayers, watchers and the solver
// running their real loops (short intervals), and clients that create orders over HTTP and initiate
// the source themselves. Block first-seen times come from an observer polling both chains, so
//  (a) = first sight of the source's confirming block -> destination initiate mined (anvil automines:
//        mined within milliseconds of being sent),
//  (b) = first sight of the secret's reveal block (destination redeem) -> source redeem mined.
import { randomUUID } from 'node:crypto';
import { erc20Abi, maxUint256, parseEventLogs, type Hex, type PublicClient } from 'viem';
import { HTLC_EVENTS } from '../src/chains/evm/htlc-events.ts';
import { leasedLoop } from '../src/lease-loop.ts';
import type { StoreKind } from '../src/store/database.ts';
import { hex0x, openSwapWorld, swapClient } from '../test/e2e/harness.ts';
import { localnetRegistry } from '../test/helpers/fixtures.ts';
import { startChains, type ChainKey, type LocalChain } from '../test/relayer/harness.ts';

const POLL_MS = Number(process.env.BENCH_LOOP_MS ?? 100);
const SEQUENTIAL = Number(process.env.BENCH_SWAPS ?? 20);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 100);

/** Wall-clock time each block of a chain was first seen (polled every few milliseconds). */
function observeBlocks(client: PublicClient): { seen: Map<bigint, number>; stop: () => void } {
  const seen = new Map<bigint, number>();
  let stopped = false;
  let last = -1n;
  void (async () => {
    while (!stopped) {
      try {
        const n = await client.getBlockNumber({ cacheTime: 0 });
        const now = performance.now();
        for (let b = last + 1n; b <= n; b++) if (!seen.has(b)) seen.set(b, now);
        if (n > last) last = n;
      } catch {
        // a transient RPC error: try again
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return { seen, stop: () => (stopped = true) };
}

/** Blocks of the HTLC events of `htlc` by order id. */
async function htlcEvents(chain: LocalChain, htlc: Hex, fromBlock: bigint) {
  const logs = await chain.client.getLogs({ address: htlc, fromBlock, toBlock: 'latest' });
  const events = parseEventLogs({ abi: HTLC_EVENTS, logs });
  const byOrder = new Map<string, { initiated?: bigint; redeemed?: bigint }>();
  for (const e of events) {
    const id = ((e.args as { orderID?: Hex }).orderID ?? '').toLowerCase();
    const entry = byOrder.get(id) ?? {};
    if (e.eventName === 'Initiated') entry.initiated = e.blockNumber;
    if (e.eventName === 'Redeemed') entry.redeemed = e.blockNumber;
    byOrder.set(id, entry);
  }
  return byOrder;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

/** Runs the settlement bench; returns the table rows. */
export async function benchSettlement(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite'): Promise<Array<Record<string, string | number>>> {
  const registry = localnetRegistry();
  const chains = await startChains(registry);
  const eth = chains.ethereum_localnet;
  const arb = chains.arbitrum_localnet;
  const w = await openSwapWorld(kind, registry, chains);
  const holder = randomUUID();
  const stoppers: Array<() => Promise<void> | void> = [];
  const onError = (err: unknown) => console.error('loop error:', err);
  for (const [k, watcher] of Object.entries(w.watchers)) {
    stoppers.push(leasedLoop({ db: w.store.db, lease: `watcher:${k}`, holder, intervalMs: POLL_MS, tick: () => watcher.poll(), onError }));
  }
  stoppers.push(leasedLoop({ db: w.store.db, lease: 'solver:bench', holder, intervalMs: POLL_MS, tick: () => w.solver.tick(), onError }));
  for (const relayer of Object.values(w.relayers)) {
    const abort = new AbortController();
    const running = relayer.run(abort.signal);
    stoppers.push(async () => {
      abort.abort();
      await running;
    });
  }
  const observers = { ethereum_localnet: observeBlocks(eth.client), arbitrum_localnet: observeBlocks(arb.client) } as Record<ChainKey, ReturnType<typeof observeBlocks>>;

  const client = swapClient(w, eth);
  const user = client.user;
  const wallet = eth.wallet(user);
  const { wbtc, wbtcHtlc } = eth.deployment.contracts;
  await eth.client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ account: user, chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, maxUint256] }),
  });
  // The user's transactions go out one at a time (one account, one nonce sequence).
  let queue: Promise<unknown> = Promise.resolve();
  const initiate = (tx: { to: Hex; data: Hex }) => {
    const sent = queue.then(async () => {
      const hash = await wallet.sendTransaction({ account: user, chain: undefined, to: tx.to, data: tx.data });
      const receipt = await eth.client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
      if (receipt.status !== 'success') throw new Error('source initiate reverted');
    });
    queue = sent.catch(() => undefined);
    return sent;
  };
  const swap = async (): Promise<{ source: string; destination: string }> => {
    const o = await client.createOrder(false);
    await initiate(o.created.initiate_transaction);
    for (const until = Date.now() + 120_000; ; ) {
      if ((await client.read(o.id)).status === 'completed') break;
      if (Date.now() > until) throw new Error(`order ${o.id} did not complete: ${(await client.read(o.id)).status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { source: hex0x(o.order.source_swap.swap_id).toLowerCase(), destination: hex0x(o.order.destination_swap.swap_id).toLowerCase() };
  };

  try {
    const fromEth = await eth.client.getBlockNumber();
    const fromArb = await arb.client.getBlockNumber();
    const sequential: Array<{ source: string; destination: string }> = [];
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await swap());
    const ethEvents = await htlcEvents(eth, wbtcHtlc, fromEth);
    const arbEvents = await htlcEvents(arb, arb.deployment.contracts.wbtcHtlc, fromArb);
    const seen = (k: ChainKey, block: bigint | undefined) => {
      const t = block === undefined ? undefined : observers[k].seen.get(block);
      if (t === undefined) throw new Error(`block ${block} of ${k} was not observed`);
      return t;
    };
    const a: number[] = [];
    const b: number[] = [];
    for (const s of sequential) {
      const src = ethEvents.get(s.source);
      const dst = arbEvents.get(s.destination);
      a.push(seen('arbitrum_localnet', dst?.initiated) - seen('ethereum_localnet', src?.initiated));
      b.push(seen('ethereum_localnet', src?.redeemed) - seen('arbitrum_localnet', dst?.redeemed));
    }

    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => swap()));
    const seconds = (performance.now() - started) / 1000;
    const completed = results.filter((r) => r.status === 'fulfilled').length;
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');

    const ms = (x: number) => Math.round(x);
    return [
      { measure: '(a) source confirmed -> destination initiate', swaps: a.length, 'median ms': ms(quantile(a, 0.5)), 'p95 ms': ms(quantile(a, 0.95)), note: `loops every ${POLL_MS} ms` },
      { measure: '(b) secret revealed -> source redeem', swaps: b.length, 'median ms': ms(quantile(b, 0.5)), 'p95 ms': ms(quantile(b, 0.95)), note: `loops every ${POLL_MS} ms` },
      {
        measure: `(c) ${CONCURRENT} concurrent swaps end to end`,
        swaps: completed,
        'median ms': '',
        'p95 ms': '',
        note: `${(completed / seconds).toFixed(2)} swaps/s, ${completed}/${CONCURRENT} completed in ${seconds.toFixed(1)} s${failure ? `; first failure: ${String(failure.reason)}` : ''}`,
      },
    ];
  } finally {
    for (const o of Object.values(observers)) o.stop();
    for (const stop of stoppers.reverse()) await stop();
    await w.close();
    await Promise.all(Object.values(chains).map((c) => c.node.stop()));
  }
}
