/**
 * Decoders of the two programs' `SwapAccount` (Anchor account: 8-byte discriminator, then Borsh).
 * A watcher reads the swap's on-chain terms from here to compare them with an order's.
 */
import {
  fixDecoderSize,
  getAddressDecoder,
  getBytesDecoder,
  getStructDecoder,
  getU64Decoder,
  getU8Decoder,
  type Address,
} from '@solana/kit';
import { SWAP_ACCOUNT_DISCRIMINATOR } from './program.ts';

export interface NativeSwapAccount {
  amountLamports: bigint;
  expirySlot: bigint;
  initiator: Address;
  redeemer: Address;
  secretHash: Uint8Array;
}

export interface SplSwapAccount {
  expirySlot: bigint;
  initiator: Address;
  redeemer: Address;
  secretHash: Uint8Array;
  swapAmount: bigint;
  identityPdaBump: number;
  sponsor: Address;
  /**
   * The mint, which Hashlock's program records after the IDL's fields; undefined for an account of
   * Garden's program, whose SwapAccount does not hold it.
   */
  mint: Address | undefined;
}

const bytes32 = fixDecoderSize(getBytesDecoder(), 32);

const nativeDecoder = getStructDecoder([
  ['amountLamports', getU64Decoder()],
  ['expirySlot', getU64Decoder()],
  ['initiator', getAddressDecoder()],
  ['redeemer', getAddressDecoder()],
  ['secretHash', bytes32],
]);

const splDecoder = getStructDecoder([
  ['expirySlot', getU64Decoder()],
  ['initiator', getAddressDecoder()],
  ['redeemer', getAddressDecoder()],
  ['secretHash', bytes32],
  ['swapAmount', getU64Decoder()],
  ['identityPdaBump', getU8Decoder()],
  ['sponsor', getAddressDecoder()],
]);

/** Bytes of each layout including the discriminator. */
export const NATIVE_SWAP_ACCOUNT_BYTES = 8 + 8 + 8 + 32 + 32 + 32;
export const SPL_SWAP_ACCOUNT_BYTES = 8 + 8 + 32 + 32 + 32 + 8 + 1 + 32;
/** Hashlock's SPL program appends the mint. */
export const SPL_SWAP_ACCOUNT_WITH_MINT_BYTES = SPL_SWAP_ACCOUNT_BYTES + 32;

function requireSwapAccount(data: Uint8Array, minimum: number): void {
  if (data.length < minimum) throw new Error(`SwapAccount: ${data.length} bytes, expected at least ${minimum}`);
  if (!SWAP_ACCOUNT_DISCRIMINATOR.every((b, i) => data[i] === b)) {
    throw new Error('SwapAccount: the data does not start with the SwapAccount discriminator');
  }
}

export function decodeNativeSwapAccount(data: Uint8Array): NativeSwapAccount {
  requireSwapAccount(data, NATIVE_SWAP_ACCOUNT_BYTES);
  const decoded = nativeDecoder.decode(data, 8);
  return { ...decoded, secretHash: Uint8Array.from(decoded.secretHash) };
}

export function decodeSplSwapAccount(data: Uint8Array): SplSwapAccount {
  requireSwapAccount(data, SPL_SWAP_ACCOUNT_BYTES);
  const decoded = splDecoder.decode(data, 8);
  const mint = data.length >= SPL_SWAP_ACCOUNT_WITH_MINT_BYTES ? getAddressDecoder().decode(data, SPL_SWAP_ACCOUNT_BYTES) : undefined;
  return { ...decoded, secretHash: Uint8Array.from(decoded.secretHash), mint };
}
