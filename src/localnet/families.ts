import type { Family } from '../chains/registry-schema.ts';
import { bitcoinDevnet } from './bitcoin/devnet.ts';
import { evmDevnet } from './evm/devnet.ts';
import type { FamilyDevnet } from './local-chain.ts';
import { solanaDevnet } from './solana/devnet.ts';
import { tronDevnet } from './tron/devnet.ts';

/** Each family's local chain for `hashlock dev`, where it has one: one line per family. */
const LOCAL_CHAINS: Partial<Record<Family, FamilyDevnet>> = {
  evm: evmDevnet,
  bitcoin: bitcoinDevnet,
  solana: solanaDevnet,
  tron: tronDevnet,
};

export const localChainOf = (family: Family): FamilyDevnet | undefined => LOCAL_CHAINS[family];
