import { setChainHeight } from '../store/chain-heights.ts';
import type { Db } from '../store/database.ts';
import {
  applySwapEvents,
  forgetWatchedBlocksAbove,
  moveWatcherCursor,
  recountConfirmationsAbove,
  saveWatchedBlocks,
  undoSwapEventsAbove,
  updateConfirmations,
  watchedBlocks,
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
  const kept = await watchedBlocks(db, chainKey);
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
 * Records a poll in one transaction: a reorg's undoing, the swap events, the window's block hashes,
 * the cursor, the confirmation counts and the chain height. Returns the swap rows it changed.
 */
export function commitWatchedBatch(db: Db, chainKey: string, batch: WatchedBatch): Promise<number> {
  const { cursor, from, to, head, window, events, blocks, reorg } = batch;
  return db.transaction().execute(async (tx) => {
    let rows = 0;
    if (reorg) {
      rows += await undoSwapEventsAbove(tx, chainKey, reorg.ancestor);
      await forgetWatchedBlocksAbove(tx, chainKey, reorg.ancestor);
      rows += await recountConfirmationsAbove(tx, chainKey, reorg.ancestor - window, head);
    }
    rows += await applySwapEvents(tx, chainKey, events);
    if (from <= to) {
      await saveWatchedBlocks(tx, chainKey, blocks, to - window);
      await moveWatcherCursor(tx, chainKey, cursor, to);
    } else if (reorg) {
      await moveWatcherCursor(tx, chainKey, cursor, reorg.ancestor);
    }
    rows += await updateConfirmations(tx, chainKey, head);
    await setChainHeight(tx, chainKey, head);
    return rows;
  });
}
