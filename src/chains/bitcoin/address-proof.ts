import { sha256 } from '@noble/hashes/sha2.js';
import { schnorr } from '@noble/curves/secp256k1.js';
import { hexToBytes } from '@noble/curves/utils.js';

/**
 * Whether `signature` (64 bytes, hex) is the BIP-340 Schnorr signature, by the x-only key `address`
 * (a Bitcoin-family party is its key), of sha256 of the UTF-8 `message`: the key the HTLC scripts name
 * signs, so proving it needs no wallet message format (BIP-322's needs a whole virtual transaction).
 */
export function verifyBitcoinAddressProof(address: string, message: string, signature: string): boolean {
  const hex = signature.replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{128}$/.test(hex)) return false;
  try {
    return schnorr.verify(hexToBytes(hex), sha256(new TextEncoder().encode(message)), hexToBytes(address));
  } catch {
    return false;
  }
}
