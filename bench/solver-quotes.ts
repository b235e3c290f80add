// Quote competition on the service's own wiring: `hashlock dev` (anvil chains mining 1 s blocks, the
// embedded database), with 0, 1, 5 and 20 registered solvers connected to their quote-request streams,
// each funded on chain and answering every request at once over HTTP, as a market maker's quoting
// process would. Measures GET /v2/quote from a client (p50/p95), one request at a time, and how many
// answers each quote listed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../src/config/service-config.ts';
import { devAccount } from '../src/localnet/accounts.ts';
import { startDev } from '../src/localnet/dev.ts';
import { QuotingSolver, registerQuotingSolver } from '../test/helpers/quote-solver.ts';
import { devApi } from './dev-api.ts';
import { evmDeployment } from './settlement.ts';
import { quantile, type Row } from './stats.ts';

const FROM = 'ethereum_localnet:wbtc';
const TO = 'arbitrum_localnet:wbtc';
const QUOTES = Number(process.env.BENCH_QUOTES ?? 200);
const SOLVER_COUNTS = [0, 1, 5, 20];

export async function benchSolverQuotes(): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-'));
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, logLevel: 'warn', rateLimits: undefined };
  const dev = await startDev(config);
  const connected: QuotingSolver[] = [];
  try {
    const db = dev.service.store.db;
    const arb = evmDeployment(dev, 'arbitrum_localnet');
    const funder = createWalletClient({ account: devAccount('solver'), transport: http(arb.rpcUrl) });
    const arbClient = createPublicClient({ transport: http(arb.rpcUrl) });
    const api = devApi(dev);
    // Every solver is registered, proven on both chains, funded with 0.1 WBTC on the destination, and serves the pair.
    const keys: string[] = [];
    for (let i = 0; i < Math.max(...SOLVER_COUNTS); i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const hash = await funder.writeContract({ chain: undefined, address: arb.contracts.wbtc, abi: erc20Abi, functionName: 'transfer', args: [account.address, 10_000_000n] });
      await arbClient.waitForTransactionReceipt({ hash });
      const pairs = [[FROM, TO]] as const;
      keys.push(await registerQuotingSolver(db, dev.apiUrl, { id: `maker-${i + 1}`, account, chains: ['ethereum_localnet', 'arbitrum_localnet'], pairs }));
    }
    const rows: Row[] = [];
    for (const count of SOLVER_COUNTS) {
      while (connected.length < count) {
        const n = connected.length;
        // Each pays a little more than the last: the competition has a winner.
        connected.push(await QuotingSolver.connect(dev.apiUrl, keys[n]!, (r) => ({ amount: (BigInt(r.source_amount!) * BigInt(9_950 + n)) / 10_000n })));
      }
      // The balance reader (every 5 s) has read every connected solver's funds once its quotes list them all.
      for (const until = Date.now() + 30_000; ; ) {
        const listed = (await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=100000`)) as unknown[];
        if (listed.length === count + 1) break;
        if (Date.now() > until) throw new Error(`only ${listed.length} of ${count + 1} solvers quote after 30 s`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const ms: number[] = [];
      let answers = 0;
      for (let i = 0; i < QUOTES; i++) {
        const started = performance.now();
        const listed = (await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=${100_000 + i}`)) as Array<{ solver_id: string }>;
        ms.push(performance.now() - started);
        answers += listed.length;
      }
      rows.push({
        bench: 'GET /v2/quote with registered solvers',
        solvers: count,
        quotes: QUOTES,
        'p50 ms': Number(quantile(ms, 0.5).toFixed(1)),
        'p95 ms': Number(quantile(ms, 0.95).toFixed(1)),
        'max ms': Number(Math.max(...ms).toFixed(1)),
        'answers per quote': Number((answers / QUOTES).toFixed(2)),
      });
    }
    return rows;
  } finally {
    for (const s of connected) s.close();
    await dev.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
