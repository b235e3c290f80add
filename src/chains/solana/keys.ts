import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { address, createKeyPairSignerFromPrivateKeyBytes, type Address, type KeyPairSigner } from '@solana/kit';
import type { Hex } from 'viem';

/**
 * A service key (32 bytes of hex, as every family's keys are configured) used on Solana as an ed25519
 * seed: the same configured key is each role's account on every chain.
 */
export const solanaSeedOfKey = (privateKey: Hex): Uint8Array => {
  const seed = Buffer.from(privateKey.replace(/^0x/, ''), 'hex');
  if (seed.length !== 32) throw new Error('a Solana key is 32 bytes of hex');
  return Uint8Array.from(seed);
};

/** The Solana address of a service key. */
export const solanaAddressOfKey = (privateKey: Hex): Address => address(base58.encode(ed25519.getPublicKey(solanaSeedOfKey(privateKey))));

/** A signer for a service key (kit signs with WebCrypto's Ed25519). */
export const solanaSignerOfKey = (privateKey: Hex): Promise<KeyPairSigner> => createKeyPairSignerFromPrivateKeyBytes(solanaSeedOfKey(privateKey));
