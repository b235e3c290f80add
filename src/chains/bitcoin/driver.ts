import { Transaction } from '@scure/btc-signer';
import { bytesToHex, hexToBytes } from '@noble/curves/utils.js';
import type { Bump, HeldItem, JobItem, NewTx, SendResult, SignResult, TxDriver, TxState } from '../../engine/driver.ts';
import type { BitcoinFeeBumper } from './fee-bump.ts';
import { systemClock, type Clock } from '../../clock.ts';
import { pastBroadcastDeadline, TxEngine, type EngineOptions } from '../../engine/engine.ts';
import { safeErrorText } from '../../errors.ts';
import { unsettledParents, type BitcoinPayload } from './store/jobs.ts';
import { spendsOf } from './store/utxos.ts';
import type { Db } from '../../store/database.ts';
import { broadcastBitcoinTx, refusedByNode } from './broadcaster.ts';
import type { BitcoinRpc } from './rpc.ts';

export interface BitcoinDriverOptions {
  db: Db;
  /** Registry chain key, the queue's `chain`. */
  chain: string;
  rpc: BitcoinRpc;
  /** Takes back a funding not mined by its broadcast deadline (the solver's wallet signs it), where the chain allows. */
  cancelFunding?: (payload: BitcoinPayload, signed: { raw: string; hash: string }) => Promise<NewTx | undefined>;
  /** Bumps stuck transactions from the solver's wallet (CPFP) or by their replacements (RBF). */
  bumper?: BitcoinFeeBumper;
  /** The time broadcast deadlines count by (the engine's). */
  clock?: Clock;
}

const TXID = /^[0-9a-f]{64}$/;
/** The node's refusal of a transaction spending outputs it does not know (or that are spent). */
const MISSING_INPUTS = /missing ?inputs|inputs-missingorspent/i;

/**
 * A transaction whose parents (the wallet's own unsettled transactions it spends outputs of) the node
 * does not have yet: the job waits for them, like one whose node is out of reach, without an attempt.
 */
class WaitingForParents extends Error {
  constructor(parents: number) {
    super(`refused for missing inputs while ${parents} unsettled job(s) it spends from may still land: waiting for them`);
    this.name = 'WaitingForParents';
  }
}

/** Checks a payload read back from the queue; a row written by something else fails loudly, not on chain. */
export function parseBitcoinPayload(value: unknown): BitcoinPayload {
  const p = value as Partial<BitcoinPayload> | null;
  if (p?.kind !== 'signed') throw new Error(`not a Bitcoin-family transaction (kind ${String(p?.kind)})`);
  if (typeof p.txid !== 'string' || !TXID.test(p.txid)) throw new Error('bitcoin job: txid is malformed');
  if (!Array.isArray(p.inputs) || !p.inputs.every((i) => typeof i?.txid === 'string' && TXID.test(i.txid) && Number.isInteger(i.vout) && i.vout >= 0)) {
    throw new Error('bitcoin job: inputs are malformed');
  }
  return p as BitcoinPayload;
}

/**
 * The Bitcoin-family driver. A Bitcoin transaction is complete when it is signed: its job is written
 * with its signed bytes (and, for a client's redeem or refund, its replacements at higher fees), so the
 * driver signs nothing; it broadcasts, and tells what became of a transaction from what the watcher
 * recorded of its inputs: mined when one of the job's transactions spent them in a block, failed when
 * another did. A node that says "not final yet" (a refund before its CSV) is waited for like one out of
 * reach. A funding still in a mempool past its broadcast deadline is taken back by a replacement where
 * the chain's nodes relay one (`cancelFunding`). The `BitcoinFeeBumper` makes its fee bumps (CPFP, RBF),
 * which the engine asks for on every pass (`bumpAfterMs` 0): it counts blocks, not seconds.
 *
 * Every Bitcoin-family transaction of the service is sent here, so rule 2 is the engine's alone. One that
 * spends outputs of another job's transaction (a funding built on an earlier one's change, a CPFP child)
 * may reach the node first: refused for missing inputs, its unsettled parents are sent (oldest first,
 * none past its own broadcast deadline), then it again; while a parent job is unsettled the refusal
 * costs no attempt.
 */
export class BitcoinDriver implements TxDriver<BitcoinPayload> {
  readonly chain: string;
  readonly signer = 'relayer' as const;
  readonly sequenced = false;
  readonly resendRefusalIsFinal = true;

  constructor(private readonly options: BitcoinDriverOptions) {
    this.chain = options.chain;
  }

  parse = parseBitcoinPayload;
  unreachable = (err: unknown): boolean => err instanceof WaitingForParents || !refusedByNode(err);
  describe = safeErrorText;
  resignable = (): boolean => false;

  /** A stuck transaction's bump, by the family's measure (blocks in the mempool, the fee estimate). */
  async bump(item: HeldItem<BitcoinPayload>): Promise<Bump | undefined> {
    return this.options.bumper?.bump(item);
  }

  /** A funding past its deadline, still in a mempool: its inputs back to the wallet by a replacement (safety rule 2). */
  async cancel(item: HeldItem<BitcoinPayload>): Promise<NewTx | undefined> {
    return this.options.cancelFunding?.(item.payload, item.signed);
  }

  async *sign(items: ReadonlyArray<JobItem<BitcoinPayload>>): AsyncIterable<Array<JobItem<BitcoinPayload> & SignResult>> {
    // Written signed: a job without its transaction was written by something else.
    yield items.map((item) => ({ ...item, refused: 'the job has no signed transaction' }));
  }

  async broadcast(tx: { raw: string }): Promise<SendResult> {
    const first = await this.send(tx.raw);
    if (!('refusal' in first)) return first;
    if (!MISSING_INPUTS.test(first.refusal.message)) return refusedBy(first.refusal);
    const parents = await unsettledParents(this.options.db, this.chain, inputTxids(tx.raw));
    if (parents.length === 0) return refusedBy(first.refusal);
    const now = (this.options.clock ?? systemClock).now();
    // Safety rule 2, as the engine's `pastBroadcastDeadline`: a parent funding past its deadline is not sent.
    for (const parent of parents) if (parent.broadcastBy === null || now < parent.broadcastBy) await this.send(parent.rawTx);
    const again = await this.send(tx.raw);
    if (!('refusal' in again)) return again;
    if (MISSING_INPUTS.test(again.refusal.message)) throw new WaitingForParents(parents.length);
    return refusedBy(again.refusal);
  }

  /** Sends a signed transaction; the node's refusal is returned, a node out of reach throws. */
  private async send(raw: string): Promise<{ outcome: 'sent' | 'known' } | { refusal: Error }> {
    try {
      return { outcome: await broadcastBitcoinTx(this.options.rpc, raw) };
    } catch (err) {
      if (!refusedByNode(err)) throw err;
      return { refusal: err as Error };
    }
  }

  /**
   * A funding past its broadcast deadline (safety rule 2) that no node has (the watcher saw no spend of
   * its inputs, the node's mempool lacks it) will never be sent again, so it can never land: dropped,
   * which fails the job and frees its inputs for the wallet.
   */
  async states(items: ReadonlyArray<HeldItem<BitcoinPayload>>): Promise<TxState[]> {
    this.options.bumper?.startPass();
    return Promise.all(
      items.map(async ({ job, payload, signed }): Promise<TxState> => {
        if (payload.inputs.length === 0) return { state: 'pending' };
        // The job's transactions: the first, its replacements, and any the engine signed in its place.
        const ours = new Set([payload.txid, ...(payload.replacements ?? []).map((r) => r.txid), ...signed.hashes]);
        const rows = await spendsOf(this.options.db, this.chain, payload.inputs);
        if (rows.some((r) => r.spentBlockNumber !== null && !ours.has(r.spentTxid ?? ''))) {
          return { state: 'reverted', hash: payload.txid, reason: 'another transaction spent its inputs' };
        }
        const mined = rows.find((r) => r.spentBlockNumber !== null && r.spentTxid !== null);
        if (mined) return { state: 'landed', hash: mined.spentTxid! };
        if (pastBroadcastDeadline(job, (this.options.clock ?? systemClock).now()) && rows.every((r) => r.spentTxid === null) && !(await this.options.rpc.mempoolEntry(signed.hash))) {
          return { state: 'dropped', reason: 'it never reached a mempool' };
        }
        return { state: 'pending' };
      }),
    );
  }
}

const refusedBy = (err: Error): SendResult => ({ outcome: 'refused', reason: safeErrorText(err) });

/** The txids of the transactions a signed transaction spends outputs of. */
function inputTxids(raw: string): string[] {
  const tx = Transaction.fromRaw(hexToBytes(raw), { allowUnknownOutputs: true, allowUnknownInputs: true, disableScriptCheck: true });
  const txids = new Set<string>();
  for (let i = 0; i < tx.inputsLength; i++) {
    const txid = tx.getInput(i).txid;
    if (txid) txids.add(bytesToHex(txid));
  }
  return [...txids];
}

/** The engine of one Bitcoin-family chain (by default a recheck every 2 s, a refused attempt waits 5 s). */
export function bitcoinEngine(options: BitcoinDriverOptions & EngineOptions): TxEngine<BitcoinPayload> {
  return new TxEngine(new BitcoinDriver(options), { bumpAfterMs: 0, ...options });
}
