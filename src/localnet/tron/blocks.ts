// Tron's block identity over the EVM blocks the local chain is made of: one anvil block is one Tron block.
import type { Hex } from 'viem';

/** The parts of an anvil block the Tron view needs. */
export interface EvmBlock {
  number: number;
  hash: Hex;
  parentHash: Hex;
  /** Seconds, as the EVM keeps them. */
  timestamp: number;
  transactions: Hex[];
}

/**
 * Tron's `blockID`: the block number as 8 bytes, then the last 24 bytes of the block hash (64 hex digits,
 * no 0x). The genesis block's ends in the chain id's low 4 bytes instead: Tron's chain id is the last 4
 * bytes of the genesis blockID (java-tron's CHAINID opcode and `eth_chainId` read it there).
 */
export function blockIdOf(number: number, hash: Hex, chainId: number): string {
  const id = number.toString(16).padStart(16, '0') + hash.slice(2 + 16);
  return number === 0 ? id.slice(0, 56) + (chainId % 2 ** 32).toString(16).padStart(8, '0') : id;
}

/** TAPOS: a transaction names its reference block by the low 2 bytes of its number... */
export const refBlockBytesOf = (number: number): string => (number & 0xffff).toString(16).padStart(4, '0');

/** ...and bytes 8 to 16 of its blockID. */
export const refBlockHashOf = (blockId: string): string => blockId.slice(16, 32);

/** The newest block at or below `head` whose number ends in the 2 bytes `refBlockBytes` (4 hex digits), or undefined. */
export function refBlockNumber(refBlockBytes: string, head: number): number | undefined {
  if (!/^[0-9a-fA-F]{4}$/.test(refBlockBytes)) return undefined;
  const low = parseInt(refBlockBytes, 16);
  const number = head - ((head - low) & 0xffff);
  return number >= 0 ? number : undefined;
}

/** The witness every local block names: the local chain has no super representatives, so a fixed placeholder. */
const WITNESS = '41' + '00'.repeat(20);

/** A block as `wallet/getblock` and its kin answer it; `transactions` are left out when there are none, as Tron does. */
export function tronBlockJson(block: EvmBlock, transactions: readonly object[], chainId: number): Record<string, unknown> {
  const parentId = block.number === 0 ? '00'.repeat(32) : blockIdOf(block.number - 1, block.parentHash, chainId);
  return {
    blockID: blockIdOf(block.number, block.hash, chainId),
    block_header: {
      raw_data: { number: block.number, txTrieRoot: '00'.repeat(32), witness_address: WITNESS, parentHash: parentId, version: 31, timestamp: block.timestamp * 1000 },
      witness_signature: '',
    },
    ...(transactions.length > 0 ? { transactions } : {}),
  };
}
