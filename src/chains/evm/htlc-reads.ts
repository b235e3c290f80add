import type { Address, Hex, PublicClient } from 'viem';
import { htlcAbi } from '../solidity-htlc/htlc-abi.ts';

/** An HTLC order as the contract stores it; `initiator` is the zero address when there is none. */
export interface OnChainHtlcOrder {
  initiator: Address;
  redeemer: Address;
  initiatedAt: bigint;
  timelock: bigint;
  amount: bigint;
  fulfilledAt: bigint;
}

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * `orders(orderID)` of an HTLC or NativeHTLC, read at a block (default latest), or over the node's
 * pending state: what the transactions it holds unmined will have done.
 */
export async function readHtlcOrder(client: PublicClient, htlc: Address, orderId: Hex, at?: bigint | 'pending'): Promise<OnChainHtlcOrder> {
  const [initiator, redeemer, initiatedAt, timelock, amount, fulfilledAt] = await client.readContract({
    address: htlc,
    abi: htlcAbi,
    functionName: 'orders',
    args: [orderId],
    ...(at === 'pending' ? { blockTag: 'pending' as const } : at !== undefined ? { blockNumber: at } : {}),
  });
  return { initiator, redeemer, initiatedAt, timelock, amount, fulfilledAt };
}
