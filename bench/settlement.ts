// Settlement latency and throughput on the service's own wiring: `hashlock dev` (two anvil chains,
// the API, the transaction senders, watchers woken by each new head, the solver woken by each order
// change), with clients that create orders over HTTP. Two setups:
//  - instant mining: every transaction mined at once; clients broadcast their source initiate;
//  - one-second blocks, as `npm start` runs: clients start gasless swaps all at once (EIP-712
//    signature, PATCH initiate);
//  - the same with 12 s blocks on the source chain (Ethereum's), measuring (d) how many source blocks
//    each swap takes from its initiate to the solver's source redeem.
// (a) and (b), what the service adds to each swap, are measured from outside (bench/chain-observer.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  http,
  maxUint256,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { hex0x, observeChain, serviceLatencies, type ChainObserver } from './chain-observer.ts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../src/config/service-config.ts';
import { devApi } from './dev-api.ts';
import { startDev, type Dev } from '../src/localnet/dev.ts';
import type { EvmDeployment } from '../src/localnet/evm/devnet.ts';
import { devAccount } from '../src/localnet/accounts.ts';
import type { StoreKind } from '../src/store/database.ts';
import { signGaslessInitiate } from '../test/helpers/gasless.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { quantile, type Row } from './stats.ts';
import { wbtcOrderBody } from './wbtc-order.ts';

const SEQUENTIAL = Number(process.env.BENCH_SWAPS ?? 20);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 100);
const AMOUNT = 100_000n;
/** How often a client reads its order while it waits, as a wallet's status screen would. */
const POLL_MS = 500;

/** Runs the settlement benches (instant mining, then one-second blocks); returns the table rows. */
export async function benchSettlement(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite'): Promise<Row[]> {
  return [
    ...(await settlementRun(kind, { blockTimeSec: 0, gasless: false, sequential: SEQUENTIAL, concurrent: CONCURRENT })),
    ...(await settlementRun(kind, { blockTimeSec: 1, gasless: true, sequential: 0, concurrent: CONCURRENT })),
    ...(await settlementRun(kind, { blockTimeSec: 1, sourceBlockTimeSec: 12, gasless: true, sequential: 0, concurrent: CONCURRENT })),
  ];
}

export async function settlementRun(
  kind: StoreKind,
  o: { blockTimeSec: number; sourceBlockTimeSec?: number; gasless: boolean; sequential: number; concurrent: number },
): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-'));
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench') : undefined;
  // A PostgreSQL service needs its secret-box key from the environment (instances share it).
  if (database) process.env.HASHLOCK_SECRET_KEY ??= randomBytes(32).toString('hex');
  // One key stands for all the bench's clients: no per-key limit would fit them.
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, databaseUrl: database?.url, logLevel: 'warn', rateLimits: undefined };
  const evmKeys = ['ethereum_localnet', 'arbitrum_localnet'];
  const dev = await startDev(config, { blockTimeMs: Object.fromEntries(evmKeys.map((key) => [key, o.blockTimeSec * 1000])) });
  const [eth, arb] = evmKeys.map((key) => {
    const deployment = evmDeployment(dev, key);
    const client = createPublicClient({ transport: http(deployment.rpcUrl), cacheTime: 0, pollingInterval: 5 });
    return { deployment, client, observer: observeChain(deployment.rpcUrl.replace(/^http/, 'ws')) };
  }) as [Side, Side];
  type Side = { deployment: EvmDeployment; client: PublicClient; observer: ChainObserver };
  // A slower source chain (Ethereum's 12 s blocks), the destination as before.
  if (o.sourceBlockTimeSec) await fetch(eth.deployment.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_setIntervalMining', params: [o.sourceBlockTimeSec] }) });

  const user = devAccount('user');
  const wallet = createWalletClient({ account: user, transport: http(eth.deployment.rpcUrl) });
  const { wbtc, wbtcHtlc } = eth.deployment.contracts;
  await eth.client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, maxUint256] }),
  });
  const api = devApi(dev);
  const quote = (await api(`/v2/quote?from=ethereum_localnet:wbtc&to=arbitrum_localnet:wbtc&from_amount=${AMOUNT}`)) as Array<{ destination: { amount: string } }>;
  const destinationAmount = quote[0]!.destination.amount;
  // A client broadcasting itself sends one transaction at a time (one account, one nonce sequence).
  let queue: Promise<unknown> = Promise.resolve();
  const broadcastInitiate = (tx: { to: Address; data: Hex }) => {
    const sent = queue.then(async () => {
      const hash = await wallet.sendTransaction({ chain: undefined, to: tx.to, data: tx.data });
      const receipt = await eth.client.waitForTransactionReceipt({ hash, pollingInterval: 5 });
      if (receipt.status !== 'success') throw new Error('source initiate reverted');
    });
    queue = sent.catch(() => undefined);
    return sent;
  };
  const swap = async (): Promise<{ source: string; destination: string }> => {
    const created = await api('/v2/orders', { method: 'POST', body: wbtcOrderBody(user.address, AMOUNT, destinationAmount) });
    const id = created.order_id as string;
    if (o.gasless) {
      const signature = await signGaslessInitiate(user, created.typed_data);
      await api(`/v2/orders/${id}?action=initiate`, { method: 'PATCH', body: { signature } });
    } else {
      await broadcastInitiate(created.initiate_transaction as { to: Address; data: Hex });
    }
    let order = await api(`/v2/orders/${id}`);
    for (const until = Date.now() + 300_000; order.status !== 'completed'; order = await api(`/v2/orders/${id}`)) {
      if (Date.now() > until) throw new Error(`order ${id} did not complete: ${order.status}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return { source: hex0x(order.source_swap.swap_id as string), destination: hex0x(order.destination_swap.swap_id as string) };
  };

  const latencies = (swaps: Array<{ source: string; destination: string }>, fromEth: bigint, fromArb: bigint) =>
    serviceLatencies(swaps, { ...eth, htlc: wbtcHtlc, fromBlock: fromEth }, { ...arb, htlc: arb.deployment.contracts.wbtcHtlc, fromBlock: fromArb });

  const setup = o.blockTimeSec === 0 ? 'instant mining' : o.sourceBlockTimeSec ? `${o.sourceBlockTimeSec} s source blocks, ${o.blockTimeSec} s destination blocks` : `${o.blockTimeSec} s blocks`;
  const how = o.gasless ? 'gasless' : 'client-broadcast';
  const ms = (x: number) => Math.round(x);
  const note = `${kind}; ${setup}; hashlock dev's wiring`;
  const rows: Row[] = [];
  try {
    const fromEth = await eth.client.getBlockNumber();
    const fromArb = await arb.client.getBlockNumber();
    const sequential: Array<{ source: string; destination: string }> = [];
    for (let i = 0; i < o.sequential; i++) sequential.push(await swap());
    if (sequential.length > 0) {
      const { a, b } = await latencies(sequential, fromEth, fromArb);
      rows.push(
        { measure: `(a) source confirmed -> destination initiate sent, ${how} one at a time`, swaps: a.length, 'median ms': ms(quantile(a, 0.5)), 'p95 ms': ms(quantile(a, 0.95)), note },
        { measure: `(b) secret revealed -> source redeem sent, ${how} one at a time`, swaps: b.length, 'median ms': ms(quantile(b, 0.5)), 'p95 ms': ms(quantile(b, 0.95)), note },
      );
    }

    const started = performance.now();
    const concurrentFromEth = await eth.client.getBlockNumber();
    const concurrentFromArb = await arb.client.getBlockNumber();
    const results = await Promise.allSettled(Array.from({ length: o.concurrent }, () => swap()));
    const seconds = (performance.now() - started) / 1000;
    const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const { a, b, sourceBlocks } = await latencies(done, concurrentFromEth, concurrentFromArb);
    rows.push(
      {
        measure: `(c) ${o.concurrent} ${how} swaps started at once`,
        swaps: done.length,
        'median ms': '',
        'p95 ms': '',
        note: `${note}; ${(done.length / seconds).toFixed(2)} swaps/s, ${done.length}/${o.concurrent} completed in ${seconds.toFixed(1)} s${failure ? `; first failure: ${String(failure.reason)}` : ''}`,
      },
      { measure: `(a) with those ${o.concurrent} in flight`, swaps: a.length, 'median ms': ms(quantile(a, 0.5)), 'p95 ms': ms(quantile(a, 0.95)), note },
      { measure: `(b) with those ${o.concurrent} in flight`, swaps: b.length, 'median ms': ms(quantile(b, 0.5)), 'p95 ms': ms(quantile(b, 0.95)), note },
    );
    if (o.sourceBlockTimeSec) {
      rows.push({
        measure: `(d) source blocks from initiate to source redeem, ${o.concurrent} at once`,
        swaps: sourceBlocks.length,
        'median ms': '',
        'p95 ms': '',
        note: `${note}; median ${quantile(sourceBlocks, 0.5)}, p95 ${quantile(sourceBlocks, 0.95)}, max ${Math.max(...sourceBlocks)} blocks`,
      });
    }
    return rows;
  } finally {
    eth.observer.stop();
    arb.observer.stop();
    await dev.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The deployment of a local EVM chain of the dev service, as devnet.json records it. */
export function evmDeployment(dev: Dev, key: string): EvmDeployment {
  const record = dev.chains.find((c) => c.chain.key === key)!.record as { chain_id: number; rpc_url: string; contracts: EvmDeployment['contracts'] };
  return { chain: key, chainId: record.chain_id, rpcUrl: record.rpc_url, contracts: record.contracts };
}
