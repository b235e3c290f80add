import { bitcoinSwapWallet } from './swap-wallet.ts';
import { schnorr } from '@noble/curves/secp256k1.js';
import { hexToBytes } from '@noble/curves/utils.js';
import { BITCOIN_SOURCE_DEADLINE_SECONDS } from '../../orders/limits.ts';
import type { ChainAdapter } from '../adapter.ts';
import { hexHashKey } from '../family.ts';
import { bitcoinAddressMatchKey, isXOnlyPublicKey, xOnlyPublicKeyOf } from './address.ts';
import { BITCOIN_ACTION_BODIES } from './action-bodies.ts';
import { signBitcoinAddressProof, verifyBitcoinAddressProof } from './address-proof.ts';
import { bitcoinHtlc } from './index.ts';
import { connectBitcoinChain } from './runtime.ts';
import { walletAddress } from './wallet-tx.ts';

/**
 * Bitcoin-family chains (one implementation, per-network parameters): the taproot HTLC, a block and
 * mempool watcher, the solver's key-path wallet, and transactions written signed before broadcast.
 */
export const bitcoinAdapter: ChainAdapter = {
  htlc: bitcoinHtlc,
  // The scripts name x-only keys: the solver's is its address entry, the client's its delegate.
  scriptKeys: {
    parseDelegate: (value) => (isXOnlyPublicKey(value) ? value.toLowerCase() : undefined),
    delegateDescription: 'an x-only public key (64 hex characters)',
    newKey: () => {
      const privateKey = schnorr.utils.randomSecretKey();
      return { privateKey, party: xOnlyPublicKeyOf(privateKey) };
    },
    partyOf: xOnlyPublicKeyOf,
  },
  normalizeParty: (_chain, value) => (isXOnlyPublicKey(value) ? value.toLowerCase() : undefined),
  // A swap row holds the client's address in its role, and the script keys.
  partyMatchKey: (chain, value) => (isXOnlyPublicKey(value) ? { key: value, exact: false } : bitcoinAddressMatchKey(chain.network, value)),
  txHashMatchKey: hexHashKey(/^[0-9a-fA-F]{64}$/),
  partyDescription: 'an x-only public key (64 hex characters)',
  // Blocks are minutes apart: a client gets longer to fund the HTLC address.
  sourceDeadlineSeconds: BITCOIN_SOURCE_DEADLINE_SECONDS,
  quoteInitiate: (_chain, data) => ({ type: 'bitcoin', to: data.to, amount: data.amount }),
  // A redeem or refund pays its fee out of the HTLC; an instant refund's fee input is the solver's.
  servicePays: (action) => action === 'instant-refund',
  servesInstantRefundHash: true,
  actionBodies: BITCOIN_ACTION_BODIES,
  verifyAddressProof: async (address, message, signature) => verifyBitcoinAddressProof(address, message, signature),
  signAddressProof: async (privateKey, message) => signBitcoinAddressProof(privateKey, message),
  partyOfKey: (_chain, privateKey) => xOnlyPublicKeyOf(hexToBytes(privateKey.slice(2))),
  walletOfKey: (chain, privateKey) => walletAddress(hexToBytes(privateKey.slice(2)), chain.network),
  swapWallet: bitcoinSwapWallet,
  preflight: async () => (await import('./preflight.ts')).bitcoinPreflight,
  connect: connectBitcoinChain,
};
