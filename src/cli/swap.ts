// `hashlock swap`: a client of the running `npm start` devnet that performs one swap end to end.
// It reads <data dir>/devnet.json for the API, the local chains and the test user's key, prices the
// swap, creates an order (the service holds the secret), initiates the source (gasless with a
// signature for an ERC-20, or its own transaction for ether) and follows the order to completion.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, formatUnits, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

/** A failure the command reports in one line (exit code 1). */
export class SwapError extends Error {}

export interface SwapOptions {
  from: string;
  to: string;
  /** Source amount in base units (a decimal string of an integer). */
  amount: string;
  dataDir: string;
  /** How long to follow the order before giving up (default 120 s). */
  timeoutMs?: number;
  /** How often the order is read (default 500 ms). */
  pollMs?: number;
  /** Where progress lines go (default console.log). */
  print?: (line: string) => void;
}

interface DevnetChain {
  rpc_url: string;
  chain_id: number;
}

interface Devnet {
  api_url: string;
  app_key: string;
  chains: Record<string, DevnetChain>;
  accounts: { user: { address: string; private_key: string } };
}

interface AssetInfo {
  id: string;
  decimals: number;
  token: { address: string; schema: string };
}

interface EvmTx {
  to: Address;
  data: Hex;
  value?: string;
  gas_limit?: string;
}

interface Envelope {
  status?: string;
  result?: unknown;
  error?: unknown;
}

interface QuoteEntry {
  solver_id: string;
  destination: { amount: string };
  fee: number;
  estimated_time: number;
}

interface TypedDataJson {
  domain: { name: string; version: string; chainId: string; verifyingContract: Address };
  types: { Initiate: Array<{ name: string; type: string }> };
  message: { redeemer: Address; timelock: string; amount: string; secretHash: Hex };
}

interface CreatedOrder {
  order_id: string;
  typed_data?: TypedDataJson | null;
  approval_transaction?: EvmTx | null;
  initiate_transaction?: EvmTx | null;
}

/** Statuses after which the swap cannot complete any more. */
const FAILED = new Set(['awaiting_refund', 'refund_detected', 'refunded', 'expired']);

export function readDevnet(dataDir: string): Devnet {
  const path = join(resolve(dataDir), 'devnet.json');
  if (!existsSync(path)) throw new SwapError(`no devnet.json in ${resolve(dataDir)}: run npm start first (or pass --data-dir)`);
  let devnet: Partial<Devnet>;
  try {
    devnet = JSON.parse(readFileSync(path, 'utf8')) as Partial<Devnet>;
  } catch (err) {
    throw new SwapError(`${path} is not valid JSON (${(err as Error).message}): run npm start again`);
  }
  if (!devnet.api_url || !devnet.app_key || !devnet.chains || !devnet.accounts?.user?.private_key) {
    throw new SwapError(`${path} lacks api_url, app_key, chains or the test user: run npm start first`);
  }
  return devnet as Devnet;
}

class Api {
  constructor(private readonly devnet: Devnet) {}

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Envelope }> {
    let res: Response;
    try {
      res = await fetch(`${this.devnet.api_url}${path}`, {
        method,
        headers: { 'service-app-id': this.devnet.app_key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new SwapError(`cannot reach the service at ${this.devnet.api_url} (${(err as Error).message}): is npm start running?`);
    }
    const text = await res.text();
    let json: Envelope;
    try {
      json = JSON.parse(text) as Envelope;
    } catch {
      json = { error: text };
    }
    return { status: res.status, json };
  }

  /** The result of a call that must succeed; otherwise a SwapError naming `what` and the service's message. */
  async result<T>(what: string, method: string, path: string, body?: unknown): Promise<T> {
    const { status, json } = await this.call(method, path, body);
    if (status >= 400 || json.status === 'Error' || json.error !== undefined) {
      throw new SwapError(`${what} failed (HTTP ${status}): ${typeof json.error === 'string' ? json.error : JSON.stringify(json)}`);
    }
    return json.result as T;
  }
}

const isNative = (asset: AssetInfo) => asset.token.schema.endsWith(':native');
const chainKeyOf = (assetId: string) => assetId.split(':')[0]!;
const symbolOf = (assetId: string) => (assetId.split(':')[1] ?? '').toUpperCase();

function evmChain(key: string, c: DevnetChain) {
  return { id: c.chain_id, name: key, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [c.rpc_url] } } };
}

export async function runSwap(opts: SwapOptions): Promise<{ orderId: string; statuses: string[] }> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const pollMs = opts.pollMs ?? 500;
  if (!/^\d+$/.test(opts.amount) || BigInt(opts.amount) === 0n) {
    throw new SwapError(`--amount ${opts.amount}: must be a positive whole number of base units`);
  }
  const amount = BigInt(opts.amount);
  const devnet = readDevnet(opts.dataDir);
  const api = new Api(devnet);

  const assets = await api.result<AssetInfo[]>('listing the assets', 'GET', '/v2/assets');
  const assetOf = (id: string, flag: string): AssetInfo => {
    const asset = assets.find((a) => a.id === id);
    if (!asset) throw new SwapError(`${flag} ${id}: unknown asset; the service has ${assets.map((a) => a.id).join(', ')}`);
    const chain = devnet.chains[chainKeyOf(id)];
    if (!chain || chain.rpc_url === undefined) {
      throw new SwapError(`${flag} ${id}: its chain ${chainKeyOf(id)} is not an EVM chain of this devnet (it has ${Object.keys(devnet.chains).join(', ')})`);
    }
    return asset;
  };
  const from = assetOf(opts.from, '--from');
  const to = assetOf(opts.to, '--to');
  if (from.id === to.id) throw new SwapError('--from and --to are the same asset');

  const user = privateKeyToAccount(devnet.accounts.user.private_key as Hex);
  const clients = new Map<string, PublicClient>();
  const clientOf = (asset: AssetInfo): PublicClient => {
    const key = chainKeyOf(asset.id);
    let client = clients.get(key);
    if (!client) {
      const c = devnet.chains[key]!;
      client = createPublicClient({ chain: evmChain(key, c), transport: http(c.rpc_url), pollingInterval: 100 });
      clients.set(key, client);
    }
    return client;
  };
  const balanceOf = (asset: AssetInfo): Promise<bigint> =>
    isNative(asset)
      ? clientOf(asset).getBalance({ address: user.address })
      : clientOf(asset).readContract({ address: asset.token.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [user.address] });
  const showBalances = async (label: string) => {
    const result: Record<string, bigint> = {};
    print(`Balances ${label} (${user.address}):`);
    for (const asset of [from, to]) {
      const balance = await balanceOf(asset);
      result[asset.id] = balance;
      print(`  ${label.padEnd(6)} ${asset.id.padEnd(24)} ${balance.toString().padStart(26)}  (${formatUnits(balance, asset.decimals)} ${symbolOf(asset.id)})`);
    }
    return result;
  };

  const before = await showBalances('before');

  const quotes = await api.result<QuoteEntry[]>('the quote', 'GET', `/v2/quote?from=${encodeURIComponent(from.id)}&to=${encodeURIComponent(to.id)}&from_amount=${amount}`);
  const quote = quotes[0];
  if (!quote) throw new SwapError(`no solver quotes ${from.id} -> ${to.id} for ${amount}`);
  const destinationAmount = BigInt(quote.destination.amount);
  print(`Quote: ${amount} ${from.id} -> ${destinationAmount} ${to.id} (solver ${quote.solver_id}, fee ${quote.fee} bips, about ${quote.estimated_time} s)`);

  const created = await api.result<CreatedOrder>('creating the order', 'POST', '/v2/orders', {
    source: { asset: from.id, owner: user.address, amount: amount.toString() },
    destination: { asset: to.id, owner: user.address, amount: destinationAmount.toString() },
    solver_id: quote.solver_id,
    nonce: randomBytes(16).toString('hex'),
  });
  const orderId = created.order_id;
  print(`Order ${orderId} created`);

  const started = Date.now();
  await initiateSource(from, created, user, devnet, clientOf(from), api, orderId, print);

  // Follow the order until it completes or can no longer complete.
  const statuses: string[] = [];
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  for (;;) {
    const { status, json } = await api.call('GET', `/v2/orders/${orderId}`);
    const current = status === 200 ? (json.result as { status?: string } | undefined)?.status : undefined;
    if (current) {
      if (statuses.at(-1) !== current) {
        statuses.push(current);
        print(`  [${elapsed().padStart(6)} s] ${current}`);
      }
      if (current === 'completed') break;
      if (FAILED.has(current)) {
        throw new SwapError(`order ${orderId} did not complete: it is ${current} after ${elapsed()} s (statuses: ${statuses.join(' → ')})`);
      }
    }
    if (Date.now() - started > timeoutMs) {
      throw new SwapError(`order ${orderId} did not complete within ${timeoutMs / 1000} s (statuses: ${statuses.join(' → ') || 'none read'})`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  print(`Completed in ${elapsed()} s: ${statuses.join(' → ')}`);

  const after = await showBalances('after');
  for (const asset of [from, to]) {
    const delta = after[asset.id]! - before[asset.id]!;
    print(`  change ${asset.id.padEnd(24)} ${(delta > 0n ? `+${delta}` : delta.toString()).padStart(26)}`);
  }
  return { orderId, statuses };
}

async function initiateSource(
  from: AssetInfo,
  created: CreatedOrder,
  user: PrivateKeyAccount,
  devnet: Devnet,
  client: PublicClient,
  api: Api,
  orderId: string,
  print: (line: string) => void,
): Promise<void> {
  const key = chainKeyOf(from.id);
  const wallet = createWalletClient({ account: user, chain: evmChain(key, devnet.chains[key]!), transport: http(devnet.chains[key]!.rpc_url) });
  const send = async (what: string, tx: EvmTx): Promise<Hex> => {
    const hash = await wallet.sendTransaction({
      to: tx.to,
      data: tx.data,
      ...(tx.value && BigInt(tx.value) > 0n ? { value: BigInt(tx.value) } : {}),
      ...(tx.gas_limit ? { gas: BigInt(tx.gas_limit) } : {}),
    });
    const receipt = await client.waitForTransactionReceipt({ hash, timeout: 60_000 });
    if (receipt.status !== 'success') throw new SwapError(`${what} transaction ${hash} reverted`);
    print(`  ${what}: ${hash} (block ${receipt.blockNumber})`);
    return hash;
  };

  const approval = created.approval_transaction;
  const typedData = created.typed_data;
  if (!isNative(from) && typedData) {
    if (approval) await send('approval', approval);
    const signature = await user.signTypedData({
      domain: { ...typedData.domain, chainId: BigInt(typedData.domain.chainId) },
      types: { Initiate: typedData.types.Initiate },
      primaryType: 'Initiate',
      message: { ...typedData.message, timelock: BigInt(typedData.message.timelock), amount: BigInt(typedData.message.amount) },
    });
    const txHash = await api.result<string>('the gasless initiate', 'PATCH', `/v2/orders/${orderId}?action=initiate`, { signature });
    print(`  initiate (gasless, relayed): ${txHash}`);
    return;
  }
  const initiate = created.initiate_transaction;
  if (!initiate) throw new SwapError(`order ${orderId}: the service returned no initiate_transaction for ${from.id}`);
  if (approval) await send('approval', approval);
  await send('initiate', initiate);
}

/** Registers `hashlock swap` on the command line program. */
export function registerSwapCommand(program: Command): void {
  program
    .command('swap')
    .description('perform one swap end to end against the running `npm start` devnet, showing its progress')
    .requiredOption('--from <asset>', 'source asset id, e.g. ethereum_localnet:wbtc')
    .requiredOption('--to <asset>', 'destination asset id, e.g. arbitrum_localnet:wbtc')
    .requiredOption('--amount <base units>', 'source amount in base units (sats for WBTC, wei for ETH)')
    .option('--data-dir <dir>', 'the devnet data directory holding devnet.json (default HASHLOCK_DATA_DIR or .data)')
    .option('--timeout <seconds>', 'give up after this many seconds', '120')
    .action(async (opts: { from: string; to: string; amount: string; dataDir?: string; timeout: string }) => {
      const timeout = Number(opts.timeout);
      try {
        if (!Number.isFinite(timeout) || timeout <= 0) throw new SwapError(`--timeout ${opts.timeout}: must be a positive number of seconds`);
        await runSwap({
          from: opts.from,
          to: opts.to,
          amount: opts.amount,
          dataDir: opts.dataDir ?? process.env.HASHLOCK_DATA_DIR ?? '.data',
          timeoutMs: timeout * 1000,
        });
      } catch (err) {
        if (!(err instanceof SwapError)) throw err;
        console.error(`swap failed: ${err.message}`);
        process.exit(1);
      }
    });
}
