import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Hex } from 'viem';
import type { TronTransaction } from './transaction-rules.ts';

/** A transaction the local chain accepted: the signed Tron transaction and the EVM transaction that ran it. */
export interface IndexedTransaction {
  tx: TronTransaction;
  evmHash: Hex;
  /** The gas limit it ran with (energy limit plus the EVM's intrinsic cost), to tell running out of energy from a revert. */
  gasLimit: string;
  /** A CreateSmartContract's: the address of the contract it creates (41-prefixed hex). */
  contract?: string;
}

/**
 * The Tron transactions of the local chain by txID, and by the EVM transaction hash that ran them,
 * kept in a JSON file beside anvil's state so that a restart still answers for them. Every txID
 * ever accepted stays, so a duplicate is refused however old.
 */
export class TransactionIndex {
  private readonly byId = new Map<string, IndexedTransaction>();
  private readonly byEvmHash = new Map<string, string>();
  private readonly byContract = new Map<string, string>();
  /** Whether a transaction came since the file was written: a chain mines every 3 s, mostly with none. */
  private unsaved = false;

  constructor(private readonly file: string | undefined) {
    if (file && existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { transactions: IndexedTransaction[] };
      for (const entry of saved.transactions) this.add(entry);
      this.unsaved = false;
    }
  }

  add(entry: IndexedTransaction): void {
    this.byId.set(entry.tx.txID.toLowerCase(), entry);
    this.byEvmHash.set(entry.evmHash.toLowerCase(), entry.tx.txID.toLowerCase());
    if (entry.contract) this.byContract.set(entry.contract.toLowerCase(), entry.tx.txID.toLowerCase());
    this.unsaved = true;
  }

  has(txID: string): boolean {
    return this.byId.has(txID.toLowerCase());
  }

  get(txID: string): IndexedTransaction | undefined {
    return this.byId.get(txID.toLowerCase());
  }

  byEvm(hash: string): IndexedTransaction | undefined {
    const txID = this.byEvmHash.get(hash.toLowerCase());
    return txID === undefined ? undefined : this.byId.get(txID);
  }

  /** The CreateSmartContract transaction that creates the contract at `address` (41-prefixed hex). */
  creationOf(address: string): IndexedTransaction | undefined {
    const txID = this.byContract.get(address.toLowerCase());
    return txID === undefined ? undefined : this.byId.get(txID);
  }

  /** Writes the index when it changed (to a temporary file first, so a crash mid-write leaves the last copy). */
  save(): void {
    if (!this.file || !this.unsaved) return;
    writeFileSync(`${this.file}.tmp`, JSON.stringify({ transactions: [...this.byId.values()] }));
    renameSync(`${this.file}.tmp`, this.file);
    this.unsaved = false;
  }
}
