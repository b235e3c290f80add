import { ed25519 } from '@noble/curves/ed25519.js';
import { getAddressEncoder, type Address } from '@solana/kit';
import { base58 } from '@scure/base';
import type { Hex } from 'viem';
import { solanaSeedOfKey } from './keys.ts';

/** Whether `signature` (base58, 64 bytes) is the ed25519 signature of `address`'s key over the UTF-8 `message`, as a wallet's signMessage makes it. */
export function verifySolanaAddressProof(address: string, message: string, signature: string): boolean {
  try {
    const bytes = base58.decode(signature);
    if (bytes.length !== 64) return false;
    return ed25519.verify(bytes, new TextEncoder().encode(message), Uint8Array.from(getAddressEncoder().encode(address as Address)));
  } catch {
    return false;
  }
}

/** `verifySolanaAddressProof`'s proof: the key's ed25519 signature of the UTF-8 `message`, base58. */
export const signSolanaAddressProof = (privateKey: Hex, message: string): string => base58.encode(ed25519.sign(new TextEncoder().encode(message), solanaSeedOfKey(privateKey)));
