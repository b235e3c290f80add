import { type Address, type Signature } from '@solana/kit';
import { solanaRpc } from './rpc.ts';
import type { Db } from '../../store/database.ts';
import { recordWatcherPoll, watcherCursor, type SwapEvent } from '../../store/swap-events.ts';
import type { Chain } from '../registry.ts';
import { htlcPrograms, swapEventsOfTransaction, type HtlcProgram } from './htlc-events.ts';

/** Signatures asked in a poll's first page of a program; later pages grow eightfold to `pageSize`. */
const FIRST_PAGE = 16;
/** Transactions read at once. */
const READS_IN_FLIGHT = 32;

export interface SolanaWatcherOptions {
  /** The first slot to read when the chain has no cursor yet (default: `startWindow` slots below the head). */
  startSlot?: bigint;
  /** Slots below the head read on a first start (default 150, a minute). */
  startWindow?: number;
  /** The largest getSignaturesForAddress page (default 1000, the RPC's maximum). */
  pageSize?: number;
}

export interface SolanaPollResult {
  /** The slots read; empty (`from > to`) when no slot was confirmed since the last poll. */
  from: bigint;
  to: bigint;
  head: bigint;
  events: SwapEvent[];
  changed: number;
}

/**
 * Follows one Solana chain's HTLC programs and records their events on the swaps they name. A poll
 * reads the newest confirmed slot, lists each program's successful transactions in the slots since
 * the cursor (getSignaturesForAddress, newest first, paged back to the cursor), reads those
 * transactions' logs, and writes their events, the cursor, the confirmation counts and the chain
 * height in one database transaction. Its cost grows with slots and the programs' transactions,
 * never with the number of open orders.
 *
 * Slots stand in for blocks: a swap's confirmations are the confirmed slots since its initiate, so a
 * chain's `confirmation_target` of 32 is about Solana's `finalized`. Only `confirmed` slots are read,
 * which a supermajority has voted on: they are not rolled back, and there is no reorg to undo.
 */
export class SolanaWatcher {
  private readonly rpc;
  private readonly programs: HtlcProgram[];
  private readonly pageSize: number;

  constructor(
    private readonly db: Db,
    readonly chain: Chain,
    rpcUrl: string,
    private readonly options: SolanaWatcherOptions = {},
  ) {
    if (chain.family !== 'solana') throw new Error(`${chain.key} is not a Solana chain`);
    this.rpc = solanaRpc(rpcUrl);
    this.programs = htlcPrograms(chain);
    if (this.programs.length === 0) throw new Error(`${chain.key} has no HTLC program address to watch`);
    this.pageSize = options.pageSize ?? 1_000;
  }

  async poll(): Promise<SolanaPollResult> {
    const key = this.chain.key;
    const [head, cursor] = await Promise.all([this.rpc.getSlot({ commitment: 'confirmed' }).send(), watcherCursor(this.db, key)]);
    const last = cursor ?? this.options.startSlot ?? head - BigInt(this.options.startWindow ?? 150);
    const from = last + 1n;
    const events = from <= head ? await this.read(from, head) : [];
    const changed = await recordWatcherPoll(this.db, key, { events, head, ...(from <= head ? { cursor: { from: cursor, to: head } } : {}) });
    return { from, to: head, head, events, changed };
  }

  /** The HTLC events of the programs' successful transactions in slots [from, to], in chain order. */
  private async read(from: bigint, to: bigint): Promise<SwapEvent[]> {
    const listed = (await Promise.all(this.programs.map((p) => this.signatures(p.address, from, to)))).flat();
    // A transaction that calls both programs is listed under each; its events are read once.
    const unique = [...new Map(listed.map((s) => [s.signature, s])).values()].sort((a, b) => (a.slot === b.slot ? 0 : a.slot < b.slot ? -1 : 1));
    // A bounded number in flight: after downtime a poll may cover thousands of transactions.
    const txs = [];
    for (let i = 0; i < unique.length; i += READS_IN_FLIGHT) {
      const chunk = unique.slice(i, i + READS_IN_FLIGHT);
      txs.push(
        ...(await Promise.all(
          chunk.map((s) => this.rpc.getTransaction(s.signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send()),
        )),
      );
    }
    return txs.flatMap((tx, i) => {
      if (!tx || tx.meta?.err) return [];
      const { signature, slot } = unique[i]!;
      const timestamp = tx.blockTime === null ? null : new Date(Number(tx.blockTime) * 1000);
      return swapEventsOfTransaction(this.programs, tx.meta?.logMessages ?? [], { txHash: signature, blockNumber: slot, timestamp });
    });
  }

  /**
   * The program's successful transactions in slots [from, to], paging back from the newest. Pages
   * start small and grow: a poll of a slot or two usually needs a handful of signatures, not a full page.
   */
  private async signatures(program: Address, from: bigint, to: bigint): Promise<Array<{ signature: Signature; slot: bigint }>> {
    const found: Array<{ signature: Signature; slot: bigint }> = [];
    let before: Signature | undefined;
    for (let limit = Math.min(FIRST_PAGE, this.pageSize); ; limit = Math.min(limit * 8, this.pageSize)) {
      const page = await this.rpc.getSignaturesForAddress(program, { commitment: 'confirmed', limit, ...(before ? { before } : {}) }).send();
      for (const s of page) {
        if (s.slot < from) return found;
        if (s.slot <= to && s.err === null) found.push({ signature: s.signature, slot: s.slot });
      }
      if (page.length < limit) return found;
      before = page.at(-1)!.signature;
    }
  }
}
