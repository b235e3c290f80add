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

export type Side = 'source' | 'destination';
export type TxKind = 'initiate' | 'redeem' | 'refund';

/**
 * The facts an order's status is made of, and the conditions built from them. They are data, so that
 * one definition answers everywhere: `orderStatus` below evaluates them (the order read, the event
 * recorder), and src/store/status-sql.ts turns the same conditions into SQL (the order list's status
 * filter, the event log's searches, the solver's queries). test/orders/status-paths.test.ts checks that
 * every path gives the same answer on random states.
 */
export type Condition =
  /** The transaction's hash is known (a Bitcoin-family initiate: once its outputs add up to the amount). */
  | { readonly fact: 'seen'; readonly side: Side; readonly tx: TxKind }
  /** The transaction is seen and its block number is set. */
  | { readonly fact: 'confirmed'; readonly side: Side; readonly tx: TxKind }
  /** The swap's initiate has its required confirmations. */
  | { readonly fact: 'confirmations'; readonly side: Side }
  /** The swap's initiate is confirmed and its timelock has run out at the chain's current block, or at the next one (`timelockRunOutAt`). */
  | { readonly fact: 'timelockRunOut'; readonly side: Side; readonly block: 'current' | 'next' }
  /** The clock is past the order's deadline: `now > deadline`, in unix seconds. */
  | { readonly fact: 'deadlinePassed' }
  | { readonly all: readonly Condition[] }
  | { readonly any: readonly Condition[] }
  | { readonly not: Condition };

export const seen = (side: Side, tx: TxKind): Condition => ({ fact: 'seen', side, tx });
export const confirmed = (side: Side, tx: TxKind): Condition => ({ fact: 'confirmed', side, tx });
export const hasConfirmations = (side: Side): Condition => ({ fact: 'confirmations', side });
export const timelockRunOut = (side: Side, block: 'current' | 'next' = 'current'): Condition => ({ fact: 'timelockRunOut', side, block });
export const deadlinePassed: Condition = { fact: 'deadlinePassed' };
export const all = (...conditions: Condition[]): Condition => ({ all: conditions });
export const any = (...conditions: Condition[]): Condition => ({ any: conditions });
export const not = (condition: Condition): Condition => ({ not: condition });

/**
 * The one timelock comparison: a swap's timelock has run out at block (or slot) `block` when
 * `block > initiate block + timelock`.
 *
 * - Why `>`: it is the refund rule of Garden's HTLCs, which a refund is accepted by only once the
 *   timelock has expired: the EVM contract refunds when `initiatedAt + timelock < block.number`,
 *   Starknet's the same, Solana's program when `current_slot > expiry_slot` with the expiry slot the
 *   initiate slot plus the timelock; Bitcoin's CSV allows the refund one block earlier, so a refund
 *   valid by this rule is valid on every family. Garden's SDK, too, calls a swap expired at
 *   `currentBlock > initiate_block_number + timelock`.
 * - At which block: the status asks about the chain's current block (`awaiting_refund` means a refund
 *   is valid against the chain as it is, so a wallet that simulates it at the latest block sees no
 *   revert). The service's own refunds (the solver's queries) ask about the next block, where the
 *   transaction they send lands at the earliest, as the families' refund checks do
 *   (`head + 1 > initiatedAt + timelock`): the same rule at `height + 1`.
 */
export function timelockRunOutAt(block: bigint, swap: SwapRecord): boolean {
  return block > BigInt(swap.initiateBlockNumber) + BigInt(swap.timelock);
}

type Test = (order: OrderRecord, now: StatusClock) => boolean;

function compile(c: Condition): Test {
  if ('all' in c) {
    const parts = c.all.map(compile);
    return (o, now) => parts.every((p) => p(o, now));
  }
  if ('any' in c) {
    const parts = c.any.map(compile);
    return (o, now) => parts.some((p) => p(o, now));
  }
  if ('not' in c) {
    const part = compile(c.not);
    return (o, now) => !part(o, now);
  }
  // Field names are made once, here, not on every call: this runs on every order read.
  switch (c.fact) {
    case 'seen': {
      const hash = `${c.tx}TxHash` as const;
      return (o) => o[c.side][hash] !== '';
    }
    case 'confirmed': {
      const hash = `${c.tx}TxHash` as const;
      const block = `${c.tx}BlockNumber` as const;
      return (o) => o[c.side][hash] !== '' && o[c.side][block] !== '0';
    }
    case 'confirmations':
      return (o) => o[c.side].currentConfirmations >= o[c.side].requiredConfirmations;
    case 'timelockRunOut': {
      const ahead = c.block === 'next' ? 1n : 0n;
      return (o, now) => {
        const swap = o[c.side];
        const height = now.heights.get(swap.chain);
        if (height === undefined || swap.initiateTxHash === '' || swap.initiateBlockNumber === '0') return false;
        return timelockRunOutAt(height + ahead, swap);
      };
    }
    case 'deadlinePassed':
      return (o, now) => now.unixSeconds > Number(o.deadline);
  }
}

const compiled = new WeakMap<Condition, Test>();

/** Whether a condition holds for an order at a clock (the TypeScript reading of the conditions). */
export function holds(condition: Condition, order: OrderRecord, now: StatusClock): boolean {
  let test = compiled.get(condition);
  if (!test) compiled.set(condition, (test = compile(condition)));
  return test(order, now);
}

/**
 * Rules from the highest rank down; the first that holds gives the status. Each rule is monotone (no
 * `not`): once true, it stays true as facts accumulate (a transaction seen, then confirmed;
 * confirmations, heights and time growing). So the first true rule can only move up the list, and the
 * status only moves forward. Only a reorg (a transaction or block number removed, a height lowered)
 * moves it back. docs/order-status.md has the table and the argument.
 */
export const STATUS_RULES: ReadonlyArray<readonly [Exclude<OrderStatus, 'created'>, Condition]> = [
  ['refunded', confirmed('source', 'refund')],
  ['refund_detected', seen('source', 'refund')],
  ['completed', all(confirmed('destination', 'redeem'), confirmed('source', 'redeem'))],
  ['redeemed', confirmed('destination', 'redeem')],
  // A source redeem proves the secret is on chain, so the destination redeem exists even if it is
  // not seen yet (watcher lag, a replaced Bitcoin transaction); it also rules out a source refund.
  ['redeem_detected', any(seen('destination', 'redeem'), seen('source', 'redeem'))],
  ['awaiting_refund', all(confirmed('source', 'initiate'), any(timelockRunOut('source'), confirmed('destination', 'refund')))],
  ['awaiting_redeem', seen('destination', 'initiate')],
  ['initiated', all(confirmed('source', 'initiate'), hasConfirmations('source'))],
  ['initiate_detected', seen('source', 'initiate')],
  ['expired', deadlinePassed],
];

const COMPILED_RULES = STATUS_RULES.map(([status, rule]) => [status, compile(rule)] as const);

/** The condition of a status's rule. */
export function statusRule(status: Exclude<OrderStatus, 'created'>): Condition {
  return STATUS_RULES.find(([s]) => s === status)![1];
}

/** Whether a condition reads the clock (the time or a chain height), so that time alone can make it hold. */
export function readsClock(c: Condition): boolean {
  if ('all' in c) return c.all.some(readsClock);
  if ('any' in c) return c.any.some(readsClock);
  if ('not' in c) return readsClock(c.not);
  return c.fact === 'timelockRunOut' || c.fact === 'deadlinePassed';
}

/**
 * What time or a chain height alone can do to an order: for each rule that reads the clock, the
 * statuses it can move an order on from (`expired` only from `created`; `awaiting_refund` needs a
 * confirmed source initiate, so only from the statuses between that and itself). The event log looks
 * for such orders among its heads in these statuses (migration 0012 indexes them);
 * test/orders/status-paths.test.ts checks that time moves no other status.
 */
export const CLOCK_MOVES: ReadonlyMap<Exclude<OrderStatus, 'created'>, readonly OrderStatus[]> = new Map<
  Exclude<OrderStatus, 'created'>,
  readonly OrderStatus[]
>([
  ['expired', ['created']],
  ['awaiting_refund', ['initiate_detected', 'initiated', 'awaiting_redeem']],
]);

const RANKS = new Map<OrderStatus, number>([
  ['created', 0],
  ...STATUS_RULES.map(([status], i): [OrderStatus, number] => [status, STATUS_RULES.length - i]),
]);

/** The status's place in the rule order (created 0, refunded highest): an order's rank never decreases, except on a reorg. */
export function statusRank(status: OrderStatus): number {
  return RANKS.get(status)!;
}

/** The order's status, derived from its swaps, its deadline, the clock and the chain heights. */
export function orderStatus(order: OrderRecord, now: StatusClock): OrderStatus {
  for (const [status, test] of COMPILED_RULES) if (test(order, now)) return status;
  return 'created';
}
