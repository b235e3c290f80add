// Tron settlement on the service's own wiring (`hashlock dev` with the chains it needs: the local Tron
// chain with a block every 3 s as the localnet registry has it, ethereum_localnet's anvil mining a block
// a second, the API and every worker), with clients over HTTP: N Tron USDT -> EVM USDC swaps started at
// once, service-held secrets. Each client creates its order (GET /v2/quote, POST /v2/orders), signs the
// API's `approval_transaction` offline and broadcasts it to the local Tron chain's HTTP API, waits for it
// in a block, signs the order's TIP-712 `typed_data` and PATCHes the gasless initiate (the relayer pays
// the energy), then reads its order until it is completed.
// Every client has its own Tron account (its own USDT and TRX, put in the chain's state before
// `hashlock dev` resumes it): Tron has no nonces, so one account could broadcast N transactions at once,
// but the approval the API hands out is `approve(htlc, amount)` of exactly the swap's amount, and
// approvals overwrite each other: N concurrent swaps from one account would leave an allowance of one
// swap's amount, and all but one relayed initiate would revert.
// Reported: whether all completed, wall time (from the start to the last completion) and swaps/s, the
// time from each client's initiate PATCH accepted (202) to seeing `completed` (median, p95), and the Tron
// blocks from the source initiate to the solver's source redeem (median, max).
// Run alone: node --import tsx bench/tron-settlement.ts
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeFunctionData, numberToHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { loadRegistry, type Chain } from '../src/chains/registry.ts';
import type { RegistryFile } from '../src/chains/registry-schema.ts';
import { evmHexToTron, tronToEvmHex } from '../src/chains/tron/address.ts';
import { TronApi } from '../src/chains/tron/api.ts';
import { signTronCall } from '../src/chains/tron/transactions.ts';
import { DEV_CONFIG_PATH, loadServiceConfig, type ServiceConfig } from '../src/config/service-config.ts';
import { devAccount } from '../src/localnet/accounts.ts';
import { startDev } from '../src/localnet/dev.ts';
import { WEI_PER_SUN } from '../src/localnet/tron/chain.ts';
import { tronContractArtifact } from '../src/localnet/tron/contracts.ts';
import { deployTronLocalnet } from '../src/localnet/tron/devnet.ts';
import { startTronLocalnet } from '../src/localnet/tron/local-chain.ts';
import type { StoreKind } from '../src/store/database.ts';
import { signGaslessInitiate, type InitiateTypedData } from '../test/helpers/gasless.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import { devApi, type DevOrder } from './dev-api.ts';
import { quantile, type Row } from './stats.ts';

const SWAPS = Number(process.env.BENCH_TRON_SWAPS ?? 50);
const FROM = 'tron_localnet:usdt';
const TO = 'ethereum_localnet:usdc';
/** The chains the benchmark runs: the source's and the destination's. */
const CHAINS = ['tron_localnet', 'ethereum_localnet'];
/** 10 USDT a swap; each client holds 100 USDT and 1,000 TRX (an approval burns a few TRX of energy). */
const AMOUNT = 10_000_000n;
const CLIENT_USDT = 100_000_000n;
const CLIENT_TRX_SUN = 1_000_000_000n;
/** How often a client reads its order (and its approval) while it waits, as a wallet's status screen would. */
const POLL_MS = 500;
const TIMEOUT_MS = 300_000;

const listed = (ids: string | string[]) => (typeof ids === 'string' ? [ids] : ids);

/**
 * The dev config with the registry cut to `chains`: a registry file of those chains in the data
 * directory, and the solvers' addresses, strategies and affiliate fee assets restricted to them.
 */
function devConfigOn(chains: string[], dataDir: string, databaseUrl: string | undefined): ServiceConfig {
  const base = loadServiceConfig(DEV_CONFIG_PATH, {});
  const file = JSON.parse(readFileSync(base.registryPath, 'utf8')) as RegistryFile;
  const registryPath = join(dataDir, 'registry.json');
  writeFileSync(registryPath, JSON.stringify({ ...file, chains: file.chains.filter((c) => chains.includes(c.chain)) }));
  const kept = (id: string) => chains.includes(id.split(':')[0]!);
  const strategies = base.strategies
    .map((s) => ({ ...s, from: listed(s.from).filter(kept), to: listed(s.to).filter(kept) }))
    .filter((s) => s.from.length > 0 && s.to.length > 0);
  return {
    ...base,
    port: 0,
    dataDir,
    databaseUrl,
    logLevel: 'warn',
    rateLimits: undefined,
    registryPath,
    solvers: base.solvers.map((s) => ({ ...s, addresses: Object.fromEntries(Object.entries(s.addresses).filter(([chain]) => chains.includes(chain))) })),
    strategies,
    affiliateFeeAssets: base.affiliateFeeAssets.filter(kept),
  };
}

/**
 * Writes the clients' TRX and USDT into the local Tron chain's state in `dataDir` (the chain started once
 * with the test USDT and HTLC deployed, the balances set through anvil, the USDT minted by its deployer,
 * then stopped), which `hashlock dev` resumes. The local chain runs TriggerSmartContract transactions
 * only, so TRX cannot be sent over its API.
 */
async function fundClients(chain: Chain, dataDir: string, clients: Address[]): Promise<void> {
  const localnet = await startTronLocalnet({ dataDir, name: chain.key, blockTimeMs: 0, solidifyDepth: chain.confirmationTarget });
  try {
    const { usdt } = await deployTronLocalnet(chain, localnet);
    const rpc = (method: string, params: unknown[]) => localnet.chain.anvil.rpc(method, params);
    const { abi } = tronContractArtifact('TestToken');
    const hashes: unknown[] = [];
    for (const client of clients) {
      await rpc('anvil_setBalance', [client, numberToHex(CLIENT_TRX_SUN * WEI_PER_SUN)]);
      const data = encodeFunctionData({ abi, functionName: 'mint', args: [client, CLIENT_USDT] });
      hashes.push(await rpc('eth_sendTransaction', [{ from: devAccount('deployer').address, to: tronToEvmHex(usdt), data }]));
    }
    await localnet.mine();
    for (const hash of hashes) {
      const receipt = (await rpc('eth_getTransactionReceipt', [hash])) as { status: Hex } | null;
      if (Number(receipt?.status) !== 1) throw new Error(`minting USDT for a client failed (${String(hash)})`);
    }
  } finally {
    await localnet.stop();
  }
}

export async function benchTronSettlement(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite', swaps = SWAPS): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-tron-'));
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench_tron') : undefined;
  if (database) process.env.HASHLOCK_SECRET_KEY ??= randomBytes(32).toString('hex');
  const config = devConfigOn(CHAINS, dataDir, database?.url);
  const clients = Array.from({ length: swaps }, () => {
    const key = generatePrivateKey();
    return { key, account: privateKeyToAccount(key) };
  });
  try {
    await fundClients(loadRegistry(config.registryPath).chain('tron_localnet')!, dataDir, clients.map((c) => c.account.address));
    // A Tron block every 3 s and an anvil block every second, as `hashlock dev` runs them.
    const dev = await startDev(config);
    try {
      const tronChain = dev.chains.find((c) => c.chain.key === 'tron_localnet')!;
      const tron = new TronApi(String(tronChain.access.rpc_url));
      const api = devApi(dev);
      const sleep = () => new Promise((r) => setTimeout(r, POLL_MS));

      const follow = async (id: string): Promise<DevOrder> => {
        for (const until = Date.now() + TIMEOUT_MS; ; await sleep()) {
          const order = (await api(`/v2/orders/${id}`)) as DevOrder;
          if (order.status === 'completed') return order;
          if (Date.now() > until) throw new Error(`order ${id} did not complete: ${order.status}`);
        }
      };
      /** The client signs its approval offline (fee limit: the request's `gas_limit`), broadcasts it and waits until it is in a block. */
      const approve = async (privateKey: Hex, owner: string, call: { to: string; data: Hex; gas_limit: string }) => {
        const head = await tron.nowBlock();
        const tx = await signTronCall({ call: { contract: call.to, data: call.data }, owner, privateKey, reference: head, expiration: head.timestampMs + 60_000, feeLimitSun: BigInt(call.gas_limit) });
        const sent = await tron.broadcast(tx as unknown as Record<string, unknown>);
        if (!sent.result) throw new Error(`the approval was refused: ${sent.code} ${sent.message}`);
        for (const until = Date.now() + TIMEOUT_MS; ; await sleep()) {
          const info = await tron.transactionInfo(tx.txID);
          if (info?.failed) throw new Error(`the approval failed: ${info.result} ${info.message}`);
          if (info) return;
          if (Date.now() > until) throw new Error(`the approval ${tx.txID} did not land`);
        }
      };
      const swap = async ({ key, account }: { key: Hex; account: PrivateKeyAccount }) => {
        const owner = evmHexToTron(account.address);
        const [best] = (await api(`/v2/quote?from=${FROM}&to=${TO}&from_amount=${AMOUNT}`)) as Array<{ solver_id: string; destination: { amount: string } }>;
        const created = await api('/v2/orders', {
          method: 'POST',
          body: {
            source: { asset: FROM, owner, amount: AMOUNT.toString() },
            destination: { asset: TO, owner: account.address, amount: best!.destination.amount },
            solver_id: best!.solver_id,
            nonce: randomBytes(10).toString('hex'),
          },
        });
        await approve(key, owner, created.approval_transaction as { to: string; data: Hex; gas_limit: string });
        const signature = await signGaslessInitiate(account, created.typed_data as InitiateTypedData);
        await api(`/v2/orders/${created.order_id as string}?action=initiate`, { method: 'PATCH', body: { signature } });
        const initiated = performance.now();
        const order = await follow(created.order_id as string);
        const done = performance.now();
        return { done, ms: done - initiated, blocks: Number(order.source_swap.redeem_block_number) - Number(order.source_swap.initiate_block_number) };
      };

      const started = performance.now();
      const results = await Promise.allSettled(clients.map((c) => swap(c)));
      const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const seconds = done.length > 0 ? (Math.max(...done.map((d) => d.done)) - started) / 1000 : NaN;
      const ms = done.map((d) => d.ms);
      const blocks = done.map((d) => d.blocks);
      return [
        {
          direction: 'Tron USDT -> EVM (USDC)',
          completed: `${done.length}/${results.length}`,
          'wall s': Number(seconds.toFixed(1)),
          'swaps/s': Number((done.length / seconds).toFixed(2)),
          'initiate -> completed s, median': Number((quantile(ms, 0.5) / 1000).toFixed(1)),
          'initiate -> completed s, p95': Number((quantile(ms, 0.95) / 1000).toFixed(1)),
          'Tron blocks to source redeem, median': quantile(blocks, 0.5),
          'Tron blocks to source redeem, max': Math.max(...blocks),
          note: `${kind}; a Tron block every ${tronChain.chain.blockTimeMs} ms, anvil every 1 s; ${swaps} at once, one Tron account each; hashlock dev's wiring on ${CHAINS.join(' and ')}${failure ? `; first failure: ${String(failure.reason)}` : ''}`,
        },
      ];
    } finally {
      await dev.stop();
    }
  } finally {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.table(await benchTronSettlement());
