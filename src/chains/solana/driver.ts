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
import type { HeldItem, JobItem, NewTx, SendResult, SignResult, TxDriver, TxState } from '../../engine/driver.ts';
import { TxEngine, type EngineOptions } from '../../engine/engine.ts';
import type { JobSigner } from '../../store/schema.ts';
import { describeSolanaError, isAlreadyProcessed, isNodeUnreachable } from './chain-errors.ts';
import { parseSolanaPayload, type SolanaJobPayload } from './jobs.ts';
import { solanaRpc } from './rpc.ts';

export interface SolanaDriverOptions {
  /** Registry chain key, the queue's `chain`. */
  chain: string;
  rpcUrl: string;
  /** The account that pays the fees of (and signs) every job of this chain and signer. */
  payer: Promise<KeyPairSigner>;
  signer: JobSigner;
  /** The instructions of a job that the driver builds and signs (every kind but `client-signed`). */
  instructions(payload: Exclude<SolanaJobPayload, { kind: 'client-signed' }>, payer: KeyPairSigner): Promise<Instruction[]>;
}

type Lifetime = Readonly<{ blockhash: Blockhash; lastValidBlockHeight: bigint }>;

/**
 * The Solana driver: every new job of a pass is signed with one recent blockhash, and the transactions
 * in flight are looked at with one getSignatureStatuses call. A transaction is signed afresh only once
 * its blockhash has expired unseen, when it can no longer land; one the client signed (a gasless
 * initiate) cannot be, and fails then. AlreadyProcessed is a send of a transaction the chain has run.
 * A signed transaction's `validUntilHeight` is the last block height at which it can land. Nothing
 * cancels a Solana transaction, but an unsent one past its deadline is never sent, and a sent one
 * expires with its blockhash.
 */
export class SolanaDriver implements TxDriver<SolanaJobPayload> {
  readonly chain: string;
  readonly signer: JobSigner;
  readonly sequenced = false;
  readonly resendRefusalIsFinal = true;
  private readonly rpc;

  constructor(private readonly options: SolanaDriverOptions) {
    this.chain = options.chain;
    this.signer = options.signer;
    this.rpc = solanaRpc(options.rpcUrl);
  }

  parse = parseSolanaPayload;
  unreachable = isNodeUnreachable;
  describe = describeSolanaError;
  resignable = (payload: SolanaJobPayload): boolean => payload.kind !== 'client-signed';

  async *sign(items: ReadonlyArray<JobItem<SolanaJobPayload>>): AsyncIterable<Array<JobItem<SolanaJobPayload> & SignResult>> {
    const lifetime = (await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send()).value;
    const payer = await this.options.payer;
    yield await Promise.all(
      items.map(async (item) => {
        try {
          return { ...item, signed: await this.signOne(item.payload, payer, lifetime) };
        } catch (err) {
          if (isNodeUnreachable(err)) throw err;
          return { ...item, refused: describeSolanaError(err) };
        }
      }),
    );
  }

  private async signOne(payload: SolanaJobPayload, payer: KeyPairSigner, lifetime: Lifetime): Promise<NewTx> {
    if (payload.kind === 'client-signed') {
      // The client signed it with the blockhash it holds; the driver only adds the fee payer's signature.
      const transaction = await partiallySignTransaction([payer.keyPair], getTransactionDecoder().decode(Buffer.from(payload.tx, 'base64')));
      return { raw: getBase64EncodedWireTransaction(transaction), hash: getSignatureFromTransaction(transaction), validUntilHeight: BigInt(payload.lastValidBlockHeight) };
    }
    const instructions = await this.options.instructions(payload, payer);
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const transaction = await signTransactionMessageWithSigners(message);
    return { raw: getBase64EncodedWireTransaction(transaction), hash: getSignatureFromTransaction(transaction), validUntilHeight: lifetime.lastValidBlockHeight };
  }

  async broadcast(tx: { raw: string }): Promise<SendResult> {
    try {
      await this.rpc.sendTransaction(tx.raw as Base64EncodedWireTransaction, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
      return { outcome: 'sent' };
    } catch (err) {
      // The chain already ran these very bytes: it is in, as if just sent.
      if (isAlreadyProcessed(err)) return { outcome: 'known' };
      if (isNodeUnreachable(err)) throw err;
      return { outcome: 'refused', reason: describeSolanaError(err) };
    }
  }

  async states(items: ReadonlyArray<HeldItem<SolanaJobPayload>>): Promise<TxState[]> {
    const [statuses, height] = await Promise.all([
      this.rpc.getSignatureStatuses(items.map(({ signed }) => signed.hash as Signature), { searchTransactionHistory: true }).send(),
      this.rpc.getBlockHeight({ commitment: 'confirmed' }).send(),
    ]);
    return items.map(({ signed }, i): TxState => {
      const status = statuses.value[i];
      if (status && status.confirmationStatus !== 'processed') {
        // It landed and the program refused it: a second transaction would be a second try at the same action.
        if (status.err !== null) return { state: 'reverted', hash: signed.hash, reason: `failed on chain: ${describeSolanaError(status.err)}` };
        return { state: 'landed', hash: signed.hash };
      }
      // Processed in a slot not yet confirmed: it is in, and may still be dropped with its fork.
      if (status) return { state: 'seen' };
      if (signed.validUntilHeight !== null && height > signed.validUntilHeight) return { state: 'dropped', reason: 'the signed transaction expired (its blockhash is too old) before it landed' };
      // Nodes drop transactions they cannot place at once: the same bytes again, until it lands or expires.
      return { state: 'pending' };
    });
  }
}

/** The engine of one Solana chain and account (by default a recheck every second: slots are 400 ms; a refused attempt waits 3 s). */
export function solanaEngine(options: SolanaDriverOptions & EngineOptions): TxEngine<SolanaJobPayload> {
  return new TxEngine(new SolanaDriver(options), { recheckMs: 1_000, retryMs: 3_000, ...options });
}
