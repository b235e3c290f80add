import { decodeEventLog, type Hex } from 'viem';
import type { Db } from '../../store/database.ts';
import type { SwapEvent, WatchedBlock } from '../../store/swap-events.ts';
import type { Chain } from '../registry.ts';
import { HTLC_EVENTS, htlcSwapEvent, type HtlcLog } from '../solidity-htlc/htlc-events.ts';
import { ChainMovedError, pollBlockRange, type BlockRangePoll } from '../watch-cursor.ts';
import { tronToEvmHex } from './address.ts';
import type { TronApi, TronBlockHeader, TronTransactionInfo } from './api.ts';

export interface TronWatcherOptions {
  /** Blocks below the head whose ids are kept and checked for reorgs (default max(confirmation target, 20)). */
  confirmationWindow?: number;
  /** Most blocks one poll reads (default 50). */
  batchBlocks?: number;
  /** The first block to read when the chain has no cursor yet (default: the window below the head). */
  startBlock?: bigint;
}

export type TronPollResult = BlockRangePoll;

/** Blocks read at once within a poll: two requests each. */
const READ_CONCURRENCY = 10;

const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * Follows one Tron chain's HTLC contracts and records their events on the swaps they name. Each poll
 * reads the head, checks that the last processed block is still on the chain (undoing what removed
 * blocks recorded when it is not), then reads each new block's header and its transactions' infos
 * (`wallet/gettransactioninfobyblocknum`, one request per block with every log in it, which any full
 * node serves), keeps the logs of the HTLC contracts and writes events, cursor, the window's block
 * ids, confirmation counts and height in one transaction. Its cost grows with blocks, never with orders.
 */
export class TronWatcher {
  readonly confirmationWindow: number;
  readonly batchBlocks: number;
  /** The HTLC contracts as logs name them: 20-byte hex, lower case, no 0x. */
  private readonly contracts: Set<string>;

  constructor(
    private readonly db: Db,
    readonly chain: Chain,
    private readonly api: TronApi,
    private readonly options: TronWatcherOptions = {},
  ) {
    if (chain.family !== 'tron') throw new Error(`${chain.key} is not a Tron chain`);
    this.confirmationWindow = options.confirmationWindow ?? Math.max(chain.confirmationTarget, 20);
    this.batchBlocks = options.batchBlocks ?? 50;
    if (this.confirmationWindow < 1 || this.batchBlocks < 1) throw new Error('confirmationWindow and batchBlocks must be at least 1');
    this.contracts = new Set(chain.assets.filter((a) => a.htlc.address !== '').map((a) => tronToEvmHex(a.htlc.address).slice(2).toLowerCase()));
    if (this.contracts.size === 0) throw new Error(`${chain.key} has no HTLC contract address to watch`);
  }

  poll(): Promise<TronPollResult> {
    return pollBlockRange(this.db, this.chain.key, {
      window: BigInt(this.confirmationWindow),
      batchBlocks: this.batchBlocks,
      ...(this.options.startBlock !== undefined ? { startBlock: this.options.startBlock } : {}),
      head: async () => (await this.api.nowBlock()).number,
      hashAt: (n) => this.blockId(n),
      read: (from, to, parentId) => this.read(from, to, parentId),
    });
  }

  private async blockId(number: bigint): Promise<string> {
    const block = await this.api.blockByNumber(number);
    if (!block) throw new ChainMovedError(`${this.chain.key}: block ${number} is gone`);
    return block.blockId;
  }

  /** The blocks [from, to] with their transactions' infos, chained to each other and to `parentId`. */
  private async read(from: bigint, to: bigint, parentId: string | undefined): Promise<{ events: SwapEvent[]; blocks: WatchedBlock[] }> {
    const numbers: bigint[] = [];
    for (let n = from; n <= to; n++) numbers.push(n);
    const read: Array<{ header: TronBlockHeader; infos: TronTransactionInfo[] }> = [];
    for (let i = 0; i < numbers.length; i += READ_CONCURRENCY) {
      read.push(
        ...(await Promise.all(
          numbers.slice(i, i + READ_CONCURRENCY).map(async (n) => {
            const [header, infos] = await Promise.all([this.api.blockByNumber(n), this.api.transactionInfosOfBlock(n)]);
            if (!header) throw new ChainMovedError(`${this.chain.key}: block ${n} is gone`);
            return { header, infos };
          }),
        )),
      );
    }
    const moved = (n: bigint) => new ChainMovedError(`${this.chain.key}: the chain changed while block ${n} was read`);
    if (parentId !== undefined && read[0]!.header.parentId !== parentId) throw moved(from);
    for (let i = 1; i < read.length; i++) if (read[i]!.header.parentId !== read[i - 1]!.header.blockId) throw moved(read[i]!.header.number);

    const events: SwapEvent[] = [];
    for (const { header, infos } of read) {
      for (const info of infos) {
        // A transaction info names its block by number and time only (Tron gives it no block id): infos
        // of a block that replaced the header's between the two reads differ in one of them.
        if (info.blockNumber !== header.number || info.blockTimestampMs !== header.timestampMs) throw moved(header.number);
        if (info.failed) continue;
        for (const log of info.logs) {
          if (!this.contracts.has(log.address)) continue;
          const decoded = decodeHtlcLog(log);
          if (decoded) events.push(toSwapEvent(decoded, info.id, header));
        }
      }
    }
    const windowStart = maxBig(from, to - BigInt(this.confirmationWindow) + 1n);
    const blocks = read.filter(({ header }) => header.number >= windowStart).map(({ header }) => ({ number: header.number, hash: header.blockId }));
    return { events, blocks };
  }
}

/** An HTLC event of a Tron log (topics and data hex without 0x), or undefined for another event. */
export function decodeHtlcLog(log: { topics: string[]; data: string }): HtlcLog | undefined {
  try {
    const decoded = decodeEventLog({
      abi: HTLC_EVENTS,
      topics: log.topics.map((t) => `0x${t}`) as [Hex, ...Hex[]],
      data: `0x${log.data}`,
      strict: true,
    });
    return decoded;
  } catch {
    return undefined; // InitiatedWithDestinationData (its Initiated is in the same transaction), or a foreign event
  }
}

const toSwapEvent = (log: HtlcLog, txId: string, block: TronBlockHeader): SwapEvent =>
  htlcSwapEvent(log, { txHash: txId, blockNumber: block.number, timestamp: new Date(block.timestampMs) });
