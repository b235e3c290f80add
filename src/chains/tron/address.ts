import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';
import { bytesToHex, getAddress, hexToBytes, isAddress, type Address } from 'viem';

/**
 * Tron addresses: a 21-byte payload (version byte 0x41, then the same 20 bytes an EVM address has)
 * written base58check (checksum = the first 4 bytes of double sha256). The same form on mainnet,
 * Nile and Shasta. TVM contracts see the 20-byte part, so ABI encoding, EIP-712 (TIP-712) and order
 * ids use the EVM form.
 */
export const TRON_ADDRESS_VERSION = 0x41;
const PAYLOAD_BYTES = 21;
const base58check = createBase58check(sha256);
const HEX41 = /^41[0-9a-fA-F]{40}$/;

function payloadOf(value: string): Uint8Array | undefined {
  if (HEX41.test(value)) return hexToBytes(`0x${value}`);
  try {
    return base58check.decode(value);
  } catch {
    return undefined; // not base58, or a bad checksum
  }
}

/**
 * The canonical base58check form of a Tron address given as base58check or as 41-prefixed hex
 * (42 hex digits, no 0x), or undefined when the checksum, length or version byte is wrong.
 */
export function normalizeTronAddress(value: string): string | undefined {
  const payload = payloadOf(value);
  if (payload?.length !== PAYLOAD_BYTES || payload[0] !== TRON_ADDRESS_VERSION) return undefined;
  return base58check.encode(payload);
}

/** `value` as a canonical base58 Tron address; throws an Error naming `field` when it is not one. */
export function tronAddress(value: string, field: string): string {
  const normalized = normalizeTronAddress(value);
  if (normalized === undefined) throw new Error(`${field}: ${JSON.stringify(value)} is not a Tron address`);
  return normalized;
}

/** The 20-byte EVM form (0x, EIP-55 checksummed) of a Tron address; throws when it is not one. */
export function tronToEvmHex(address: string, field = 'address'): Address {
  const payload = base58check.decode(tronAddress(address, field));
  return getAddress(bytesToHex(payload.subarray(1)));
}

/** The base58 Tron address of a 20-byte EVM address (0x + 40 hex; mixed case must be EIP-55 valid). */
export function evmHexToTron(hex: string): string {
  if (!isAddress(hex)) throw new Error(`${JSON.stringify(hex)} is not a 20-byte EVM address`);
  return base58check.encode(Uint8Array.of(TRON_ADDRESS_VERSION, ...hexToBytes(hex)));
}
