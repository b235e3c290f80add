import type { PartyMatchKey } from './adapter.ts';
import type { Asset, Chain } from './registry.ts';

/** The terms of one HTLC as an order fixes them, each value in the chain's own format. */
export interface HtlcTerms {
  /** The asset locked; `asset.chain` is the chain. */
  asset: Asset;
  /**
   * Who funds the HTLC and gets a refund. EVM: 0x address; Tron: base58 address; Bitcoin family:
   * x-only public key (64 hex); Solana: base58 address; Starknet: felt hex (0x + 64 hex).
   */
  initiator: string;
  /** Who can redeem with the secret; same formats as `initiator`. */
  redeemer: string;
  /** Relative, in the chain's units (blocks or slots). */
  timelock: bigint;
  /** Base units of the asset. */
  amount: bigint;
  /** sha256(secret): 64 lowercase hex characters, no 0x. */
  secretHash: string;
}

export interface SigningOptions {
  /** The app may use relayed (gasless) initiation. */
  gasless: boolean;
  /** The relayer's account on the chain (Solana: the fee payer and sponsor of gasless transactions). */
  relayer?: string;
  /** Solana: a recent blockhash from the chain, needed to build transactions. */
  recentBlockhash?: string;
}

/** What an order needs from a chain family to create HTLCs there. */
export interface FamilyHtlc {
  /** The canonical form of `address` on `chain`, or undefined when it is not a valid address there. */
  normalizeAddress(chain: Chain, address: string): string | undefined;
  /**
   * The swap id the API shows. EVM: the contract's order id (hex, no 0x); Bitcoin family: the
   * taproot HTLC address; other families as their module documents.
   */
  swapId(terms: HtlcTerms): string;
  /** The extra fields of the create-order response when the order's source is on this family. */
  sourceSigningData(terms: HtlcTerms, options: SigningOptions): Promise<Record<string, unknown>>;
}

/** A party that compares in any case (hex), when there is one. */
export const anyCase = (key: string | undefined): PartyMatchKey | undefined => (key === undefined ? undefined : { key, exact: false });

/** A party that compares exactly (base58), in its canonical form, when there is one. */
export const exactly = (key: string | undefined): PartyMatchKey | undefined => (key === undefined ? undefined : { key, exact: true });

/** A transaction-hash match key for hex hashes, which compare in any case: lowercased when `value` matches `pattern`. */
export const hexHashKey =
  (pattern: RegExp) =>
  (value: string): string | undefined =>
    pattern.test(value) ? value.toLowerCase() : undefined;
