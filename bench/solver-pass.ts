// A solver pass over many orders when the chain's RPC is slow: 100 orders whose sources are confirmed
// on chain, funded by one pass whose every read goes through a proxy that answers each HTTP request
// `delayMs` late, as a remote RPC provider does. The pass reads its orders concurrently and batches
// their reads, so its cost is a few round trips, not one per order.
import { createServer, request as httpRequest, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { erc20Abi, maxUint256, type Address, type Hex } from 'viem';
import { evmSolverChains } from '../src/chains/evm/solver-chain.ts';
import { devAccount } from '../src/localnet/accounts.ts';
import { SecretBox } from '../src/orders/secret-box.ts';
import { Solver } from '../src/solver/solver.ts';
import type { StoreKind } from '../src/store/database.ts';
import { SOLVER, localnetRegistry } from '../test/helpers/fixtures.ts';
import { openSwapWorld, swapClient } from '../test/e2e/harness.ts';
import { CHAINS, startChains, type ChainKey } from '../test/relayer/harness.ts';

const ORDERS = Number(process.env.BENCH_PASS_ORDERS ?? 100);

interface Row {
  measure: string;
  orders: number;
  'pass ms': number;
  'HTTP requests': number;
  note: string;
}

/** An HTTP proxy to `target` that holds each request `delayMs` before forwarding it; counts requests. */
async function slowProxy(target: string, delayMs: number): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    count++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        const forward = httpRequest(target, { method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
          answer.pipe(res);
        });
        forward.on('error', () => res.destroy());
        forward.end(Buffer.concat(chunks));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, requests: () => count, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export async function benchSolverPass(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite', delays: readonly number[] = [0, 100]): Promise<Row[]> {
  const registry = localnetRegistry();
  const chains = await startChains(registry);
  const rows: Row[] = [];
  try {
    for (const delayMs of delays) {
      const w = await openSwapWorld(kind, registry, chains);
      const proxies = await Promise.all((Object.keys(CHAINS) as ChainKey[]).map(async (k) => [k, await slowProxy(chains[k].node.rpcUrl, delayMs)] as const));
      try {
        // The orders: created over HTTP, their sources initiated by the client on chain and confirmed.
        const client = swapClient(w, chains.ethereum_localnet);
        const eth = chains.ethereum_localnet;
        const { wbtc, wbtcHtlc } = eth.deployment.contracts;
        const wallet = eth.wallet(client.user);
        await eth.client.waitForTransactionReceipt({
          hash: await wallet.writeContract({ account: client.user, chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [wbtcHtlc, maxUint256] }),
        });
        const orders = [];
        for (let i = 0; i < ORDERS; i++) orders.push(await client.createOrder(false));
        let last: Hex | undefined;
        for (const o of orders) {
          const tx = o.created.initiate_transaction as { to: Address; data: Hex };
          last = await wallet.sendTransaction({ account: client.user, chain: undefined, to: tx.to, data: tx.data });
        }
        await eth.client.waitForTransactionReceipt({ hash: last! });
        await eth.node.rpc('anvil_mine', [1]);
        for (const k of Object.keys(CHAINS) as ChainKey[]) {
          for (;;) {
            const read = await w.watchers[k].poll();
            if (read.to >= read.head) break;
          }
        }

        const rpc = Object.fromEntries(proxies.map(([k, p]) => [k, p.url]));
        const solver = new Solver(w.store.db, SOLVER.id, evmSolverChains(registry, devAccount('solver').address, rpc, w.store.db), new SecretBox(randomBytes(32)));
        const before = proxies.reduce((n, [, p]) => n + p.requests(), 0);
        const started = performance.now();
        const pass = await solver.tick();
        const ms = Math.round(performance.now() - started);
        const requests = proxies.reduce((n, [, p]) => n + p.requests(), 0) - before;
        if (pass.funded.length !== ORDERS) throw new Error(`the pass funded ${pass.funded.length} of ${ORDERS} orders: ${JSON.stringify(pass.skipped.slice(0, 3))}`);
        rows.push({ measure: 'one solver pass funding every order', orders: ORDERS, 'pass ms': ms, 'HTTP requests': requests, note: `${kind}; every RPC request answered ${delayMs} ms late` });
      } finally {
        await Promise.all(proxies.map(([, p]) => p.close()));
        await w.close();
      }
    }
  } finally {
    await Promise.all(Object.values(chains).map((c) => c.node.stop()));
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.table(await benchSolverPass());
}
