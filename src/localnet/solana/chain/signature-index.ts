import type { TokenBalance } from './token-accounts.ts';
import type { TransactionErrorJson } from './transaction-errors.ts';

export interface InnerInstructionsJson {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

/** A transaction that landed (succeeded, or failed and paid its fee), with what getTransaction returns. */
export interface TransactionRecord {
  signature: string;
  slot: number;
  blockTime: number;
  /** The transaction as sent, base64 wire format. */
  wire: string;
  version: 'legacy' | 0;
  /** Every account key: static keys, then those loaded from lookup tables (writable, then read-only). */
  accountKeys: string[];
  loadedAddresses: { writable: string[]; readonly: string[] };
  err: TransactionErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logMessages: string[];
  innerInstructions: InnerInstructionsJson[];
  returnData: { programId: string; data: [string, 'base64'] } | null;
  computeUnitsConsumed: bigint;
}

/** Position of the first element of the ascending `list` that is >= `value`. */
function lowerBound(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Every landed transaction in execution order, by signature and by account key. Each account key
 * keeps the ascending positions of the transactions that name it, so listing an address's
 * signatures costs a binary search for `before` plus one step per signature returned: it does not
 * grow with the chain or with other addresses' activity.
 */
export class SignatureIndex {
  private readonly records: TransactionRecord[] = [];
  private readonly positionBySignature = new Map<string, number>();
  private readonly positionsByAccount = new Map<string, number[]>();
  private unsaved: TransactionRecord[] = [];

  constructor(saved: readonly TransactionRecord[] = []) {
    for (const record of saved) this.insert(record);
  }

  get size(): number {
    return this.records.length;
  }

  add(record: TransactionRecord): void {
    this.insert(record);
    this.unsaved.push(record);
  }

  get(signature: string): TransactionRecord | undefined {
    const position = this.positionBySignature.get(signature);
    return position === undefined ? undefined : this.records[position];
  }

  has(signature: string): boolean {
    return this.positionBySignature.has(signature);
  }

  /**
   * An address's transactions, newest first: strictly older than `before` (none when `before` is
   * unknown, as the real RPC does), strictly newer than `until`, at most `limit`, none from a slot
   * above `maxSlot`.
   */
  forAddress(address: string, options: { before?: string; until?: string; limit: number; maxSlot: number }): TransactionRecord[] {
    const positions = this.positionsByAccount.get(address) ?? [];
    let end = positions.length;
    if (options.before !== undefined) {
      const before = this.positionBySignature.get(options.before);
      if (before === undefined) return [];
      end = lowerBound(positions, before);
    }
    const until = options.until === undefined ? -1 : (this.positionBySignature.get(options.until) ?? -1);
    const out: TransactionRecord[] = [];
    for (let i = end - 1; i >= 0 && out.length < options.limit; i--) {
      const position = positions[i]!;
      if (position <= until) break;
      const record = this.records[position]!;
      // Only the newest few slots can be above maxSlot: this skips at most their transactions.
      if (record.slot > options.maxSlot) continue;
      out.push(record);
    }
    return out;
  }

  /** The records added since the last call, for the data directory. */
  takeUnsaved(): TransactionRecord[] {
    const out = this.unsaved;
    this.unsaved = [];
    return out;
  }

  /** Puts records back after a failed save so the next save writes them. */
  restoreUnsaved(records: TransactionRecord[]): void {
    this.unsaved = [...records, ...this.unsaved];
  }

  private insert(record: TransactionRecord): void {
    const position = this.records.length;
    this.records.push(record);
    this.positionBySignature.set(record.signature, position);
    for (const key of new Set(record.accountKeys)) {
      let positions = this.positionsByAccount.get(key);
      if (!positions) this.positionsByAccount.set(key, (positions = []));
      positions.push(position);
    }
  }
}
