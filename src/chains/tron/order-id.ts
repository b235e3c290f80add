import { encodeAbiParameters, sha256, type Hex } from 'viem';
import { tronToEvmHex } from './address.ts';

/**
 * Tron's chain id as TIP-712 domains and the HTLC's order ids see it: `block.chainid & 0xffffffff` of
 * the number in the registry id (`tron:728126428`, mainnet's, already 32 bits).
 */
export function tronChainId(chainId: string): bigint {
  const match = /^tron:([0-9]+)$/.exec(chainId);
  if (!match?.[1]) throw new Error(`chain id ${JSON.stringify(chainId)} is not tron:<number>`);
  return BigInt(match[1]) & 0xffffffffn;
}

/** A secret hash (64 hex characters, no 0x) as bytes32 hex; throws an Error otherwise. */
export function secretHashHex(secretHash: string): Hex {
  if (!/^[0-9a-fA-F]{64}$/.test(secretHash)) {
    throw new Error(`secretHash: must be 64 hex characters, got ${JSON.stringify(secretHash)}`);
  }
  return `0x${secretHash.toLowerCase()}`;
}

/**
 * The order id of the EVM-compatible HTLC deployed on Tron: sha256(abi.encode(uint256 chainid,
 * bytes32 secretHash, address initiator, address redeemer, uint256 timelock, uint256 amount,
 * address htlc)), addresses in their 20-byte form. Lowercase hex without 0x.
 */
export function tronOrderId(input: {
  chainId: string;
  secretHash: string;
  initiator: string;
  redeemer: string;
  timelock: bigint;
  amount: bigint;
  htlc: string;
}): string {
  const encoded = encodeAbiParameters(
    [
      { type: 'uint256' },
      { type: 'bytes32' },
      { type: 'address' },
      { type: 'address' },
      { type: 'uint256' },
      { type: 'uint256' },
      { type: 'address' },
    ],
    [
      tronChainId(input.chainId),
      secretHashHex(input.secretHash),
      tronToEvmHex(input.initiator, 'initiator'),
      tronToEvmHex(input.redeemer, 'redeemer'),
      input.timelock,
      input.amount,
      tronToEvmHex(input.htlc, 'htlc'),
    ],
  );
  return sha256(encoded).slice(2);
}
