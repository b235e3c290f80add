import type { OrderRecord, SwapRecord } from '../store/orders.ts';

/** Every order status, lowest rank first (the test checks this matches `statusRank`). */
export const ORDER_STATUSES = [
  'created',
  'expired',
  'initiate_detected',
  'initiated',
  'awaiting_redeem',
  'awaiting_refund',
  'redeem_detected',
  'redeemed',
  'completed',
  'refund_detected',
  'refunded',
] as const;

export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** What the status is derived from besides the order: the clock and the chains' current heights. */
export interface StatusClock {
  unixSeconds: number;
  /** Current block (or slot) height per chain key; an absent chain's height is unknown. */
  heights: ReadonlyMap<string, bigint>;
}

type TxKind = 'initiate' | 'redeem' | 'refund';

const seen = (swap: SwapRecord, tx: TxKind): boolean => swap[`${tx}TxHash`] !== '';
const confirmed = (swap: SwapRecord, tx: TxKind): boolean => seen(swap, tx) && swap[`${tx}BlockNumber`] !== '0';

/**
 * The source timelock has run out at the known height. `height > initiate block + timelock` is the
 * strictest of the families' refund rules (EVM and Starknet refund in a block above
 * `initiatedAt + timelock`, Bitcoin CSV one block earlier, Solana in a slot above the expiry slot),
 * so a refund sent now is valid, and so is its simulation against the current block.
 */
function sourceTimelockExpired(source: SwapRecord, heights: ReadonlyMap<string, bigint>): boolean {
  const height = heights.get(source.chain);
  if (height === undefined || !confirmed(source, 'initiate')) return false;
  return height > BigInt(source.initiateBlockNumber) + BigInt(source.timelock);
}

/**
 * Rules from the highest rank down; the first that holds gives the status. Each rule is monotone:
 * once true, it stays true as facts accumulate (a transaction seen, then confirmed; confirmations,
 * heights and time growing). So the first true rule can only move up the list, and the status only
 * moves forward. Only a reorg (a transaction or block number removed, a height lowered) moves it
 * back. docs/order-status.md has the table and the argument.
 */
const RULES: ReadonlyArray<readonly [OrderStatus, (o: OrderRecord, now: StatusClock) => boolean]> = [
  ['refunded', (o) => confirmed(o.source, 'refund')],
  ['refund_detected', (o) => seen(o.source, 'refund')],
  ['completed', (o) => confirmed(o.destination, 'redeem') && confirmed(o.source, 'redeem')],
  ['redeemed', (o) => confirmed(o.destination, 'redeem')],
  // A source redeem proves the secret is on chain, so the destination redeem exists even if it is
  // not seen yet (watcher lag, a replaced Bitcoin transaction); it also rules out a source refund.
  ['redeem_detected', (o) => seen(o.destination, 'redeem') || seen(o.source, 'redeem')],
  [
    'awaiting_refund',
    (o, now) =>
      confirmed(o.source, 'initiate') &&
      (sourceTimelockExpired(o.source, now.heights) || confirmed(o.destination, 'refund')),
  ],
  ['awaiting_redeem', (o) => seen(o.destination, 'initiate')],
  [
    'initiated',
    (o) => confirmed(o.source, 'initiate') && o.source.currentConfirmations >= o.source.requiredConfirmations,
  ],
  ['initiate_detected', (o) => seen(o.source, 'initiate')],
  ['expired', (o, now) => now.unixSeconds > Number(o.deadline)],
];

const RANKS = new Map<OrderStatus, number>([
  ['created', 0],
  ...RULES.map(([status], i): [OrderStatus, number] => [status, RULES.length - i]),
]);

/** The status's place in the rule order (created 0, refunded highest): an order's rank never decreases, except on a reorg. */
export function statusRank(status: OrderStatus): number {
  return RANKS.get(status)!;
}

/** The order's status, derived from its swaps, its deadline, the clock and the chain heights. */
export function orderStatus(order: OrderRecord, now: StatusClock): OrderStatus {
  for (const [status, holds] of RULES) if (holds(order, now)) return status;
  return 'created';
}
