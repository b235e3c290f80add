import { BitcoinRpcError, RPC_ERRORS, type BitcoinRpc } from './rpc.ts';
import type { Db } from '../../store/database.ts';
import { spendsOf } from '../../store/bitcoin-utxos.ts';
import { claimJobs, deferJob, markAttemptFailed, markSubmitted, type RelayerJob } from '../../store/relayer-jobs.ts';
import { confirmJob, failJob } from '../../store/signed-txs.ts';
import type { RelayerLog } from '../evm/sender.ts';
import { LEASE_TTL_MS } from '../../lease-loop.ts';
import { bitcoinJobTx, type BitcoinPayload } from '../../store/bitcoin-jobs.ts';

/**
 * Bitcoin-family transactions go through the relayer's durable job queue (`relayer_jobs`) like EVM
 * ones, but a Bitcoin transaction is complete when it is signed: the job is written with its signed
 * bytes, so the queue only broadcasts, rebroadcasts until the transaction is mined, and settles the
 * job from what the watcher recorded. One job per order and action (the idempotency key): asking
 * again returns the first transaction, never a second one paying the same thing.
 */

/** Node answers to sendrawtransaction that mean the transaction is already out. */
const ALREADY_KNOWN = /already in (the )?block ?chain|txn-already-in-mempool|txn-already-known|already have transaction/i;
/** Answers that mean it cannot be mined now but may later (a timelock that has not run out). */
const NOT_YET = /non-BIP68-final|non-final/i;

/** Whether the node judged the transaction itself (invalid, or in conflict), rather than being out of reach or early. */
function refusedByNode(err: unknown): boolean {
  return err instanceof BitcoinRpcError && err.code !== 401 && !NOT_YET.test(err.message) && err.code !== RPC_ERRORS.inWarmup;
}

/** Sends a signed transaction; one the node already has (in its mempool or chain) is not an error. */
export async function broadcastBitcoinTx(rpc: BitcoinRpc, rawTx: string): Promise<void> {
  try {
    await rpc.sendRawTransaction(rawTx);
  } catch (err) {
    const message = err instanceof BitcoinRpcError ? err.message : '';
    if (ALREADY_KNOWN.test(message)) return;
    throw err;
  }
}

export interface BitcoinRelayerOptions {
  db: Db;
  chain: string;
  rpc: BitcoinRpc;
  worker: string;
  log?: RelayerLog;
  /** How soon a submitted job is checked again (default 2 s). */
  recheckMs?: number;
  /** How long a failed attempt waits (default 5 s). */
  retryMs?: number;
}

/**
 * Broadcasts the chain's queued Bitcoin-family transactions and keeps rebroadcasting them until the
 * watcher records them mined. A job settles from the `bitcoin_utxos` rows of its inputs: confirmed
 * when its own transaction spent them in a block, failed when another transaction did.
 */
export class BitcoinRelayer {
  private readonly recheckMs: number;
  private readonly retryMs: number;

  constructor(private readonly options: BitcoinRelayerOptions) {
    this.recheckMs = options.recheckMs ?? 2_000;
    this.retryMs = options.retryMs ?? 5_000;
  }

  /** One pass over the due jobs; returns how many it handled. */
  async tick(): Promise<number> {
    const { db, chain, worker } = this.options;
    const jobs = await claimJobs(db, { chain, worker, leaseMs: LEASE_TTL_MS, limit: 50 });
    for (const job of jobs) {
      try {
        await this.handle(job);
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        // Only a node's verdict on the transaction uses up an attempt; a node out of reach or one that
        // says "not final yet" does not, so a signed transaction is never given up for those.
        if (refusedByNode(err)) await markAttemptFailed(db, job.id, { worker, error, retryMs: this.retryMs });
        else await deferJob(db, job.id, { worker, error, retryMs: this.retryMs });
        this.options.log?.warn({ job: job.idempotencyKey, error }, 'bitcoin broadcast attempt failed');
      }
    }
    return jobs.length;
  }

  private async handle(job: RelayerJob): Promise<void> {
    const { db, worker } = this.options;
    const payload = job.payload as BitcoinPayload;
    if (payload.kind !== 'signed') throw new Error(`job ${job.idempotencyKey} is not a Bitcoin-family transaction`);
    const settled = await this.settlement(payload);
    if (settled.state === 'mined') return confirmJob(db, job.id, worker, settled.txid);
    if (settled.state === 'conflicted') return failJob(db, job.id, worker, 'another transaction spent its inputs', payload.txid);
    const raw = await bitcoinJobTx(db, job.idempotencyKey);
    if (!raw?.rawTx) return failJob(db, job.id, worker, 'the job has no signed transaction');
    await broadcastBitcoinTx(this.options.rpc, raw.rawTx);
    await markSubmitted(db, job.id, { worker, txHash: raw.txid, recheckMs: this.recheckMs });
  }

  /**
   * Whether the watcher saw the job's inputs spent in a block: by one of the job's transactions (the
   * first or a replacement; the one mined), or by another.
   */
  private async settlement(payload: BitcoinPayload): Promise<{ state: 'mined'; txid: string } | { state: 'conflicted' | 'open' }> {
    if (payload.inputs.length === 0) return { state: 'open' };
    const ours = new Set([payload.txid, ...(payload.replacements ?? []).map((r) => r.txid)]);
    const rows = await spendsOf(this.options.db, this.options.chain, payload.inputs);
    if (rows.some((r) => r.spentBlockNumber !== null && !ours.has(r.spentTxid ?? ''))) return { state: 'conflicted' };
    const mined = rows.find((r) => r.spentBlockNumber !== null && r.spentTxid !== null);
    return mined ? { state: 'mined', txid: mined.spentTxid! } : { state: 'open' };
  }
}
