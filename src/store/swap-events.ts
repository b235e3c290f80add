import { sql } from 'kysely';
import type { Db } from './database.ts';

/**
 * Swap events as watchers see them on chain, and where each watcher is. Every write here is keyed
 * by chain and block range (or by the events of one range), so its cost follows the chain, never
 * the number of orders.
 */

interface SwapEventBase {
  /** The swap's id as stored in `swaps.swap_id` (EVM: the contract's order id, hex without 0x). */
  swapId: string;
  /** As the family shows it (EVM: 0x-prefixed). */
  txHash: string;
  /** 0 while the transaction is only in the mempool (Bitcoin-family watchers record those too). */
  blockNumber: bigint;
  /** The block's time; null while the transaction is only in the mempool. */
  timestamp: Date | null;
}

export type SwapEvent =
  | (SwapEventBase & { kind: 'initiated'; amount: bigint })
  | (SwapEventBase & { kind: 'redeemed'; secret: string })
  | (SwapEventBase & { kind: 'refunded' });

export type SwapEventKind = SwapEvent['kind'];

/** A block a watcher processed, by number and hash. */
export interface WatchedBlock {
  number: bigint;
  hash: string;
}

/** What the initiate, redeem and refund fields of a swap hold when empty, and their block column. */
const FIELDS = {
  initiated: {
    cleared: `initiate_tx_hash = '', initiate_block_number = 0, initiate_timestamp = null, filled_amount = 0,
      current_confirmations = 0`,
    block: 'initiate_block_number',
  },
  redeemed: {
    cleared: `redeem_tx_hash = '', redeem_block_number = 0, redeem_timestamp = null, secret = ''`,
    block: 'redeem_block_number',
  },
  refunded: {
    cleared: `refund_tx_hash = '', refund_block_number = 0, refund_timestamp = null`,
    block: 'refund_block_number',
  },
} as const;

function record(event: SwapEvent): Record<string, string | null> {
  const value = event.kind === 'initiated' ? event.amount.toString() : event.kind === 'redeemed' ? event.secret : '';
  return {
    swap_id: event.swapId,
    tx_hash: event.txHash,
    block_number: event.blockNumber.toString(),
    ts: event.timestamp?.toISOString() ?? null,
    value,
  };
}

/** What one watcher poll records (`recordWatcherPoll`). */
export interface WatcherPoll {
  events: readonly SwapEvent[];
  /** The window's block hashes to keep, and the height at or below which kept blocks are dropped. */
  blocks?: { kept: readonly WatchedBlock[]; keepAbove: bigint };
  /** The cursor's move from `from` (undefined: none yet) to `to`; absent: it stays. */
  cursor?: { from: bigint | undefined; to: bigint };
  /** The chain's head: the confirmation counts and the chain height. */
  head: bigint;
}

/**
 * Records a watcher's poll in one statement (the `record_watcher_poll` function, migration 0019):
 * the swap events, the kept block hashes, the cursor, the confirmation counts and the chain height.
 * Events of unknown swaps are ignored (not our orders); each event writes only its own fields, and a
 * swap whose fields already hold the event is not touched (no write, no order_changed
 * notification), so applying a block twice changes nothing. The cursor moves only from where this
 * watcher found it, so two watchers of one chain cannot both apply a range. Returns how many swap
 * rows changed.
 */
export async function recordWatcherPoll(db: Db, chain: string, poll: WatcherPoll): Promise<number> {
  // The contracts allow one event of each kind per order; if a range still holds two (a reorg
  // inside it), the later one is the chain's.
  const latest = new Map<string, SwapEvent>();
  for (const event of poll.events) latest.set(`${event.kind}:${event.swapId}`, event);
  const byKind: Record<SwapEventKind, Array<Record<string, string | null>>> = { initiated: [], redeemed: [], refunded: [] };
  for (const event of latest.values()) byKind[event.kind].push(record(event));
  const { blocks, cursor } = poll;
  const p = {
    ...byKind,
    head: poll.head.toString(),
    ...(blocks ? { blocks: blocks.kept.map((b) => ({ number: b.number.toString(), hash: b.hash })), keep_above: blocks.keepAbove.toString() } : {}),
    ...(cursor ? { cursor_from: cursor.from?.toString() ?? null, cursor_to: cursor.to.toString() } : {}),
  };
  try {
    const { rows } = await sql<{ changed: number }>`select record_watcher_poll(${chain}, ${JSON.stringify(p)}::jsonb) as changed`.execute(db);
    return rows[0]!.changed;
  } catch (err) {
    if ((err as { code?: string }).code === 'HL002') throw new Error(`the ${chain} watcher cursor moved under this watcher (another instance running?)`, { cause: err });
    throw err;
  }
}

/**
 * Undoes every swap field of `chain` that came from a block above `ancestor` (the blocks a reorg
 * removed): back to the empty values, confirmations to 0. Returns how many swap rows changed.
 */
export async function undoSwapEventsAbove(db: Db, chain: string, ancestor: bigint): Promise<number> {
  let changed = 0;
  for (const { cleared, block } of Object.values(FIELDS)) {
    const result = await sql<{ order_id: string }>`
      update swaps set ${sql.raw(cleared)}
      where chain = ${chain} and ${sql.ref(block)} <> 0 and ${sql.ref(block)} > ${ancestor.toString()}
      returning order_id
    `.execute(db);
    changed += result.rows.length;
  }
  return changed;
}

/**
 * After a reorg to a lower head, swaps initiated at or below the ancestor may count more
 * confirmations than the new head gives them: recounts those initiated above `since`.
 */
export async function recountConfirmationsAbove(db: Db, chain: string, since: bigint, head: bigint): Promise<number> {
  const count = sql`least(required_confirmations, greatest(0, ${head.toString()}::bigint - initiate_block_number + 1))`;
  const result = await sql<{ order_id: string }>`
    update swaps set current_confirmations = ${count}
    where chain = ${chain} and initiate_block_number <> 0 and initiate_block_number > ${since.toString()}
      and current_confirmations > ${count}
    returning order_id
  `.execute(db);
  return result.rows.length;
}

/** The last block the watcher of `chain` processed, if it ever ran. */
export async function watcherCursor(db: Db, chain: string): Promise<bigint | undefined> {
  const row = await db.selectFrom('watcher_cursors').select('block_number').where('chain', '=', chain).executeTakeFirst();
  return row && BigInt(row.block_number);
}

/** The processed blocks of `chain` kept for the reorg check, newest first. */
export async function watchedBlocks(db: Db, chain: string): Promise<WatchedBlock[]> {
  const rows = await db.selectFrom('watched_blocks').select(['number', 'hash']).where('chain', '=', chain).orderBy('number', 'desc').execute();
  return rows.map((r) => ({ number: BigInt(r.number), hash: r.hash }));
}

/** Forgets the processed blocks of `chain` above `ancestor` (a reorg removed them). */
export async function forgetWatchedBlocksAbove(db: Db, chain: string, ancestor: bigint): Promise<void> {
  await db.deleteFrom('watched_blocks').where('chain', '=', chain).where('number', '>', ancestor.toString()).execute();
}

/**
 * The swap ids of a chain: every open swap (no `since`), or those created since `since` less an
 * overlap, with the database's clock, which the next call starts from. One statement.
 */
export async function swapIdsSince(db: Db, chain: string, since: string | undefined, overlap: string): Promise<{ swapIds: string[]; now: string }> {
  const swaps =
    since === undefined
      ? sql`s.chain = ${chain} and s.redeem_block_number = 0 and s.refund_block_number = 0`
      : sql`s.chain = ${chain} and s.created_at > ${since}::timestamptz - ${overlap}::interval`;
  const { rows } = await sql<{ swap_id: string | null; now: string }>`
    select s.swap_id, n.now from (select now()::text as now) n left join swaps s on ${swaps}
  `.execute(db);
  return { swapIds: rows.flatMap((r) => (r.swap_id === null ? [] : [r.swap_id])), now: rows[0]!.now };
}
