import type { Db } from '../store/database.ts';
import {
  forgetWatchedBlocksAbove,
  recordWatcherPoll,
  recountConfirmationsAbove,
  undoSwapEventsAbove,
  watchedBlocks,
  type WatcherPoll,
  watcherCursor,
  type SwapEvent,
  type WatchedBlock,
} from '../store/swap-events.ts';

/**
 * What the block watchers of every family share: where to resume after a restart or a reorg. Each
 * watcher keeps the hashes of the blocks inside its confirmation window; the service runs its polls
 * as a leased worker (`ChainRuntime.workers`, `runWorker` in src/lease-loop.ts).
 */

/** A reorg a poll found and undid. */
export interface Reorg {
  /** The newest processed block still on the chain; everything above it was undone. */
  ancestor: bigint;
  /** The cursor before the reorg. */
  previousCursor: bigint;
  /** No kept block was on the chain any more: the reorg went deeper than the window. */
  beyondWindow: boolean;
}

/** Where to resume: the last block still valid, its hash when known, and the reorg if there was one. */
export interface Resume {
  last: bigint;
  lastHash?: string;
  reorg?: Reorg;
}

/** The chain changed while a poll was reading it; nothing was written, the next poll sees the new chain. */
export class ChainMovedError extends Error {}

/**
 * The newest kept block whose hash the chain still has (`hashAt` reads the chain's hash at a
 * height). The cursor's block is checked first: when it matches, so does every block below it (each
 * hash commits to its parent), so a poll without a reorg costs one hash read here.
 */
export async function resumePoint(db: Db, chainKey: string, cursor: bigint, head: bigint, hashAt: (height: bigint) => Promise<string>): Promise<Resume> {
  return resumeFrom(await watchedBlocks(db, chainKey), chainKey, cursor, head, hashAt);
}

/** `resumePoint` over the kept blocks already read (newest first). */
async function resumeFrom(kept: readonly WatchedBlock[], chainKey: string, cursor: bigint, head: bigint, hashAt: (height: bigint) => Promise<string>): Promise<Resume> {
  for (const block of kept) {
    if (block.number > head) continue;
    if ((await hashAt(block.number)) !== block.hash) continue;
    const reorg = block.number < cursor ? { ancestor: block.number, previousCursor: cursor, beyondWindow: false } : undefined;
    return { last: block.number, lastHash: block.hash, ...(reorg ? { reorg } : {}) };
  }
  const lowest = kept.at(-1);
  if (!lowest) return { last: cursor };
  if (lowest.number === 0n) throw new Error(`${chainKey}: block 0 differs from the one processed (a different chain?)`);
  const ancestor = lowest.number - 1n < head ? lowest.number - 1n : head;
  return { last: ancestor, reorg: { ancestor, previousCursor: cursor, beyondWindow: true } };
}

/** One poll of a block watcher: the blocks `from`..`to` it read (none when `from > to`), and what it found. */
export interface WatchedBatch {
  cursor: bigint | undefined;
  from: bigint;
  to: bigint;
  head: bigint;
  /** Blocks kept below the head for reorg checks and confirmation counts. */
  window: bigint;
  events: readonly SwapEvent[];
  blocks: readonly WatchedBlock[];
  reorg?: Reorg;
}

/**
 * Records a poll atomically: a reorg's undoing, the swap events, the window's block hashes, the
 * cursor, the confirmation counts and the chain height. Without a reorg that is one statement
 * (`recordWatcherPoll`). Returns the swap rows it changed.
 */
export function commitWatchedBatch(db: Db, chainKey: string, batch: WatchedBatch): Promise<number> {
  const { head, window, reorg } = batch;
  const poll = watcherPoll(batch);
  if (!reorg) return recordWatcherPoll(db, chainKey, poll);
  return db.transaction().execute(async (tx) => {
    let rows = await undoSwapEventsAbove(tx, chainKey, reorg.ancestor);
    await forgetWatchedBlocksAbove(tx, chainKey, reorg.ancestor);
    rows += await recountConfirmationsAbove(tx, chainKey, reorg.ancestor - window, head);
    return rows + (await recordWatcherPoll(tx, chainKey, poll));
  });
}

/**
 * What a poll records besides a reorg's undoing: its events and head, and when it read blocks, the
 * window's block hashes and the cursor moved to `to`; when it read none after a reorg, the cursor
 * moved back to the reorg's ancestor.
 */
export function watcherPoll(batch: WatchedBatch): WatcherPoll {
  const { cursor, from, to, head, window, events, blocks, reorg } = batch;
  if (from <= to) {
    const keepAbove = to - window;
    const kept = blocks.filter((b) => b.number > keepAbove).map(({ number, hash }) => ({ number, hash }));
    return { events, head, blocks: { kept, keepAbove }, cursor: { from: cursor, to } };
  }
  return { events, head, ...(reorg ? { cursor: { from: cursor, to: reorg.ancestor } } : {}) };
}

/** What a poll of `pollBlockRange` read and recorded. */
export interface BlockRangePoll {
  /** The block range read; empty (`from > to`) when there was no new block. */
  from: bigint;
  to: bigint;
  head: bigint;
  /** Every HTLC event of the range, ours or not, in chain order. */
  events: SwapEvent[];
  /** Swap rows written (events recorded, undone, confirmations counted). */
  changed: number;
  reorg?: Reorg;
}

/** How a watcher that reads its events block range by block range (EVM, Tron) reads its chain. */
export interface BlockRangeReader {
  /** Blocks below the head whose hashes are kept and checked for reorgs. */
  window: bigint;
  /** Most blocks one poll reads. */
  batchBlocks: number;
  /** The first block to read when the chain has no cursor yet (default: the window below the head). */
  startBlock?: bigint;
  /** The chain's head. */
  head(): Promise<bigint>;
  /** The chain's hash (block id) at a height. */
  hashAt(height: bigint): Promise<string>;
  /** The events of blocks [from, to] and the hashes of those inside the window; `from`'s parent must be `parentHash` when known. */
  read(from: bigint, to: bigint, parentHash: string | undefined): Promise<{ events: SwapEvent[]; blocks: WatchedBlock[] }>;
}

/**
 * One poll of a block-range watcher: the head, the cursor and the kept blocks, where to resume
 * (undoing a reorg), the next range of at most `batchBlocks` blocks, and all of it recorded in one
 * transaction (`commitWatchedBatch`).
 *
 * When there are new blocks, the first one's parent must be the cursor's kept hash (`read` checks it),
 * which proves the cursor's block still on the chain: the reorg probe (`hashAt`) is asked only when
 * that check fails or there is no new block, so a new block costs one round trip less before the
 * solver hears of it.
 */
export async function pollBlockRange(db: Db, chainKey: string, chain: BlockRangeReader): Promise<BlockRangePoll> {
  const [head, cursor, kept] = await Promise.all([chain.head(), watcherCursor(db, chainKey), watchedBlocks(db, chainKey)]);
  const top = kept[0];
  if (cursor !== undefined && top?.number === cursor && head > cursor) {
    try {
      return await readAndCommit(db, chainKey, chain, cursor, head, { last: cursor, lastHash: top.hash });
    } catch (err) {
      if (!(err instanceof ChainMovedError)) throw err;
    }
  }
  const resume: Resume =
    cursor === undefined
      ? { last: (chain.startBlock ?? maxBig(0n, head - chain.window + 1n)) - 1n }
      : await resumeFrom(kept, chainKey, cursor, head, (n) => chain.hashAt(n));
  return readAndCommit(db, chainKey, chain, cursor, head, resume);
}

async function readAndCommit(db: Db, chainKey: string, chain: BlockRangeReader, cursor: bigint | undefined, head: bigint, resume: Resume): Promise<BlockRangePoll> {
  const { window } = chain;
  const { last, reorg } = resume;
  const from = last + 1n;
  const to = minBig(head, last + BigInt(chain.batchBlocks));
  const read = from <= to ? await chain.read(from, to, resume.lastHash) : { events: [], blocks: [] };
  const changed = await commitWatchedBatch(db, chainKey, { cursor, from, to, head, window, events: read.events, blocks: read.blocks, ...(reorg ? { reorg } : {}) });
  return { from, to, head, events: read.events, changed, ...(reorg ? { reorg } : {}) };
}

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);
