import { randomUUID } from 'node:crypto';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Base64EncodedWireTransaction,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { LEASE_TTL_MS, type Worker } from '../../lease-loop.ts';
import { solanaRpc } from './rpc.ts';
import type { Db } from '../../store/database.ts';
import { claimJobs, deferJob, markAttemptFailed, markSubmitted, requeueJob, type ClaimedJob } from '../../store/relayer-jobs.ts';
import type { JobSigner } from '../../store/schema.ts';
import { clearSignedTx, confirmJob, failJob, readSignedTx, saveSignedTx } from '../../store/signed-txs.ts';
import type { RelayerLog } from '../evm/sender.ts';
import { describeSolanaError, isAlreadyProcessed, isNodeUnreachable } from './chain-errors.ts';
import { parseSolanaPayload, type SolanaJobPayload } from './jobs.ts';

export interface SolanaSenderOptions {
  db: Db;
  /** Registry chain key, the queue's `chain`. */
  chain: string;
  rpcUrl: string;
  /** The account that pays the fees of (and signs) every job of this chain and signer. */
  payer: Promise<KeyPairSigner>;
  signer: JobSigner;
  /** The instructions of a job that the sender builds and signs (every kind but `client-signed`). */
  instructions(payload: Exclude<SolanaJobPayload, { kind: 'client-signed' }>, payer: KeyPairSigner): Promise<Instruction[]>;
  worker?: string;
  /** When a submitted job comes back to check its status (default 1 s: slots are 400 ms). */
  recheckMs?: number;
  /** Backoff after an attempt the chain refused (default 3 s). */
  retryMs?: number;
  /** Jobs claimed per tick (default 50). */
  batch?: number;
  log?: RelayerLog;
}

type Lifetime = Readonly<{ blockhash: Blockhash; lastValidBlockHeight: bigint }>;

const silent: RelayerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The transaction sender of one Solana chain and account (the relayer's or the solver's). A tick signs
 * and sends every new job with one recent blockhash, and follows up every submitted one with one
 * getSignatureStatuses call; it never waits for a confirmation.
 *
 * One job never makes two effects: its signed transaction is stored before it is sent (a crash
 * resends the same bytes), and it is signed afresh only once its blockhash has expired unseen, when it
 * can no longer land. The HTLC programs themselves refuse a second initiate (the swap account exists)
 * and a second redeem or refund (it is closed). A transaction the client signed (a gasless initiate)
 * cannot be signed afresh: it fails for good when its blockhash expires. The `nonce` column holds the
 * last block height at which the stored transaction can land.
 */
export class SolanaSender {
  readonly worker: string;
  readonly lease: string;
  readonly wakeOnJob: string;
  readonly batch: number;
  private readonly rpc;
  private readonly log: RelayerLog;
  private readonly recheckMs: number;
  private readonly retryMs: number;

  constructor(private readonly o: SolanaSenderOptions) {
    this.lease = `sender:${o.chain}:${o.signer}`;
    this.wakeOnJob = `${o.chain}:${o.signer}`;
    this.worker = o.worker ? `${o.worker}:${this.lease}` : `${this.lease}:${randomUUID()}`;
    this.batch = o.batch ?? 50;
    this.rpc = solanaRpc(o.rpcUrl);
    this.log = o.log ?? silent;
    this.recheckMs = o.recheckMs ?? 1_000;
    this.retryMs = o.retryMs ?? 3_000;
  }

  /** One pass over the due jobs: new ones signed and sent, submitted ones followed up. Returns how many it took. */
  async tick(): Promise<number> {
    const jobs = await claimJobs(this.o.db, { chain: this.o.chain, signer: this.o.signer, worker: this.worker, leaseMs: LEASE_TTL_MS, limit: this.batch, newFirst: true });
    if (jobs.length === 0) return 0;
    const [fresh, sent] = [jobs.filter((j) => !j.hasTx), jobs.filter((j) => j.hasTx)];
    await Promise.all([this.sendNew(fresh), this.followUp(sent)]);
    return jobs.length;
  }

  private async sendNew(jobs: ClaimedJob[]): Promise<void> {
    if (jobs.length === 0) return;
    let lifetime: Lifetime;
    try {
      lifetime = (await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()).value;
    } catch (err) {
      await Promise.all(jobs.map((job) => this.giveBack(job, err)));
      return;
    }
    await Promise.all(jobs.map((job) => this.signAndSend(job, lifetime).catch((err: unknown) => this.attemptFailed(job, err))));
  }

  private async signAndSend(job: ClaimedJob, lifetime: Lifetime): Promise<void> {
    const payload = parseSolanaPayload(job.payload);
    const payer = await this.o.payer;
    let wire: Base64EncodedWireTransaction;
    let signature: Signature;
    let lastValid: bigint;
    if (payload.kind === 'client-signed') {
      // The client signed it with the blockhash it holds; the sender only adds the fee payer's signature.
      const transaction = await partiallySignTransaction([payer.keyPair], getTransactionDecoder().decode(Buffer.from(payload.tx, 'base64')));
      wire = getBase64EncodedWireTransaction(transaction);
      signature = getSignatureFromTransaction(transaction);
      lastValid = BigInt(payload.lastValidBlockHeight);
    } else {
      const instructions = await this.o.instructions(payload, payer);
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
        (m) => appendTransactionMessageInstructions(instructions, m),
      );
      const transaction = await signTransactionMessageWithSigners(message);
      wire = getBase64EncodedWireTransaction(transaction);
      signature = getSignatureFromTransaction(transaction);
      lastValid = lifetime.lastValidBlockHeight;
    }
    if (!(await saveSignedTx(this.o.db, job, this.worker, { raw: wire, hash: signature, nonce: lastValid }))) return;
    await this.send(job, wire, signature);
  }

  private async send(job: ClaimedJob, wire: Base64EncodedWireTransaction, signature: Signature): Promise<void> {
    try {
      await this.rpc.sendTransaction(wire, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    } catch (err) {
      // The chain already ran these very bytes: it is in, as if just sent.
      if (!isAlreadyProcessed(err)) throw err;
    }
    await this.recheck(job, signature);
  }

  private recheck(job: ClaimedJob, signature: Signature): Promise<void> {
    return markSubmitted(this.o.db, job.id, { worker: this.worker, txHash: signature, recheckMs: this.recheckMs });
  }

  /** Settles the submitted jobs from their statuses; resends those still able to land; re-signs expired ones. */
  private async followUp(jobs: ClaimedJob[]): Promise<void> {
    const signed = await Promise.all(jobs.map(async (job) => ({ job, tx: await readSignedTx(this.o.db, job.id) })));
    // A job whose transaction was cleared in between is signed again.
    await Promise.all(signed.filter((s) => !s.tx).map((s) => requeueJob(this.o.db, s.job.id, this.worker)));
    const open = signed.flatMap(({ job, tx }) => (tx ? [{ job, tx }] : []));
    if (open.length === 0) return;
    let statuses;
    let height: bigint;
    try {
      [statuses, height] = await Promise.all([
        this.rpc.getSignatureStatuses(open.map((o) => o.tx.hash as unknown as Signature), { searchTransactionHistory: true }).send(),
        this.rpc.getBlockHeight({ commitment: 'confirmed' }).send(),
      ]);
    } catch (err) {
      await Promise.all(open.map(({ job }) => this.giveBack(job, err)));
      return;
    }
    await Promise.all(
      open.map(async ({ job, tx }, i) => {
        const status = statuses.value[i];
        try {
          if (status && status.confirmationStatus !== 'processed') {
            if (status.err === null) return confirmJob(this.o.db, job.id, this.worker, tx.hash);
            // It landed and the program refused it: a second transaction would be a second try at the same action.
            return failJob(this.o.db, job.id, this.worker, `failed on chain: ${describeSolanaError(status.err)}`, tx.hash);
          }
          // Processed in a slot not yet confirmed: it is in, and may still be dropped with its fork.
          if (status) return this.recheck(job, tx.hash as unknown as Signature);
          if (height > tx.nonce) return this.expired(job);
          // Nodes drop transactions they cannot place at once: the same bytes again, until it lands or expires.
          await this.send(job, tx.raw as Base64EncodedWireTransaction, tx.hash as unknown as Signature);
        } catch (err) {
          await this.attemptFailed(job, err);
        }
      }),
    );
  }

  /** The job's transaction can no longer land: signed afresh, unless the client signed it. */
  private async expired(job: ClaimedJob): Promise<void> {
    const payload = parseSolanaPayload(job.payload);
    if (payload.kind === 'client-signed') {
      return failJob(this.o.db, job.id, this.worker, 'the signed transaction expired (its blockhash is too old) before it landed: sign a new one');
    }
    await clearSignedTx(this.o.db, job.id, this.worker);
    await requeueJob(this.o.db, job.id, this.worker);
  }

  /** The chain refused the attempt (a failed simulation sends nothing): it is signed afresh on the next one. */
  private async attemptFailed(job: ClaimedJob, err: unknown): Promise<void> {
    if (isNodeUnreachable(err)) return this.giveBack(job, err);
    const error = describeSolanaError(err);
    this.log.warn({ job: job.idempotencyKey, error }, 'solana attempt failed');
    const signed = await readSignedTx(this.o.db, job.id);
    const clientSigned = parseSolanaPayload(job.payload).kind === 'client-signed';
    // A client's transaction is kept: its attempts may be retried as it is (an account it needs may appear).
    if (signed && !clientSigned) await clearSignedTx(this.o.db, job.id, this.worker);
    await markAttemptFailed(this.o.db, job.id, { worker: this.worker, error, retryMs: this.retryMs });
  }

  private async giveBack(job: ClaimedJob, err: unknown): Promise<void> {
    await deferJob(this.o.db, job.id, { worker: this.worker, error: describeSolanaError(err), retryMs: this.retryMs });
  }
}

/** The sender's worker, woken when a job of its own is queued. */
export function solanaSenderWorker(sender: SolanaSender, intervalMs = 400): Worker {
  return {
    lease: sender.lease,
    intervalMs,
    wakeOnJob: sender.wakeOnJob,
    tick: async (_signal, wake) => {
      if ((await sender.tick()) >= sender.batch) wake();
    },
  };
}
