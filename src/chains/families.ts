import { isXOnlyPublicKey } from './bitcoin/address.ts';
import { bitcoinHtlc } from './bitcoin/index.ts';
import { evmHtlc } from './evm/index.ts';
import type { FamilyHtlc } from './family.ts';
import type { Chain } from './registry.ts';
import type { Family } from './registry-schema.ts';
import { solanaHtlc } from './solana/index.ts';
import { starknetHtlc } from './starknet/index.ts';
import { tronHtlc } from './tron/index.ts';

/** The HTLC code of each chain family that has it (lightning, spark and hypercore do not yet). */
export const FAMILY_HTLCS: Partial<Record<Family, FamilyHtlc>> = {
  evm: evmHtlc,
  bitcoin: bitcoinHtlc,
  solana: solanaHtlc,
  starknet: starknetHtlc,
  tron: tronHtlc,
};

export function familyHtlc(chain: Chain): FamilyHtlc | undefined {
  return FAMILY_HTLCS[chain.family];
}

/**
 * Bitcoin-family HTLC scripts name x-only public keys rather than addresses: the party's key there
 * is its identity in the HTLC. Other families name addresses.
 */
export const usesScriptKeys = (chain: Chain): boolean => chain.family === 'bitcoin';

/** The canonical form of a solver's identity on `chain` (address, or x-only key), or undefined. */
export function normalizeParty(chain: Chain, value: string): string | undefined {
  if (usesScriptKeys(chain)) return isXOnlyPublicKey(value) ? value.toLowerCase() : undefined;
  return familyHtlc(chain)?.normalizeAddress(chain, value);
}
