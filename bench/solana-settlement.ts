// Solana settlement on the service's own wiring (`hashlock dev`: the local Solana chain with a slot
// every 400 ms, two anvil chains mining a block a second, the API and every worker), with clients
// over HTTP: N SOL -> EVM (WBTC on arbitrum_localnet) swaps started at once, service-held secrets.
// Each client creates its order, signs the API's `versioned_tx` with the dev user's Solana key (one
// account sending N transactions: Solana has no nonces) and broadcasts it, then reads its order
// until it is completed.
// Reported: whether all completed, wall time (from the start to the last completion) and swaps/s,
// the time from each client's initiate (its sendTransaction answered) to seeing `completed`
// (median, p95), and the slots from the source initiate to the solver's source redeem.
// Run alone: node --import tsx bench/solana-settlement.ts
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSolanaRpc, getBase64EncodedWireTransaction, getTransactionDecoder, partiallySignTransaction } from '@solana/kit';
import { solanaSignerOfKey } from '../src/chains/solana/keys.ts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../src/config/service-config.ts';
import { devAccount, privateKeyOf } from '../src/localnet/accounts.ts';
import { startDev } from '../src/localnet/dev.ts';
import type { StoreKind } from '../src/store/database.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { devApi, type DevOrder } from './dev-api.ts';
import { quantile, type Row } from './stats.ts';

const SWAPS = Number(process.env.BENCH_SOL_SWAPS ?? 50);
const LAMPORTS = 500_000_000n;
const POLL_MS = 200;
const TIMEOUT_MS = 300_000;

export async function benchSolanaSettlement(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite', swaps = SWAPS): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-sol-'));
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench_sol') : undefined;
  if (database) process.env.HASHLOCK_SECRET_KEY ??= randomBytes(32).toString('hex');
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, databaseUrl: database?.url, logLevel: 'warn', rateLimits: undefined };
  // Slots every 400 ms and anvil blocks every second, as `hashlock dev` runs them.
  const dev = await startDev(config);
  try {
    const solana = dev.chains.find((c) => c.chain.key === 'solana_localnet');
    if (!solana) throw new Error('solana_localnet is not running (clang-19 missing?)');
    const rpc = createSolanaRpc(String(solana.access.rpc_url));
    const slotMs = solana.chain.blockTimeMs;
    const user = await solanaSignerOfKey(privateKeyOf(devAccount('user')));
    const evmUser = devAccount('user').address;
    const api = devApi(dev);
    const quotes = (await api(`/v2/quote?from=solana_localnet:sol&to=arbitrum_localnet:wbtc&from_amount=${LAMPORTS}`)) as Array<{ solver_id: string; destination: { amount: string } }>;
    const best = quotes[0]!;

    const follow = async (id: string): Promise<DevOrder> => {
      for (const until = Date.now() + TIMEOUT_MS; ; await new Promise((r) => setTimeout(r, POLL_MS))) {
        const order = (await api(`/v2/orders/${id}`)) as DevOrder;
        if (order.status === 'completed') return order;
        if (Date.now() > until) throw new Error(`order ${id} did not complete: ${order.status}`);
      }
    };
    const swap = async () => {
      const created = await api('/v2/orders', {
        method: 'POST',
        body: {
          source: { asset: 'solana_localnet:sol', owner: user.address, amount: LAMPORTS.toString() },
          destination: { asset: 'arbitrum_localnet:wbtc', owner: evmUser, amount: best.destination.amount },
          solver_id: best.solver_id,
          nonce: randomBytes(10).toString('hex'),
        },
      });
      const signed = await partiallySignTransaction([user.keyPair], getTransactionDecoder().decode(Buffer.from(created.versioned_tx as string, 'base64')));
      await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
      const initiated = performance.now();
      const order = await follow(created.order_id as string);
      const done = performance.now();
      return { done, ms: done - initiated, slots: Number(order.source_swap.redeem_block_number) - Number(order.source_swap.initiate_block_number) };
    };

    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: swaps }, () => swap()));
    const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const seconds = done.length > 0 ? (Math.max(...done.map((d) => d.done)) - started) / 1000 : NaN;
    const ms = done.map((d) => d.ms);
    const slots = done.map((d) => d.slots);
    return [
      {
        direction: 'SOL -> EVM (WBTC)',
        completed: `${done.length}/${results.length}`,
        'wall s': Number(seconds.toFixed(1)),
        'swaps/s': Number((done.length / seconds).toFixed(2)),
        'initiate -> completed s, median': Number((quantile(ms, 0.5) / 1000).toFixed(1)),
        'initiate -> completed s, p95': Number((quantile(ms, 0.95) / 1000).toFixed(1)),
        'slots to source redeem, median': quantile(slots, 0.5),
        'slots to source redeem, p95': quantile(slots, 0.95),
        note: `${kind}; a slot every ${slotMs} ms, anvil every 1 s; ${swaps} at once from one Solana account; hashlock dev's wiring${failure ? `; first failure: ${String(failure.reason)}` : ''}`,
      },
    ];
  } finally {
    await dev.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.table(await benchSolanaSettlement());
