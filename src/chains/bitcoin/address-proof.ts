import { sha256 } from '@noble/hashes/sha2.js';
import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import type { Hex } from 'viem';

/**
 * Whether `signature` (64 bytes, hex) is the BIP-340 Schnorr signature, by the x-only key `address`
 * (a Bitcoin-family party is its key), of sha256 of the UTF-8 `message`: the key the HTLC scripts name
 * signs, so proving it needs no wallet message format (BIP-322's needs a whole virtual transaction).
 */
const digest = (message: string): Uint8Array => sha256(new TextEncoder().encode(message));

export function verifyBitcoinAddressProof(address: string, message: string, signature: string): boolean {
  const hex = signature.replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{128}$/.test(hex)) return false;
  try {
    return schnorr.verify(hexToBytes(hex), digest(message), hexToBytes(address));
  } catch {
    return false;
  }
}

/** `verifyBitcoinAddressProof`'s proof: the key's BIP-340 signature of sha256 of `message`, hex. */
export const signBitcoinAddressProof = (privateKey: Hex, message: string): string => bytesToHex(schnorr.sign(digest(message), hexToBytes(privateKey.slice(2))));
