// Litecoin settlement on the service's own wiring (`hashlock dev`: litecoind regtest, two anvil chains
// mining a block a second, the API and every worker), with clients over HTTP: N LTC -> EVM and N
// EVM -> LTC swaps started at once, service-held secrets (the default flow). Each client has its own
// keys: a Litecoin client funds its HTLC from its own confirmed output, an EVM client signs a gasless
// initiate of its own WBTC. Litecoin mines at the registry's block time (10 s on the localnet), not
// on demand, so a step that waits for a block shows up as blocks.
// Per direction: whether all completed, Litecoin blocks from each swap's Litecoin funding (the client's
// for LTC -> EVM, the solver's for EVM -> LTC) to the block of its last Litecoin step (the solver's
// source redeem, or the client's destination redeem); for EVM -> LTC also from the client's gasless
// initiate (the Litecoin tip then) to that block, which counts the wait for the solver's funding; wall
// time (from the start to the direction's last completion) and swaps/s.
// Run alone: node --import tsx bench/litecoin-settlement.ts
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, parseEther, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { walletAddress } from '../src/chains/bitcoin/wallet-tx.ts';
import { fundHtlc, LITECOIN_NETWORK, type LitecoinWallet } from '../src/chains/bitcoin/swap-wallet.ts';
import { DEV_CONFIG_PATH, loadServiceConfig } from '../src/config/service-config.ts';
import { devApi, type DevOrder } from './dev-api.ts';
import { startDev } from '../src/localnet/dev.ts';
import { devAccount } from '../src/localnet/accounts.ts';
import { findLitecoind } from '../src/localnet/bitcoin/litecoind.ts';
import { bitcoinRpcFor } from '../src/chains/bitcoin/rpc.ts';
import type { StoreKind } from '../src/store/database.ts';
import { signGaslessInitiate } from '../test/helpers/gasless.ts';
import { toCoins } from '../test/helpers/litecoin.ts';
import { createDatabase } from '../test/helpers/stores.ts';
import type { Row } from './stats.ts';

const PER_DIRECTION = Number(process.env.BENCH_LTC_SWAPS ?? 20);
/** LTC -> EVM source amount, litoshis; EVM -> LTC source amount, WBTC sats. */
const LTC_AMOUNT = 1_000_000n;
const WBTC_AMOUNT = 10_000n;
const POLL_MS = 500;
const TIMEOUT_MS = 300_000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
};

export async function benchLitecoinSettlement(kind: StoreKind = process.env.DATABASE_URL ? 'postgres' : 'pglite', perDirection = PER_DIRECTION): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hashlock-bench-ltc-'));
  const database = kind === 'postgres' ? await createDatabase(process.env.DATABASE_URL!, 'hashlock_bench_ltc') : undefined;
  if (database) process.env.HASHLOCK_SECRET_KEY ??= randomBytes(32).toString('hex');
  const config = { ...loadServiceConfig(DEV_CONFIG_PATH, {}), port: 0, dataDir, databaseUrl: database?.url, logLevel: 'warn', rateLimits: undefined };
  // anvil mines a block a second and litecoind at the registry's block time, as `hashlock dev` runs them.
  const dev = await startDev(config);
  try {
    const ltcChain = dev.chains.find((c) => c.chain.key === 'litecoin_localnet');
    if (!ltcChain) throw new Error('litecoind is not on the PATH');
    const ltcRecord = ltcChain.record as { rpc_url: string; rpc_cookie_file: string };
    const ltc = { chain: ltcChain.chain, node: { rpcUrl: ltcRecord.rpc_url, rpc: bitcoinRpcFor({ url: ltcRecord.rpc_url, cookieFile: ltcRecord.rpc_cookie_file }) } };
    const mine = async (blocks: number) => ltc.node.rpc.call('generatetoaddress', [blocks, await ltc.node.rpc.call<string>('getnewaddress', ['', 'bech32'])]);
    const blockTimeMs = ltc.chain.blockTimeMs;
    const eth = dev.chains.find((c) => c.chain.key === 'ethereum_localnet')!.record as { rpc_url: string; contracts: { wbtc: Address; wbtcHtlc: Address } };
    const ethClient = createPublicClient({ transport: http(eth.rpc_url), pollingInterval: 100 });

    const api = devApi(dev);
    // The solver's Litecoin balance shows once the watcher has read its funding and the balances are refreshed.
    const quoted = async (from: string, to: string, amount: bigint) => {
      for (const until = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 1_000))) {
        try {
          const quotes = (await api(`/v2/quote?from=${from}&to=${to}&from_amount=${amount}`)) as Array<{ destination: { amount: string } }>;
          return BigInt(quotes[0]!.destination.amount);
        } catch (err) {
          if (Date.now() > until) throw err;
        }
      }
    };

    // Litecoin clients: a key each, one confirmed output each (one sendmany, then a block).
    const ltcClients: LitecoinWallet[] = Array.from({ length: perDirection }, () => {
      const privateKey = randomBytes(32);
      const address = walletAddress(privateKey, LITECOIN_NETWORK);
      return { chainKey: ltc.chain.key, address, privateKey, rpcUrl: ltc.node.rpcUrl, rpc: ltc.node.rpc };
    });
    await ltc.node.rpc.call('sendmany', ['', Object.fromEntries(ltcClients.map((c) => [c.address, toCoins(LTC_AMOUNT * 2n)]))]);
    await mine(1);

    // EVM clients: a key each, with gas, WBTC and the HTLC's allowance.
    const evmClients = Array.from({ length: perDirection }, () => privateKeyToAccount(generatePrivateKey()));
    await setupEvmClients(eth.rpc_url, ethClient, eth.contracts.wbtc, eth.contracts.wbtcHtlc, evmClients);

    const ltcToEvmOut = await quoted('litecoin_localnet:ltc', 'arbitrum_localnet:wbtc', LTC_AMOUNT);
    const evmToLtcOut = await quoted('ethereum_localnet:wbtc', 'litecoin_localnet:ltc', WBTC_AMOUNT);

    const follow = async (id: string): Promise<DevOrder> => {
      for (const until = Date.now() + TIMEOUT_MS; ; await new Promise((r) => setTimeout(r, POLL_MS))) {
        const order = (await api(`/v2/orders/${id}`)) as DevOrder;
        if (order.status === 'completed') return order;
        if (Date.now() > until) throw new Error(`order ${id} did not complete: ${order.status}`);
      }
    };
    const ltcToEvm = async (client: LitecoinWallet, i: number) => {
      const created = await api('/v2/orders', {
        method: 'POST',
        body: {
          source: { asset: 'litecoin_localnet:ltc', owner: client.address, amount: LTC_AMOUNT.toString() },
          destination: { asset: 'arbitrum_localnet:wbtc', owner: evmClients[i]!.address, amount: ltcToEvmOut.toString() },
          nonce: randomBytes(10).toString('hex'),
        },
      });
      await fundHtlc(client, created.to as string, BigInt(created.amount as string));
      const order = await follow(created.order_id as string);
      const blocks = Number(order.source_swap.redeem_block_number) - Number(order.source_swap.initiate_block_number);
      return { done: performance.now(), blocks, fromClient: blocks };
    };
    const evmToLtc = async (client: PrivateKeyAccount, i: number) => {
      const created = await api('/v2/orders', {
        method: 'POST',
        body: {
          source: { asset: 'ethereum_localnet:wbtc', owner: client.address, amount: WBTC_AMOUNT.toString() },
          destination: { asset: 'litecoin_localnet:ltc', owner: ltcClients[i]!.address, amount: evmToLtcOut.toString() },
          nonce: randomBytes(10).toString('hex'),
        },
      });
      const signature = await signGaslessInitiate(client, created.typed_data);
      const tipAtInitiate = await ltc.node.rpc.getBlockCount();
      await api(`/v2/orders/${created.order_id}?action=initiate`, { method: 'PATCH', body: { signature } });
      const order = await follow(created.order_id as string);
      const redeemBlock = Number(order.destination_swap.redeem_block_number);
      return { done: performance.now(), blocks: redeemBlock - Number(order.destination_swap.initiate_block_number), fromClient: redeemBlock - tipAtInitiate };
    };

    const started = performance.now();
    const [toEvm, toLtc] = await Promise.all([
      Promise.allSettled(ltcClients.map((c, i) => ltcToEvm(c, i))),
      Promise.allSettled(evmClients.map((c, i) => evmToLtc(c, i))),
    ]);
    const note = `${kind}; litecoind regtest mining every ${blockTimeMs / 1000} s, anvil every 1 s; ${perDirection} + ${perDirection} at once; hashlock dev's wiring`;
    const row = (direction: string, results: typeof toEvm): Row => {
      const done = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const blocks = done.map((d) => d.blocks);
      const seconds = done.length > 0 ? (Math.max(...done.map((d) => d.done)) - started) / 1000 : NaN;
      return {
        direction,
        completed: `${done.length}/${results.length}`,
        'blocks median': median(blocks),
        'blocks max': blocks.length > 0 ? Math.max(...blocks) : NaN,
        'from client, median': median(done.map((d) => d.fromClient)),
        'from client, max': done.length > 0 ? Math.max(...done.map((d) => d.fromClient)) : NaN,
        'wall s': Number(seconds.toFixed(1)),
        'swaps/s': Number((done.length / seconds).toFixed(2)),
        note: `${note}${failure ? `; first failure: ${String(failure.reason)}` : ''}`,
      };
    };
    return [row('LTC -> EVM (WBTC)', toEvm), row('EVM (WBTC) -> LTC', toLtc)];
  } finally {
    await dev.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Gas by anvil_setBalance, WBTC from the dev user (consecutive nonces, one block), then each client's approval. */
async function setupEvmClients(
  rpcUrl: string,
  client: ReturnType<typeof createPublicClient>,
  wbtc: Hex,
  htlc: Hex,
  clients: readonly PrivateKeyAccount[],
): Promise<void> {
  const rpc = (method: string, params: unknown[]) =>
    fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  for (const c of clients) await rpc('anvil_setBalance', [c.address, toHex(parseEther('1'))]);
  const user = devAccount('user');
  const userWallet = createWalletClient({ account: user, transport: http(rpcUrl) });
  const nonce = await client.getTransactionCount({ address: user.address, blockTag: 'pending' });
  const transfers = await Promise.all(
    clients.map((c, i) =>
      userWallet.writeContract({ chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'transfer', args: [c.address, WBTC_AMOUNT * 2n], nonce: nonce + i }),
    ),
  );
  const approvals = await Promise.all(
    clients.map((c) =>
      createWalletClient({ account: c, transport: http(rpcUrl) }).writeContract({ chain: undefined, address: wbtc, abi: erc20Abi, functionName: 'approve', args: [htlc, maxUint256] }),
    ),
  );
  for (const hash of [...transfers, ...approvals]) {
    const receipt = await client.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`EVM client setup transaction ${hash} reverted`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!findLitecoind()) throw new Error('litecoind is not on the PATH');
  console.table(await benchLitecoinSettlement());
}
