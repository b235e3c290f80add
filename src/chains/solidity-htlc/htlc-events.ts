import { parseAbi, type Hex } from 'viem';

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
