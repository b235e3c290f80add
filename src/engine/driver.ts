import type { ClaimedJob } from '../store/relayer-jobs.ts';
import type { JobSigner } from '../store/schema.ts';
import type { SignedTx } from '../store/signed-txs.ts';

/**
 * What a chain family gives the transaction engine (`TxEngine`): how to read its job payloads, sign
 * them, broadcast, and tell what became of a signed transaction. Everything else (claiming jobs, storing
 * a transaction before it is sent, attempts, backoff, safety rule 2 at broadcast, settling, logging) is
 * the engine's, the same for every family.
 *
 * A driver throws for a node it could not ask (down, timing out, 5xx, rate-limited); `unreachable`
 * tells those errors apart, and the engine then waits and tries again without counting an attempt.
 */
export interface TxDriver<P> {
  readonly chain: string;
  readonly signer: JobSigner;
  /**
   * Transactions are ordered (EVM nonces): one signed after a job the worker lost cannot be mined, so
   * the engine sends none signed after it in that pass.
   */
  readonly sequenced: boolean;
  /**
   * Whether the node refusing a transaction sent before is its verdict on it (it counts as an attempt,
   * and a resignable job is signed afresh), or may leave an earlier copy pending that can still land
   * (EVM: the refusal is only logged, and the next pass looks for it again).
   */
  readonly resendRefusalIsFinal: boolean;
  /** Validates a payload read back from the queue; throws with the problem. */
  parse(payload: unknown): P;
  /** Whether an error means the node could not be asked, rather than that it judged something. */
  unreachable(err: unknown): boolean;
  /** A short description of an error, safe for logs and `last_error` (safety rule 7). */
  describe(err: unknown): string;
  /**
   * Signs new jobs, in the order given, chunk by chunk (the engine stores and sends a chunk while the
   * next is signed). A job the chain would refuse now (a simulation that reverts) is `refused`.
   */
  sign(items: ReadonlyArray<JobItem<P>>): AsyncIterable<Array<JobItem<P> & SignResult>>;
  broadcast(tx: { raw: string; hash: string }): Promise<SendResult>;
  /** What became of each held job's transactions, in the order given. */
  states(items: ReadonlyArray<HeldItem<P>>): Promise<TxState[]>;
  /** Whether a job whose transaction can no longer land may be signed afresh (not a client's own signed transaction). */
  resignable(payload: P): boolean;
  /**
   * What to do about a transaction not landed `bumpAfterMs` after it was signed; undefined when it is
   * not stuck (yet), by the family's own measure (a Bitcoin-family driver counts blocks).
   */
  bump?(item: HeldItem<P>): Promise<Bump | undefined>;
  /** A transaction that takes the place of one that must no longer land (safety rule 2), where the family allows one. */
  cancel?(item: HeldItem<P>): Promise<NewTx | undefined>;
}

export interface JobItem<P> {
  job: ClaimedJob;
  payload: P;
}

export interface HeldItem<P> extends JobItem<P> {
  signed: SignedTx;
}

/** A signed transaction as a driver makes it. */
export interface NewTx {
  raw: string;
  hash: string;
  /** Its place in the account's sequence, where transactions are ordered (EVM). */
  nonce?: bigint;
  /** The last block height at which it can land, where transactions expire so (Solana). */
  validUntilHeight?: bigint;
}

/** A driver's answer to a transaction not landed in time. */
export type Bump =
  /** The job's transaction again with higher fees: the engine stores it and sends it in its place. */
  | { replacement: NewTx }
  /** A transaction of its own that pays for this one (CPFP), written as a job of its own and sent. */
  | { child: string }
  /** It needs one, but none may be made (a fee cap, no rounds left): it waits as it is. */
  | { none: string };

export type SignResult = { signed: NewTx } | { refused: string };

/** `known`: the node has it already (a resend of one it holds or mined). */
export type SendResult = { outcome: 'sent' } | { outcome: 'known' } | { outcome: 'refused'; reason: string };

export type TxState =
  /** One of the job's transactions is final and succeeded. */
  | { state: 'landed'; hash: string }
  /** One landed and failed: sending again would be a second try at the action. */
  | { state: 'reverted'; hash: string; reason: string }
  /** Seen by the chain but not final: look again later, do not resend. */
  | { state: 'seen' }
  /** Not seen yet, and it can still land: resend (or bump) it. */
  | { state: 'pending' }
  /** None of its transactions can land any more (its nonce went to another, its blockhash expired). */
  | { state: 'dropped'; reason: string };
