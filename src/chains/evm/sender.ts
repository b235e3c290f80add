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
import { LEASE_TTL_MS, type Worker } from '../../lease-loop.ts';
import type { Db } from '../../store/database.ts';
import { claimJobs, markAttemptFailed, markSubmitted, markSubmittedMany, requeueJob, type RelayerJob } from '../../store/relayer-jobs.ts';
import type { JobSigner } from '../../store/schema.ts';
import { classifyBroadcastError, describeChainError } from './chain-errors.ts';
import { jobCall, parsePayload, type EvmCall } from './jobs.ts';
import { clearSignedTx, confirmJob, failJob, nextUnusedNonce, readSignedTx, saveSignedTx, saveSignedTxs, type SignedTx } from '../../store/signed-txs.ts';

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
  /** The key of the account that signs and pays for every job of the chain and signer. */
  privateKey: Hex;
  /** Whose jobs these are: the relayer's (gasless actions, default) or the solver's own. */
  signer?: JobSigner;
  /** Names this worker in job locks (default: random). */
  worker?: string;
  /**
   * How long a claimed job stays locked to this worker (default: a lease's life, so a dead
   * instance's jobs move on with its lease).
   */
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
  /** Jobs claimed per tick (default 50). */
  batch?: number;
  log?: RelayerLog;
}

/** Transactions signed and stored before the first of them is sent. */
const SIGN_CHUNK = 10;

const silent: RelayerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The transaction sender of one EVM chain and account (the relayer's or the solver's): takes that
 * account's jobs from the durable queue and puts each one on chain as exactly one transaction. It never
 * waits for a receipt: a tick signs and broadcasts every due job with consecutive nonces, so many
 * transactions are in flight at once, and comes back to each one later to settle or bump it.
 *
 * One job never makes two different transactions: the signed transaction is stored before it is
 * broadcast, so a crash between signing and sending resends the same bytes; a fee bump re-signs with
 * the same nonce, so at most one of the job's transactions can be mined; and a job signs afresh (new
 * nonce) only when none of its transactions can be mined any more (the node refused it, or its nonce
 * was taken by another transaction). Nonces: one worker per chain and account (its loop holds the lease
 * `senderLease`); the next nonce is above both the account's pending count and every nonce the
 * account's unsettled jobs on the chain hold signed.
 */
export class EvmRelayer {
  readonly worker: string;
  readonly address: Address;
  readonly db: Db;
  private readonly client: PublicClient;
  private readonly account: PrivateKeyAccount;
  private readonly o: Required<Omit<EvmRelayerOptions, 'db' | 'privateKey' | 'worker' | 'log' | 'maxFeePerGas' | 'batch'>>;
  /** The lease its loop holds, one per chain and signer. */
  readonly lease: string;
  /** The `job_queued` notification of its jobs. */
  readonly wakeOnJob: string;
  /** Jobs taken per tick. */
  readonly batch: number;
  private readonly feeCap: bigint | undefined;
  private readonly log: RelayerLog;

  constructor(options: EvmRelayerOptions) {
    this.db = options.db;
    this.account = privateKeyToAccount(options.privateKey);
    this.address = this.account.address;
    const signer = options.signer ?? 'relayer';
    this.lease = senderLease(options.chain, signer);
    this.wakeOnJob = `${options.chain}:${signer}`;
    this.batch = options.batch ?? 50;
    this.worker = options.worker ?? `${this.lease}:${randomUUID()}`;
    this.client = createPublicClient({ transport: http(options.rpcUrl, { batch: true }), cacheTime: 0 });
    this.log = options.log ?? silent;
    this.feeCap = options.maxFeePerGas;
    this.o = {
      chain: options.chain,
      chainId: options.chainId,
      rpcUrl: options.rpcUrl,
      signer,
      leaseMs: options.leaseMs ?? LEASE_TTL_MS,
      recheckMs: options.recheckMs ?? 2_000,
      retryMs: options.retryMs ?? 5_000,
      bumpAfterMs: options.bumpAfterMs ?? 30_000,
    };
  }

  /**
   * One pass over the due jobs, oldest first (so nonces follow the queue). Returns how many it took;
   * a full batch means more may be due at once. `only: 'new'` takes the jobs that need a transaction
   * and nothing else; `only: 'follow-up'` takes those holding one, and gives a job whose nonce went to
   * another transaction back to the queue instead of signing it (so that signing stays with one loop).
   */
  async tick(only?: 'new' | 'follow-up'): Promise<number> {
    const jobs = await claimJobs(this.db, {
      chain: this.o.chain,
      signer: this.o.signer,
      worker: this.worker,
      leaseMs: this.o.leaseMs,
      limit: this.batch,
      newFirst: true,
      ...(only ? { withTx: only === 'follow-up' } : {}),
    });
    const fresh: Unsigned[] = [];
    const held: Unsigned[] = [];
    const bad: Array<Promise<void>> = [];
    for (const job of jobs) {
      try {
        (job.hasTx ? held : fresh).push({ job, call: jobCall(parsePayload(job.payload)) });
      } catch (err) {
        bad.push(this.guarded(job, () => failJob(this.db, job.id, this.worker, `bad job: ${describeChainError(err)}`)));
      }
    }
    // New jobs are signed and sent at once, while the jobs with a transaction are followed up; those
    // whose nonce went to another transaction are signed afresh after both.
    const again: Unsigned[] = [];
    const followUps = held.map((item) =>
      this.guarded(item.job, async () => {
        const signed = await readSignedTx(this.db, item.job.id);
        if (!signed || (await this.followUp(item.job, item.call, signed)) === 'sign-again') again.push(item);
      }),
    );
    await Promise.all([this.sendNew(fresh), ...followUps, ...bad]);
    again.sort((a, b) => Number(BigInt(a.job.id) - BigInt(b.job.id)));
    if (only === 'follow-up') await Promise.all(again.map(({ job }) => this.guarded(job, () => requeueJob(this.db, job.id, this.worker))));
    else await this.sendNew(again);
    return jobs.length;
  }

  /** Runs one job's work; an error outside the expected paths is recorded on the job, never thrown. */
  private async guarded(job: RelayerJob, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      await this.unexpected(job, err);
    }
  }

  /**
   * Jobs with no transaction that can still be mined: each is simulated (all at once), then those that
   * would succeed are signed with consecutive nonces and stored, oldest first, and all are broadcast.
   */
  private async sendNew(items: readonly Unsigned[]): Promise<void> {
    if (items.length === 0) return;
    // The simulations, the fees and the next nonce in one round of reads (one batch over HTTP).
    const nonceRead = this.nextNonce();
    const feesRead = this.client.estimateFeesPerGas();
    nonceRead.catch(() => undefined);
    feesRead.catch(() => undefined);
    const simulated = await Promise.all(
      items.map(({ call }) => this.client.estimateGas({ account: this.address, to: call.to, data: call.data, value: call.value ?? 0n }).then((gas) => ({ gas }), (error: unknown) => ({ error }))),
    );
    const ready: Array<Unsigned & { gas: bigint }> = [];
    const refused: Array<Promise<void>> = [];
    items.forEach((item, i) => {
      const sim = simulated[i]!;
      // It would revert now (not approved yet, not initiated yet, already done...): nothing is sent.
      if ('error' in sim) refused.push(this.guarded(item.job, () => this.attemptFailed(item.job, describeChainError(sim.error))));
      else ready.push({ ...item, gas: sim.gas });
    });
    await Promise.all(refused);
    ready.sort((a, b) => Number(BigInt(a.job.id) - BigInt(b.job.id)));
    if (ready.length === 0) return;
    const fees = this.capped(await feesRead);
    let nonce = await nonceRead;
    const accepted: Array<{ id: string; txHash: Hex; nonce: bigint }> = [];
    const sending: Array<Promise<void>> = [];
    // Signed, stored and sent a few at a time, in nonce order: the first are on their way while the
    // next are signed (signing is most of a large batch's time).
    for (let i = 0; i < ready.length; i += SIGN_CHUNK) {
      const signed: Array<{ job: RelayerJob; tx: { raw: Hex; hash: Hex; nonce: bigint } }> = [];
      for (const { job, call, gas } of ready.slice(i, i + SIGN_CHUNK)) signed.push({ job, tx: await this.sign(call, { nonce: nonce++, gas: (gas * 12n) / 10n, ...fees }) });
      // Stored before anything is sent, in one write.
      const saved = await saveSignedTxs(this.db, this.worker, signed.map(({ job, tx }) => ({ jobId: job.id, ...tx })));
      const gap = signed.findIndex(({ job }) => !saved.has(job.id));
      sending.push(...signed.slice(0, gap < 0 ? signed.length : gap).map(({ job, tx }) => this.send(job, tx, accepted)));
      if (gap < 0) continue;
      // A job was lost (another worker has it): its nonce stays free, so none signed after it could
      // be mined. Those are sent nowhere and forget their transactions; they and the jobs not signed
      // yet go back to the queue.
      const later = [...signed.slice(gap).filter(({ job }) => saved.has(job.id)).map(({ job }) => job), ...ready.slice(i + SIGN_CHUNK).map(({ job }) => job)];
      sending.push(
        ...later.map((job) =>
          this.guarded(job, async () => {
            await clearSignedTx(this.db, job.id, this.worker);
            await requeueJob(this.db, job.id, this.worker);
          }),
        ),
      );
      break;
    }
    await Promise.all(sending);
    await markSubmittedMany(this.db, this.worker, accepted, this.o.recheckMs);
  }

  /** Broadcasts a stored transaction: accepted ones are marked submitted together by the caller. */
  private send(job: RelayerJob, tx: { raw: Hex; hash: Hex; nonce: bigint }, accepted: Array<{ id: string; txHash: Hex; nonce: bigint }>): Promise<void> {
    return this.guarded(job, async () => {
      const sent = await this.broadcast(tx.raw);
      if (sent === 'accepted' || sent === 'unknown') {
        accepted.push({ id: job.id, txHash: tx.hash, nonce: tx.nonce });
        return;
      }
      // Refused: this transaction is not pending anywhere, and it is the only one of its nonce this job
      // signed. A later job's nonce may now wait on this one's: the next signing fills the gap.
      await clearSignedTx(this.db, job.id, this.worker);
      if (sent.outcome === 'nonce-too-low') this.log.warn({ chain: this.o.chain, job: job.id, nonce: tx.nonce.toString() }, 'nonce too low: signing again');
      return this.attemptFailed(job, `broadcast refused: ${sent.error}`);
    });
  }

  /**
   * A job with a signed transaction: settled? taken over? else resend, or bump its fees once it is old.
   * 'sign-again' when its nonce went to another transaction: it needs a new one.
   */
  private async followUp(job: RelayerJob, call: EvmCall, signed: SignedTx): Promise<void | 'sign-again'> {
    const receipt = await this.findReceipt(signed.hashes);
    if (receipt) return this.settle(job, receipt);
    const minedCount = BigInt(await this.client.getTransactionCount({ address: this.address, blockTag: 'latest' }));
    if (minedCount > signed.nonce) {
      // The nonce is used. Look again: ours may have been mined between the two reads.
      const late = await this.findReceipt(signed.hashes);
      if (late) return this.settle(job, late);
      this.log.warn({ chain: this.o.chain, job: job.id, nonce: signed.nonce.toString() }, 'nonce taken by another transaction: signing again');
      await clearSignedTx(this.db, job.id, this.worker);
      return 'sign-again';
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
    const held = (await nextUnusedNonce(this.db, this.o.chain, this.o.signer)) ?? 0n;
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
      value: call.value ?? 0n,
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

/** The lease of the sender of `signer`'s transactions on `chain` (the relayer's keeps its old name). */
export const senderLease = (chain: string, signer: JobSigner): string => (signer === 'relayer' ? `relayer:${chain}` : `${signer}-sender:${chain}`);

interface Unsigned {
  job: RelayerJob;
  call: EvmCall;
}

/**
 * The sender as two workers, each under its own lease: one signs and sends new jobs, at once when a
 * job of its own is queued; the other follows up the jobs in flight (receipts, fee bumps, resends),
 * so a new job never waits behind the follow-ups of a busy queue. Each ticks every `intervalMs`
 * (default 500 ms) as well, and again at once after a full batch.
 */
export function senderWorkers(sender: EvmRelayer, intervalMs = 500): Worker[] {
  const worker = (lease: string, only: 'new' | 'follow-up'): Worker => ({
    lease,
    intervalMs,
    tick: async (_signal, wake) => {
      if ((await sender.tick(only)) >= sender.batch) wake();
    },
  });
  return [{ ...worker(sender.lease, 'new'), wakeOnJob: sender.wakeOnJob }, worker(`${sender.lease}:follow-up`, 'follow-up')];
}
