import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
import { LEASE_TTL_MS, type Worker } from '../lease-loop.ts';
import type { Db } from '../store/database.ts';
import {
  claimJobsAndNext,
  deferJob,
  markAttemptFailed,
  markCancelled,
  markSubmitted,
  markSubmittedMany,
  requeueJob,
  type ClaimedJob,
} from '../store/relayer-jobs.ts';
import { clearSignedTx, confirmJobs, failJob, readSignedTxs, saveSignedTx, saveSignedTxs, type SignedTx } from '../store/signed-txs.ts';
import type { HeldItem, JobItem, NewTx, TxDriver, TxState } from './driver.ts';
import { engineCounters } from './metrics.ts';
import { silentLog, type Log } from '../log.ts';

export interface EngineOptions {
  db: Db;
  /** Names this worker in job locks (default: random). */
  worker?: string;
  /** How long a claimed job stays locked to this worker (default: a lease's life, so a dead instance's jobs move on with its lease). */
  leaseMs?: number;
  /** When a submitted job comes back to look at its transaction (default 2 s). */
  recheckMs?: number;
  /** Backoff after a refused attempt, and the first wait for a node out of reach (default 5 s). */
  retryMs?: number;
  /** The longest wait for a node out of reach: the wait doubles per pass that could not reach it (default 30 s). */
  maxRetryMs?: number;
  /** A transaction not landed this long after it was signed is bumped, where the driver can (default 30 s). */
  bumpAfterMs?: number;
  /** Jobs claimed per pass (default 50). */
  batch?: number;
  /** The time broadcast deadlines (rule 2), rechecks and backoff count by (default: the system clock). */
  clock?: Clock;
  log?: Log;
}


/**
 * The one durable transaction engine: every on-chain action of the service is a job of `relayer_jobs`,
 * and one engine per chain and signing account puts each on chain as exactly one effect, through the
 * family's driver. It never waits for a transaction to land: a pass signs and sends every due new job
 * and looks at every due job in flight, and comes back to each later.
 *
 * - A job's signed transaction is stored before it is sent, so a crash resends the same bytes; a job is
 *   signed afresh only when none of its transactions can land any more.
 * - A node that cannot be asked (down, slow, 5xx, rate-limiting) never costs an attempt: the job waits
 *   with capped exponential backoff and goes on when the node answers. Only the chain's judgement (a
 *   simulation that reverts, a transaction refused) counts, and its reason is recorded on the job. A job
 *   never fails while a transaction it signed could still land.
 * - Safety rule 2 at broadcast: a job with `broadcast_by` (a funding) is never sent for the first time
 *   after it, and one signed but not landed by then is cancelled where the family allows (the driver's
 *   `cancel`), else never sent again, so it lands only if it already reached the chain in time.
 */
export class TxEngine<P = unknown> {
  readonly worker: string;
  readonly lease: string;
  /** The `job_queued` notification of its jobs. */
  readonly wakeOnJob: string;
  readonly batch: number;
  readonly db: Db;
  readonly clock: Clock;
  private readonly leaseMs: number;
  /** How long after a broadcast a transaction is looked at again. */
  readonly recheckMs: number;
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private readonly bumpAfterMs: number;
  private readonly log: Log;
  private readonly chain: string;
  /** Jobs already reported as needing a bump none may make, so the log says it once. */
  private readonly unbumpable = new Set<string>();

  constructor(
    readonly driver: TxDriver<P>,
    options: EngineOptions,
  ) {
    this.db = options.db;
    this.clock = options.clock ?? systemClock;
    this.chain = driver.chain;
    this.lease = engineLease(driver.chain, driver.signer);
    this.wakeOnJob = `${driver.chain}:${driver.signer}`;
    this.worker = options.worker ? `${options.worker}:${this.lease}` : `${this.lease}:${randomUUID()}`;
    this.batch = options.batch ?? 50;
    this.leaseMs = options.leaseMs ?? LEASE_TTL_MS;
    this.recheckMs = options.recheckMs ?? 2_000;
    this.retryMs = options.retryMs ?? 5_000;
    this.maxRetryMs = Math.max(options.maxRetryMs ?? 30_000, this.retryMs);
    this.bumpAfterMs = options.bumpAfterMs ?? 30_000;
    this.log = options.log ?? silentLog;
  }

  /**
   * One pass over the due jobs, oldest first (so ordered transactions follow the queue). Returns how
   * many it took; a full batch means more may be due at once. `only: 'new'` takes the jobs that need a
   * transaction; `only: 'follow-up'` those holding one, and gives a job that must be signed afresh back
   * to the queue instead of signing it (so that signing stays with one loop).
   */
  async tick(only?: 'new' | 'follow-up'): Promise<number> {
    return (await this.pass(only)).claimed;
  }

  /** `tick`, with what its claim saw of the jobs it left (`claimJobsAndNext`): when to look again. */
  async pass(only?: 'new' | 'follow-up'): Promise<{ claimed: number; pending: boolean; nextDueInMs: number | null }> {
    const { jobs, pending, nextDueInMs } = await claimJobsAndNext(this.db, {
      chain: this.chain,
      signer: this.driver.signer,
      worker: this.worker,
      leaseMs: this.leaseMs,
      now: this.clock.now(),
      limit: this.batch,
      newFirst: true,
      ...(only ? { withTx: only === 'follow-up' } : {}),
    });
    const fresh: Array<JobItem<P>> = [];
    const held: Array<JobItem<P>> = [];
    const done: Array<Promise<void>> = [];
    for (const job of jobs) {
      let payload: P;
      try {
        payload = this.driver.parse(job.payload);
      } catch (err) {
        done.push(this.guarded(job, () => failJob(this.db, job.id, this.worker, `bad job: ${this.driver.describe(err)}`)));
        continue;
      }
      if (job.hasTx) held.push({ job, payload });
      else if (this.pastDeadline(job)) done.push(this.guarded(job, () => this.refuseLate(job)));
      else fresh.push({ job, payload });
    }
    const again: Array<JobItem<P>> = [];
    await Promise.all([this.sendNew(fresh), this.followUp(held, again), ...done]);
    again.sort((a, b) => Number(BigInt(a.job.id) - BigInt(b.job.id)));
    if (only === 'follow-up') await Promise.all(again.map(({ job }) => this.guarded(job, () => requeueJob(this.db, job.id, this.worker))));
    else await this.sendNew(again.filter(({ job }) => !this.pastDeadline(job)));
    return { claimed: jobs.length, pending, nextDueInMs };
  }

  /** New jobs: signed in order, each chunk stored in one write before any of it is sent, then broadcast. */
  private async sendNew(items: ReadonlyArray<JobItem<P>>): Promise<void> {
    if (items.length === 0) return;
    const accepted: Array<{ id: string; txHash: string }> = [];
    const sending: Array<Promise<void>> = [];
    const signedIds = new Set<string>();
    try {
      for await (const chunk of this.driver.sign(items)) {
        const signed: Array<{ item: JobItem<P>; tx: NewTx }> = [];
        for (const result of chunk) {
          signedIds.add(result.job.id);
          if ('refused' in result) sending.push(this.guarded(result.job, () => this.attemptFailed(result.job, result.refused, { untilNewBlock: true })));
          else signed.push({ item: result, tx: result.signed });
        }
        const saved = await saveSignedTxs(
          this.db,
          this.worker,
          signed.map(({ item, tx }) => ({ ...tx, jobId: item.job.id })),
        );
        const lost = signed.findIndex(({ item }) => !saved.has(String(item.job.id)));
        const sendable = this.driver.sequenced && lost >= 0 ? signed.slice(0, lost) : signed.filter(({ item }) => saved.has(String(item.job.id)));
        sending.push(...sendable.map(({ item, tx }) => this.send(item, tx, accepted)));
        if (!this.driver.sequenced || lost < 0) continue;
        // A job was lost (another worker has it): its nonce stays free, so none signed after it could be
        // mined. Those are sent nowhere and forget their transactions; the jobs not signed yet go back too.
        const later = signed.slice(lost).filter(({ item }) => saved.has(String(item.job.id))).map(({ item }) => item.job);
        const unsigned = items.filter(({ job }) => !signedIds.has(job.id)).map(({ job }) => job);
        sending.push(...later.map((job) => this.guarded(job, () => clearSignedTx(this.db, job.id, this.worker))));
        sending.push(...[...later, ...unsigned].map((job) => this.guarded(job, () => requeueJob(this.db, job.id, this.worker))));
        break;
      }
    } catch (err) {
      // Signing needs the node (fees, a nonce, a blockhash): the jobs not signed yet wait for it.
      await Promise.all(items.filter(({ job }) => !signedIds.has(job.id)).map(({ job }) => this.failedWith(job, err)));
    }
    await Promise.all(sending);
    await markSubmittedMany(this.db, this.worker, accepted, this.recheckMs, this.clock.now());
  }

  /**
   * Broadcasts a stored transaction; the accepted are marked submitted together by the caller. A node
   * that gave no clear answer defers the job (`guarded`), its transaction kept: it may be out.
   */
  private send(item: JobItem<P>, tx: NewTx, accepted: Array<{ id: string; txHash: string }>): Promise<void> {
    const { job } = item;
    return this.guarded(job, async () => {
      const sent = await this.driver.broadcast(tx);
      if (sent.outcome !== 'refused') {
        accepted.push({ id: job.id, txHash: tx.hash });
        return;
      }
      // Refused: it is not pending anywhere it was sent. A client's own transaction is kept to be tried
      // as it is; any other is signed afresh on the next attempt.
      if (this.driver.resignable(item.payload)) await clearSignedTx(this.db, job.id, this.worker);
      return this.attemptFailed(job, `broadcast refused: ${sent.reason}`);
    });
  }

  /** Jobs holding a transaction: settled? dropped? else resent, bumped, or (past `broadcast_by`) cancelled. */
  private async followUp(items: ReadonlyArray<JobItem<P>>, again: Array<JobItem<P>>): Promise<void> {
    if (items.length === 0) return;
    const signed = await readSignedTxs(
      this.db,
      items.map(({ job }) => job.id),
      this.clock.now(),
    );
    const open: Array<HeldItem<P>> = [];
    for (const item of items) {
      const tx = signed.get(String(item.job.id));
      if (tx) open.push({ ...item, signed: tx });
      else again.push(item); // cleared meanwhile: signed afresh
    }
    if (open.length === 0) return;
    let states: TxState[];
    try {
      states = await this.driver.states(open);
    } catch (err) {
      await Promise.all(open.map(({ job }) => this.failedWith(job, err)));
      return;
    }
    const landed: Array<{ id: string; hash: string }> = [];
    await Promise.all(open.map((item, i) => this.guarded(item.job, () => this.settle(item, states[i]!, again, landed))));
    // The landed jobs in one write; should it fail, their leases run out and the next look finds them landed again.
    await confirmJobs(this.db, this.worker, landed).catch((err: unknown) => this.log.warn({ chain: this.chain, error: this.driver.describe(err) }, 'confirming landed jobs failed: they are checked again'));
  }

  private async settle(item: HeldItem<P>, state: TxState, again: Array<JobItem<P>>, landed: Array<{ id: string; hash: string }>): Promise<void> {
    const { job, signed } = item;
    switch (state.state) {
      case 'landed':
        if (job.cancelled && state.hash === signed.hash) {
          this.log.warn({ chain: this.chain, job: job.id, hash: state.hash }, 'job cancelled: its replacement landed (safety rule 2)');
          return failJob(this.db, job.id, this.worker, `cancelled: not landed by its broadcast deadline (safety rule 2); ${state.hash} took its place`, state.hash);
        }
        this.log.info({ chain: this.chain, job: job.id, hash: state.hash }, 'job confirmed');
        landed.push({ id: job.id, hash: state.hash });
        return;
      case 'reverted':
        this.log.warn({ chain: this.chain, job: job.id, hash: state.hash, reason: state.reason }, 'job reverted');
        return failJob(this.db, job.id, this.worker, state.reason, state.hash);
      case 'seen':
        return this.submitted(job, signed.hash);
      case 'dropped':
        if (job.cancelled || this.pastDeadline(job) || !this.driver.resignable(item.payload)) {
          const why = job.cancelled || this.pastDeadline(job) ? ' and its broadcast deadline passed (safety rule 2)' : ': sign a new one';
          return failJob(this.db, job.id, this.worker, `${state.reason}${why}`);
        }
        this.log.warn({ chain: this.chain, job: job.id, reason: state.reason }, 'transaction dropped: signing again');
        await clearSignedTx(this.db, job.id, this.worker);
        again.push(item);
        return;
      case 'pending':
        return this.pending(item);
    }
  }

  /** Not landed yet: sent again as it is, bumped once it is old, or cancelled past its deadline. */
  private async pending(item: HeldItem<P>): Promise<void> {
    const { job, signed } = item;
    let current = { raw: signed.raw, hash: signed.hash };
    let cancelling = false;
    if (this.pastDeadline(job) && !job.cancelled) {
      const cancel = await this.driver.cancel?.(item);
      if (!cancel) {
        // It cannot be taken back: it lands only if it already reached the chain; it is not sent again.
        this.log.warn({ chain: this.chain, job: job.id, hash: signed.hash }, 'past its broadcast deadline (safety rule 2): not sent again');
        return this.submitted(job, signed.hash);
      }
      if (!(await saveSignedTx(this.db, job, this.worker, replacing(signed, cancel)))) return;
      await markCancelled(this.db, job.id, this.worker);
      engineCounters.cancellations.inc({ chain: this.chain });
      this.log.warn({ chain: this.chain, job: job.id, hash: cancel.hash, replaces: signed.hash }, 'past its broadcast deadline (safety rule 2): cancelling');
      current = cancel;
      cancelling = true;
    } else if (!job.cancelled && signed.ageMs >= this.bumpAfterMs && this.driver.bump) {
      const bump = await this.driver.bump(item);
      if (bump && 'replacement' in bump) {
        if (!(await saveSignedTx(this.db, job, this.worker, replacing(signed, bump.replacement)))) return;
        this.log.info({ chain: this.chain, job: job.id, hash: bump.replacement.hash, replaces: signed.hash }, 'fee bump');
        engineCounters.bumps.inc({ chain: this.chain });
        current = bump.replacement;
      } else if (bump && 'child' in bump) {
        this.log.info({ chain: this.chain, job: job.id, hash: signed.hash, child: bump.child }, 'fee bump by a child transaction');
        engineCounters.bumps.inc({ chain: this.chain });
      } else if (bump && !this.unbumpable.has(job.id)) {
        this.unbumpable.add(job.id);
        this.log.warn({ chain: this.chain, job: job.id, hash: signed.hash, reason: bump.none }, 'not landed, and no bump may be made: waiting');
      }
    }
    // Whatever the node says, the transaction stays: all of a job's transactions are alternatives of
    // which at most one lands, and the next pass looks again.
    const sent = await this.driver.broadcast(current);
    if (sent.outcome !== 'refused') return this.submitted(job, current.hash);
    const replaced = current.hash !== signed.hash;
    if (replaced || job.cancelled || !this.driver.resendRefusalIsFinal) {
      // A bump, a cancellation, or a resend the node's refusal is not the last word on (EVM): what was
      // sent before may still land, so no attempt is counted. A refused bump gives its place back; a
      // cancellation stays (past the deadline, whichever of the two lands settles the job).
      this.log.warn({ chain: this.chain, job: job.id, hash: current.hash, ...(replaced ? { replaces: signed.hash } : {}), error: sent.reason }, 'refused; what was sent before may still land');
      const giveBack = replaced && !cancelling;
      if (giveBack && !(await saveSignedTx(this.db, job, this.worker, signed))) return;
      return this.submitted(job, giveBack ? signed.hash : current.hash);
    }
    if (this.driver.resignable(item.payload)) await clearSignedTx(this.db, job.id, this.worker);
    return this.attemptFailed(job, `broadcast refused: ${sent.reason}`);
  }

  private pastDeadline(job: ClaimedJob): boolean {
    return pastBroadcastDeadline(job, this.clock.now());
  }

  /** Past its `broadcast_by` before anything was signed: it is never sent. */
  private async refuseLate(job: ClaimedJob): Promise<void> {
    const reason = 'not sent: its broadcast deadline passed (safety rule 2)';
    this.log.warn({ chain: this.chain, job: job.id, action: job.action }, reason);
    await failJob(this.db, job.id, this.worker, reason);
  }

  /** Runs one job's work; an error outside the expected paths is recorded on the job, never thrown. */
  private async guarded(job: ClaimedJob, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      await this.failedWith(job, err).catch(() => undefined); // the database is out of reach too: the job's lock runs out
    }
  }

  /**
   * A failure outside the chain's judgement: a node out of reach defers the job; anything else (a
   * database error) leaves it to come back, keeping any transaction it holds (failing it could let it
   * sign a second one).
   */
  private async failedWith(job: ClaimedJob, err: unknown): Promise<void> {
    if (this.driver.unreachable(err)) return this.defer(job, err);
    const error = this.driver.describe(err);
    this.log.error({ chain: this.chain, job: job.id, error }, 'job error');
    const held = (await readSignedTxs(this.db, [job.id])).get(String(job.id));
    if (held) await this.submitted(job, held.hash);
    else await deferJob(this.db, job.id, { worker: this.worker, error, retryMs: this.retryMs, maxRetryMs: this.maxRetryMs, now: this.clock.now() });
  }

  private async defer(job: ClaimedJob, err: unknown): Promise<void> {
    const error = `node unreachable: ${this.driver.describe(err)}`;
    engineCounters.deferred.inc({ chain: this.chain });
    this.log.warn({ chain: this.chain, job: job.id, error }, 'node out of reach: the job waits');
    await deferJob(this.db, job.id, { worker: this.worker, error, retryMs: this.retryMs, maxRetryMs: this.maxRetryMs, now: this.clock.now() });
  }

  private async submitted(job: ClaimedJob, txHash: string): Promise<void> {
    await markSubmitted(this.db, job.id, { worker: this.worker, txHash, recheckMs: this.recheckMs, now: this.clock.now() });
  }

  /** A refused attempt; a reverted simulation (`untilNewBlock`) is simulated again on a newer block. */
  private async attemptFailed(job: ClaimedJob, error: string, options: { untilNewBlock?: boolean } = {}): Promise<void> {
    const status = await markAttemptFailed(this.db, job.id, { worker: this.worker, error, retryMs: this.retryMs, now: this.clock.now(), ...options });
    engineCounters.refused.inc({ chain: this.chain });
    this.log.warn({ chain: this.chain, job: job.id, action: job.action, status, error }, 'attempt refused');
  }
}

/** Whether the job's broadcast deadline (safety rule 2) has passed. */
export const pastBroadcastDeadline = (job: ClaimedJob, now: number): boolean => job.broadcastBy !== null && now >= job.broadcastBy;

/** The lease of the engine of `signer`'s transactions on `chain`. */
export const engineLease = (chain: string, signer: string): string => `engine:${chain}:${signer}`;

/**
 * The engine as two workers, each under its own lease: one signs and sends new jobs, the other follows
 * up the jobs in flight (landed, bumps, resends), so a new job never waits behind the follow-ups of a
 * busy queue. Both wake at once when a job of theirs is queued (`job_queued`: a new job, or a Bitcoin
 * job written signed, which only the follow-up takes), the follow-up also `recheckMs` after the new
 * loop of this process took jobs (the transactions it sent fall due then; woken at once, it found
 * none due, one empty claim per pass), and each again at once after a full batch.
 *
 * Otherwise a loop looks again after `intervalMs`, or sooner when its next job falls due sooner, while
 * any job of the engine is unsettled: a retry or a recheck falls due with no notification, and a test's
 * clock may move it nearer at any moment. With nothing unsettled at all, only a new job can give it work,
 * and that is announced: the loop sleeps `idleMs`, which only bounds a lost notification.
 */
export function engineWorkers<P>(engine: TxEngine<P>, intervalMs = 1_000, idleMs = 5 * intervalMs): Worker[] {
  let wakeFollowUp: (() => void) | undefined;
  let followUpTimer: NodeJS.Timeout | undefined;
  const followUpAtRecheck = () => {
    if (followUpTimer) return;
    followUpTimer = setTimeout(() => {
      followUpTimer = undefined;
      wakeFollowUp?.();
    }, engine.recheckMs);
    followUpTimer.unref();
  };
  const worker = (lease: string, only: 'new' | 'follow-up'): Worker => ({
    lease,
    intervalMs,
    wakeOnJob: engine.wakeOnJob,
    tick: async (_signal, wake) => {
      const pass = await engine.pass(only);
      if (only === 'new' && pass.claimed > 0) followUpAtRecheck();
      if (pass.claimed >= engine.batch) return wake();
      // Jobs taken change the queue after the claim read it: the next look is a plain interval away.
      if (pass.claimed > 0) return intervalMs;
      if (!pass.pending) return idleMs;
      return pass.nextDueInMs !== null && pass.nextDueInMs > 0 ? Math.min(Math.ceil(pass.nextDueInMs), intervalMs) : intervalMs;
    },
  });
  return [
    worker(engine.lease, 'new'),
    {
      ...worker(`${engine.lease}:follow-up`, 'follow-up'),
      subscribe: (wake) => {
        wakeFollowUp = wake;
        return () => {
          wakeFollowUp = undefined;
          clearTimeout(followUpTimer);
          followUpTimer = undefined;
        };
      },
    },
  ];
}

/** A transaction that takes another's place keeps what the driver did not set anew (its nonce, its lifetime). */
function replacing(old: SignedTx, tx: NewTx): NewTx {
  return { ...tx, nonce: tx.nonce ?? old.nonce ?? undefined, validUntilHeight: tx.validUntilHeight ?? old.validUntilHeight ?? undefined };
}
