/**
 * Garden-compatible Solana HTLC programs: instruction layouts and account seeds.
 *
 * - `solana:htlc` is `solana_native_swaps` (lamports escrowed in the swap account itself).
 * - `solana:htlc_spltoken` is `solana_spl_swaps` v0.4 (tokens escrowed in a per-mint vault that a
 *   program-wide identity PDA controls; a `sponsor` pays rent and, in the gasless flow, the fees).
 *
 * Both are Anchor programs: instruction data is the 8-byte discriminator sha256("global:<name>")[0..8]
 * followed by the Borsh-encoded arguments.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import {
  addEncoderSizePrefix,
  fixEncoderSize,
  getAddressEncoder,
  getBytesEncoder,
  getOptionEncoder,
  getStructEncoder,
  getU32Encoder,
  getU64Encoder,
  none,
  type Address,
} from '@solana/kit';
import type { Seed } from './pda.ts';

export type HtlcProgramKind = 'native' | 'spl';

/** Which of the two programs an asset's HTLC schema names. */
export function programKind(htlcSchema: string): HtlcProgramKind {
  if (htlcSchema === 'solana:htlc') return 'native';
  if (htlcSchema === 'solana:htlc_spltoken') return 'spl';
  throw new Error(`htlc.schema: ${htlcSchema} is not a Solana HTLC schema (solana:htlc, solana:htlc_spltoken)`);
}

/** Anchor's instruction discriminator: the first 8 bytes of sha256("global:<name>"). */
export function anchorDiscriminator(name: string): Uint8Array {
  return sha256(new TextEncoder().encode(`global:${name}`)).slice(0, 8);
}

/** 053f7b71994b940e, the same in both programs. */
export const INITIATE_DISCRIMINATOR = anchorDiscriminator('initiate');

const SWAP_ACCOUNT_SEED = new TextEncoder().encode('swap_account');

/**
 * Seeds of the account that holds one swap's state, which is also the swap id.
 * Native: `swap_account` = ["swap_account", initiator, secret_hash].
 * SPL: `swap_data` = [initiator, secret_hash].
 * Either way one initiator cannot hold two open swaps with the same secret hash.
 */
export function swapAccountSeeds(kind: HtlcProgramKind, initiator: Address, secretHash: Uint8Array): Seed[] {
  const initiatorBytes = Uint8Array.from(getAddressEncoder().encode(initiator));
  return kind === 'native' ? [SWAP_ACCOUNT_SEED, initiatorBytes, secretHash] : [initiatorBytes, secretHash];
}

/**
 * SPL program: `identity_pda`, the authority of every token vault. Its seeds are empty (the IDL of
 * solana_spl_swaps v0.4 declares `pda.seeds: []`; the program signs with `[[bump]]`).
 */
export const IDENTITY_PDA_SEEDS: readonly Seed[] = [];

/** SPL program: `token_vault`, one per mint, seeds [mint]. */
export function tokenVaultSeeds(mint: Address): Seed[] {
  return [Uint8Array.from(getAddressEncoder().encode(mint))];
}

const bytes8 = fixEncoderSize(getBytesEncoder(), 8);
const bytes32 = fixEncoderSize(getBytesEncoder(), 32);

const nativeInitiateEncoder = getStructEncoder([
  ['discriminator', bytes8],
  ['amountLamports', getU64Encoder()],
  ['expiresInSlots', getU64Encoder()],
  ['redeemer', getAddressEncoder()],
  ['secretHash', bytes32],
]);

const splInitiateEncoder = getStructEncoder([
  ['discriminator', bytes8],
  ['expiresInSlots', getU64Encoder()],
  ['redeemer', getAddressEncoder()],
  ['secretHash', bytes32],
  ['swapAmount', getU64Encoder()],
  // Borsh Option<Vec<u8>>: 0 for None, else 1, u32 length, bytes.
  ['destinationData', getOptionEncoder(addEncoderSizePrefix(getBytesEncoder(), getU32Encoder()))],
]);

export interface InitiateArgs {
  amount: bigint;
  expiresInSlots: bigint;
  redeemer: Address;
  secretHash: Uint8Array;
}

/** Native `initiate(amount_lamports u64, expires_in_slots u64, redeemer Pubkey, secret_hash [u8;32])`. */
export function encodeNativeInitiate(args: InitiateArgs): Uint8Array {
  return Uint8Array.from(
    nativeInitiateEncoder.encode({
      discriminator: INITIATE_DISCRIMINATOR,
      amountLamports: args.amount,
      expiresInSlots: args.expiresInSlots,
      redeemer: args.redeemer,
      secretHash: args.secretHash,
    }),
  );
}

/**
 * SPL `initiate(expires_in_slots u64, redeemer Pubkey, secret_hash [u8;32], swap_amount u64,
 * destination_data Option<bytes>)`, destination data always None.
 */
export function encodeSplInitiate(args: InitiateArgs): Uint8Array {
  return Uint8Array.from(
    splInitiateEncoder.encode({
      discriminator: INITIATE_DISCRIMINATOR,
      expiresInSlots: args.expiresInSlots,
      redeemer: args.redeemer,
      secretHash: args.secretHash,
      swapAmount: args.amount,
      destinationData: none(),
    }),
  );
}
