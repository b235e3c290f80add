import { sql } from 'kysely';
import { BitcoinRpcError, RPC_ERRORS, type BitcoinRpc } from './rpc.ts';
import type { Outpoint } from './wallet-tx.ts';
import type { Db } from '../../store/database.ts';
import { spendsOf } from '../../store/bitcoin-utxos.ts';
import { claimJobs, deferJob, markAttemptFailed, markSubmitted, type RelayerJob } from '../../store/relayer-jobs.ts';
import { confirmJob, failJob } from '../../store/signed-txs.ts';
import type { RelayerLog } from '../evm/sender.ts';
import { LEASE_TTL_MS } from '../../lease-loop.ts';
import type { TxVersion } from './rbf.ts';

/**
 * Bitcoin-family transactions go through the relayer's durable job queue (`relayer_jobs`) like EVM
 * ones, but a Bitcoin transaction is complete when it is signed: the job is written with its signed
 * bytes, so the queue only broadcasts, rebroadcasts until the transaction is mined, and settles the
 * job from what the watcher recorded. One job per order and action (the idempotency key): asking
 * again returns the first transaction, never a second one paying the same thing.
 */

export interface BitcoinTxJob {
  chain: string;
  orderId?: string;
  /** What the transaction does: fund, redeem, refund, instant-refund. */
  action: string;
  idempotencyKey: string;
  rawTx: string;
  txid: string;
  /** The outpoints it spends: reserved from the wallet until the job settles. */
  inputs: readonly Outpoint[];
  /** For a fee bump (a CPFP child): the key of the job whose transaction it pays for. */
  bumps?: string;
  /** Replacements (BIP125) of the transaction at higher fees, signed up front, lowest first. */
  replacements?: readonly TxVersion[];
}

interface BitcoinPayload {
  kind: 'bitcoin';
  txid: string;
  inputs: Outpoint[];
  bumps?: string;
  replacements?: TxVersion[];
}

/** Writes a signed transaction's job, or returns the job already written under the same key. */
export async function enqueueBitcoinTx(db: Db, tx: BitcoinTxJob): Promise<{ txid: string; created: boolean; status: string }> {
  const payload: BitcoinPayload = {
    kind: 'bitcoin',
    txid: tx.txid,
    inputs: tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout })),
    ...(tx.bumps ? { bumps: tx.bumps } : {}),
    ...(tx.replacements?.length ? { replacements: tx.replacements.map((r) => ({ txid: r.txid, hex: r.hex, feeRate: r.feeRate })) } : {}),
  };
  const { rows } = await sql<{ tx_hash: string; status: string; created: boolean }>`
    insert into relayer_jobs (chain, order_id, action, idempotency_key, payload, raw_tx, tx_hash, tx_hashes, signed_at)
    values (${tx.chain}, ${tx.orderId ?? null}, ${tx.action}, ${tx.idempotencyKey}, ${JSON.stringify(payload)}::jsonb,
      ${tx.rawTx}, ${tx.txid}, array[${tx.txid}::text], now())
    on conflict (idempotency_key) do update set updated_at = relayer_jobs.updated_at
    returning tx_hash, status, (xmax = 0) as created
  `.execute(db);
  const row = rows[0]!;
  return { txid: row.tx_hash, created: row.created, status: row.status };
}

/** The raw transaction of a Bitcoin job, by key (what a rebroadcast sends). */
export async function bitcoinJobTx(db: Db, idempotencyKey: string): Promise<{ txid: string; rawTx: string; status: string } | undefined> {
  const { rows } = await sql<{ tx_hash: string; raw_tx: string; status: string }>`
    select tx_hash, raw_tx, status from relayer_jobs where idempotency_key = ${idempotencyKey}
  `.execute(db);
  const row = rows[0];
  return row && { txid: row.tx_hash, rawTx: row.raw_tx, status: row.status };
}

/**
 * Runs `fn` in a transaction holding the chain's wallet lock (a transaction-scoped advisory lock):
 * whoever picks outputs of the solver's wallet and writes the job spending them (instant-refund fees,
 * the solver's fundings) does both under it, so two writers never pick the same
 * output before either job reserves it.
 */
export function withWalletLock<T>(db: Db, chainKey: string, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`hashlock:bitcoin-wallet:${chainKey}`}))`.execute(trx);
    return fn(trx);
  });
}

/** Outpoints that unsettled jobs of the chain spend: the wallet must not select them again. */
export async function reservedOutpoints(db: Db, chain: string): Promise<Set<string>> {
  const { rows } = await sql<{ txid: string; vout: number }>`
    select i->>'txid' as txid, (i->>'vout')::int as vout
    from relayer_jobs j, jsonb_array_elements(j.payload->'inputs') i
    where j.chain = ${chain} and j.payload->>'kind' = 'bitcoin' and j.status in ('queued', 'running', 'submitted')
  `.execute(db);
  return new Set(rows.map((r) => outpointKey(r)));
}

export const outpointKey = (o: Outpoint): string => `${o.txid}:${o.vout}`;

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
    if (payload.kind !== 'bitcoin') throw new Error(`job ${job.idempotencyKey} is not a Bitcoin-family transaction`);
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
