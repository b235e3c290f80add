// The Litecoin side of `hashlock swap`: the test user's wallet on the devnet's regtest node (its EVM
// private key used as a key-path taproot key), its confirmed balance, funding an HTLC from its coins,
// and what a transaction paid in fees, read back from the node.
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { satoshis } from './chain-data.ts';
import { BitcoinRpcError, bitcoinRpcFor, type BitcoinRpc } from './rpc.ts';
import { addressScript, buildWalletTx, walletAddress, type Utxo } from './wallet-tx.ts';
import { scanUtxoSet } from './utxo-scan.ts';
import { SwapError, type SwapWallet, type SwapWalletInput } from '../swap-wallet.ts';

/** The network of the devnet's Litecoin chain (`hashlock dev` runs Litecoin Core in regtest). */
export const LITECOIN_NETWORK = 'litecoin_regtest';

/** devnet.json's entry for the Litecoin chain. */
export interface DevnetLitecoinChain {
  rpc_url?: string;
  rpc_cookie_file?: string;
}

/** devnet.json's test user, with its Litecoin address when the devnet runs litecoind. */
export interface DevnetLitecoinUser {
  private_key: string;
  litecoin?: { address: string; x_only: string };
}

export interface LitecoinWallet {
  chainKey: string;
  /** The user's key-path P2TR address. */
  address: string;
  privateKey: Uint8Array;
  rpcUrl: string;
  rpc: BitcoinRpc;
}

interface RawTx {
  txid: string;
  confirmations?: number;
  vin: Array<{ txid?: string; vout?: number }>;
  vout: Array<{ value: number; n: number; scriptPubKey?: { hex?: string } }>;
}

/**
 * The user's Litecoin wallet on the devnet's chain `chainKey`. A SwapError when devnet.json has no
 * such chain (litecoind was not on the PATH of `hashlock dev`) or when its address is not the key's.
 */
export function litecoinWallet(chainKey: string, chain: DevnetLitecoinChain | undefined, user: DevnetLitecoinUser, flag: string): LitecoinWallet {
  if (!chain?.rpc_url || !user.litecoin?.address) {
    throw new SwapError(
      `${flag}: litecoind is not running in the devnet (devnet.json has no ${chainKey}): install Litecoin Core (apt-get install litecoind) and restart npm start`,
    );
  }
  const privateKey = hexToBytes(user.private_key as Hex);
  const address = walletAddress(privateKey, LITECOIN_NETWORK);
  if (address !== user.litecoin.address) {
    throw new SwapError(`devnet.json: the user's Litecoin address ${user.litecoin.address} is not its key's (${address}): run npm start again`);
  }
  const rpc = bitcoinRpcFor({ url: chain.rpc_url, cookieFile: chain.rpc_cookie_file });
  return { chainKey, address, privateKey, rpcUrl: chain.rpc_url, rpc };
}

/** Runs a node request, turning its failures into one-line SwapErrors. */
async function guarded<T>(wallet: LitecoinWallet, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (err instanceof BitcoinRpcError) throw new SwapError(`litecoind ${err.message}`);
    throw new SwapError(`cannot reach litecoind at ${wallet.rpcUrl} (${(err as Error).message}): is npm start running?`);
  }
}

const call = <T>(wallet: LitecoinWallet, method: string, params: unknown[]): Promise<T> => guarded(wallet, () => wallet.rpc.call<T>(method, params));

const scan = (wallet: LitecoinWallet) => guarded(wallet, () => scanUtxoSet(wallet.rpc, [wallet.address]));

/** The user's confirmed balance in litoshis: its outputs in the node's UTXO set. */
export async function litecoinBalance(wallet: LitecoinWallet): Promise<bigint> {
  return (await scan(wallet)).reduce((sum, u) => sum + u.value, 0n);
}

/** The user's confirmed outputs that no transaction in the mempool spends yet. */
async function spendableUtxos(wallet: LitecoinWallet): Promise<Utxo[]> {
  const utxos: Utxo[] = [];
  for (const u of await scan(wallet)) {
    // gettxout with the mempool answers null for an output a pending transaction spends (an earlier
    // swap's funding that is not mined yet); spending it again would be refused as a conflict.
    const unspent = await call<unknown>(wallet, 'gettxout', [u.txid, u.vout, true]);
    if (unspent !== null) utxos.push({ txid: u.txid, vout: u.vout, value: u.value });
  }
  return utxos;
}

/** Per wallet address, the funding in progress in this process: the next one picks its coins after it is sent. */
const fundings = new Map<string, Promise<unknown>>();

/**
 * Pays exactly `amount` litoshis from the user's coins to `to` (the HTLC); returns the txid and fee.
 * Fundings from one wallet run one after another, so two never pick the same output (the second sees
 * the first's inputs spent in the mempool).
 */
export function fundHtlc(wallet: LitecoinWallet, to: string, amount: bigint): Promise<{ txid: string; fee: bigint }> {
  const previous = fundings.get(wallet.address) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => fundOnce(wallet, to, amount));
  fundings.set(wallet.address, next);
  void next.finally(() => {
    if (fundings.get(wallet.address) === next) fundings.delete(wallet.address);
  }).catch(() => undefined);
  return next;
}

async function fundOnce(wallet: LitecoinWallet, to: string, amount: bigint): Promise<{ txid: string; fee: bigint }> {
  const utxos = await spendableUtxos(wallet);
  if (utxos.length === 0) throw new SwapError(`the user's Litecoin wallet ${wallet.address} has no confirmed coins to spend: wait for the next block`);
  const feeRate = await guarded(wallet, () => wallet.rpc.feeRate());
  let tx: ReturnType<typeof buildWalletTx>;
  try {
    tx = buildWalletTx({ privateKey: wallet.privateKey, network: LITECOIN_NETWORK, utxos, to: { address: to, amount }, feeRate, changeAddress: wallet.address });
  } catch (err) {
    throw new SwapError(`cannot fund the HTLC ${to} from ${wallet.address}: ${(err as Error).message}`);
  }
  await guarded(wallet, () => wallet.rpc.sendRawTransaction(tx.hex));
  return { txid: tx.txid, fee: tx.fee };
}

const rawTx = (wallet: LitecoinWallet, txid: string): Promise<RawTx> => call<RawTx>(wallet, 'getrawtransaction', [txid, true]);

/** Waits until transaction `txid` is in a block; a SwapError after `deadline` (epoch ms). */
export async function waitForConfirmation(wallet: LitecoinWallet, txid: string, deadline: number, pollMs: number): Promise<void> {
  while (((await rawTx(wallet, txid)).confirmations ?? 0) < 1) {
    if (Date.now() > deadline) throw new SwapError(`Litecoin transaction ${txid} was not mined in time`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** What transaction `txid` paid as fee (its inputs minus its outputs) and paid to the user, in litoshis. */
export async function litecoinTxCosts(wallet: LitecoinWallet, txid: string): Promise<{ fee: bigint; toUser: bigint }> {
  const tx = await rawTx(wallet, txid);
  let inputs = 0n;
  for (const input of tx.vin) {
    if (input.txid === undefined || input.vout === undefined) throw new SwapError(`Litecoin transaction ${txid} has an input without an outpoint`);
    const spent = (await rawTx(wallet, input.txid)).vout.find((o) => o.n === input.vout);
    if (!spent) throw new SwapError(`Litecoin transaction ${txid} spends ${input.txid}:${input.vout}, which the node does not show`);
    inputs += satoshis(spent.value);
  }
  const userScript = bytesToHex(addressScript(wallet.address, LITECOIN_NETWORK)).slice(2);
  const outputs = tx.vout.reduce((sum, o) => sum + satoshis(o.value), 0n);
  const toUser = tx.vout.filter((o) => o.scriptPubKey?.hex === userScript).reduce((sum, o) => sum + satoshis(o.value), 0n);
  return { fee: inputs - outputs, toUser };
}

/**
 * The user's side of a swap on a Bitcoin-family chain of the devnet: the source is funded by a payment
 * from the user's coins to the HTLC address; the destination is redeemed to the user by the service,
 * and its fee comes out of what the user gets.
 */
export function bitcoinSwapWallet(input: SwapWalletInput): SwapWallet {
  const wallet = litecoinWallet(input.chainKey, input.chain, input.user, `${input.flag} ${input.asset.id}`);
  return {
    owner: wallet.address,
    balance: () => litecoinBalance(wallet),
    async initiate(created, step) {
      if (!created.to || !created.amount) throw new SwapError(`order ${created.order_id}: the service returned no HTLC address and amount to pay`);
      const funding = await fundHtlc(wallet, created.to, BigInt(created.amount));
      step.print(`  fund: ${funding.txid} (${created.amount} litoshis to the HTLC ${created.to}, fee ${funding.fee})`);
      return `  (the amount ${created.amount} + the funding fee ${funding.fee})`;
    },
    async settle(order, side, destinationAmount, step) {
      if (side === 'source') return '';
      // The balances count confirmed coins only: wait for the service's redeem to be mined.
      const txid = order.destination_swap?.redeem_tx_hash;
      if (!txid) throw new SwapError('the order is completed but shows no redeem of its Litecoin destination');
      await waitForConfirmation(wallet, txid, step.deadline, step.pollMs);
      const { fee, toUser } = await litecoinTxCosts(wallet, txid);
      step.print(`  redeem (by the service, mined): ${txid}: ${toUser} litoshis to ${wallet.address}, the destination amount ${destinationAmount} less the redeem fee ${fee}`);
      return `  (the destination amount ${destinationAmount} - the redeem fee ${fee})`;
    },
  };
}
