import { getAddress, type Address, type Hash, type Hex } from 'viem';
import type { HtlcLog } from '../solidity-htlc/htlc-events.ts';
import type { Chain } from '../registry.ts';
import type { SwapEvent } from '../../store/swap-events.ts';

export interface LogPosition {
  blockNumber: bigint;
  blockHash: Hash;
  transactionHash: Hash;
}

/** Every HTLC contract address of an EVM chain's assets, once each. */
export function htlcAddresses(chain: Chain): Address[] {
  const addresses = chain.assets.map((a) => a.htlc.address).filter((a) => a !== '');
  return [...new Set(addresses.map((a) => getAddress(a)))];
}

const strip0x = (hex: Hex): string => hex.slice(2).toLowerCase();

/** The swap event a decoded log records, in the store's formats (ids and secrets without 0x). */
export function toSwapEvent(log: HtlcLog & LogPosition, timestamp: Date): SwapEvent {
  const base = {
    swapId: strip0x(log.args.orderID),
    txHash: log.transactionHash.toLowerCase(),
    blockNumber: log.blockNumber,
    timestamp,
  };
  switch (log.eventName) {
    case 'Initiated':
      return { ...base, kind: 'initiated', amount: log.args.amount };
    case 'Redeemed':
      return { ...base, kind: 'redeemed', secret: strip0x(log.args.secret) };
    case 'Refunded':
      return { ...base, kind: 'refunded' };
  }
}
