// `hashlock swap`: a client of the running `npm start` devnet that performs one swap end to end.
// It reads <data dir>/devnet.json for the API, the local chains and the test user's key, prices the
// swap, creates an order (the service holds the secret), initiates the source (gasless with a
// signature for an ERC-20, its own transaction for ether, a payment to the HTLC address for
// Litecoin, a signed versioned_tx for SOL or versioned_tx_gasless for an SPL token) and follows the
// order to completion.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, formatUnits, http, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { SwapError } from './swap-error.ts';
import {
  fundHtlc,
  litecoinBalance,
  litecoinTxCosts,
  litecoinWallet,
  waitForConfirmation,
  type DevnetLitecoinChain,
  type DevnetLitecoinUser,
  type LitecoinWallet,
} from './swap-litecoin.ts';
import {
  signAndSend,
  signedForRelayer,
  solanaBalance,
  solanaTxEffect,
  solanaWallet,
  waitForSolanaConfirmation,
  type DevnetSolanaChain,
  type DevnetSolanaUser,
  type SolanaWallet,
} from './swap-solana.ts';
import { LAMPORTS_PER_SIGNATURE } from '../chains/solana/localnet/fees.ts';

export { SwapError };

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

/** devnet.json's entry for a chain: an EVM chain has a chain id, the Litecoin chain a cookie file, the Solana chain its mints. */
interface DevnetChain extends DevnetLitecoinChain, DevnetSolanaChain {
  rpc_url: string;
  chain_id?: number;
}

interface Devnet {
  api_url: string;
  app_key: string;
  chains: Record<string, DevnetChain>;
  accounts: { user: DevnetLitecoinUser & DevnetSolanaUser & { address: string } };
}

interface AssetInfo {
  id: string;
  /** `<family>:<chain number>`, e.g. `evm:31337` or `bitcoin:1`. */
  chain: string;
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
  /** Bitcoin-family source: the HTLC address to pay and the exact amount. */
  to?: string;
  amount?: string;
  /** Solana source: the unsigned initiate the user signs and broadcasts (paying its fee). */
  versioned_tx?: string;
  /** Solana SPL source of a gasless app: the initiate the user signs and the relayer sends. */
  versioned_tx_gasless?: string | null;
}

interface OrderView {
  status?: string;
  source_swap?: { redeem_tx_hash?: string };
  destination_swap?: { redeem_tx_hash?: string };
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
const isBitcoinFamily = (asset: AssetInfo) => asset.chain.startsWith('bitcoin:');
const isSolana = (asset: AssetInfo) => asset.chain.startsWith('solana:');
/** The SPL mint of a Solana asset; undefined for SOL. */
const mintOf = (asset: AssetInfo) => (isNative(asset) ? undefined : asset.token.address);
const chainKeyOf = (assetId: string) => assetId.split(':')[0]!;
const symbolOf = (assetId: string) => (assetId.split(':')[1] ?? '').toUpperCase();
const signed = (n: bigint) => (n > 0n ? `+${n}` : n.toString());

function evmChain(key: string, c: DevnetChain) {
  return { id: c.chain_id!, name: key, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [c.rpc_url] } } };
}

/** One side of the swap as the user sees it: the asset, the user's address on its chain, its balance there. */
interface Side {
  asset: AssetInfo;
  owner: string;
  /** The user's wallet when the asset is on the Litecoin chain. */
  litecoin: LitecoinWallet | undefined;
  /** The user's account when the asset is on the Solana chain. */
  solana?: SolanaWallet;
  balance: () => Promise<bigint>;
}

/** The client's view of the devnet: the API, the test user's EVM account and the chains' clients. */
class Client {
  readonly api: Api;
  readonly user: PrivateKeyAccount;
  private readonly clients = new Map<string, PublicClient>();

  constructor(readonly devnet: Devnet) {
    this.api = new Api(devnet);
    this.user = privateKeyToAccount(devnet.accounts.user.private_key as Hex);
  }

  evmClient(asset: AssetInfo): PublicClient {
    const key = chainKeyOf(asset.id);
    let client = this.clients.get(key);
    if (!client) {
      const c = this.devnet.chains[key]!;
      client = createPublicClient({ chain: evmChain(key, c), transport: http(c.rpc_url), pollingInterval: 100 });
      this.clients.set(key, client);
    }
    return client;
  }

  /** The side of `asset`; a SwapError when the devnet does not run its chain. */
  side(asset: AssetInfo, flag: string): Side {
    const key = chainKeyOf(asset.id);
    const chain = this.devnet.chains[key];
    if (isBitcoinFamily(asset)) {
      const wallet = litecoinWallet(key, chain, this.devnet.accounts.user, `${flag} ${asset.id}`);
      return { asset, owner: wallet.address, litecoin: wallet, balance: () => litecoinBalance(wallet) };
    }
    if (isSolana(asset)) {
      const wallet = solanaWallet(key, chain, this.devnet.accounts.user, `${flag} ${asset.id}`);
      return { asset, owner: wallet.address, litecoin: undefined, solana: wallet, balance: () => solanaBalance(wallet, mintOf(asset)) };
    }
    if (!chain || chain.chain_id === undefined) {
      throw new SwapError(`${flag} ${asset.id}: its chain ${key} is not a chain of this devnet (it has ${Object.keys(this.devnet.chains).join(', ')})`);
    }
    const client = this.evmClient(asset);
    const owner = this.user.address;
    const balance = () =>
      isNative(asset)
        ? client.getBalance({ address: owner })
        : client.readContract({ address: asset.token.address as Address, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
    return { asset, owner, litecoin: undefined, balance };
  }
}

/** Prints and returns the user's balances of both sides. */
async function showBalances(sides: Side[], label: string, print: (line: string) => void): Promise<bigint[]> {
  const owners = [...new Set(sides.map((s) => s.owner))];
  print(`Balances ${label} (${owners.join(', ')}):`);
  const balances: bigint[] = [];
  for (const side of sides) {
    const { asset } = side;
    const balance = await side.balance();
    balances.push(balance);
    print(`  ${label.padEnd(6)} ${asset.id.padEnd(24)} ${balance.toString().padStart(26)}  (${formatUnits(balance, asset.decimals)} ${symbolOf(asset.id)})`);
  }
  return balances;
}

/** Reads the order until it completes, printing each status change; a SwapError when it cannot complete. */
async function follow(api: Api, orderId: string, started: number, timeoutMs: number, pollMs: number, print: (line: string) => void): Promise<string[]> {
  const statuses: string[] = [];
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  for (;;) {
    const { status, json } = await api.call('GET', `/v2/orders/${orderId}`);
    const current = status === 200 ? (json.result as OrderView | undefined)?.status : undefined;
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
  return statuses;
}

/**
 * For a Litecoin destination: waits until the service's redeem to the user is mined (the balances
 * count confirmed coins only) and prints what the user received; returns the redeem's fee.
 */
async function settleLitecoinDestination(
  api: Api,
  orderId: string,
  wallet: LitecoinWallet,
  destinationAmount: bigint,
  deadline: number,
  pollMs: number,
  print: (line: string) => void,
): Promise<bigint> {
  const order = await api.result<OrderView>('reading the order', 'GET', `/v2/orders/${orderId}`);
  const txid = order.destination_swap?.redeem_tx_hash;
  if (!txid) throw new SwapError(`order ${orderId} is completed but shows no redeem of its Litecoin destination`);
  await waitForConfirmation(wallet, txid, deadline, pollMs);
  const { fee, toUser } = await litecoinTxCosts(wallet, txid);
  print(`  redeem (by the service, mined): ${txid}: ${toUser} litoshis to ${wallet.address}, the destination amount ${destinationAmount} less the redeem fee ${fee}`);
  return fee;
}

export async function runSwap(opts: SwapOptions): Promise<{ orderId: string; statuses: string[] }> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const pollMs = opts.pollMs ?? 500;
  if (!/^\d+$/.test(opts.amount) || BigInt(opts.amount) === 0n) {
    throw new SwapError(`--amount ${opts.amount}: must be a positive whole number of base units`);
  }
  const amount = BigInt(opts.amount);
  const client = new Client(readDevnet(opts.dataDir));
  const api = client.api;

  const assets = await api.result<AssetInfo[]>('listing the assets', 'GET', '/v2/assets');
  const assetOf = (id: string, flag: string): AssetInfo => {
    const asset = assets.find((a) => a.id === id);
    if (!asset) throw new SwapError(`${flag} ${id}: unknown asset; the service has ${assets.map((a) => a.id).join(', ')}`);
    return asset;
  };
  const from = client.side(assetOf(opts.from, '--from'), '--from');
  const to = client.side(assetOf(opts.to, '--to'), '--to');
  if (from.asset.id === to.asset.id) throw new SwapError('--from and --to are the same asset');

  const before = await showBalances([from, to], 'before', print);

  const quotes = await api.result<QuoteEntry[]>(
    'the quote',
    'GET',
    `/v2/quote?from=${encodeURIComponent(from.asset.id)}&to=${encodeURIComponent(to.asset.id)}&from_amount=${amount}`,
  );
  const quote = quotes[0];
  if (!quote) throw new SwapError(`no solver quotes ${from.asset.id} -> ${to.asset.id} for ${amount}`);
  const destinationAmount = BigInt(quote.destination.amount);
  print(`Quote: ${amount} ${from.asset.id} -> ${destinationAmount} ${to.asset.id} (solver ${quote.solver_id}, fee ${quote.fee} bips, about ${quote.estimated_time} s)`);

  const created = await api.result<CreatedOrder>('creating the order', 'POST', '/v2/orders', {
    source: { asset: from.asset.id, owner: from.owner, amount: amount.toString() },
    destination: { asset: to.asset.id, owner: to.owner, amount: destinationAmount.toString() },
    solver_id: quote.solver_id,
    nonce: randomBytes(16).toString('hex'),
  });
  const orderId = created.order_id;
  print(`Order ${orderId} created`);

  const started = Date.now();
  const notes: string[] = ['', ''];
  if (from.litecoin) {
    const { fee } = await fundLitecoinSource(from.litecoin, created, print);
    notes[0] = `  (the amount ${amount} + the funding fee ${fee})`;
  } else if (from.solana) {
    notes[0] = await initiateSolanaSource(from, created, api, started + timeoutMs, pollMs, print);
  } else {
    await initiateSource(from.asset, created, client, orderId, print);
  }

  const statuses = await follow(api, orderId, started, timeoutMs, pollMs, print);
  if (to.litecoin) {
    const fee = await settleLitecoinDestination(api, orderId, to.litecoin, destinationAmount, started + timeoutMs, pollMs, print);
    notes[1] = `  (the destination amount ${destinationAmount} - the redeem fee ${fee})`;
  }
  if (to.solana) notes[1] = await settleSolanaDestination(api, orderId, to, destinationAmount, started + timeoutMs, pollMs, print);
  if (from.solana) await settleSolanaSource(api, orderId, from.solana, started + timeoutMs, pollMs);

  const after = await showBalances([from, to], 'after', print);
  [from, to].forEach(({ asset }, i) => print(`  change ${asset.id.padEnd(24)} ${signed(after[i]! - before[i]!).padStart(26)}${notes[i]}`));
  return { orderId, statuses };
}

/** Pays the Litecoin HTLC address of the order from the user's coins. */
async function fundLitecoinSource(wallet: LitecoinWallet, created: CreatedOrder, print: (line: string) => void): Promise<{ txid: string; fee: bigint }> {
  if (!created.to || !created.amount) throw new SwapError(`order ${created.order_id}: the service returned no HTLC address and amount to pay`);
  const funding = await fundHtlc(wallet, created.to, BigInt(created.amount));
  print(`  fund: ${funding.txid} (${created.amount} litoshis to the HTLC ${created.to}, fee ${funding.fee})`);
  return funding;
}

/**
 * Initiates a Solana source: an SPL source of a gasless app is signed and sent to the relayer, which
 * pays its fee; otherwise the user signs and broadcasts `versioned_tx`, paying 5000 lamports per
 * signature. Returns the note on the source's balance change.
 */
async function initiateSolanaSource(from: Side, created: CreatedOrder, api: Api, deadline: number, pollMs: number, print: (line: string) => void): Promise<string> {
  const wallet = from.solana!;
  const orderId = created.order_id;
  if (created.versioned_tx_gasless) {
    const signature = await signedForRelayer(wallet, created.versioned_tx_gasless);
    const sent = await api.result<string>('the gasless initiate', 'PATCH', `/v2/orders/${orderId}?action=initiate`, { signature });
    print(`  initiate (gasless, relayed): ${sent} (the relayer pays the fee)`);
    return '  (the amount; the relayer paid the fee)';
  }
  if (!created.versioned_tx) throw new SwapError(`order ${orderId}: the service returned no versioned_tx for ${from.asset.id}`);
  const signature = await signAndSend(wallet, created.versioned_tx, deadline, pollMs);
  const { fee, toUser } = await solanaTxEffect(wallet, signature, undefined);
  print(`  initiate: ${signature} (fee ${fee} lamports: ${fee / LAMPORTS_PER_SIGNATURE} signature(s) at ${LAMPORTS_PER_SIGNATURE})`);
  if (isNative(from.asset)) return `  (the amount + the initiate fee ${fee}; the swap account's rent came back at the redeem)`;
  // An SPL initiate the user pays for: its fee and the rent of the accounts it creates, in SOL.
  print(`  the initiate cost the user ${-toUser} lamports of SOL: the fee ${fee} and ${-toUser - fee} of rent (the swap account's comes back at the redeem)`);
  return `  (the amount; the initiate's SOL is above)`;
}

/** For a Solana source: waits until the solver's redeem is confirmed (it returns the swap account's rent to the user). */
async function settleSolanaSource(api: Api, orderId: string, wallet: SolanaWallet, deadline: number, pollMs: number): Promise<void> {
  const order = await api.result<OrderView>('reading the order', 'GET', `/v2/orders/${orderId}`);
  const signature = order.source_swap?.redeem_tx_hash;
  if (signature) await waitForSolanaConfirmation(wallet, signature, deadline, pollMs);
}

/** For a Solana destination: waits until the service's redeem to the user is confirmed and prints what the user received. */
async function settleSolanaDestination(
  api: Api,
  orderId: string,
  to: Side,
  destinationAmount: bigint,
  deadline: number,
  pollMs: number,
  print: (line: string) => void,
): Promise<string> {
  const wallet = to.solana!;
  const order = await api.result<OrderView>('reading the order', 'GET', `/v2/orders/${orderId}`);
  const signature = order.destination_swap?.redeem_tx_hash;
  if (!signature) throw new SwapError(`order ${orderId} is completed but shows no redeem of its Solana destination`);
  await waitForSolanaConfirmation(wallet, signature, deadline, pollMs);
  const { fee, toUser } = await solanaTxEffect(wallet, signature, mintOf(to.asset));
  const unit = isNative(to.asset) ? 'lamports' : `base units of ${symbolOf(to.asset.id)}`;
  print(`  redeem (by the service): ${signature}: ${toUser} ${unit} to ${wallet.address} (the service paid its fee, ${fee} lamports)`);
  return `  (the destination amount ${destinationAmount}; the user paid no fee)`;
}

async function initiateSource(from: AssetInfo, created: CreatedOrder, client: Client, orderId: string, print: (line: string) => void): Promise<void> {
  const key = chainKeyOf(from.id);
  const chain = client.devnet.chains[key]!;
  const user = client.user;
  const publicClient = client.evmClient(from);
  const wallet = createWalletClient({ account: user, chain: evmChain(key, chain), transport: http(chain.rpc_url) });
  const send = async (what: string, tx: EvmTx): Promise<Hex> => {
    const hash = await wallet.sendTransaction({
      to: tx.to,
      data: tx.data,
      ...(tx.value && BigInt(tx.value) > 0n ? { value: BigInt(tx.value) } : {}),
      ...(tx.gas_limit ? { gas: BigInt(tx.gas_limit) } : {}),
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
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
    const txHash = await client.api.result<string>('the gasless initiate', 'PATCH', `/v2/orders/${orderId}?action=initiate`, { signature });
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
    .requiredOption('--amount <base units>', 'source amount in base units (sats for WBTC, wei for ETH, litoshis for LTC, lamports for SOL)')
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
