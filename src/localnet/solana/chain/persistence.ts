import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, truncateSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { LiteSVM } from 'litesvm';
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from './json.ts';
import type { TransactionRecord } from './signature-index.ts';
import type { SlotRecord } from './slot-clock.ts';

const FORMAT = 1;

interface Meta {
  format: number;
  genesisHash: string;
  /** The snapshot file in use is state-<generation>.bin. */
  generation: number;
  /** How many lines of transactions.jsonl belong to this state; later lines are from an unfinished save. */
  transactionCount: number;
  /** The recent slots and their blockhashes, oldest first; the last is the slot saved. */
  slots: SlotRecord[];
  /** When the save was made (Unix milliseconds). */
  savedAt: number;
}

export interface SavedChain {
  svm: LiteSVM;
  genesisHash: string;
  slots: SlotRecord[];
  transactions: TransactionRecord[];
  /** Unix milliseconds; absent in a directory saved before this field existed. */
  savedAt: number | undefined;
}

function reviveRecord(raw: TransactionRecord): TransactionRecord {
  return {
    ...raw,
    fee: BigInt(raw.fee),
    preBalances: raw.preBalances.map((b) => BigInt(b)),
    postBalances: raw.postBalances.map((b) => BigInt(b)),
    computeUnitsConsumed: BigInt(raw.computeUnitsConsumed),
  };
}

/**
 * A chain's data directory: a LiteSVM snapshot (state-<n>.bin), the landed transactions
 * (transactions.jsonl, appended) and meta.json, whose atomic rename commits a save. A process killed
 * mid-save leaves the previous meta.json naming the previous snapshot and transaction count, so a
 * restart finds a consistent chain (older by at most one save interval). Renames guard against
 * process crashes, not power loss: nothing is fsynced.
 */
export class ChainDirectory {
  private readonly metaPath: string;
  private readonly transactionsPath: string;
  private generation = 0;
  private transactionCount = 0;
  private committedBytes = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.metaPath = join(dir, 'meta.json');
    this.transactionsPath = join(dir, 'transactions.jsonl');
  }

  private statePath(generation: number): string {
    return join(this.dir, `state-${generation}.bin`);
  }

  /** The saved chain, or undefined for an empty directory. */
  load(): SavedChain | undefined {
    if (!existsSync(this.metaPath)) return undefined;
    const meta = JSON.parse(readFileSync(this.metaPath, 'utf8')) as Meta;
    if (meta.format !== FORMAT) throw new Error(`${this.metaPath}: unknown format ${meta.format}; delete ${this.dir} to start a new chain`);
    const svm = LiteSVM.loadFromFile(this.statePath(meta.generation));
    const transactions: TransactionRecord[] = [];
    let bytes = 0;
    if (existsSync(this.transactionsPath)) {
      const text = readFileSync(this.transactionsPath, 'utf8');
      let start = 0;
      while (transactions.length < meta.transactionCount) {
        const end = text.indexOf('\n', start);
        if (end < 0) throw new Error(`${this.transactionsPath} holds fewer than the ${meta.transactionCount} transactions ${this.metaPath} names`);
        transactions.push(reviveRecord(parseJsonWithBigInts(text.slice(start, end)) as TransactionRecord));
        start = end + 1;
      }
      bytes = Buffer.byteLength(text.slice(0, start));
    }
    this.generation = meta.generation;
    this.transactionCount = meta.transactionCount;
    this.committedBytes = bytes;
    this.dropUncommittedTransactions();
    return { svm, genesisHash: meta.genesisHash, slots: meta.slots, transactions, savedAt: meta.savedAt };
  }

  /**
   * Writes the chain: appends `newTransactions`, then a new snapshot, then commits both with
   * meta.json. On failure nothing is committed and the caller passes the same transactions again.
   */
  save(svm: LiteSVM, state: { genesisHash: string; slots: readonly SlotRecord[]; newTransactions: readonly TransactionRecord[] }): void {
    this.dropUncommittedTransactions();
    if (state.newTransactions.length > 0) {
      appendFileSync(this.transactionsPath, state.newTransactions.map((r) => stringifyJsonWithBigInts(r)).join('\n') + '\n');
    }
    const generation = this.generation + 1;
    const statePath = this.statePath(generation);
    svm.saveToFile(`${statePath}.tmp`);
    renameSync(`${statePath}.tmp`, statePath);
    const meta: Meta = {
      format: FORMAT,
      genesisHash: state.genesisHash,
      generation,
      transactionCount: this.transactionCount + state.newTransactions.length,
      slots: [...state.slots],
      savedAt: Date.now(),
    };
    writeFileSync(`${this.metaPath}.tmp`, JSON.stringify(meta));
    renameSync(`${this.metaPath}.tmp`, this.metaPath);
    const previous = this.statePath(this.generation);
    this.generation = generation;
    this.transactionCount = meta.transactionCount;
    this.committedBytes = existsSync(this.transactionsPath) ? statSync(this.transactionsPath).size : 0;
    if (existsSync(previous)) unlinkSync(previous);
  }

  /** Cuts transactions.jsonl back to what meta.json commits (a save that failed half way). */
  private dropUncommittedTransactions(): void {
    if (!existsSync(this.transactionsPath)) {
      closeSync(openSync(this.transactionsPath, 'a'));
      return;
    }
    if (statSync(this.transactionsPath).size !== this.committedBytes) truncateSync(this.transactionsPath, this.committedBytes);
  }
}
