import { parseAbi, type Hex } from 'viem';
import type { SwapEvent } from '../../store/swap-events.ts';

/** The events of HTLC, NativeHTLC and the Tron HTLC (the same signatures, so the same topics in all). */
export const HTLC_EVENTS = parseAbi([
  'event Initiated(bytes32 indexed orderID, bytes32 indexed secretHash, uint256 indexed amount)',
  'event Redeemed(bytes32 indexed orderID, bytes32 indexed secretHash, bytes secret)',
  'event Refunded(bytes32 indexed orderID)',
]);

/** A decoded HTLC log, before its block's time is known. */
export type HtlcLog =
  | { eventName: 'Initiated'; args: { orderID: Hex; amount: bigint } }
  | { eventName: 'Redeemed'; args: { orderID: Hex; secret: Hex } }
  | { eventName: 'Refunded'; args: { orderID: Hex } };

/** Where a log stands: its transaction (as the store keeps the family's hashes), block and the block's time. */
export interface HtlcLogPosition {
  txHash: string;
  blockNumber: bigint;
  timestamp: Date;
}

const strip0x = (hex: Hex): string => hex.slice(2).toLowerCase();

/** The swap event a decoded HTLC log records, in the store's formats (ids and secrets without 0x, lower case). */
export function htlcSwapEvent(log: HtlcLog, at: HtlcLogPosition): SwapEvent {
  const base = { swapId: strip0x(log.args.orderID), txHash: at.txHash, blockNumber: at.blockNumber, timestamp: at.timestamp };
  switch (log.eventName) {
    case 'Initiated':
      return { ...base, kind: 'initiated', amount: log.args.amount };
    case 'Redeemed':
      return { ...base, kind: 'redeemed', secret: strip0x(log.args.secret) };
    case 'Refunded':
      return { ...base, kind: 'refunded' };
  }
}
