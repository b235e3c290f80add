import {
  dropUnconfirmed,
  recordSpends,
  recordUtxos,
  addressesWithOutputs,
  refreshSwapFunding,
  swapsWithMinedSpend,
  undoUtxosAbove,
  unconfirmedTxids,
  type NewUtxo,
  type SpentUtxo,
} from './store/utxos.ts';
import type { Db } from '../../store/database.ts';
import {
  forgetWatchedBlocksAbove,
  recordWatcherPoll,
  recountConfirmationsAbove,
  undoSwapEventsAbove,
  watcherCursor,
  type SwapEvent,
} from '../../store/swap-events.ts';
import type { Chain } from '../registry.ts';
import { ChainMovedError, resumePoint, watcherPoll, type Reorg, type Resume } from '../watch-cursor.ts';

import { scanTransactions, type RpcBlock, type RpcTransaction, type Scan, type SpendCandidate } from './chain-data.ts';
import { BitcoinRpcError, RPC_ERRORS } from './rpc.ts';
import { ScriptIndex } from './script-index.ts';
import { scanUtxoSet } from './utxo-scan.ts';

/** What the watcher needs of a node's JSON-RPC (`BitcoinRpc` has it; tests and the bench wrap it to count calls). */
export interface BitcoinRpcClient {
  call<T>(method: string, params?: unknown[]): Promise<T>;
}

export interface BitcoinWatcherOptions {
  /** Addresses besides the HTLCs whose outputs are recorded: the solver's wallet (key-path P2TR). */
  walletAddresses?: readonly string[];
  /** Blocks below the head whose hashes are kept and checked for reorgs (default max(confirmation target, 12)). */
  confirmationWindow?: number;
  /** Most blocks one poll reads (default 10; a verbose block is large). */
  batchBlocks?: number;
  /** The first block to read when the chain has no cursor yet (default: the window below the head). */
  startBlock?: bigint;
  /** Follow the mempool for "detected" states (default true). */
  mempool?: boolean;
  /** Most new mempool transactions one poll fetches (default 500); the rest wait for the next poll. */
  mempoolBatch?: number;
}

/** What a poll did with the mempool (absent while the watcher is catching up with the chain). */
export interface MempoolStep {
  /** Transactions in the node's mempool, not counting those of the blocks just read. */
  size: number;
  /** New transactions fetched and scanned. */
  fetched: number;
  /** Unmined transactions that left the mempool and were forgotten. */
  dropped: string[];
}

export interface BitcoinPollResult {
  /** The block range read; empty (`from > to`) when there was no new block. */
  from: bigint;
  to: bigint;
  head: bigint;
  /** Outputs paying watched scripts, from the blocks and the new mempool transactions. */
  received: NewUtxo[];
  /** Recorded outputs that the blocks and the new mempool transactions spend. */
  spent: SpentUtxo[];
  /** The redeems and refunds recorded on swaps (block number 0: in the mempool). */
  events: SwapEvent[];
  mempool?: MempoolStep;
  /** Swap rows written (funding derived, events recorded or undone, confirmations counted). */
  changed: number;
  reorg?: Reorg;
}

interface BlockScan extends Scan {
  number: bigint;
  hash: string;
  time: Date;
}

interface MempoolRead {
  step: MempoolStep;
  scan: Scan;
  /** The mempool as known after this poll: what the next poll diffs against. */
  known: Set<string>;
}

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const FETCH_CONCURRENCY = 8;

/**
 * Follows one Bitcoin-family chain (Bitcoin, Litecoin: the registry chain's network gives the
 * address encoding) for the HTLCs of its swaps and the watched wallet addresses. Each new block is
 * read once (`getblock <hash> 2`) and its outputs matched against an in-memory index of the watched
 * scripts, its inputs against the recorded outputs (the table's primary key), so its cost grows with
 * blocks and transactions, never with the number of orders. Outputs go to `bitcoin_utxos`; a swap's
 * funding is derived from its outputs, its redeems and refunds are read from the spending witnesses.
 * Once at the head, a poll diffs the mempool (`getrawmempool`, then only the new transactions) for
 * the detected states. Reorgs are found by the kept block hashes and undone down to the common
 * ancestor. Everything a poll found is written in one transaction.
 */
export class BitcoinWatcher {
  readonly confirmationWindow: number;
  readonly batchBlocks: number;
  private readonly scripts: ScriptIndex;
  private readonly mempoolBatch: number;
  /** The mempool transactions already scanned; undefined until the first poll seeds it from the database. */
  private knownMempool: Set<string> | undefined;

  constructor(
    private readonly db: Db,
    readonly chain: Chain,
    private readonly rpc: BitcoinRpcClient,
    private readonly options: BitcoinWatcherOptions = {},
  ) {
    if (chain.family !== 'bitcoin') throw new Error(`${chain.key} is not a Bitcoin-family chain`);
    this.confirmationWindow = options.confirmationWindow ?? Math.max(chain.confirmationTarget, 12);
    this.batchBlocks = options.batchBlocks ?? 10;
    this.mempoolBatch = options.mempoolBatch ?? 500;
    if (this.confirmationWindow < 1 || this.batchBlocks < 1 || this.mempoolBatch < 1) {
      throw new Error('confirmationWindow, batchBlocks and mempoolBatch must be at least 1');
    }
    this.scripts = new ScriptIndex(chain.key, chain.network, options.walletAddresses ?? []);
  }

  /** How many scripts the index holds (HTLCs and wallet addresses). */
  get watchedScripts(): number {
    return this.scripts.size;
  }

  /** One pass: new swaps into the index, reorg check, the next blocks, the mempool, confirmations and height. */
  async poll(): Promise<BitcoinPollResult> {
    const key = this.chain.key;
    const window = BigInt(this.confirmationWindow);
    await this.scripts.refresh(this.db);
    await this.rescanWallets();
    const known = this.knownMempool ?? new Set(await unconfirmedTxids(this.db, key));
    // The mempool before the head: a transaction missing from it was mined at or below the head
    // (or dropped), so the blocks read below account for every one that left.
    const snapshot = this.options.mempool === false ? undefined : await this.rpc.call<string[]>('getrawmempool');
    const head = BigInt(await this.rpc.call<number>('getblockcount'));
    const cursor = await watcherCursor(this.db, key);
    const resume: Resume = cursor === undefined ? { last: this.startBlock(head) - 1n } : await this.resumePoint(cursor, head);
    const { last, reorg } = resume;
    const from = last + 1n;
    const to = minBig(head, last + BigInt(this.batchBlocks));
    const blocks = from <= to ? await this.readBlocks(from, to, resume.lastHash) : [];
    const mined = new Set(blocks.flatMap((b) => b.txids));
    const mempool = snapshot && to >= head ? await this.readMempool(snapshot, known, mined) : undefined;

    const found = await this.db.transaction().execute(async (tx) => {
      let changed = 0;
      const touched = new Set<string>();
      const received: NewUtxo[] = [];
      const spent: SpentUtxo[] = [];
      const minedEvents: SwapEvent[] = [];
      let pendingEvents: SwapEvent[] = [];
      if (reorg) {
        changed += await undoSwapEventsAbove(tx, key, reorg.ancestor);
        for (const address of await undoUtxosAbove(tx, key, reorg.ancestor)) touched.add(address);
        await forgetWatchedBlocksAbove(tx, key, reorg.ancestor);
        changed += await recountConfirmationsAbove(tx, key, reorg.ancestor - window, head);
      }
      const record = async (scan: Scan, block: { number: bigint; time: Date } | null, events: SwapEvent[]) => {
        await recordUtxos(tx, key, scan.outputs);
        for (const output of scan.outputs) touched.add(output.address);
        received.push(...scan.outputs);
        const spends = await recordSpends(tx, key, scan.inputs);
        spent.push(...spends);
        events.push(...spendEvents(spends, scan.inputs, block));
      };
      for (const block of blocks) await record(block, { number: block.number, time: block.time }, minedEvents);
      if (mempool) {
        const dropped = await dropUnconfirmed(tx, key, mempool.step.dropped);
        changed += dropped.changed;
        for (const address of dropped.addresses) touched.add(address);
        await record(mempool.scan, null, pendingEvents);
        pendingEvents = await this.withoutMinedSpends(tx, pendingEvents);
      }
      changed += await refreshSwapFunding(tx, key, [...touched]);
      // Mined spends last: per swap and kind, recordWatcherPoll keeps the last event.
      const events = [...pendingEvents, ...minedEvents];
      const batch = { cursor, from, to, head, window, events, blocks, ...(reorg ? { reorg } : {}) };
      changed += await recordWatcherPoll(tx, key, watcherPoll(batch));
      return { changed, received, spent, events };
    });
    // Only after the commit: a failed poll scans the same transactions again.
    this.knownMempool = mempool?.known ?? new Set([...known].filter((txid) => !mined.has(txid)));
    return { from, to, head, ...found, ...(mempool ? { mempool: mempool.step } : {}), ...(reorg ? { reorg } : {}) };
  }

  /**
   * Outputs paid to newly watched wallets before they were watched (a solver funded before it proved its
   * key, a service started on a funded wallet), read once from the node's UTXO set; a wallet with
   * recorded outputs was watched before, and the blocks since the cursor hold the rest.
   */
  private async rescanWallets(): Promise<void> {
    const fresh = this.scripts.unscannedWallets;
    if (fresh.length === 0) return;
    const known = await addressesWithOutputs(this.db, this.chain.key, fresh);
    const outputs = await scanUtxoSet(this.rpc, fresh.filter((a) => !known.has(a)));
    const times = new Map<bigint, Date>();
    for (const { height } of outputs) {
      if (!times.has(height)) times.set(height, new Date((await this.rpc.call<{ time: number }>('getblockheader', [await this.blockHash(height)])).time * 1000));
    }
    const utxos = outputs.flatMap((o) => {
      const address = this.scripts.addressOf(o.script);
      return address === undefined ? [] : [{ txid: o.txid, vout: o.vout, script: o.script, address, value: o.value, blockNumber: o.height, blockTime: times.get(o.height)! }];
    });
    await recordUtxos(this.db, this.chain.key, utxos);
    this.scripts.markScanned(fresh);
  }

  private startBlock(head: bigint): bigint {
    return this.options.startBlock ?? maxBig(0n, head - BigInt(this.confirmationWindow) + 1n);
  }

  private resumePoint(cursor: bigint, head: bigint): Promise<Resume> {
    return resumePoint(this.db, this.chain.key, cursor, head, async (n) => this.blockHash(n));
  }

  /**
   * Reads and scans blocks [from, to] one at a time (only the matches are kept); each must link to the
   * one before. Each is matched against the swaps known once it was read.
   */
  private async readBlocks(from: bigint, to: bigint, parentHash: string | undefined): Promise<Array<BlockScan & { txids: string[] }>> {
    const scans: Array<BlockScan & { txids: string[] }> = [];
    let parent = parentHash;
    for (let n = from; n <= to; n++) {
      const block = await this.rpc.call<RpcBlock>('getblock', [await this.blockHash(n), 2]);
      if (BigInt(block.height) !== n || (parent !== undefined && block.previousblockhash !== parent)) {
        throw new ChainMovedError(`${this.chain.key}: the chain changed while block ${n} was read`);
      }
      parent = block.hash;
      const time = new Date(block.time * 1000);
      // A swap created after this poll's first refresh may be paid in this very block: its order was
      // committed before its client paid, so a refresh after the block was read holds it.
      await this.scripts.refresh(this.db);
      scans.push({ number: n, hash: block.hash, time, txids: block.tx.map((t) => t.txid), ...scanTransactions(block.tx, this.scripts, { number: n, time }) });
    }
    return scans;
  }

  /**
   * The mempool's changes since the last poll: transactions gone unmined (dropped), and the new ones,
   * fetched one by one (at most `mempoolBatch`) and scanned. Transactions of the blocks just read are
   * neither: they are mined.
   */
  private async readMempool(snapshot: readonly string[], known: ReadonlySet<string>, mined: ReadonlySet<string>): Promise<MempoolRead> {
    const current = new Set(snapshot.filter((txid) => !mined.has(txid)));
    const dropped = [...known].filter((txid) => !current.has(txid) && !mined.has(txid));
    const fresh = [...current].filter((txid) => !known.has(txid)).slice(0, this.mempoolBatch);
    const txs = await this.fetchTransactions(fresh);
    // As for a block: the swaps created while the transactions were fetched, before matching them.
    await this.scripts.refresh(this.db);
    const next = new Set([...known].filter((txid) => current.has(txid)));
    for (const tx of txs) next.add(tx.txid);
    return { step: { size: current.size, fetched: txs.length, dropped }, scan: scanTransactions(txs, this.scripts, null), known: next };
  }

  /** The transactions still in the mempool among `txids` (one that left meanwhile is skipped). */
  private async fetchTransactions(txids: readonly string[]): Promise<RpcTransaction[]> {
    const txs: RpcTransaction[] = [];
    for (let i = 0; i < txids.length; i += FETCH_CONCURRENCY) {
      const batch = await Promise.all(
        txids.slice(i, i + FETCH_CONCURRENCY).map((txid) =>
          this.rpc.call<RpcTransaction>('getrawtransaction', [txid, true]).catch((error: unknown) => {
            if (error instanceof BitcoinRpcError && error.code === RPC_ERRORS.invalidAddressOrKey) return undefined;
            throw error;
          }),
        ),
      );
      for (const tx of batch) if (tx) txs.push(tx);
    }
    return txs;
  }

  /** Drops mempool spend events of swaps whose spend of that kind is already mined: a status never goes back for them. */
  private async withoutMinedSpends(db: Db, events: SwapEvent[]): Promise<SwapEvent[]> {
    if (events.length === 0) return events;
    const ids = (kind: 'redeemed' | 'refunded') => events.filter((e) => e.kind === kind).map((e) => e.swapId);
    const redeemed = await swapsWithMinedSpend(db, this.chain.key, 'redeemed', ids('redeemed'));
    const refunded = await swapsWithMinedSpend(db, this.chain.key, 'refunded', ids('refunded'));
    return events.filter((e) => !(e.kind === 'redeemed' ? redeemed : refunded).has(e.swapId));
  }

  private blockHash(n: bigint): Promise<string> {
    return this.rpc.call<string>('getblockhash', [Number(n)]);
  }
}

/** The redeem and refund events of the recorded outputs a scan's inputs spend (a cooperative instant refund is a refund). */
function spendEvents(spends: readonly SpentUtxo[], inputs: readonly SpendCandidate[], block: { number: bigint; time: Date } | null): SwapEvent[] {
  if (spends.length === 0) return [];
  const byOutpoint = new Map(inputs.map((i) => [`${i.txid}:${i.vout}`, i]));
  const events: SwapEvent[] = [];
  for (const spend of spends) {
    const htlc = byOutpoint.get(`${spend.txid}:${spend.vout}`)?.htlc;
    if (!htlc) continue;
    const base = { swapId: spend.address, txHash: spend.spender, blockNumber: block?.number ?? 0n, timestamp: block?.time ?? null };
    events.push(htlc.kind === 'redeem' ? { ...base, kind: 'redeemed', secret: htlc.secret } : { ...base, kind: 'refunded' });
  }
  return events;
}
