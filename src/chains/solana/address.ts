import { base58 } from '@scure/base';
import { address, type Address } from '@solana/kit';

/** A Solana address (public key or program-derived address) is 32 bytes, written base58. */
export const ADDRESS_BYTES = 32;
const SIGNATURE_BYTES = 64;

/** The canonical base58 form of `value` when it decodes to exactly `length` bytes, else undefined. */
function canonicalBase58(value: string, length: number): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    return undefined;
  }
  return bytes.length === length ? base58.encode(bytes) : undefined;
}

/**
 * The canonical base58 form of `value` when it decodes to exactly 32 bytes, else undefined.
 * No curve check: program-derived addresses (multisig vaults, for example) are valid owners too.
 */
export const normalizeSolanaAddress = (value: string): string | undefined => canonicalBase58(value, ADDRESS_BYTES);

/** A transaction signature (the transaction's id) in canonical base58, or undefined when `value` is not 64 bytes of base58. */
export const normalizeSolanaSignature = (value: string): string | undefined => canonicalBase58(value, SIGNATURE_BYTES);

/** `value` as a kit Address; throws an Error naming `field` when it is not a Solana address. */
export function solanaAddress(value: string, field: string): Address {
  const normalized = normalizeSolanaAddress(value);
  if (normalized === undefined) throw new Error(`${field}: ${JSON.stringify(value)} is not a Solana address`);
  return address(normalized);
}

/** A secret hash (64 hex characters, no 0x) as its 32 bytes; throws an Error otherwise. */
export function secretHashBytes(secretHash: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(secretHash)) {
    throw new Error(`secretHash: must be 64 hex characters, got ${JSON.stringify(secretHash)}`);
  }
  return Uint8Array.from(Buffer.from(secretHash, 'hex'));
}
