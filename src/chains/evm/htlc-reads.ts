import { createPublicClient, http, type Address, type Hex, type PublicClient } from 'viem';
import { htlcAbi } from './htlc-abi.ts';

/** Read clients for EVM chains by registry chain key, one per RPC URL, made on first use. */
export function evmReadClients(rpcUrls: Readonly<Record<string, string>>): (chainKey: string) => PublicClient | undefined {
  const clients = new Map<string, PublicClient>();
  return (chainKey) => {
    const url = rpcUrls[chainKey];
    if (!url) return undefined;
    let client = clients.get(chainKey);
    if (!client) {
      client = createPublicClient({ transport: http(url), cacheTime: 0 });
      clients.set(chainKey, client);
    }
    return client;
  };
}

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
