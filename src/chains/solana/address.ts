import { base58 } from '@scure/base';
import { address, type Address } from '@solana/kit';

/** A Solana address (public key or program-derived address) is 32 bytes, written base58. */
export const ADDRESS_BYTES = 32;

/**
 * The canonical base58 form of `value` when it decodes to exactly 32 bytes, else undefined.
 * No curve check: program-derived addresses (multisig vaults, for example) are valid owners too.
 */
export function normalizeSolanaAddress(value: string): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    return undefined;
  }
  return bytes.length === ADDRESS_BYTES ? base58.encode(bytes) : undefined;
}

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
