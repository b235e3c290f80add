import {
  createPublicClient,
  Eip1559FeesNotSupportedError,
  http,
  keccak256,
  parseTransaction,
  serializeTransaction,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { Bump, HeldItem, JobItem, NewTx, SendResult, SignResult, TxDriver, TxState } from '../../engine/driver.ts';
import { TxEngine, type EngineOptions } from '../../engine/engine.ts';
import type { Db } from '../../store/database.ts';
import type { JobSigner } from '../../store/schema.ts';
import { nextUnusedNonce } from '../../store/signed-txs.ts';
import { signDigest } from '../secp256k1.ts';
import { classifyBroadcastError, describeChainError, isNodeUnreachable } from './chain-errors.ts';
import { jobCall, parsePayload, type EvmCall, type JobPayload } from './jobs.ts';

export interface EvmDriverOptions {
  db: Db;
  /** Registry chain key, the queue's `chain`. */
  chain: string;
  chainId: number;
  rpcUrl: string;
  /** The key of the account that signs and pays for every job of the chain and signer. */
  privateKey: Hex;
  /** Whose jobs these are: the relayer's (gasless actions, default) or the solver's own. */
  signer?: JobSigner;
  /**
   * The most the account pays per gas (wei), whatever the estimate: a new transaction's fees are
   * capped to it, and a transaction already at the cap is not bumped, it waits for fees to fall.
   */
  maxFeePerGas?: bigint;
}

/**
 * Transactions signed and stored before the first of them is sent. Signing one takes a fraction of a
 * millisecond and storing a chunk a database round trip, so a pass's jobs (50 by default) go as one.
 */
const SIGN_CHUNK = 50;

/**
 * The EVM driver: one account's transactions with consecutive nonces. New jobs are simulated together
 * (`eth_estimateGas`: a revert is the chain's refusal, by its error name) while the fees and the next
 * nonce are read, in one batched HTTP request, then signed, fifty at a time. The next nonce is above both
 * the account's pending count and every nonce the account's unsettled jobs hold signed (one engine per
 * chain and account signs). A transaction not mined in time is re-signed with fees up 12.5 % and the
 * same nonce, so at most one of a job's transactions is mined; a nonce taken by another transaction
 * drops the job's, which is then signed afresh. A funding past its deadline is cancelled by an empty
 * transfer to itself at the same nonce.
 */
export class EvmDriver implements TxDriver<JobPayload> {
  readonly chain: string;
  readonly signer: JobSigner;
  readonly sequenced = true;
  readonly resendRefusalIsFinal = false;
  readonly address: Address;
  private readonly client: PublicClient;

  constructor(private readonly options: EvmDriverOptions) {
    this.chain = options.chain;
    this.signer = options.signer ?? 'relayer';
    this.address = privateKeyToAddress(options.privateKey);
    this.client = createPublicClient({ transport: http(options.rpcUrl, { batch: true }), cacheTime: 0 });
  }

  parse = parsePayload;
  unreachable = isNodeUnreachable;
  describe = describeChainError;
  resignable = (): boolean => true;

  async *sign(items: ReadonlyArray<JobItem<JobPayload>>): AsyncIterable<Array<JobItem<JobPayload> & SignResult>> {
    // The simulations, the fees and the next nonce in one round of reads (one batch over HTTP).
    const nonceRead = this.nextNonce();
    const feesRead = this.feesNow();
    nonceRead.catch(() => undefined);
    feesRead.catch(() => undefined);
    const calls = items.map(({ payload }) => jobCall(payload));
    const simulated = await Promise.all(
      calls.map((call, i) =>
        this.client
          .estimateGas({ account: this.address, to: call.to, data: call.data, value: call.value ?? 0n, blockTag: simulationBlock(items[i]!.payload) })
          .then((gas) => ({ gas }), (error: unknown) => ({ error })),
      ),
    );
    const unreachable = simulated.find((s): s is { error: unknown } => 'error' in s && isNodeUnreachable(s.error));
    if (unreachable) throw unreachable.error;
    // It would revert now (not approved yet, not initiated yet, already done...): nothing is sent.
    const refused = items.flatMap((item, i) => {
      const sim = simulated[i]!;
      return 'error' in sim ? [{ ...item, refused: describeChainError(sim.error) }] : [];
    });
    if (refused.length > 0) yield refused;
    const ready = items.flatMap((item, i) => {
      const sim = simulated[i]!;
      return 'gas' in sim ? [{ item, call: calls[i]!, gas: sim.gas }] : [];
    });
    if (ready.length === 0) return;
    const fees = this.capped(await feesRead);
    let nonce = await nonceRead;
    // In nonce order; past a chunk, the first are on their way while the next are signed.
    for (let i = 0; i < ready.length; i += SIGN_CHUNK) {
      const chunk: Array<JobItem<JobPayload> & SignResult> = [];
      for (const { item, call, gas } of ready.slice(i, i + SIGN_CHUNK)) {
        chunk.push({ ...item, signed: await this.signCall(call, { nonce: nonce++, gas: (gas * 12n) / 10n, ...fees }) });
      }
      yield chunk;
    }
  }

  async broadcast(tx: { raw: string }): Promise<SendResult> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: tx.raw as Hex });
      return { outcome: 'sent' };
    } catch (err) {
      const outcome = classifyBroadcastError(err);
      if (outcome === 'accepted') return { outcome: 'known' };
      if (outcome === 'unknown') throw err; // no clear answer: it may be out
      return { outcome: 'refused', reason: outcome === 'nonce-too-low' ? `nonce too low: ${describeChainError(err)}` : describeChainError(err) };
    }
  }

  async states(items: ReadonlyArray<HeldItem<JobPayload>>): Promise<TxState[]> {
    const [receipts, mined] = await Promise.all([
      Promise.all(items.map(({ signed }) => this.findReceipt(signed.hashes))),
      this.client.getTransactionCount({ address: this.address, blockTag: 'latest' }).then(BigInt),
    ]);
    return Promise.all(
      items.map(async ({ signed }, i): Promise<TxState> => {
        let receipt = receipts[i];
        if (!receipt && signed.nonce !== null && mined > signed.nonce) {
          // The nonce is used. Look again: ours may have been mined between the two reads.
          receipt = await this.findReceipt(signed.hashes);
          if (!receipt) return { state: 'dropped', reason: `nonce ${signed.nonce} was taken by another transaction` };
        }
        if (!receipt) return { state: 'pending' };
        if (receipt.status === 'success') return { state: 'landed', hash: receipt.transactionHash };
        return { state: 'reverted', hash: receipt.transactionHash, reason: `transaction ${receipt.transactionHash} reverted in block ${receipt.blockNumber}` };
      }),
    );
  }

  /** The same call, nonce and gas with fees raised by at least 12.5 % (what nodes require to replace); none past the fee cap. */
  async bump(item: HeldItem<JobPayload>): Promise<Bump> {
    const old = parseTransaction(item.signed.raw as Hex);
    const fees = await this.raisedFees(old);
    if (this.options.maxFeePerGas !== undefined && fees.maxFeePerGas > this.options.maxFeePerGas) return { none: `the fee cap (${this.options.maxFeePerGas} wei per gas)` };
    return { replacement: await this.signCall(jobCall(item.payload), { nonce: item.signed.nonce!, gas: old.gas ?? 500_000n, ...fees }) };
  }

  /**
   * An empty transfer to the account itself at the job's nonce, with fees raised enough to replace
   * it: whichever is mined, the job's call can then never be. Not held to the fee cap: it costs 21,000
   * gas, and what it protects is the solver's money.
   */
  async cancel(item: HeldItem<JobPayload>): Promise<NewTx> {
    const fees = await this.raisedFees(parseTransaction(item.signed.raw as Hex));
    return this.signCall({ to: this.address, data: '0x' }, { nonce: item.signed.nonce!, gas: 21_000n, ...fees });
  }

  private async raisedFees(old: { maxFeePerGas?: bigint | undefined; maxPriorityFeePerGas?: bigint | undefined }): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const now = await this.feesNow();
    const raise = (v: bigint | undefined) => (v ?? 0n) + (v ?? 0n) / 8n + 1n;
    const max = (a: bigint, b: bigint) => (a > b ? a : b);
    return { maxFeePerGas: max(raise(old.maxFeePerGas), now.maxFeePerGas), maxPriorityFeePerGas: max(raise(old.maxPriorityFeePerGas), now.maxPriorityFeePerGas) };
  }

  /**
   * viem's `estimateFeesPerGas` (the latest base fee times 1.2, plus the node's priority fee), with
   * its two reads made at once rather than one after the other: in `sign` both join the simulations'
   * batch, so the fees cost no round trip of their own.
   */
  private async feesNow(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const [block, maxPriorityFeePerGas] = await Promise.all([this.client.getBlock({ blockTag: 'latest' }), this.client.estimateMaxPriorityFeePerGas()]);
    if (typeof block.baseFeePerGas !== 'bigint') throw new Eip1559FeesNotSupportedError();
    return { maxFeePerGas: (block.baseFeePerGas * 12n) / 10n + maxPriorityFeePerGas, maxPriorityFeePerGas };
  }

  private async findReceipt(hashes: readonly string[]): Promise<TransactionReceipt | undefined> {
    for (const hash of hashes) {
      try {
        return await this.client.getTransactionReceipt({ hash: hash as Hex });
      } catch (err) {
        if (!(err instanceof TransactionReceiptNotFoundError)) throw err;
      }
    }
    return undefined;
  }

  private async nextNonce(): Promise<bigint> {
    const [pending, held] = await Promise.all([
      this.client.getTransactionCount({ address: this.address, blockTag: 'pending' }).then(BigInt),
      nextUnusedNonce(this.options.db, this.chain, this.signer).then((n) => n ?? 0n),
    ]);
    return pending > held ? pending : held;
  }

  private async signCall(call: EvmCall, t: { nonce: bigint; gas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }): Promise<NewTx & { nonce: bigint }> {
    const tx = {
      type: 'eip1559',
      chainId: this.options.chainId,
      to: call.to,
      data: call.data,
      value: call.value ?? 0n,
      nonce: Number(t.nonce),
      gas: t.gas,
      maxFeePerGas: t.maxFeePerGas,
      maxPriorityFeePerGas: t.maxPriorityFeePerGas,
    } as const;
    // As viem's account signs it (the same bytes), with libsecp256k1 doing the curve.
    const raw = serializeTransaction(tx, await signDigest(keccak256(serializeTransaction(tx)), this.options.privateKey));
    return { raw, hash: keccak256(raw), nonce: t.nonce };
  }

  /** Fees no higher than the cap (the priority fee never above the max fee). */
  private capped(fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
    const cap = this.options.maxFeePerGas;
    if (cap === undefined || fees.maxFeePerGas <= cap) return fees;
    return { maxFeePerGas: cap, maxPriorityFeePerGas: fees.maxPriorityFeePerGas < cap ? fees.maxPriorityFeePerGas : cap };
  }
}

/**
 * The block a job is simulated on. A refund is valid only above its timelock's block, which the next
 * block may reach before the latest does: it is simulated on the pending block. Every other call does
 * not depend on the block's number or time, and is simulated on the latest block: on the pending one, a
 * node such as anvil executes every transaction of its pool again for each simulation (a burst's
 * simulations took several times as long).
 */
const simulationBlock = (payload: JobPayload): 'pending' | 'latest' => (payload.kind === 'refund' ? 'pending' : 'latest');

export type EvmEngine = TxEngine<JobPayload> & { address: Address };

/** The engine of one EVM chain and account. */
export function evmEngine(options: EvmDriverOptions & Omit<EngineOptions, 'db'>): EvmEngine {
  const driver = new EvmDriver(options);
  return Object.assign(new TxEngine(driver, options), { address: driver.address });
}
