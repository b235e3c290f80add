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
import { solanaBalance as readBalance } from './balances.ts';
import { solanaAddressOfKey, solanaSignerOfKey } from './keys.ts';
import { solanaRpc } from './rpc.ts';
import { LAMPORTS_PER_SIGNATURE } from './transactions.ts';
import { isNativeAsset, relayedInitiate, SwapError, type CreatedOrder, type OrderView, type SwapStep, type SwapWallet, type SwapWalletInput } from '../swap-wallet.ts';

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

/**
 * The user's side of a swap on a Solana chain of the devnet: an SPL source of a gasless app is signed
 * and sent to the relayer, which pays its fee; otherwise the user signs and broadcasts `versioned_tx`.
 * The service redeems a destination to the user and pays its fee; the solver's redeem of a source
 * gives the swap account's rent back to the user.
 */
export function solanaSwapWallet(input: SwapWalletInput): SolanaWallet & SwapWallet {
  const wallet = solanaWallet(input.chainKey, input.chain, input.user, `${input.flag} ${input.asset.id}`);
  const { asset } = input;
  const mint = isNativeAsset(asset) ? undefined : asset.token.address;
  return {
    ...wallet,
    owner: wallet.address,
    balance: () => solanaBalance(wallet, mint),
    async initiate(created: CreatedOrder, step: SwapStep) {
      const orderId = created.order_id;
      if (created.versioned_tx_gasless) {
        const signature = await signedForRelayer(wallet, created.versioned_tx_gasless);
        const sent = await relayedInitiate(step, orderId, { signature });
        step.print(`  initiate (gasless, relayed): ${sent} (the relayer pays the fee)`);
        return '  (the amount; the relayer paid the fee)';
      }
      if (!created.versioned_tx) throw new SwapError(`order ${orderId}: the service returned no versioned_tx for ${asset.id}`);
      const signature = await signAndSend(wallet, created.versioned_tx, step.deadline, step.pollMs);
      const { fee, toUser } = await solanaTxEffect(wallet, signature, undefined);
      step.print(`  initiate: ${signature} (fee ${fee} lamports: ${fee / LAMPORTS_PER_SIGNATURE} signature(s) at ${LAMPORTS_PER_SIGNATURE})`);
      if (!mint) return `  (the amount + the initiate fee ${fee}; the swap account's rent came back at the redeem)`;
      // An SPL initiate the user pays for: its fee and the rent of the accounts it creates, in SOL.
      step.print(`  the initiate cost the user ${-toUser} lamports of SOL: the fee ${fee} and ${-toUser - fee} of rent (the swap account's comes back at the redeem)`);
      return `  (the amount; the initiate's SOL is above)`;
    },
    async settle(order: OrderView, side, destinationAmount, step) {
      if (side === 'source') {
        // The solver's redeem returns the swap account's rent to the user.
        const signature = order.source_swap?.redeem_tx_hash;
        if (signature) await waitForSolanaConfirmation(wallet, signature, step.deadline, step.pollMs);
        return '';
      }
      const signature = order.destination_swap?.redeem_tx_hash;
      if (!signature) throw new SwapError('the order is completed but shows no redeem of its Solana destination');
      await waitForSolanaConfirmation(wallet, signature, step.deadline, step.pollMs);
      const { fee, toUser } = await solanaTxEffect(wallet, signature, mint);
      const unit = mint ? `base units of ${asset.id.split(':')[1]!.toUpperCase()}` : 'lamports';
      step.print(`  redeem (by the service): ${signature}: ${toUser} ${unit} to ${wallet.address} (the service paid its fee, ${fee} lamports)`);
      return `  (the destination amount ${destinationAmount}; the user paid no fee)`;
    },
  };
}
