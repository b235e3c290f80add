import type { Address, Hash, PublicClient } from 'viem';
import type { Db } from '../../store/database.ts';
import type { SwapEvent, WatchedBlock } from '../../store/swap-events.ts';
import type { Chain } from '../registry.ts';
import { ChainMovedError, pollBlockRange, type BlockRangePoll } from '../watch-cursor.ts';
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

export type PollResult = BlockRangePoll;

interface Header {
  number: bigint;
  hash: Hash;
  parentHash: Hash;
  timestamp: bigint;
}

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
  poll(): Promise<PollResult> {
    return pollBlockRange(this.db, this.chain.key, {
      window: BigInt(this.confirmationWindow),
      batchBlocks: this.batchBlocks,
      ...(this.options.startBlock !== undefined ? { startBlock: this.options.startBlock } : {}),
      head: () => this.client.getBlockNumber({ cacheTime: 0 }),
      hashAt: async (n) => (await this.header(n)).hash,
      read: (from, to, parentHash) => this.read(from, to, parentHash),
    });
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
