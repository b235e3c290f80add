import { getAddress, type Address, type Hash } from 'viem';
import { htlcSwapEvent, type HtlcLog } from '../solidity-htlc/htlc-events.ts';
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

/** The swap event a decoded log records, in the store's formats (ids and secrets without 0x). */
export function toSwapEvent(log: HtlcLog & LogPosition, timestamp: Date): SwapEvent {
  return htlcSwapEvent(log, { txHash: log.transactionHash.toLowerCase(), blockNumber: log.blockNumber, timestamp });
}
