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

/** Anchor's account discriminator: the first 8 bytes of sha256("account:<Name>"). */
export function anchorAccountDiscriminator(name: string): Uint8Array {
  return sha256(new TextEncoder().encode(`account:${name}`)).slice(0, 8);
}

/** Anchor's event discriminator (`emit!`): the first 8 bytes of sha256("event:<Name>"). */
export function anchorEventDiscriminator(name: string): Uint8Array {
  return sha256(new TextEncoder().encode(`event:${name}`)).slice(0, 8);
}

/** b80c569546c461e1, the same in both programs, as are refund and instant_refund. */
export const REDEEM_DISCRIMINATOR = anchorDiscriminator('redeem');
export const REFUND_DISCRIMINATOR = anchorDiscriminator('refund');
export const INSTANT_REFUND_DISCRIMINATOR = anchorDiscriminator('instant_refund');
/** 357e090e0ec569b6: `SwapAccount`, the swap state account of both programs. */
export const SWAP_ACCOUNT_DISCRIMINATOR = anchorAccountDiscriminator('SwapAccount');

export const SECRET_BYTES = 32;

/** `redeem(secret [u8; 32])`; refuses a secret that is not exactly 32 bytes (the programs do too). */
export function encodeRedeem(secret: Uint8Array): Uint8Array {
  if (secret.length !== SECRET_BYTES) throw new Error(`secret: must be ${SECRET_BYTES} bytes, got ${secret.length}`);
  const data = new Uint8Array(8 + SECRET_BYTES);
  data.set(REDEEM_DISCRIMINATOR, 0);
  data.set(secret, 8);
  return data;
}

/** `refund()`: the discriminator alone. */
export const encodeRefund = (): Uint8Array => REFUND_DISCRIMINATOR.slice();

/** `instant_refund()`: the discriminator alone. */
export const encodeInstantRefund = (): Uint8Array => INSTANT_REFUND_DISCRIMINATOR.slice();

/**
 * Program errors 6000+ (Anchor's `#[error_code]`), by the programs' IDLs. The two programs number
 * them differently; Anchor's own framework errors (100-3999) are in ANCHOR_ERRORS.
 */
export const NATIVE_SWAP_ERRORS = { InvalidInitiator: 6000, InvalidRedeemer: 6001, InvalidSecret: 6002, RefundBeforeExpiry: 6003 } as const;
export const SPL_SWAP_ERRORS = { InvalidRedeemer: 6000, InvalidSecret: 6001, InvalidSponsor: 6002, RefundBeforeExpiry: 6003 } as const;
export const ANCHOR_ERRORS = {
  InstructionMissing: 100,
  InstructionFallbackNotFound: 101,
  InstructionDidNotDeserialize: 102,
  ConstraintMut: 2000,
  ConstraintSeeds: 2006,
  ConstraintTokenMint: 2014,
  ConstraintTokenOwner: 2015,
  AccountDiscriminatorNotFound: 3001,
  AccountDiscriminatorMismatch: 3002,
  AccountDidNotDeserialize: 3003,
  AccountNotEnoughKeys: 3005,
  AccountOwnedByWrongProgram: 3007,
  InvalidProgramId: 3008,
  AccountNotSigner: 3010,
  AccountNotInitialized: 3012,
} as const;
