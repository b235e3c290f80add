import type { ChainAdapter } from './adapter.ts';
import { bitcoinAdapter } from './bitcoin/adapter.ts';
import { evmAdapter } from './evm/adapter.ts';
import type { FamilyHtlc } from './family.ts';
import type { Chain } from './registry.ts';
import type { Family } from './registry-schema.ts';
import { solanaAdapter } from './solana/adapter.ts';
import { starknetAdapter } from './starknet/adapter.ts';
import { tronAdapter } from './tron/adapter.ts';

/** The adapter of each chain family that has one (lightning, spark and hypercore do not yet). */
const ADAPTERS: Partial<Record<Family, ChainAdapter>> = {
  evm: evmAdapter,
  bitcoin: bitcoinAdapter,
  solana: solanaAdapter,
  starknet: starknetAdapter,
  tron: tronAdapter,
};

export const chainAdapter = (chain: Chain): ChainAdapter | undefined => ADAPTERS[chain.family];

export const familyHtlc = (chain: Chain): FamilyHtlc | undefined => chainAdapter(chain)?.htlc;

/** HTLC parties on `chain` are script keys, not addresses (see `ChainAdapter.partiesAreKeys`). */
export const usesScriptKeys = (chain: Chain): boolean => chainAdapter(chain)?.partiesAreKeys === true;

/** The canonical form of a party (address, or x-only key) on `chain`, or undefined. */
export const normalizeParty = (chain: Chain, value: string): string | undefined => chainAdapter(chain)?.normalizeParty(chain, value);
