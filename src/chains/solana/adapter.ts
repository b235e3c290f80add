import { solanaSwapWallet } from './swap-wallet.ts';
import type { ChainAdapter } from '../adapter.ts';
import { shownAmount, transactionStep } from '../aggregator-steps.ts';
import { SOLANA_ACTION_BODIES } from './action-bodies.ts';
import { exactly } from '../family.ts';
import { DEADLINE_SECONDS } from '../../orders/limits.ts';
import { normalizeSolanaAddress, normalizeSolanaSignature } from './address.ts';
import { solanaHtlc } from './index.ts';
import { solanaAddressOfKey } from './keys.ts';
import { signSolanaAddressProof, verifySolanaAddressProof } from './address-proof.ts';
import { RecentBlockhash } from './rpc.ts';
import { connectSolanaChain } from './runtime.ts';

/** Solana: the HTLC programs (native SOL and SPL), a program-log watcher, and per-account transaction senders. */
export const solanaAdapter: ChainAdapter = {
  htlc: solanaHtlc,
  normalizeParty: (chain, value) => solanaHtlc.normalizeAddress(chain, value),
  // base58 is case-sensitive: only the exact address matches.
  partyMatchKey: (_chain, value) => exactly(normalizeSolanaAddress(value)),
  txHashMatchKey: normalizeSolanaSignature,
  partyDescription: 'a valid solana address',
  sourceDeadlineSeconds: DEADLINE_SECONDS,
  quoteInitiate: (_chain, data) => ({ type: 'solana', versioned_tx: data.versioned_tx }),
  initiateExpires: true,
  // The user signs and sends the versioned transaction itself (a fresh blockhash at each read).
  aggregator: {
    vmType: 'svm',
    fundingSteps: (asset, amount, data) =>
      data.versioned_tx
        ? [transactionStep(asset, 'initiate', `Lock ${asset.symbol.toUpperCase()}`, `Sign and send the transaction: it locks ${shownAmount(asset, amount)} in the HTLC.`, { versioned_tx: data.versioned_tx })]
        : [],
  },
  servicePays: () => true,
  actionBodies: SOLANA_ACTION_BODIES,
  signingAccess(rpcUrl) {
    const blockhash = new RecentBlockhash(rpcUrl);
    return async () => ({ recentBlockhash: await blockhash.get() });
  },
  verifyAddressProof: async (address, message, signature) => verifySolanaAddressProof(address, message, signature),
  signAddressProof: async (privateKey, message) => signSolanaAddressProof(privateKey, message),
  partyOfKey: (_chain, privateKey) => solanaAddressOfKey(privateKey),
  swapWallet: solanaSwapWallet,
  connect: connectSolanaChain,
  deployer: async () => (await import('./deploy.ts')).solanaDeployer,
  preflight: async () => (await import('./preflight.ts')).solanaPreflight,
};
