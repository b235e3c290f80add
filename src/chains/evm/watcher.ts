import type { Address, Hash, PublicClient } from 'viem';
import type { Db } from '../../store/database.ts';
import { watcherCursor, type SwapEvent, type WatchedBlock } from '../../store/swap-events.ts';
import type { Chain } from '../registry.ts';
import { ChainMovedError, commitWatchedBatch, resumePoint, type Reorg, type Resume } from '../watch-cursor.ts';

import { HTLC_EVENTS } from '../solidity-htlc/htlc-events.ts';
import { htlcAddresses, toSwapEvent } from './htlc-events.ts';

export interface EvmWatcherOptions {
  /** Blocks below the head whose hashes are kept and checked for reorgs (default max(confirmation target, 12)). */
  confirmationWindow?: number;
  /** Most blocks one eth_getLogs call covers (default 500). */
  batchBlocks?: number;
  /** The first block to read when the chain has no cursor yet (default: the window below the head). */
  startBlock?: bigint;
}


export interface PollResult {
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

interface Header {
  number: bigint;
  hash: Hash;
  parentHash: Hash;
  timestamp: bigint;
}


const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * Follows one EVM chain's HTLC contracts and records their events on the swaps they name. Each poll
 * reads the head, checks the last processed block is still on the chain (walking back to the common
 * ancestor and undoing what the removed blocks recorded when it is not), reads the next block range
 * with one eth_getLogs over all the chain's HTLC contracts, and writes the events, the cursor, the
 * window's block hashes, the confirmation counts and the chain height in one transaction. Its cost
 * grows with blocks and events, never with the number of orders.
 */
export class EvmWatcher {
  readonly confirmationWindow: number;
  readonly batchBlocks: number;
  private readonly addresses: Address[];

  constructor(
    private readonly db: Db,
    readonly chain: Chain,
    private readonly client: PublicClient,
    private readonly options: EvmWatcherOptions = {},
  ) {
    if (chain.family !== 'evm') throw new Error(`${chain.key} is not an EVM chain`);
    this.confirmationWindow = options.confirmationWindow ?? Math.max(chain.confirmationTarget, 12);
    this.batchBlocks = options.batchBlocks ?? 500;
    if (this.confirmationWindow < 1 || this.batchBlocks < 1) throw new Error('confirmationWindow and batchBlocks must be at least 1');
    this.addresses = htlcAddresses(chain);
    // eth_getLogs without an address matches every contract of the chain.
    if (this.addresses.length === 0) throw new Error(`${chain.key} has no HTLC contract address to watch`);
  }

  /** One pass: reorg check, the next block range, confirmations and height. */
  async poll(): Promise<PollResult> {
    const key = this.chain.key;
    const window = BigInt(this.confirmationWindow);
    const [head, cursor] = await Promise.all([this.client.getBlockNumber({ cacheTime: 0 }), watcherCursor(this.db, key)]);
    const resume: Resume = cursor === undefined ? { last: this.startBlock(head) - 1n } : await this.resumePoint(cursor, head);
    const { last, reorg } = resume;
    const from = last + 1n;
    const to = minBig(head, last + BigInt(this.batchBlocks));
    const read = from <= to ? await this.read(from, to, resume.lastHash) : { events: [], blocks: [] };

    const changed = await commitWatchedBatch(this.db, key, { cursor, from, to, head, window, events: read.events, blocks: read.blocks, ...(reorg ? { reorg } : {}) });
    return { from, to, head, events: read.events, changed, ...(reorg ? { reorg } : {}) };
  }

  private startBlock(head: bigint): bigint {
    return this.options.startBlock ?? maxBig(0n, head - BigInt(this.confirmationWindow) + 1n);
  }

  private resumePoint(cursor: bigint, head: bigint): Promise<Resume> {
    return resumePoint(this.db, this.chain.key, cursor, head, async (n) => (await this.header(n)).hash);
  }


  /**
   * The HTLC events of [from, to] with their block times, and the hashes of the range's blocks
   * inside the window. Headers are read for the window, the first block and the blocks with events,
   * and must chain together and match the logs, or the chain moved while being read.
   */
  private async read(from: bigint, to: bigint, parentHash: string | undefined): Promise<{ events: SwapEvent[]; blocks: WatchedBlock[] }> {
    // The headers known to be needed are read with the logs; those of other blocks with events after.
    const windowStart = maxBig(from, to - BigInt(this.confirmationWindow) + 1n);
    const known = new Set<bigint>([from]);
    for (let n = windowStart; n <= to; n++) known.add(n);
    const [logs, knownHeaders] = await Promise.all([
      this.client.getLogs({ address: this.addresses, events: HTLC_EVENTS, fromBlock: from, toBlock: to, strict: true }),
      Promise.all([...known].map((n) => this.header(n))),
    ]);
    const others = [...new Set(logs.map((l) => l.blockNumber))].filter((n) => !known.has(n));
    const headers = new Map([...knownHeaders, ...(await Promise.all(others.map((n) => this.header(n))))].map((h) => [h.number, h]));
    const at = (n: bigint): Header => headers.get(n)!;

    const moved = (what: string) => new ChainMovedError(`${this.chain.key}: the chain changed while block ${what} was read`);
    if (parentHash !== undefined && at(from).parentHash !== parentHash) throw moved(`${from}`);
    for (let n = windowStart + 1n; n <= to; n++) if (at(n).parentHash !== at(n - 1n).hash) throw moved(`${n}`);
    for (const log of logs) if (log.blockHash !== at(log.blockNumber).hash) throw moved(`${log.blockNumber}`);

    const events = [...logs]
      .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1))
      .map((log) => toSwapEvent(log, new Date(Number(at(log.blockNumber).timestamp) * 1000)));
    const blocks: WatchedBlock[] = [];
    for (let n = windowStart; n <= to; n++) blocks.push({ number: n, hash: at(n).hash });
    return { events, blocks };
  }

  private async header(blockNumber: bigint): Promise<Header> {
    const block = await this.client.getBlock({ blockNumber });
    return { number: blockNumber, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp };
  }
}
