import { randomUUID } from 'node:crypto';
import {
  createPublicClient,
  http,
  keccak256,
  parseTransaction,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../store/database.ts';
import { acquireLease, releaseLease } from '../store/leases.ts';
import { claimJobs, markAttemptFailed, markSubmitted, type RelayerJob } from '../store/relayer-jobs.ts';
import { classifyBroadcastError, describeChainError } from './chain-errors.ts';
import { jobCall, parsePayload, type EvmCall } from './jobs.ts';
import { clearSignedTx, confirmJob, failJob, nextUnusedNonce, readSignedTx, saveSignedTx, type SignedTx } from './signed-txs.ts';

/** pino's logger fits this; the relayer logs job ids, hashes and short errors, never payloads. */
export interface RelayerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EvmRelayerOptions {
  db: Db;
  /** Registry chain key, the queue's `chain`. */
  chain: string;
  chainId: number;
  rpcUrl: string;
  /** The relayer account's key: it signs and pays for every job of the chain. */
  privateKey: Hex;
  /** Names this worker in job locks and the chain lease (default: random). */
  worker?: string;
  /** How long a claimed job stays locked to this worker (default 60 s). */
  leaseMs?: number;
  /** When a submitted job comes back to check its receipt (default 2 s). */
  recheckMs?: number;
  /** Backoff after a failed attempt that sent nothing (default 5 s). */
  retryMs?: number;
  /** A transaction not mined after this long is re-signed with higher fees, same nonce (default 30 s). */
  bumpAfterMs?: number;
  /**
   * The most the relayer pays per gas (wei), whatever the estimate: a new transaction's fees are
   * capped to it, and a transaction already at the cap is not bumped, it waits for fees to fall.
   */
  maxFeePerGas?: bigint;
  /** Pause of the run loop between ticks (default 500 ms). */
  pollMs?: number;
  /** Jobs claimed per tick (default 10). */
  batch?: number;
  log?: RelayerLog;
}

const silent: RelayerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The relayer of one EVM chain: takes the chain's jobs from the durable queue and puts each one on
 * chain as exactly one transaction, from the relayer account.
 *
 * One job never makes two different transactions: the signed transaction is stored before it is
 * broadcast, so a crash between signing and sending resends the same bytes; a fee bump re-signs with
 * the same nonce, so at most one of the job's transactions can be mined; and a job signs afresh (new
 * nonce) only when none of its transactions can be mined any more (the node refused it, or its nonce
 * was taken by another transaction). Nonces: one worker per chain (`run` holds a lease); the next nonce
 * is above both the account's pending count and every nonce the chain's unsettled jobs hold signed.
 */
export class EvmRelayer {
  readonly worker: string;
  readonly address: Address;
  private readonly db: Db;
  private readonly client: PublicClient;
  private readonly account: PrivateKeyAccount;
  private readonly o: Required<Omit<EvmRelayerOptions, 'db' | 'privateKey' | 'worker' | 'log' | 'maxFeePerGas'>>;
  private readonly feeCap: bigint | undefined;
  private readonly log: RelayerLog;

  constructor(options: EvmRelayerOptions) {
    this.db = options.db;
    this.account = privateKeyToAccount(options.privateKey);
    this.address = this.account.address;
    this.worker = options.worker ?? `relayer:${options.chain}:${randomUUID()}`;
    this.client = createPublicClient({ transport: http(options.rpcUrl), cacheTime: 0 });
    this.log = options.log ?? silent;
    this.feeCap = options.maxFeePerGas;
    this.o = {
      chain: options.chain,
      chainId: options.chainId,
      rpcUrl: options.rpcUrl,
      leaseMs: options.leaseMs ?? 60_000,
      recheckMs: options.recheckMs ?? 2_000,
      retryMs: options.retryMs ?? 5_000,
      bumpAfterMs: options.bumpAfterMs ?? 30_000,
      pollMs: options.pollMs ?? 500,
      batch: options.batch ?? 10,
    };
  }

  /**
   * Runs until `signal` aborts, ticking while this worker holds the chain's lease, so that one worker
   * per chain signs (its nonces would race another's).
   */
  async run(signal: AbortSignal): Promise<void> {
    const lease = `relayer:${this.o.chain}`;
    try {
      while (!signal.aborted) {
        try {
          if (await acquireLease(this.db, lease, this.worker, this.o.leaseMs)) await this.tick();
        } catch (err) {
          this.log.error({ chain: this.o.chain, error: describeChainError(err) }, 'relayer tick failed');
        }
        await sleep(this.o.pollMs, signal);
      }
    } finally {
      await releaseLease(this.db, lease, this.worker).catch(() => undefined);
    }
  }

  /** One pass over the chain's due jobs, oldest first (so nonces follow the queue). Returns how many. */
  async tick(): Promise<number> {
    const jobs = await claimJobs(this.db, { chain: this.o.chain, worker: this.worker, leaseMs: this.o.leaseMs, limit: this.o.batch });
    for (const job of jobs) {
      try {
        await this.handle(job);
      } catch (err) {
        await this.unexpected(job, err);
      }
    }
    return jobs.length;
  }

  private async handle(job: RelayerJob): Promise<void> {
    let call: EvmCall;
    try {
      call = jobCall(parsePayload(job.payload));
    } catch (err) {
      return failJob(this.db, job.id, this.worker, `bad job: ${describeChainError(err)}`);
    }
    const signed = await readSignedTx(this.db, job.id);
    if (signed) return this.followUp(job, call, signed);
    return this.sendNew(job, call);
  }

  /** A job with no transaction that can still be mined: simulate, sign with a fresh nonce, store, send. */
  private async sendNew(job: RelayerJob, call: EvmCall): Promise<void> {
    let gas: bigint;
    try {
      gas = await this.client.estimateGas({ account: this.address, to: call.to, data: call.data });
    } catch (err) {
      // It would revert now (not approved yet, not initiated yet, already done...): nothing was sent.
      return this.attemptFailed(job, describeChainError(err));
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const fees = this.capped(await this.client.estimateFeesPerGas());
      const nonce = await this.nextNonce();
      const tx = await this.sign(call, { nonce, gas: (gas * 12n) / 10n, ...fees });
      if (!(await saveSignedTx(this.db, job, this.worker, tx))) return; // lost the job: another worker has it
      const sent = await this.broadcast(tx.raw);
      if (sent === 'accepted' || sent === 'unknown') return this.submitted(job, tx.hash, nonce);
      // Refused: this transaction is not pending anywhere, and it is the only one of its nonce this job signed.
      await clearSignedTx(this.db, job.id, this.worker);
      if (sent.outcome !== 'nonce-too-low') return this.attemptFailed(job, `broadcast refused: ${sent.error}`);
      this.log.warn({ chain: this.o.chain, job: job.id, nonce: nonce.toString() }, 'nonce too low: reading it again');
    }
    return this.attemptFailed(job, 'nonce too low three times in a row');
  }

  /** A job with a signed transaction: settled? taken over? else resend, or bump its fees once it is old. */
  private async followUp(job: RelayerJob, call: EvmCall, signed: SignedTx): Promise<void> {
    const receipt = await this.findReceipt(signed.hashes);
    if (receipt) return this.settle(job, receipt);
    const minedCount = BigInt(await this.client.getTransactionCount({ address: this.address, blockTag: 'latest' }));
    if (minedCount > signed.nonce) {
      // The nonce is used. Look again: ours may have been mined between the two reads.
      const late = await this.findReceipt(signed.hashes);
      if (late) return this.settle(job, late);
      this.log.warn({ chain: this.o.chain, job: job.id, nonce: signed.nonce.toString() }, 'nonce taken by another transaction: signing again');
      await clearSignedTx(this.db, job.id, this.worker);
      return this.sendNew(job, call);
    }
    let current = signed;
    if (signed.ageMs >= this.o.bumpAfterMs) {
      const bumped = await this.bump(call, signed);
      if (bumped) {
        if (!(await saveSignedTx(this.db, job, this.worker, bumped))) return;
        this.log.info({ chain: this.o.chain, job: job.id, hash: bumped.hash, replaces: signed.hash }, 'fee bump');
        current = { ...signed, ...bumped, hashes: [...signed.hashes, bumped.hash], ageMs: 0 };
      } else {
        this.log.warn({ chain: this.o.chain, job: job.id, hash: signed.hash }, 'not mined, and its fee is at the cap: waiting for fees to fall');
      }
    }
    // Whatever the node says, the transaction stays: every transaction of this job shares the nonce, so
    // at most one of them is ever mined, and the next pass looks for it again.
    const sent = await this.broadcast(current.raw);
    if (sent !== 'accepted' && sent !== 'unknown') {
      this.log.warn({ chain: this.o.chain, job: job.id, error: sent.error }, 'resend refused');
    }
    return this.submitted(job, current.hash, current.nonce);
  }

  private async settle(job: RelayerJob, receipt: TransactionReceipt): Promise<void> {
    if (receipt.status === 'success') {
      this.log.info({ chain: this.o.chain, job: job.id, hash: receipt.transactionHash }, 'job confirmed');
      return confirmJob(this.db, job.id, this.worker, receipt.transactionHash);
    }
    // Mined and reverted: sending again would be a second transaction for this job. It fails for good.
    const error = `transaction ${receipt.transactionHash} reverted in block ${receipt.blockNumber}`;
    this.log.warn({ chain: this.o.chain, job: job.id, hash: receipt.transactionHash }, 'job reverted');
    return failJob(this.db, job.id, this.worker, error, receipt.transactionHash);
  }

  private async findReceipt(hashes: readonly Hex[]): Promise<TransactionReceipt | undefined> {
    for (const hash of hashes) {
      try {
        return await this.client.getTransactionReceipt({ hash });
      } catch (err) {
        if (!(err instanceof TransactionReceiptNotFoundError)) throw err;
      }
    }
    return undefined;
  }

  private async nextNonce(): Promise<bigint> {
    const pending = BigInt(await this.client.getTransactionCount({ address: this.address, blockTag: 'pending' }));
    const held = (await nextUnusedNonce(this.db, this.o.chain)) ?? 0n;
    return pending > held ? pending : held;
  }

  private async sign(
    call: EvmCall,
    t: { nonce: bigint; gas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  ): Promise<{ raw: Hex; hash: Hex; nonce: bigint }> {
    const raw = await this.account.signTransaction({
      type: 'eip1559',
      chainId: this.o.chainId,
      to: call.to,
      data: call.data,
      value: 0n,
      nonce: Number(t.nonce),
      gas: t.gas,
      maxFeePerGas: t.maxFeePerGas,
      maxPriorityFeePerGas: t.maxPriorityFeePerGas,
    });
    return { raw, hash: keccak256(raw), nonce: t.nonce };
  }

  /**
   * The same call, nonce and gas with fees raised by at least 12.5 % (what nodes require to replace),
   * or undefined when that raise would pass the fee cap.
   */
  private async bump(call: EvmCall, signed: SignedTx): Promise<{ raw: Hex; hash: Hex; nonce: bigint } | undefined> {
    const old = parseTransaction(signed.raw);
    const now = await this.client.estimateFeesPerGas();
    const raise = (v: bigint | undefined) => (v ?? 0n) + (v ?? 0n) / 8n + 1n;
    const max = (a: bigint, b: bigint) => (a > b ? a : b);
    const maxFeePerGas = max(raise(old.maxFeePerGas), now.maxFeePerGas);
    if (this.feeCap !== undefined && maxFeePerGas > this.feeCap) return undefined;
    return this.sign(call, {
      nonce: signed.nonce,
      gas: old.gas ?? 500_000n,
      maxFeePerGas,
      maxPriorityFeePerGas: max(raise(old.maxPriorityFeePerGas), now.maxPriorityFeePerGas),
    });
  }

  /** Fees no higher than the cap (the priority fee never above the max fee). */
  private capped(fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
    if (this.feeCap === undefined || fees.maxFeePerGas <= this.feeCap) return fees;
    return { maxFeePerGas: this.feeCap, maxPriorityFeePerGas: fees.maxPriorityFeePerGas < this.feeCap ? fees.maxPriorityFeePerGas : this.feeCap };
  }

  private async broadcast(raw: Hex): Promise<'accepted' | 'unknown' | { outcome: 'nonce-too-low' | 'rejected'; error: string }> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
      return 'accepted';
    } catch (err) {
      const outcome = classifyBroadcastError(err);
      if (outcome === 'accepted' || outcome === 'unknown') return outcome;
      return { outcome, error: describeChainError(err) };
    }
  }

  private async submitted(job: RelayerJob, txHash: Hex, nonce: bigint): Promise<void> {
    await markSubmitted(this.db, job.id, { worker: this.worker, txHash, nonce, recheckMs: this.o.recheckMs });
  }

  private async attemptFailed(job: RelayerJob, error: string): Promise<void> {
    const status = await markAttemptFailed(this.db, job.id, { worker: this.worker, error, retryMs: this.o.retryMs });
    this.log.warn({ chain: this.o.chain, job: job.id, action: job.action, status, error }, 'relayer attempt failed');
  }

  /**
   * An error outside the expected paths (RPC or database down). A job holding a signed transaction is
   * kept as submitted, never failed: failing it could let it sign a second transaction later.
   */
  private async unexpected(job: RelayerJob, err: unknown): Promise<void> {
    const error = describeChainError(err);
    this.log.error({ chain: this.o.chain, job: job.id, error }, 'relayer job error');
    try {
      const signed = await readSignedTx(this.db, job.id);
      if (signed) await this.submitted(job, signed.hash, signed.nonce);
      else await this.attemptFailed(job, error);
    } catch {
      // The database is unreachable too: the job's lease runs out and it is claimed again.
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
