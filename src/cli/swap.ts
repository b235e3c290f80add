// `hashlock swap`: a client of the running `npm start` devnet that performs one swap end to end.
// It reads <data dir>/devnet.json for the API, the local chains and the test user's key, prices the
// swap, creates an order (the service holds the secret), initiates the source (gasless with a
// signature for an ERC-20, its own transaction for ether, a payment to the HTLC address for
// Litecoin, a signed versioned_tx for SOL or versioned_tx_gasless for an SPL token) and follows the
// order to completion through its event stream.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatUnits } from 'viem';
import { EventSource } from 'eventsource';
import { SwapError, type CreatedOrder, type OrderView, type SwapApi, type SwapAsset, type SwapWallet, type SwapWalletInput } from '../chains/swap-wallet.ts';

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

/** devnet.json as `hashlock dev` writes it: the API, each chain's entry, the test user. */
interface Devnet {
  api_url: string;
  app_key: string;
  chains: Record<string, NonNullable<SwapWalletInput['chain']>>;
  accounts: { user: SwapWalletInput['user'] };
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

class Api implements SwapApi {
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

  async result<T>(what: string, method: string, path: string, body?: unknown): Promise<T> {
    const { status, json } = await this.call(method, path, body);
    if (status >= 400 || json.status === 'Error' || json.error !== undefined) {
      throw new SwapError(`${what} failed (HTTP ${status}): ${typeof json.error === 'string' ? json.error : JSON.stringify(json)}`);
    }
    return json.result as T;
  }
}

const chainKeyOf = (assetId: string) => assetId.split(':')[0]!;
const symbolOf = (assetId: string) => (assetId.split(':')[1] ?? '').toUpperCase();
const signed = (n: bigint) => (n > 0n ? `+${n}` : n.toString());

/** One side of the swap as the user sees it: the asset and the user's wallet on its chain (its family's). */
interface Side {
  asset: SwapAsset;
  wallet: SwapWallet;
}

/** The side of `asset`: the user's wallet its family opens; a SwapError when no family of the devnet serves it. */
async function sideOf(devnet: Devnet, asset: SwapAsset, flag: string): Promise<Side> {
  const key = chainKeyOf(asset.id);
  // The chain families load only when a swap runs: the other commands of `hashlock` start without them.
  const { adapterOfChainId } = await import('../chains/adapters.ts');
  const open = adapterOfChainId(asset.chain)?.swapWallet;
  if (!open) throw new SwapError(`${flag} ${asset.id}: hashlock swap cannot act on ${asset.chain} chains`);
  return { asset, wallet: open({ chainKey: key, chain: devnet.chains[key], user: devnet.accounts.user, asset, flag }) };
}

/** Prints and returns the user's balances of both sides. */
async function showBalances(sides: Side[], label: string, print: (line: string) => void): Promise<bigint[]> {
  const owners = [...new Set(sides.map((s) => s.wallet.owner))];
  print(`Balances ${label} (${owners.join(', ')}):`);
  const balances: bigint[] = [];
  for (const { asset, wallet } of sides) {
    const balance = await wallet.balance();
    balances.push(balance);
    print(`  ${label.padEnd(6)} ${asset.id.padEnd(24)} ${balance.toString().padStart(26)}  (${formatUnits(balance, asset.decimals)} ${symbolOf(asset.id)})`);
  }
  return balances;
}

/**
 * Follows the order through its event stream (`GET /v2/orders/{id}/events`: its history, then each
 * change as it commits), printing each status change, until it completes; a SwapError when it cannot
 * complete or the time runs out. A dropped stream is reopened after the last event seen, so no change
 * is missed or printed twice. Answers the statuses and the order as the completing event carried it.
 */
async function follow(devnet: Devnet, orderId: string, started: number, timeoutMs: number, print: (line: string) => void): Promise<{ statuses: string[]; order: OrderView }> {
  const statuses: string[] = [];
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  const stream = new EventSource(`${devnet.api_url}/v2/orders/${orderId}/events`, {
    fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, 'service-app-id': devnet.app_key } }),
  });
  try {
    const order = await new Promise<OrderView>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new SwapError(`order ${orderId} did not complete within ${timeoutMs / 1000} s (statuses: ${statuses.join(' → ') || 'none seen'})`)),
        Math.max(0, started + timeoutMs - Date.now()),
      );
      const fail = (err: SwapError) => {
        clearTimeout(timer);
        reject(err);
      };
      stream.onmessage = (message) => {
        const event = JSON.parse(String(message.data)) as { status?: string; order?: OrderView };
        const current = event.status;
        if (!current) return;
        if (statuses.at(-1) !== current) {
          statuses.push(current);
          print(`  [${elapsed().padStart(6)} s] ${current}`);
        }
        if (current === 'completed') {
          clearTimeout(timer);
          resolve(event.order ?? {});
        } else if (FAILED.has(current)) {
          fail(new SwapError(`order ${orderId} did not complete: it is ${current} after ${elapsed()} s (statuses: ${statuses.join(' → ')})`));
        }
      };
      // The stream reconnects by itself after a network error; a refusal (an HTTP error) ends it.
      stream.onerror = (error) => {
        if (stream.readyState === EventSource.CLOSED) {
          fail(new SwapError(`the order's event stream was refused (${error.code ?? ''} ${error.message ?? ''}): is npm start running?`));
        }
      };
    });
    print(`Completed in ${elapsed()} s: ${statuses.join(' → ')}`);
    return { statuses, order };
  } finally {
    stream.close();
  }
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

  const assets = await api.result<SwapAsset[]>('listing the assets', 'GET', '/v2/assets');
  const assetOf = (id: string, flag: string): SwapAsset => {
    const asset = assets.find((a) => a.id === id);
    if (!asset) throw new SwapError(`${flag} ${id}: unknown asset; the service has ${assets.map((a) => a.id).join(', ')}`);
    return asset;
  };
  const from = await sideOf(devnet, assetOf(opts.from, '--from'), '--from');
  const to = await sideOf(devnet, assetOf(opts.to, '--to'), '--to');
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
    source: { asset: from.asset.id, owner: from.wallet.owner, amount: amount.toString() },
    destination: { asset: to.asset.id, owner: to.wallet.owner, amount: destinationAmount.toString() },
    solver_id: quote.solver_id,
    nonce: randomBytes(16).toString('hex'),
  });
  const orderId = created.order_id;
  print(`Order ${orderId} created`);

  const started = Date.now();
  const step = { api, deadline: started + timeoutMs, pollMs, print };
  const notes: string[] = [await from.wallet.initiate(created, step), ''];
  const { statuses, order } = await follow(devnet, orderId, started, timeoutMs, print);
  notes[1] = (await to.wallet.settle?.(order, 'destination', destinationAmount, step)) ?? '';
  await from.wallet.settle?.(order, 'source', destinationAmount, step);

  const after = await showBalances([from, to], 'after', print);
  [from, to].forEach(({ asset }, i) => print(`  change ${asset.id.padEnd(24)} ${signed(after[i]! - before[i]!).padStart(26)}${notes[i]}`));
  return { orderId, statuses };
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
