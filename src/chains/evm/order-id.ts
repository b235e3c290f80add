import { encodeAbiParameters, sha256, type Address, type Hex } from 'viem';

export interface EvmOrderTerms {
  chainId: bigint;
  secretHash: Hex;
  initiator: Address;
  redeemer: Address;
  timelock: bigint;
  amount: bigint;
  htlc: Address;
}

/**
 * The HTLC contract's order id:
 * sha256(abi.encode(block.chainid, secretHash, initiator, redeemer, timelock, amount, address(this))).
 */
export function evmOrderId(t: EvmOrderTerms): Hex {
  return sha256(
    encodeAbiParameters(
      [
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'address' },
      ],
      [t.chainId, t.secretHash, t.initiator, t.redeemer, t.timelock, t.amount, t.htlc],
    ),
  );
}
