// Settlement latency and throughput on the service's own wiring: `hashlock dev` (two anvil chains,
// the API, relayers, watchers woken by each new head, the solver woken by each order change) with
// every transaction mined at once, and clients that create orders over HTTP and broadcast the source
// initiate themselves. Block first-seen times come from an observer polling both chains, so
//  (a) = first sight of the source's confirming block -> destination initiate mined (anvil automines:
//        mined within milliseconds of being sent),
//  (b) = first sight of the secret's reveal block (destination redeem) -> source redeem mined.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, parseEventLogs, type Address, type Hex, type PublicClient } from 'viem';
import { HTLC_EVENTS } from '../src/chains/evm/htlc-events.ts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../src/config/service-config.ts';
import { startDev } from '../src/devnet/dev.ts';
import { devAccount } from '../src/devnet/evm-devnet.ts';
import type { StoreKind } from '../src/store/database.ts';
import { createDatabase } from '../test/helpers/stores.ts';

const SEQUENTIAL = Number(process.env.BENCH_SWAPS ?? 20);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 100);
const AMOUNT = 100_000n;

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
async function htlcEvents(client: PublicClient, htlc: Hex, fromBlock: bigint) {
  const logs = await client.getLogs({ address: htlc, fromBlock, toBlock: 'latest' });
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
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-'));
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench') : undefined;
  // A PostgreSQL service needs its secret-box key from the environment (instances share it).
  if (database) process.env.HASHLOCK_SECRET_KEY ??= randomBytes(32).toString('hex');
  // One key stands for all the bench's clients, polling every 50 ms: no per-key limit would fit them.
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, databaseUrl: database?.url, logLevel: 'warn', rateLimits: undefined };
  const dev = await startDev(config, { blockTimeSec: 0 });
  const [eth, arb] = ['ethereum_localnet', 'arbitrum_localnet'].map((key) => {
    const deployment = dev.chains.find((c) => c.chain === key)!;
    return { deployment, client: createPublicClient({ transport: http(deployment.rpcUrl), cacheTime: 0, pollingInterval: 5 }) };
  }) as [{ deployment: (typeof dev.chains)[number]; client: PublicClient }, { deployment: (typeof dev.chains)[number]; client: PublicClient }];
  const observers = { eth: observeBlocks(eth.client), arb: observeBlocks(arb.client) };

  const user = devAccount('user');
  const wallet = createWalletClient({ account: user, transport: http(eth.deployment.rpcUrl) });
  const { wbtc, wbtcHtlc } = eth.deployment.contracts;
  await eth.client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, maxUint256] }),
  });
  const api = async (path: string, init?: { method: string; body: object }) => {
    const res = await fetch(`${dev.apiUrl}${path}`, {
      method: init?.method ?? 'GET',
      headers: { 'service-app-id': dev.appKey, 'content-type': 'application/json' },
      ...(init ? { body: JSON.stringify(init.body) } : {}),
    });
    const body = (await res.json()) as { result?: Record<string, any>; error?: string };
    if (!res.ok || !body.result) throw new Error(`${path}: ${res.status} ${body.error}`);
    return body.result;
  };
  const quote = (await api(`/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${AMOUNT}`)) as unknown as Array<{ destination: { amount: string } }>;
  const destinationAmount = quote[0]!.destination.amount;
  // The user's transactions go out one at a time (one account, one nonce sequence).
  let queue: Promise<unknown> = Promise.resolve();
  const initiate = (tx: { to: Address; data: Hex }) => {
    const sent = queue.then(async () => {
      const hash = await wallet.sendTransaction({ chain: undefined, to: tx.to, data: tx.data });
      const receipt = await eth.client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
      if (receipt.status !== 'success') throw new Error('source initiate reverted');
    });
    queue = sent.catch(() => undefined);
    return sent;
  };
  const swap = async (): Promise<{ source: string; destination: string }> => {
    const created = await api('/v2/orders', {
      method: 'POST',
      body: {
        source: { asset: 'ethereum_localnet:wbtc', owner: user.address, amount: AMOUNT.toString() },
        destination: { asset: 'arbitrum_localnet:wbtc', owner: user.address, amount: destinationAmount },
        nonce: randomBytes(10).toString('hex'),
      },
    });
    const id = created.order_id as string;
    await initiate(created.initiate_transaction as { to: Address; data: Hex });
    let order = await api(`/v2/orders/${id}`);
    for (const until = Date.now() + 120_000; order.status !== 'completed'; order = await api(`/v2/orders/${id}`)) {
      if (Date.now() > until) throw new Error(`order ${id} did not complete: ${order.status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return { source: hex0x(order.source_swap.swap_id as string), destination: hex0x(order.destination_swap.swap_id as string) };
  };

  try {
    const fromEth = await eth.client.getBlockNumber();
    const fromArb = await arb.client.getBlockNumber();
    const sequential: Array<{ source: string; destination: string }> = [];
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await swap());
    const ethEvents = await htlcEvents(eth.client, wbtcHtlc, fromEth);
    const arbEvents = await htlcEvents(arb.client, arb.deployment.contracts.wbtcHtlc, fromArb);
    const seen = (observer: ReturnType<typeof observeBlocks>, block: bigint | undefined) => {
      const t = block === undefined ? undefined : observer.seen.get(block);
      if (t === undefined) throw new Error(`block ${block} was not observed`);
      return t;
    };
    const a: number[] = [];
    const b: number[] = [];
    for (const s of sequential) {
      const src = ethEvents.get(s.source);
      const dst = arbEvents.get(s.destination);
      a.push(seen(observers.arb, dst?.initiated) - seen(observers.eth, src?.initiated));
      b.push(seen(observers.eth, src?.redeemed) - seen(observers.arb, dst?.redeemed));
    }

    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => swap()));
    const seconds = (performance.now() - started) / 1000;
    const completed = results.filter((r) => r.status === 'fulfilled').length;
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');

    const ms = (x: number) => Math.round(x);
    const note = `${kind}; service wiring (new heads over WebSocket, solver on order_changed)`;
    return [
      { measure: '(a) source confirmed -> destination initiate', swaps: a.length, 'median ms': ms(quantile(a, 0.5)), 'p95 ms': ms(quantile(a, 0.95)), note },
      { measure: '(b) secret revealed -> source redeem', swaps: b.length, 'median ms': ms(quantile(b, 0.5)), 'p95 ms': ms(quantile(b, 0.95)), note },
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
    await dev.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const hex0x = (s: string): string => (s.startsWith('0x') ? s : `0x${s}`).toLowerCase();
