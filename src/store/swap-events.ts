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

/** The initiate, redeem and refund fields of a swap, and what each one holds when empty. */
const FIELDS = {
  initiated: {
    columns: ['initiate_tx_hash', 'initiate_block_number', 'initiate_timestamp', 'filled_amount'],
    cleared: `initiate_tx_hash = '', initiate_block_number = 0, initiate_timestamp = null, filled_amount = 0,
      current_confirmations = 0`,
    block: 'initiate_block_number',
  },
  redeemed: {
    columns: ['redeem_tx_hash', 'redeem_block_number', 'redeem_timestamp', 'secret'],
    cleared: `redeem_tx_hash = '', redeem_block_number = 0, redeem_timestamp = null, secret = ''`,
    block: 'redeem_block_number',
  },
  refunded: {
    columns: ['refund_tx_hash', 'refund_block_number', 'refund_timestamp'],
    cleared: `refund_tx_hash = '', refund_block_number = 0, refund_timestamp = null`,
    block: 'refund_block_number',
  },
} as const;

/** Column types of the event records a statement reads (jsonb_to_recordset needs them). */
const RECORD_TYPES = `swap_id text, tx_hash text, block_number bigint, ts timestamptz, value text`;

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

/** The values an event writes, as SQL over the record alias `e`, in the order of FIELDS[kind].columns. */
const VALUES: Record<SwapEventKind, string> = {
  initiated: 'e.tx_hash, e.block_number, e.ts, e.value::numeric',
  redeemed: 'e.tx_hash, e.block_number, e.ts, e.value',
  refunded: 'e.tx_hash, e.block_number, e.ts',
};

/**
 * Records events on the swaps of `chain` they name; events of unknown swaps are ignored (not our
 * orders). Each event writes only its own fields, and a swap whose fields already hold the event is
 * not touched (no write, no order_changed notification), so applying a block twice changes
 * nothing. One statement per event kind present. Returns how many swap rows changed.
 */
export async function applySwapEvents(db: Db, chain: string, events: readonly SwapEvent[]): Promise<number> {
  // The contracts allow one event of each kind per order; if a range still holds two (a reorg
  // inside it), the later one is the chain's.
  const latest = new Map<string, SwapEvent>();
  for (const event of events) latest.set(`${event.kind}:${event.swapId}`, event);
  let changed = 0;
  for (const kind of Object.keys(FIELDS) as SwapEventKind[]) {
    const records = [...latest.values()].filter((e) => e.kind === kind).map(record);
    if (records.length === 0) continue;
    const { columns } = FIELDS[kind];
    const target = sql.raw(columns.join(', '));
    const values = sql.raw(VALUES[kind]);
    // A new initiate block restarts the count; the confirmation update computes it again.
    const confirmations = sql.raw(
      kind === 'initiated'
        ? `, current_confirmations = case when s.initiate_block_number = e.block_number then s.current_confirmations else 0 end`
        : '',
    );
    const result = await sql<{ order_id: string }>`
      update swaps s set (${target}) = (${values}) ${confirmations}
      from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as e(${sql.raw(RECORD_TYPES)})
      where s.chain = ${chain} and s.swap_id = e.swap_id
        and (${sql.raw(columns.map((c) => `s.${c}`).join(', '))}) is distinct from (${values})
      returning s.order_id
    `.execute(db);
    changed += result.rows.length;
  }
  return changed;
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
 * Sets `current_confirmations = head - initiate block + 1`, capped at `required_confirmations`,
 * on the swaps of `chain` initiated and not yet at their required count. The cap is what keeps this
 * one statement cheap: a swap leaves the `swaps_confirming` index once it reaches its count, so
 * only the few swaps initiated within the last blocks are visited, however many orders exist.
 * Returns how many swap rows changed.
 */
export async function updateConfirmations(db: Db, chain: string, head: bigint): Promise<number> {
  const count = sql`least(required_confirmations, ${head.toString()}::bigint - initiate_block_number + 1)`;
  const result = await sql<{ order_id: string }>`
    update swaps set current_confirmations = ${count}
    where chain = ${chain} and initiate_block_number <> 0 and current_confirmations < required_confirmations
      and initiate_block_number <= ${head.toString()} and current_confirmations <> ${count}
    returning order_id
  `.execute(db);
  return result.rows.length;
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

/**
 * Moves the cursor of `chain` from `from` (undefined: none yet) to `to`. Fails when another
 * writer moved it meanwhile, so two watchers of one chain cannot both apply a range.
 */
export async function moveWatcherCursor(db: Db, chain: string, from: bigint | undefined, to: bigint): Promise<void> {
  const moved =
    from === undefined
      ? await db
          .insertInto('watcher_cursors')
          .values({ chain, block_number: to })
          .onConflict((oc) => oc.column('chain').doNothing())
          .returning('chain')
          .executeTakeFirst()
      : await db
          .updateTable('watcher_cursors')
          .set({ block_number: to, updated_at: sql`now()` })
          .where('chain', '=', chain)
          .where('block_number', '=', from.toString())
          .returning('chain')
          .executeTakeFirst();
  if (!moved) throw new Error(`the ${chain} watcher cursor moved under this watcher (another instance running?)`);
}

/** The processed blocks of `chain` kept for the reorg check, newest first. */
export async function watchedBlocks(db: Db, chain: string): Promise<WatchedBlock[]> {
  const rows = await db.selectFrom('watched_blocks').select(['number', 'hash']).where('chain', '=', chain).orderBy('number', 'desc').execute();
  return rows.map((r) => ({ number: BigInt(r.number), hash: r.hash }));
}

/** Stores processed blocks, then keeps only those above `keepAbove`. */
export async function saveWatchedBlocks(db: Db, chain: string, blocks: readonly WatchedBlock[], keepAbove: bigint): Promise<void> {
  if (blocks.length > 0) {
    await db
      .insertInto('watched_blocks')
      .values(blocks.map((b) => ({ chain, number: b.number, hash: b.hash })))
      .onConflict((oc) => oc.columns(['chain', 'number']).doUpdateSet((eb) => ({ hash: eb.ref('excluded.hash') })))
      .execute();
  }
  await db.deleteFrom('watched_blocks').where('chain', '=', chain).where('number', '<=', keepAbove.toString()).execute();
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
