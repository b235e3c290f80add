// The Solana side of `hashlock swap`: the test user's account on the devnet's solana_localnet (its
// EVM private key used as an ed25519 seed), its SOL and SPL balances, signing the order's initiate
// (broadcast by the client, or sent to the relayer when gasless), and what a transaction cost or
// paid the user, read back from the chain. The local RPC has no subscriptions: statuses are polled.
import {
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Address,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import type { Hex } from 'viem';
import { solanaBalance as readBalance } from '../chains/solana/balances.ts';
import { solanaAddressOfKey, solanaSignerOfKey } from '../chains/solana/keys.ts';
import { solanaRpc } from '../chains/solana/rpc.ts';
import { SwapError } from './swap-error.ts';

/** devnet.json's entry for the Solana chain. */
export interface DevnetSolanaChain {
  rpc_url?: string;
  mints?: Record<string, string>;
}

/** devnet.json's test user, with its Solana address when the devnet runs solana_localnet. */
export interface DevnetSolanaUser {
  private_key: string;
  solana?: { address: string };
}

export interface SolanaWallet {
  chainKey: string;
  address: Address;
  signer: Promise<KeyPairSigner>;
  rpc: ReturnType<typeof solanaRpc>;
}

/**
 * The user's Solana account on the devnet's chain `chainKey`. A SwapError when devnet.json has no such
 * chain (`hashlock dev` could not build the programs) or when its address is not the key's.
 */
export function solanaWallet(chainKey: string, chain: DevnetSolanaChain | undefined, user: DevnetSolanaUser, flag: string): SolanaWallet {
  if (!chain?.rpc_url || !user.solana?.address) {
    throw new SwapError(
      `${flag}: ${chainKey} is not running in the devnet (devnet.json has no ${chainKey}): install clang-19, which builds the Solana programs, and restart npm start`,
    );
  }
  const key = user.private_key as Hex;
  const owner = solanaAddressOfKey(key);
  if (owner !== user.solana.address) {
    throw new SwapError(`devnet.json: the user's Solana address ${user.solana.address} is not its key's (${owner}): run npm start again`);
  }
  return { chainKey, address: owner, signer: solanaSignerOfKey(key), rpc: solanaRpc(chain.rpc_url) };
}

/** The user's confirmed balance: lamports for SOL (`mint` undefined), base units of its token account for an SPL mint. */
export async function solanaBalance(wallet: SolanaWallet, mint: string | undefined): Promise<bigint> {
  try {
    return (await readBalance(wallet.rpc, wallet.address, mint)).balance;
  } catch (err) {
    throw new SwapError(`cannot read the balance on ${wallet.chainKey} (${(err as Error).message}): is npm start running?`);
  }
}

/** Signs a base64 transaction of the API in the user's slot among its signers. */
async function signAsUser(wallet: SolanaWallet, base64: string) {
  const signer = await wallet.signer;
  return partiallySignTransaction([signer.keyPair], getTransactionDecoder().decode(Buffer.from(base64, 'base64')));
}

/** The user's signature of `base64`, as the wire transaction the relayer takes. */
export async function signedForRelayer(wallet: SolanaWallet, base64: string): Promise<string> {
  return getBase64EncodedWireTransaction(await signAsUser(wallet, base64));
}

/** Signs and broadcasts `base64`, then waits until it is confirmed; returns its signature. */
export async function signAndSend(wallet: SolanaWallet, base64: string, deadline: number, pollMs: number): Promise<Signature> {
  const transaction = await signAsUser(wallet, base64);
  try {
    await wallet.rpc.sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }).send();
  } catch (err) {
    throw new SwapError(`${wallet.chainKey} refused the initiate: ${(err as Error).message}`);
  }
  const signature = getSignatureFromTransaction(transaction);
  await waitForSolanaConfirmation(wallet, signature, deadline, pollMs);
  return signature;
}

/** Polls the signature's status until it is confirmed; a SwapError when it failed or the deadline passed. */
export async function waitForSolanaConfirmation(wallet: SolanaWallet, signature: string, deadline: number, pollMs: number): Promise<void> {
  for (;;) {
    const [status] = (await wallet.rpc.getSignatureStatuses([signature as Signature]).send()).value;
    if (status?.err) throw new SwapError(`${wallet.chainKey} transaction ${signature} failed: ${JSON.stringify(status.err, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
    if (status && status.confirmationStatus !== 'processed') return;
    if (Date.now() > deadline) throw new SwapError(`${wallet.chainKey} transaction ${signature} was not confirmed in time`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * A confirmed transaction's fee and what it changed for the user: lamports for SOL (`mint`
 * undefined), base units of `mint` otherwise.
 */
export async function solanaTxEffect(wallet: SolanaWallet, signature: string, mint: string | undefined): Promise<{ fee: bigint; toUser: bigint }> {
  const tx = await wallet.rpc
    .getTransaction(signature as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 })
    .send();
  if (!tx?.meta) throw new SwapError(`${wallet.chainKey} has no transaction ${signature}`);
  const { meta } = tx;
  let toUser = 0n;
  if (!mint) {
    const keys: string[] = [...tx.transaction.message.accountKeys, ...(meta.loadedAddresses?.writable ?? []), ...(meta.loadedAddresses?.readonly ?? [])];
    const i = keys.indexOf(wallet.address);
    if (i >= 0) toUser = BigInt(meta.postBalances[i]!) - BigInt(meta.preBalances[i]!);
  } else {
    const amountOf = (balances: typeof meta.postTokenBalances) =>
      BigInt(balances?.find((b) => b.owner === wallet.address && b.mint === mint)?.uiTokenAmount.amount ?? '0');
    toUser = amountOf(meta.postTokenBalances) - amountOf(meta.preTokenBalances);
  }
  return { fee: BigInt(meta.fee), toUser };
}
