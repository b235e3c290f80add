/**
 * Starknet value formats: addresses, felts, u256 halves and the secret hash as the eight u32 words
 * the Cairo HTLC takes (`secret_hash: [u32; 8]`).
 */

/**
 * Contract addresses are below 2^251 - 256 (Starknet's L2_ADDRESS_UPPER_BOUND, the modulus of
 * address derivation); a felt in [2^251 - 256, 2^251) cannot be a deployed account.
 */
export const ADDRESS_BOUND = 2n ** 251n - 256n;
export const U128_MAX = 2n ** 128n - 1n;
export const U256_MAX = 2n ** 256n - 1n;

const FELT_HEX = /^0x[0-9a-fA-F]{1,64}$/;

/**
 * The canonical form of a Starknet address, 0x + 64 lowercase hex (leading zeros restored: wallets
 * and explorers often drop them), or undefined when `value` is not a 0x hex felt in (0, 2^251 - 256).
 * Zero is refused: no account lives there and the HTLC rejects it as initiator or redeemer.
 */
export function normalizeStarknetAddress(value: string): string | undefined {
  if (!FELT_HEX.test(value)) return undefined;
  const n = BigInt(value);
  if (n === 0n || n >= ADDRESS_BOUND) return undefined;
  return `0x${n.toString(16).padStart(64, '0')}`;
}

/** `value` as a canonical Starknet address; throws an Error naming `field` when it is not one. */
export function starknetAddress(value: string, field: string): string {
  const normalized = normalizeStarknetAddress(value);
  if (normalized === undefined) throw new Error(`${field}: ${JSON.stringify(value)} is not a Starknet address`);
  return normalized;
}

/** A felt as minimal 0x hex, the form of Starknet JSON-RPC and wallet APIs (`0x0` for zero). */
export function feltHex(value: bigint | number): string {
  return `0x${BigInt(value).toString(16)}`;
}

/** The Cairo `u256 { low, high }` halves of `value`; throws when it does not fit 256 bits. */
export function splitU256(value: bigint, field = 'amount'): { low: bigint; high: bigint } {
  if (value < 0n || value > U256_MAX) throw new Error(`${field}: ${value} does not fit a u256`);
  return { low: value & U128_MAX, high: value >> 128n };
}

/** Checks that `value` fits a Cairo u128; throws an Error naming `field` otherwise. */
export function checkU128(value: bigint, field: string): bigint {
  if (value < 0n || value > U128_MAX) throw new Error(`${field}: ${value} does not fit a u128`);
  return value;
}

/**
 * A secret hash (64 hex characters, no 0x) as eight big-endian u32 words, the `[u32; 8]` the HTLC
 * takes and Cairo's `compute_sha256_u32_array` returns; throws an Error otherwise.
 */
export function secretHashWords(secretHash: string): number[] {
  if (!/^[0-9a-fA-F]{64}$/.test(secretHash)) {
    throw new Error(`secretHash: must be 64 hex characters, got ${JSON.stringify(secretHash)}`);
  }
  const words: number[] = [];
  for (let i = 0; i < 64; i += 8) words.push(Number.parseInt(secretHash.slice(i, i + 8), 16));
  return words;
}
